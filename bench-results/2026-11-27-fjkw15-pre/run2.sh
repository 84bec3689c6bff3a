#!/usr/bin/env bash
# After run.sh: `doram bench fjkw15` (the access on XOR-shared records of 4 and 8 bytes, three
# parties as threads over TLS on loopback, forest dealt insecurely, each read's
# pre-computation apart; the anchors beside), three runs; then FJKW15 at 2^24 in
# `bench compare` on the emulated LAN (run.sh's attempt stopped on a 30 s receive timeout
# while D and E built the dealt forest; D now tells C and E when it is done).
# Usage: bench-results/2026-11-27-fjkw15-pre/run2.sh [OUT_DIR]
set -euo pipefail
out="${1:-$(dirname "$0")}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
cd "$(dirname "$0")/../.."
cargo build -q --release -p doram-cli
target="$(cd "${CARGO_TARGET_DIR:-target}" && pwd)"
load() { echo "$1 $(cut -d' ' -f1-3 /proc/loadavg) $(date +%H:%M:%S)" >> "$out/load2.txt"; }
for run in 1 2 3; do
  load "start bench-fjkw15 run=$run"
  "$target/release/doram" --json bench fjkw15 --log-n 12,20,24 --record-bytes 4,8 \
    --accesses 30 > "$out/bench-fjkw15-$run.json"
done
load "start compare-24"
"$target/release/doram" -q bench compare --protocols fjkw15 \
  --log-n 24 --net lan --insecure-dealt-load --out "$out/compare-24" > "$out/compare-24.txt"
load "end"
# Paths in the reports relative to the checkout, not this machine.
find "$out" -name "compare*.txt" -o -name compare.json | xargs sed -i "s|$PWD/||g"
