#!/usr/bin/env python3
"""Writes a sample export over and over, its ids made unique in each copy,
to about SIZE bytes: a large input of the sample's own format for `make
bench`. Usage: replicate.py SAMPLE SIZE > OUT. A JSON Lines sample is
written line by line; a JSON document as one compact document a line."""
import json
import re
import sys

# Keys that hold an id (trace, span, run, observation, parent, session …).
ID_KEY = re.compile(r"(^|[._])id$|Id$|_ids?$|^id$", re.IGNORECASE)


def rewrite(value, copy):
    if isinstance(value, dict):
        return {
            k: (f"{v}-{copy}" if isinstance(v, str) and v and ID_KEY.search(k) else rewrite(v, copy))
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [rewrite(v, copy) for v in value]
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
