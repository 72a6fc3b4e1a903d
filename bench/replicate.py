#!/usr/bin/env python3
"""Writes a sample export over and over, its ids made unique in each copy
and its times an hour later than the copy before, to about SIZE bytes: a
large input of the sample's own format for `make bench`, read as a day's
export is, trace after trace (a copy at the same instant as the last
would be a stream whose clock never moves, every trace open to its end).
Usage: replicate.py SAMPLE SIZE > OUT. A JSON Lines sample is written line
by line; a JSON document as one compact document a line."""
import datetime
import json
import re
import sys

# Keys that hold an id (trace, span, run, observation, parent, session …).
ID_KEY = re.compile(r"(^|[._])id$|Id$|_ids?$|^id$", re.IGNORECASE)


# Times as exports write them: ISO 8601 text, LangSmith's dotted order
# (a compact time per ancestor), [seconds, nanoseconds] pairs.
ISO = re.compile(r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})$")
DOTTED = re.compile(r"(\d{8}T\d{6})(\d{6})Z")
TIME_PAIR_KEY = re.compile(r"[Tt]ime$")
STEP = 3600


def later_iso(text, seconds):
    m = ISO.match(text)
    if not m:
        return text
    t = datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S") + datetime.timedelta(seconds=seconds)
    return t.strftime("%Y-%m-%dT%H:%M:%S") + (m.group(2) or "") + m.group(3)


def later_dotted(text, seconds, copy):
    """A dotted order's times made later and its run ids those of the copy."""
    def segment(part):
        m = DOTTED.match(part)
        if not m:
            return part
        t = datetime.datetime.strptime(m.group(1), "%Y%m%dT%H%M%S") + datetime.timedelta(seconds=seconds)
        return t.strftime("%Y%m%dT%H%M%S") + m.group(2) + "Z" + part[m.end():] + f"-{copy}"
    return ".".join(segment(p) for p in text.split("."))


def rewrite(value, copy, key=""):
    later = copy * STEP
    if isinstance(value, dict):
        return {
            k: (f"{v}-{copy}" if isinstance(v, str) and v and ID_KEY.search(k) else rewrite(v, copy, k))
            for k, v in value.items()
        }
    if isinstance(value, list):
        if TIME_PAIR_KEY.search(key) and len(value) == 2 and all(isinstance(v, int) for v in value):
            return [value[0] + later, value[1]]
        return [rewrite(v, copy) for v in value]
    if isinstance(value, str) and key == "dotted_order":
        return later_dotted(value, later, copy)
    if isinstance(value, str) and later:
        return later_iso(value, later)
    return value


def main():
    sample, size = sys.argv[1], int(sys.argv[2])
    text = open(sample, encoding="utf-8").read()
    try:
        docs = [json.loads(text)]
    except json.JSONDecodeError:
        docs = [json.loads(line) for line in text.splitlines() if line.strip()]
    written, copy = 0, 0
    out = sys.stdout
    while written < size:
        for doc in docs:
            line = json.dumps(rewrite(doc, copy), separators=(",", ":")) + "\n"
            out.write(line)
            written += len(line.encode())
        copy += 1


if __name__ == "__main__":
    main()
