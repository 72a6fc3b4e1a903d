#!/usr/bin/env bash
# make bench: our tools beside the reference (agent-triage 0.1.0), a DuckDB
# query and a jq pipeline, on the same generated files, in one run.
# Installs what is missing into a cache; writes bench-out/results.md.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=target/release
DATA=${BENCH_DATA:-bench-out/data}
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}
mkdir -p "$DATA"

# The reference, installed by the peer tool; DuckDB into a venv of ours; jq from Debian.
REF_VENV="${TRIAGE_PEER_VENV:-$CACHE/triage-peer-venv}"
if [ ! -x "$REF_VENV/bin/triage" ]; then
  python3 -m venv "$REF_VENV" && "$REF_VENV/bin/pip" install -q "agent-triage==0.1.0"
fi
BENCH_VENV="$CACHE/triage-bench-venv"
if [ ! -x "$BENCH_VENV/bin/python" ] || ! "$BENCH_VENV/bin/python" -c "import duckdb" 2>/dev/null; then
  python3 -m venv "$BENCH_VENV" && "$BENCH_VENV/bin/pip" install -q duckdb
fi
if ! command -v jq >/dev/null 2>&1; then
  (apt-get update -qq && apt-get install -y -qq jq >/dev/null) || echo "bench: jq not available; its rows will fail"
fi

# Every command's output goes to /dev/null; a regular file there (as
# `triage-render -o /dev/null` run as root left one before -o was fixed)
# turns that into a write of every byte to a file.
[ -c /dev/null ] || echo "bench: /dev/null is not a device; restore it (rm /dev/null; mknod -m 666 /dev/null c 1 3), or output counts as file writes" >&2

gen() { [ -s "$DATA/$1" ] || "$BIN/triage-gen" "${@:2}" > "$DATA/$1"; }
gen 100k.ndjson -n 100000 -r 100
gen 1m.ndjson -n 1000000 -r 1000
gen onerun-100k.ndjson -n 100000 -r 1
# 100k runs of 10 events, each with a run record stating its outcome (a
# third failed, a tenth of them unknown), the tasks run 4 trials each.
[ -s "$DATA/runs-100k.ndjson" ] || { "$BIN/triage-gen" -n 1000000 -r 100000; python3 bench/run_records.py 100000; } > "$DATA/runs-100k.ndjson"
# The events of 1m.ndjson as OTLP/JSON spans, 50 a request line.
gen 1m.otlp.jsonl --format otlp -n 1000000 -r 1000

report() {
  if [ -x "$BIN/triage" ] && "$BIN/triage" report --help >/dev/null 2>&1; then echo "$BIN/triage report $1"; else echo "$BIN/triage-parse $1 | $BIN/triage-group | $BIN/triage-score"; fi
}
pipeline() {
  if [ -x "$BIN/triage-render" ]; then echo "$BIN/triage-parse $1 | $BIN/triage-group | $BIN/triage-score | $BIN/triage-render";
  else echo "$BIN/triage-parse $1 | $BIN/triage-group | $BIN/triage-score"; fi
}
duck() { echo "$BENCH_VENV/bin/python bench/duckdb_group.py $1"; }
duck_otlp() { echo "$BENCH_VENV/bin/python bench/duckdb_otlp.py $1"; }
jqpipe() {
  echo "jq -r 'select(.action_succeeded == false or ((.failure_classification // \"\") | . != \"\" and . != \"null\")) | [.agent_id, .action_taken.tool_name, ((.failure_classification // \"\") | if . == \"\" or . == \"null\" then \"unclassified\" else . end), ((.divergence_fields // []) | unique | join(\"+\"))] | @tsv' $1 | sort | uniq -c | sort -rn"
}

