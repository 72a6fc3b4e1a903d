#!/usr/bin/env python3
"""triage on Spark: map shards with `triage-parse | triage-group`, reduce with
`triage-group --merge | triage-score`, both through RDD.pipe.

    spark-submit examples/spark/triage_spark.py --out scored.ndjson INPUT...
    spark-submit examples/spark/triage_spark.py --by run --partitions 64 \\
        --bin /opt/triage/bin --out scored.ndjson 'hdfs:///traces/2026-12-04/*.ndjson'

--by file (the default) maps whole files, one file a task, so any format
triage-parse reads works and no run spans two mappers as long as no run spans
two files. --by run reads agent-triage NDJSON lines, gathers each run's events
in input order into one partition (keyed by run_id), and maps the partitions:
use it when a run's events are spread over many files. Either way the result
equals one pass of `triage-parse | triage-group | triage-score` over the
inputs (the runs' time order settles trends and ties, not the partition).

The triage binaries must be on every executor, at the same path (--bin) or on
PATH. A shard that triage-parse cannot read fails its task, and so the job:
no result silently lacks a shard.
"""

import argparse
import json
import os
import shlex
import shutil
import sys


def tool(bin_dir, name):
    """The command for a triage binary: under --bin, else found on PATH."""
    if bin_dir:
        return os.path.join(bin_dir, name)
    found = shutil.which(name)
    if not found:
        sys.exit(f"triage_spark.py: {name} is not on PATH; give --bin DIR")
    return found


def piped(*commands):
    """One shell pipeline for RDD.pipe. An empty partition writes nothing
    (triage-parse refuses an input with nothing in it), and pipefail makes a
    failed stage fail the task."""
    pipeline = " | ".join(shlex.join(c) for c in commands)
    script = (
        "set -o pipefail; IFS= read -r first || exit 0; "
        f'{{ printf "%s\\n" "$first"; cat; }} | {pipeline}'
    )
    return shlex.join(["bash", "-c", script])


def run_key(line):
    """A line's run_id; lines without one (not JSON, no run) share a key, so
    triage-parse still sees them and warns."""
    try:
        record = json.loads(line)
    except ValueError:
        return ""
    if isinstance(record, dict):
        run = record.get("run_id")
        if isinstance(run, (str, int)):
            return str(run)
    return ""


def in_order(group):
    """A run's lines in the order they were read."""
    return [line for _, line in sorted(group)]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("inputs", nargs="+", help="files, directories or globs Spark can read")
    parser.add_argument("--out", required=True, help="where the scored records go ('-' for stdout)")
    parser.add_argument("--by", choices=["file", "run"], default="file", help="how to shard")
    parser.add_argument("--partitions", type=int, default=0, help="map tasks (default: Spark's)")
    parser.add_argument("--bin", default="", help="directory of the triage binaries on every node")
    parser.add_argument("--master", default="", help="Spark master when not given by spark-submit")
    args = parser.parse_args(argv)

    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName("triage")
    if args.master:
        builder = builder.master(args.master)
    spark = builder.getOrCreate()
    sc = spark.sparkContext
    paths = ",".join(args.inputs)
    parse, group = tool(args.bin, "triage-parse"), tool(args.bin, "triage-group")
    score = tool(args.bin, "triage-score")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C.UTF-8"}

    if args.by == "file":
        files = sc.wholeTextFiles(paths).values()
        count = max(1, files.count())
        # One file a partition: documents (JSON arrays, span dumps) stay whole.
        shards = (
            files.zipWithIndex()
            .map(lambda pair: (pair[1], pair[0]))
            .partitionBy(count, lambda index: index)
            .values()
        )
    else:
        lines = sc.textFile(paths).zipWithIndex()
        partitions = args.partitions or sc.defaultParallelism
        shards = (
            lines.map(lambda pair: (run_key(pair[0]), (pair[1], pair[0])))
            .groupByKey(partitions)
            .flatMap(lambda run: in_order(run[1]))
        )

    partials = shards.pipe(piped([parse], [group]), env=env, checkCode=True)
    scored = partials.coalesce(1).pipe(
        piped([group, "--merge"], [score]), env=env, checkCode=True
    )
    records = scored.collect()
    spark.stop()
    if not records:
        sys.exit("triage_spark.py: no records: nothing could be read from the inputs")
    text = "".join(r + "\n" for r in records)
    if args.out == "-":
        sys.stdout.write(text)
    else:
        with open(args.out, "w", encoding="utf-8") as out:
            out.write(text)
        print(f"triage_spark.py: {len(records)} records written to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
