#!/usr/bin/env bash
# The two-party machine over GKK12's tree ORAM, loaded by the two parties alone with the
# sorted load (`doram_gkk12::sortload`: an oblivious bin sort of every word), on one binary
# search of one key (`doram bench program`, F_p words, both parties on this host, in memory).
# One run per size.
# Usage: [SIZES="255 1023"] bench-results/2026-11-28-gkk12-sortload/run.sh [OUT_DIR]
set -euo pipefail
out="${1:-$(dirname "$0")}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
cd "$(dirname "$0")/../.."
cargo build -q --release -p doram-cli
target="$(cd "${CARGO_TARGET_DIR:-target}" && pwd)"
load() { echo "$1 $(cut -d' ' -f1-3 /proc/loadavg) $(date +%H:%M:%S)" >> "$out/load.txt"; }
for size in ${SIZES:-255 1023 4095 16383 65535 262143}; do
  load "start gkk12-tree $size"
  "$target/release/doram" --json -q bench program --program binary-search \
    --sizes "$size" --backend gkk12-tree > "$out/search-gkk12-tree-$size.json"
done
load "end"