plan=bench-out/plan.tsv
: > "$plan"
row() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >> "$plan"; }
for f in 100k 1m onerun-100k; do
  file="$DATA/$f.ndjson"
  size=$(du -m "$file" | cut -f1)
  echo "## Report on $f events ($size MB of agent-triage NDJSON)" >> "$plan"
  row "triage report (ours, one process)" "*" "$(report "$file")"
  row "four-process pipeline (ours)" "" "$(pipeline "$file")"
  row "DuckDB group-by (count only)" "" "$(duck "$file")"
  row "jq | sort | uniq -c (count only)" "" "$(jqpipe "$file")"
  row "agent-triage 0.1.0 triage report" "r" "$REF_VENV/bin/triage report $file"
done
runs="$DATA/runs-100k.ndjson"
echo "## Report on 100k runs with run records ($(du -m "$runs" | cut -f1) MB of agent-triage NDJSON)" >> "$plan"
row "triage report (ours, one process)" "*" "$(report "$runs")"
row "four-process pipeline (ours)" "" "$(pipeline "$runs")"
row "DuckDB group-by (count only)" "" "$(duck "$runs")"
echo "## triage-parse alone on 1m events ($(du -m "$DATA/1m.ndjson" | cut -f1) MB)" >> "$plan"
row "triage-parse" "*" "$BIN/triage-parse $DATA/1m.ndjson"
row "jq -c ." "" "jq -c . $DATA/1m.ndjson"
row "wc -l" "" "wc -l $DATA/1m.ndjson"
echo "## Memory: group on 10M events streamed from the generator" >> "$plan"
row "triage-gen -n 10M | triage-parse | triage-group | triage-score" "*" "$BIN/triage-gen -n 10000000 -r 10000 | $BIN/triage-parse | $BIN/triage-group | $BIN/triage-score"
otlp="$DATA/1m.otlp.jsonl"
echo "## Report on 1m spans ($(du -m "$otlp" | cut -f1) MB of OTLP JSON, the events of 1m.ndjson)" >> "$plan"
row "triage report (ours, one process)" "*" "$(report "$otlp")"
row "four-process pipeline (ours)" "" "$(pipeline "$otlp")"
row "DuckDB group-by (count only)" "" "$(duck_otlp "$otlp")"
# agent-triage 0.1.0's otel path reads neither request lines ("Extra data")
# nor a file of one request ("No events loaded"), so it has no row here.
echo "## triage-parse alone on 1m spans ($(du -m "$otlp" | cut -f1) MB of OTLP JSON)" >> "$plan"
row "triage-parse" "*" "$BIN/triage-parse $otlp"
row "wc -l" "" "wc -l $otlp"
echo "## Memory: group on 10M spans streamed from the generator" >> "$plan"
row "triage-gen --format otlp -n 10M | triage-parse | triage-group | triage-score" "*" "$BIN/triage-gen --format otlp -n 10000000 -r 10000 | $BIN/triage-parse | $BIN/triage-group | $BIN/triage-score"
# Other span and observation formats: a sample export of each, its ids
# made unique per copy, to about 100 MB (bench/replicate.py).
SAMPLES=tests/data/export-samples
others=""
for spec in \
  "openinference/vercel-ai-sdk-v6-all-spans.json|OpenInference spans (otel)" \
  "langfuse/trpc-trace-with-observations/beeai-2025-08-01.trace.json|Langfuse trace with observations" \
  "langfuse/ui-download-merged/openai-agents-2025-09-30.json|Langfuse UI download" \
  "langsmith/runs-post-patch/langsmith_py_wrap_openai_.json|LangSmith runs"; do
  sample="${spec%%|*}"; label="${spec#*|}"
  out="$DATA/other-$(basename "$sample" .json).jsonl"
  { [ -s "$out" ] && [ "$out" -nt bench/replicate.py ]; } || python3 bench/replicate.py "$SAMPLES/$sample" 100000000 > "$out"
  others="$others $out"
  echo "## triage-parse on $label ($(du -m "$out" | cut -f1) MB)" >> "$plan"
  row "triage-parse" "*" "$BIN/triage-parse $out"
done
python3 bench/bench.py "$plan"
bytes=$(stat -c %s "$DATA/1m.ndjson")
python3 bench/targets.py "$bytes" bench-out/results.md "$(stat -c %s "$otlp")" $(for f in $others; do stat -c %s "$f"; done)
