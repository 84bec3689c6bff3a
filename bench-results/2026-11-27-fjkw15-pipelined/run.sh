#!/usr/bin/env bash
# FJKW15 after evicting all trees at once: `doram bench fjkw15` (4- and 8-byte records, three
# parties as threads over TLS on loopback, forest dealt insecurely, each read's
# pre-computation apart) three times; then `bench compare` on the emulated LAN with the
# protocols of bench-results/2026-11-27-compare at 2^12..2^20, and FJKW15 alone at 2^24.
# Usage: bench-results/2026-11-27-fjkw15-pipelined/run.sh [OUT_DIR]
set -euo pipefail
out="${1:-$(dirname "$0")}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
cd "$(dirname "$0")/../.."
cargo build -q --release -p doram-cli
target="$(cd "${CARGO_TARGET_DIR:-target}" && pwd)"
load() { echo "$1 $(cut -d' ' -f1-3 /proc/loadavg) $(date +%H:%M:%S)" >> "$out/load.txt"; }
for run in 1 2 3; do
  load "start bench-fjkw15 run=$run"
  "$target/release/doram" --json bench fjkw15 --log-n 12,20,24 --record-bytes 4,8 \
    --accesses 30 > "$out/bench-fjkw15-$run.json"
done
load "start compare"
"$target/release/doram" -q bench compare \
  --protocols ramen,duoram,fjkw15,duoram2p-z64 --log-n 12..20:4 --net lan \
  --insecure-dealt-load --out "$out/compare" > "$out/compare.txt"
load "start compare-24"
"$target/release/doram" -q bench compare --protocols fjkw15 \
  --log-n 24 --net lan --insecure-dealt-load --out "$out/compare-24" > "$out/compare-24.txt"
load "end"
# Paths in the reports relative to the checkout, not this machine.
find "$out" -name "compare*.txt" -o -name compare.json | xargs sed -i "s|$PWD/||g"
