#!/usr/bin/env bash
# FJKW15 after the uniform picks: one `doram bench fjkw15` run of 10 reads per point, for its
# bytes (the times were taken with builds running beside it).
# Usage: bench-results/2026-11-27-fjkw15-uniform/run.sh [OUT_DIR]
set -euo pipefail
out="${1:-$(dirname "$0")}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
cd "$(dirname "$0")/../.."
cargo build -q --release -p doram-cli
target="$(cd "${CARGO_TARGET_DIR:-target}" && pwd)"
echo "start $(cut -d' ' -f1-3 /proc/loadavg) $(date +%H:%M:%S)" > "$out/load.txt"
"$target/release/doram" --json bench fjkw15 --log-n 12,20,24 --record-bytes 4,8 \
  --accesses 10 > "$out/bench-fjkw15.json"
echo "end $(cut -d' ' -f1-3 /proc/loadavg) $(date +%H:%M:%S)" >> "$out/load.txt"
