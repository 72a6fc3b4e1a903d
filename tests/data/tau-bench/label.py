#!/usr/bin/env python3
"""Labels each failed τ-bench run with its decisive step, from the task's
expected actions (the benchmark's ground truth): the first call that
changes the database (or hands the user to a person) and is not one of the
expected actions, with the same arguments; else, when an expected action
is missing, the assistant's last message (the run ended without it); else
(every action right, the answer wrong) the assistant's last message.
Steps are numbered as `triage-parse --format taubench` numbers them.

Usage: label.py gpt-4o-airline.json EVENTS.ndjson > labels.tsv
"""
import json
import sys

READS = ("get_", "search_", "list_", "calculate", "think")


def main():
    runs = json.load(open(sys.argv[1]))
    events = {}
    for line in open(sys.argv[2]):
        r = json.loads(line)
        if r.get("kind") == "event":
            events.setdefault(r["run_id"], []).append(r)
    print("run_id\tagent\tstep\tcategory\tcertainty\treason")
    for run in runs:
        if run["reward"] >= 1:
            continue
        rid = f"gpt-4o-airline/task-{run['task_id']}/trial-{run['trial']}"
        evs = sorted(events.get(rid, []), key=lambda e: e["step"])
        calls = [e for e in evs if e["agent_id"] == "assistant" and e["action_taken"]["tool_name"] != "message"]
        said = [e for e in evs if e["agent_id"] == "assistant" and e["action_taken"]["tool_name"] == "message"]
        expected = [(a["name"], a["kwargs"]) for a in run["info"]["task"]["actions"]]
        done = []
        label = None
        for e in calls:
            name = e["action_taken"]["tool_name"]
            if name.startswith(READS):
                continue
            try:
                args = json.loads(e.get("input") or "{}")
            except ValueError:
                args = None
            done.append((name, args))
            if (name, args) not in expected:
                names = [n for n, _ in expected]
                cat = "wrong_arguments" if name in names else "unrequested_action"
                label = (e["step"], cat, "sure", f"{name} is not an expected action with these arguments")
                break
        if label is None:
            missing = [n for n, k in expected if not n.startswith(READS) and (n, k) not in done]
            last = said[-1]["step"] if said else (evs[-1]["step"] if evs else 0)
            if missing:
                label = (last, "missing_action", "unsure", f"the run ended without {', '.join(missing)}")
            else:
                label = (last, "wrong_information", "unsure", "every expected action was taken; the answer was wrong")
        print(f"{rid}\tassistant\t{label[0]}\t{label[1]}\t{label[2]}\t{label[3]}")


main()
