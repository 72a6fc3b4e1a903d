#!/usr/bin/env bash
# make check-peer: our scores against agent-triage 0.1.0's on generated
# data, clean and messy (lax values, unknown labels, bad lines, shuffled and
# interleaved runs), with and without a configuration, and on its examples.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=target/release
PEER=bench/peer-scores
COMPARE=bench/compare-scores
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cat > "$out/t.toml" <<'TOML'
[scoring]
recovery_window = 5
no_recovery_multiplier = 2.0
frequency_weight = 0.3
severity_weight = 0.7
[scoring.weights]
agent_error = 0.8
hallucination = 0.9
TOML
fail=0
check() { # name file [config]
  local name=$1 file=$2 cfg=${3:-}
  local copt=()
  [ -n "$cfg" ] && copt=(--config "$cfg")
  "$BIN/triage-parse" -q "$file" | "$BIN/triage-group" -q | "$BIN/triage-score" "${copt[@]}" > "$out/ours"
  "$PEER" "${copt[@]}" "$file" > "$out/peer" 2>/dev/null
  if res=$("$COMPARE" "$out/ours" "$out/peer"); then echo "ok    $name: ${res##*$'\n'}"; else echo "FAIL  $name:"; echo "$res"; fail=1; fi
}
for f in examples/monday.ndjson examples/before.ndjson; do check "$f" "$f"; done
for seed in 1 2 3 4 5 6 7 8; do
  for messy in "" --messy; do
    f="$out/gen-$seed$messy.ndjson"
    "$BIN/triage-gen" -n 4000 -r $((seed * 2)) -a $((seed % 6 + 2)) --seed "$seed" $messy > "$f"
    check "generated seed $seed ${messy:-clean}" "$f"
    check "generated seed $seed ${messy:-clean} with config" "$f" "$out/t.toml"
  done
done
exit $fail
