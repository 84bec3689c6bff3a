#!/usr/bin/env bash
# GKK12 at 2^22 entries of 512 bits, now that only the load's placement levels are stored:
# `doram bench gkk12` (secure load with the setup helper, 10 reads, 3 binary searches), once.
# Usage: bench-results/2026-11-27-gkk12-22/run.sh [OUT_DIR]
set -euo pipefail
out="${1:-$(dirname "$0")}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
cd "$(dirname "$0")/../.."
cargo build -q --release -p doram-cli
target="$(cd "${CARGO_TARGET_DIR:-target}" && pwd)"
load() { echo "$1 $(cut -d' ' -f1-3 /proc/loadavg) $(date +%H:%M:%S)" >> "$out/load.txt"; }
load "start bench-gkk12 2^22"
"$target/release/doram" --json -q bench gkk12 --log-n 22 --accesses 10 --searches 3 \
  > "$out/bench-gkk12-22.json"
load "end"
