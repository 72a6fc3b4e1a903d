#!/usr/bin/env bash
# Scale triage past one machine: map each shard with `triage-parse | triage-group`
# (GNU parallel, locally with -j or on other hosts with --sshlogin), then reduce
# with `triage-group --merge | triage-score`. Shard by file or by run: merging
# gives the result of one pass over the shards in the order given when no run
# spans two shards (trends and tie order follow that order of runs).
#
#   examples/scale-out.sh OUT_DIR SHARD...                  # local, 2 jobs
#   JOBS=8 SSHLOGIN=2/host1,2/host2 examples/scale-out.sh out shards/*.ndjson
#
# The same mapper/reducer pair runs on other engines:
#   Hadoop Streaming:  -mapper  'sh -c "triage-parse | triage-group"'
#                      -reducer 'sh -c "triage-group --merge | triage-score"'
#                      (one reducer: the merge needs every partial)
#   Spark:             examples/spark/triage_spark.py (spark-submit; see docs/scale.md)
# With a whole-file input format (or files partitioned by run), no run spans two
# mappers and the result equals one pass.
set -euo pipefail
out=${1:?usage: scale-out.sh OUT_DIR SHARD...}
shift
[ $# -gt 0 ] || { echo "scale-out.sh: no shards given" >&2; exit 2; }
BIN=${TRIAGE_BIN:-}
# Partials of an earlier run into the same OUT_DIR must not join this merge.
mkdir -p "$out/partials"
rm -f "$out"/partials/*.ndjson "$out/scored.ndjson"
# pipefail: a shard triage-parse could not read fails its job, rather than
# triage-group turning its empty output into an empty partial.
map="bash -c 'set -o pipefail; ${BIN}triage-parse \"\$0\" | ${BIN}triage-group' {} > $out/partials/{#}.ndjson"
failed() {
  echo "scale-out.sh: a shard failed (see above); nothing merged" >&2
  exit 2
}
if command -v parallel >/dev/null 2>&1; then
  parallel_args=(-j "${JOBS:-2}" --halt now,fail=1)
  [ -n "${SSHLOGIN:-}" ] && parallel_args+=(--sshlogin "$SSHLOGIN" --transferfile {} --return "$out/partials/{#}.ndjson")
  parallel "${parallel_args[@]}" "$map" ::: "$@" || failed
else
  # Without GNU parallel: the same map, with xargs on this machine.
  i=0
  for shard in "$@"; do
    i=$((i + 1))
    printf '%s\0%s\0' "$shard" "$i"
  done | xargs -0 -n 2 -P "${JOBS:-2}" bash -c "set -o pipefail; ${BIN}triage-parse \"\$0\" | ${BIN}triage-group > '$out/partials/'\"\$1\".ndjson" \
    || failed
fi
# Partials merge in shard order, so patterns keep their first-appearance order.
(cd "$out/partials" && ls | sort -n) | sed "s|^|$out/partials/|" \
  | xargs "${BIN}triage-group" --merge | "${BIN}triage-score" > "$out/scored.ndjson"
[ $# -eq 1 ] && shards="1 shard" || shards="$# shards"
echo "scale-out.sh: $shards merged into $out/scored.ndjson" >&2
