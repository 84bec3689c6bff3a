#!/usr/bin/env bash
# The two-party machine's three memories on one binary search of one key (`doram bench
# program`, F_p words, both parties on this host, in memory): GKK12's tree ORAM loaded by the
# two parties alone (one ORAM write per entry, GKK12 Figure 1), GKK12's linear scan, and
# 2P-Duoram. Each size once per backend, backends alternating. Recorded at commit 0de882e, when
# gkk12-tree always loaded by Figure 1; since cf83f0a it loads a memory with more than 64 words
# not publicly 0 by the sorted load (bench-results/2026-11-28-gkk12-sortload).
# Usage: [SIZES="255 1023"] bench-results/2026-11-28-gkk12-tree/run.sh [OUT_DIR]
# (recorded: SIZES="255 1023 4095", then SIZES=16383)
set -euo pipefail
out="${1:-$(dirname "$0")}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
cd "$(dirname "$0")/../.."
cargo build -q --release -p doram-cli
target="$(cd "${CARGO_TARGET_DIR:-target}" && pwd)"
load() { echo "$1 $(cut -d' ' -f1-3 /proc/loadavg) $(date +%H:%M:%S)" >> "$out/load.txt"; }
for size in ${SIZES:-255 1023 4095 16383}; do
  for backend in gkk12-tree gkk12 duoram2p; do
    load "start $backend $size"
    "$target/release/doram" --json -q bench program --program binary-search \
      --sizes "$size" --backend "$backend" > "$out/search-$backend-$size.json"
  done
done
load "end"
