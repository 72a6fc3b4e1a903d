#!/usr/bin/env bash
# triage-recv throughput: N protobuf and N JSON requests of 10 spans each,
# posted by CLIENTS keep-alive clients (curl -Z; 16 by default), every one
# answered 200 only once written. Usage: bench/recv.sh [RECV_BINARY] [N] [CLIENTS]
set -euo pipefail
recv=${1:-target/release/triage-recv}
n=${2:-20000}
clients=${3:-16}
work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
python3 - "$work" <<'PY'
import json, struct, sys
out = sys.argv[1]
def varint(n):
    b = b''
    while True:
        x, n = n & 0x7f, n >> 7
        if n: b += bytes([x | 0x80])
        else: return b + bytes([x])
def field(num, wt, v):
    key = varint(num << 3 | wt)
    if wt == 2: return key + varint(len(v)) + v
    if wt == 0: return key + varint(v)
    return key + struct.pack('<Q', v)
def kv(k, v):
    return field(9, 2, field(1, 2, k.encode()) + field(2, 2, field(1, 2, v.encode())))
spans, jspans = b'', []
for i in range(10):
    tid, sid = bytes(range(16)), struct.pack('>Q', i + 1)
    s = field(1, 2, tid) + field(2, 2, sid) + field(5, 2, b'search') + field(6, 0, 1)
    s += field(7, 1, 1777000000000000000 + i) + field(8, 1, 1777000000500000000 + i)
    s += kv('agent.id', 'planner') + kv('run.id', 'run-1') + kv('action.tool', 'search')
    if i % 2: s += field(15, 2, field(3, 0, 2))
    spans += field(2, 2, s)
    jspans.append({"traceId": tid.hex(), "spanId": sid.hex(), "name": "search", "kind": 1,
        "startTimeUnixNano": str(1777000000000000000 + i), "endTimeUnixNano": str(1777000000500000000 + i),
        "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in
                       [("agent.id", "planner"), ("run.id", "run-1"), ("action.tool", "search")]],
        "status": {"code": 2 if i % 2 else 0}})
open(out + '/body.pb', 'wb').write(field(1, 2, field(2, 2, field(1, 2, field(1, 2, b'bench')) + spans)))
json.dump({"resourceSpans": [{"scopeSpans": [{"scope": {"name": "bench"}, "spans": jspans}]}]},
          open(out + '/body.json', 'w'))
PY
"$recv" -q --listen 127.0.0.1:0 -o "$work/out.jsonl" 2>"$work/err" &
pid=$!
# -q hides the address: find the port the receiver bound.
for _ in $(seq 50); do
  port=$(ss -ltnpH 2>/dev/null | awk -v p="pid=$pid," 'index($0, p) {split($4, a, ":"); print a[length(a)]; exit}')
  [ -n "$port" ] && break
  sleep 0.1
done
url="http://127.0.0.1:$port/v1/traces"
# The receiver's CPU seconds so far (user + system): steadier than wall
# time on a busy machine.
cpu() { awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / hz}' "/proc/$pid/stat"; }
for kind in pb json; do
  ctype=application/x-protobuf
  [ "$kind" = json ] && ctype=application/json
  start=$(date +%s.%N)
  cpu_before=$(cpu)
  codes=$(curl -sZ --no-progress-meter --parallel-max "$clients" -o /dev/null -w '%{http_code}\n' -H "Content-Type: $ctype" \
    --data-binary "@$work/body.$kind" "$url?[1-$n]" | sort | uniq -c | tr '\n' ' ')
  end=$(date +%s.%N)
  secs=$(echo "$end - $start" | bc)
  used=$(echo "$(cpu) - $cpu_before" | bc)
  printf '%s: %d requests of 10 spans in %.2f s (%.0f spans/s), receiver CPU %.2f s; answers: %s\n' \
    "$kind" "$n" "$secs" "$(echo "$n * 10 / $secs" | bc)" "$used" "$codes"
done
kill -TERM "$pid"; wait "$pid" || true
echo "lines written: $(wc -l < "$work/out.jsonl")"
