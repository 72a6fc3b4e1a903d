#!/usr/bin/env bash
# make bench-explain: triage-explain's accuracy on the Who&When runs
# (`triage-parse --format whowhen FILE | triage-explain` per file) beside the
# random, most-frequent-agent and positional baselines, with 95% intervals.
# Usage: bench/explain-accuracy.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked --quiet --bins --example bench_explain
exec target/release/examples/bench_explain "${1:-tests/data/who-and-when/algorithm-generated}"
