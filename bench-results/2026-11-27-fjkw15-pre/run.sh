#!/usr/bin/env bash
# FJKW15 with its pre-computation apart, at the issue's anchor points (w = 32, 4-byte
# records, three parties as threads over mutually authenticated TLS on loopback, forest dealt
# insecurely by the testkit), three runs each; then `bench compare` on the emulated LAN with
# the same protocols as bench-results/2026-11-27-compare, and FJKW15 alone at 2^24.
# Usage: bench-results/2026-11-27-fjkw15-pre/run.sh [OUT_DIR]
set -euo pipefail
out="${1:-$(dirname "$0")}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
cd "$(dirname "$0")/../.."
cargo build -q --release -p doram-fjkw15 --features testkit --example bandwidth
cargo build -q --release -p doram-cli
target="$(cd "${CARGO_TARGET_DIR:-target}" && pwd)"
load() { echo "$1 $(cut -d' ' -f1-3 /proc/loadavg) $(date +%H:%M:%S)" >> "$out/load.txt"; }
: > "$out/anchors.txt"
for point in "12 3 30" "20 4 30" "24 3 20"; do
  set -- $point
  for run in 1 2 3; do
    load "start m=$1 run=$run"
    "$target/release/examples/bandwidth" "$1" "$2" 32 "$3" tls >> "$out/anchors.txt"
  done
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
