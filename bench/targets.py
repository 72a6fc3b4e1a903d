#!/usr/bin/env python3
"""The performance targets checked against the table bench.py wrote: prints each
with what this run measured and whether it is met, and appends the same
table to the results file."""
import re
import sys

REPORT, PIPELINE = "triage report (ours, one process)", "four-process pipeline (ours)"
DUCKDB, REFERENCE = "DuckDB group-by (count only)", "agent-triage 0.1.0 triage report"
STREAM = "triage-gen -n 10M | triage-parse | triage-group | triage-score"


def seconds(cell):
    value, unit = cell.split()[:2]
    return float(value) / (1000 if unit == "ms" else 1)


def sections(text):
    """{section title: {row label: (seconds, MiB)}}"""
    out, current = {}, None
    for line in text.splitlines():
        if line.startswith("## "):
            current = out.setdefault(line[3:], {})
        elif current is not None and line.startswith("| ") and not line.startswith("| tool"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            try:
                mem = float(cells[2].split()[0])
            except ValueError:
                mem = float("nan")
            try:
                current[cells[0].replace("\\|", "|")] = (seconds(cells[1]), mem)
            except (ValueError, IndexError):
                pass
    return out


def find(tables, prefix):
    return next((rows for title, rows in tables.items() if title.startswith(prefix)), {})


def main():
    size, path = int(sys.argv[1]), sys.argv[2]
    tables = sections(open(path).read())
    big, one = find(tables, "Report on 1m"), find(tables, "Report on onerun")
    parse, stream = find(tables, "triage-parse alone"), find(tables, "Memory")
    checks = []

    def check(name, get, ok, shown):
        try:
            value = get()
        except (KeyError, ZeroDivisionError):
            checks.append((name, "not measured", "-"))
            return
        checks.append((name, shown(value), "met" if ok(value) else "NOT met"))

    ratio = lambda a, b: a[b][0]  # noqa: E731
    check("1M: triage report no slower than DuckDB (ratio <= 1.0)",
          lambda: ratio(big, REPORT) / ratio(big, DUCKDB), lambda v: v <= 1.0, lambda v: f"{v:.2f}")
    check("1M: pipeline within 1.5x of DuckDB",
          lambda: ratio(big, PIPELINE) / ratio(big, DUCKDB), lambda v: v <= 1.5, lambda v: f"{v:.2f}")
    check("1M: triage report >= 50x faster than the reference",
          lambda: ratio(big, REFERENCE) / ratio(big, REPORT), lambda v: v >= 50, lambda v: f"{v:.0f}x")
    check("1M: pipeline >= 50x faster than the reference",
          lambda: ratio(big, REFERENCE) / ratio(big, PIPELINE), lambda v: v >= 50, lambda v: f"{v:.0f}x")
    check("one run of 100k: >= 100x faster than the reference",
          lambda: ratio(one, REFERENCE) / ratio(one, REPORT), lambda v: v >= 100, lambda v: f"{v:.0f}x")
    check("1M: peak memory <= 64 MiB", lambda: big[REPORT][1], lambda v: v <= 64, lambda v: f"{v:.0f} MiB")
    check("10M streamed: peak memory <= 64 MiB", lambda: stream[STREAM][1], lambda v: v <= 64,
          lambda v: f"{v:.0f} MiB")
    check("triage-parse >= 300 MB/s", lambda: size / 1e6 / parse["triage-parse"][0], lambda v: v >= 300,
          lambda v: f"{v:.0f} MB/s")
    if len(sys.argv) > 3:
        otlp_size = int(sys.argv[3])
        spans, otlp_parse = find(tables, "Report on 1m spans"), find(tables, "triage-parse alone on 1m spans")
        otlp_stream = find(tables, "Memory: group on 10M spans")
        check("OTLP: triage-parse >= 500 MB/s", lambda: otlp_size / 1e6 / otlp_parse["triage-parse"][0],
              lambda v: v >= 500, lambda v: f"{v:.0f} MB/s")
        check("OTLP 1M spans: triage report <= 1.5 s", lambda: spans[REPORT][0], lambda v: v <= 1.5,
              lambda v: f"{v:.2f} s")
        check("OTLP 1M spans: triage report <= 128 MiB", lambda: spans[REPORT][1], lambda v: v <= 128,
              lambda v: f"{v:.0f} MiB")
        check("OTLP 1M spans: triage report vs DuckDB (ratio)", lambda: spans[REPORT][0] / spans[DUCKDB][0],
              lambda v: v <= 1.0, lambda v: f"{v:.2f}")
        check("OTLP 10M spans streamed: peak memory <= 256 MiB",
              lambda: otlp_stream["triage-gen --format otlp -n 10M | triage-parse | triage-group | triage-score"][1],
              lambda v: v <= 256, lambda v: f"{v:.0f} MiB")
        # The other formats, in the order run.sh wrote them: within 2x of
        # OTLP per byte, in the memory OTLP's 1M-span report takes.
        others = [(t, rows) for t, rows in tables.items() if t.startswith("triage-parse on ")]
        otlp_rate = lambda: otlp_size / 1e6 / otlp_parse["triage-parse"][0]  # noqa: E731
        for (title, rows), size in zip(others, map(int, sys.argv[4:])):
            name = title[len("triage-parse on "):].rsplit(" (", 1)[0]
            rate = lambda rows=rows, size=size: size / 1e6 / rows["triage-parse"][0]  # noqa: E731
            check(f"{name}: within 2x of OTLP per byte", lambda rate=rate: otlp_rate() / rate(),
                  lambda v: v <= 2.0, lambda v, rate=rate: f"{v:.1f}x slower ({rate():.0f} MB/s)")
            check(f"{name}: peak memory <= 128 MiB", lambda rows=rows: rows["triage-parse"][1],
                  lambda v: v <= 128, lambda v: f"{v:.0f} MiB")
    lines = ["## Targets", "", "| target | this run | |", "|---|---:|---|"]
    lines += [f"| {n} | {v} | {m} |" for n, v, m in checks]
    text = "\n".join(lines) + "\n"
    print()
    print(text)
    with open(path, "a") as f:
        f.write("\n" + text)


if __name__ == "__main__":
    main()
