"""Run records for the runs triage-gen names run-00000 … : one line each,
its outcome decided by its number (a third failed, a tenth unknown), four
trials of each task. For the 100k-run rows of make bench."""
import sys

n = int(sys.argv[1])
width = max(5, len(str(n - 1)))
reasons = ["low_score", "wrong_answer", "timeout"]
out = sys.stdout
for i in range(n):
    if i % 10 == 9:
        outcome, extra = "unknown", ""
    elif i % 3 == 0:
        outcome, extra = "failed", f',"reason":"{reasons[i % 9 // 3]}"'
    else:
        outcome, extra = "succeeded", ""
    out.write(
        f'{{"kind":"run","run_id":"run-{i:0{width}d}","outcome":"{outcome}"{extra},'
        f'"task_id":"task-{i // 4}","trial":{i % 4}}}\n'
    )
