#!/usr/bin/env bash
# `bench compare` on the emulated LAN with FJKW15 on 8-byte (fjkw15) and 4-byte (fjkw15-z32)
# words beside Ramen, 3P-Duoram and 2P-Duoram, 2^12..2^20 and then 2^24, one run per point.
# FJKW15 starts from the insecurely dealt forest (its secure load is n accesses).
# Usage: bench-results/2026-11-27-compare-z32/run.sh [OUT_DIR]
set -euo pipefail
out="${1:-$(dirname "$0")}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
cd "$(dirname "$0")/../.."
cargo build -q --release -p doram-cli
target="$(cd "${CARGO_TARGET_DIR:-target}" && pwd)"
doram="$target/release/doram"
load() { echo "$1 $(cut -d' ' -f1-3 /proc/loadavg) $(date +%H:%M:%S)" >> "$out/load.txt"; }
protocols=ramen,duoram,duoram2p-z64,fjkw15,fjkw15-z32
load "start compare 2^12..2^20"
"$doram" -q bench compare --protocols "$protocols" --log-n 12..20:4 --net lan \
  --insecure-dealt-load --out "$out/compare" > "$out/compare.txt"
load "start compare 2^24"
"$doram" -q bench compare --protocols "$protocols" --log-n 24 --net lan \
  --insecure-dealt-load --out "$out/compare-24" > "$out/compare-24.txt"
load "end"
# FJKW15 alone at 2^24 again: the first sweep's fjkw15-z32 point, after four other 2^24 points
# in the same process, took twice as long as fjkw15's.
load "start rerun fjkw15-z32 2^24"
"$doram" -q bench compare --protocols fjkw15-z32,fjkw15 --log-n 24 --net lan \
  --insecure-dealt-load --out "$out/compare-24-rerun" > "$out/compare-24-rerun.txt" 2>&1
load "end rerun"
# Paths in the reports relative to the checkout, not this machine.
find "$out" -name "compare*.txt" -o -name compare.json | xargs sed -i "s|$PWD/||g"
