#!/usr/bin/env python3
"""Side-by-side timings: runs each command, records wall time and peak
memory (the largest process of a pipeline, from wait4), prints a table with
ratios against our tools, and writes it to bench-out/results.md."""
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time

TIMEOUT = float(os.environ.get("BENCH_TIMEOUT", "900"))
# Commands that finish within REPEAT_UNDER seconds run RUNS times and the
# median counts: on a shared 2-core machine one run can be 20% off.
RUNS = int(os.environ.get("BENCH_RUNS", "5"))
REPEAT_UNDER = 5.0
# Slow commands a target is measured against (marked "r" in the plan) run
# this many times, the median counting, so that one slow spell of the host
# does not decide a target.
SLOW_RUNS = int(os.environ.get("BENCH_SLOW_RUNS", "3"))


def warm(cmd):
    """Reads the files `cmd` names (and, for a program in a virtualenv, the
    venv's modules), so that every tool starts with its input and code in
    the page cache. This machine pages out a file left idle for a minute
    (DAMON), and reading 1m.ndjson back from disk cost 1.1 s of a run."""
    for token in shlex.split(cmd):
        path = token.lstrip("<")
        if not os.path.isfile(path):
            continue
        venv = os.path.dirname(os.path.dirname(os.path.abspath(path)))
        files = [path]
        if os.path.isfile(os.path.join(venv, "pyvenv.cfg")):
            files += [os.path.join(d, f) for d, _, fs in os.walk(os.path.join(venv, "lib")) for f in fs]
        for name in files:
            try:
                with open(name, "rb") as f:
                    while f.read(1 << 20):
                        pass
            except OSError:
                pass


def measure(cmd):
    """Returns (seconds, peak MiB, status) of `bash -c cmd`, its input warm.
    The wait blocks until the command ends (a timer kills it at TIMEOUT):
    polling every 10 ms added 5 ms on average to every figure, a tenth of
    the quickest."""
    warm(cmd)
    with tempfile.TemporaryFile() as err_file:
        start = time.perf_counter()
        proc = subprocess.Popen(["bash", "-o", "pipefail", "-c", cmd], stdout=subprocess.DEVNULL,
                                stderr=err_file, start_new_session=True)
        timed_out = threading.Event()

        def kill():
            timed_out.set()
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

        # A daemon, cancelled whatever happens: Ctrl-C must not leave the
        # bench waiting out the timer.
        timer = threading.Timer(TIMEOUT, kill)
        timer.daemon = True
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if timed_out.is_set() and proc.returncode == -signal.SIGKILL:
            return TIMEOUT, None, "timeout"
        err_file.seek(0)
        err = err_file.read().decode(errors="replace").strip()
    if proc.returncode != 0:
        return wall, usage.ru_maxrss / 1024, "failed: " + err[-200:]
    return wall, usage.ru_maxrss / 1024, "ok"


def measure_section(cmds, yardsticks):
    """measure() for each command of a section, in plan order, then again,
    round after round in plan order, until each quick command (under
    REPEAT_UNDER seconds) has RUNS runs and each slow yardstick (a target's
    reference, `yardsticks[i]` true) has SLOW_RUNS: the median time and the
    largest memory count. Our quick runs thus straddle the reference's:
    run back to back before it, ours once measured 1.8 times the bench run
    before while the reference took 7% longer, and one reference run took
    94 s where the runs around it took 62-71 s: a slow spell of this shared
    machine fell on one side of the ratio."""
    runs = [[measure(cmd)] for cmd in cmds]

    def wanted(i):
        t, _, status = runs[i][0]
        if status != "ok":
            return 1
        if t < REPEAT_UNDER:
            return RUNS
        return SLOW_RUNS if yardsticks[i] else 1

    while True:
        due = [i for i in range(len(cmds)) if len(runs[i]) < wanted(i)]
        if not due:
            break
        for i in due:
            runs[i].append(measure(cmds[i]))
    return [summary(r) for r in runs]


def summary(runs):
    failed = next((r for r in runs if r[2] != "ok"), None)
    if failed:
        return failed
    times = sorted(r[0] for r in runs)
    return times[len(times) // 2], max(r[1] for r in runs), "ok"


def fmt_time(t, status):
    if status == "timeout":
        return f"> {TIMEOUT:.0f} s"
    return f"{t:.2f} s" if t >= 0.1 else f"{t * 1000:.0f} ms"


def main():
    # Lines of the plan: "## title", or "label\tmark\tcommand", the mark
    # "*" for the baseline (ours), "r" for a yardstick run SLOW_RUNS times.
    plan = [l.rstrip("\n") for l in open(sys.argv[1]) if l.strip()]
    out = []
    rows = []

    def flush():
        if not rows:
            return
        base = next((r for r in rows if r[1] == "*"), None)
        out.append("| tool | wall time | peak memory | ratio |")
        out.append("|---|---:|---:|---:|")
        for label, mark, t, mem, status in rows:
            ratio = ""
            if base and status in ("ok", "timeout") and base[4] == "ok" and base[2] > 0:
                ratio = "1.0 (ours)" if mark == "*" else f"{t / base[2]:.1f}x slower than ours" if t >= base[2] else f"{base[2] / t:.1f}x faster than ours"
                if status == "timeout":
                    ratio = f"> {t / base[2]:.0f}x slower than ours"
            mem_s = f"{mem:.0f} MiB" if mem is not None else "-"
            shown = status if status not in ("ok", "timeout") else ""
            cell = label.replace("|", "\\|")
            out.append(f"| {cell} | {fmt_time(t, status)} {shown} | {mem_s} | {ratio} |")
        out.append("")
        rows.clear()

    pending = []

    def measure_pending():
        results = measure_section([cmd for _, _, cmd in pending], ["r" in mark for _, mark, _ in pending])
        for (label, mark, _), (t, mem, status) in zip(pending, results):
            print(f"  {label}: {fmt_time(t, status)}, {mem or 0:.0f} MiB, {status}", flush=True)
            rows.append((label, mark, t, mem, status))
        pending.clear()

    for line in plan:
        if line.startswith("#"):
            measure_pending()
            flush()
        if line.startswith("##"):
            out.append(line)
            out.append("")
            print(line, flush=True)
            continue
        if line.startswith("#"):
            out.append(line[1:].strip())
            out.append("")
            continue
        pending.append(tuple(line.split("\t", 2)))
    measure_pending()
    flush()
    os.makedirs("bench-out", exist_ok=True)
    with open("bench-out/results.md", "w") as f:
        f.write("\n".join(out) + "\n")
    print()
    print("\n".join(out))


if __name__ == "__main__":
    main()
