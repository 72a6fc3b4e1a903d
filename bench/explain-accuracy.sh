#!/usr/bin/env bash
# make bench-explain: triage-explain on every set the repository carries:
# accuracy on the labelled Who&When runs (even-numbered developed on, odd held
# out) with calibration, and per-detector verdict shares on the unlabelled sets.
# Usage: bench/explain-accuracy.sh [--dump DIR] [--fit]   (make bench-explain ARGS=--fit)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked --quiet --bins --example bench_explain
exec target/release/examples/bench_explain "$@"
