#!/usr/bin/env bash
# The load by the two parties alone (`doram_gkk12::sortload`) after its bin sort took bins of
# any size (Beneš networks on any number of entries; at 2^20 the data tree's items go to bins
# of 72 at level 16, split between levels 16 and 17) and reused its buffers:
# 1. `--example access -- LOG_N 512 3 sorted`: 2^LOG_N entries of 512 bits, the server
#    holding the data, then 3 reads checked against it (both parties as threads, in memory);
# 2. the stored binary search of bench-results/2026-11-28-gkk12-stored (F_p words: the run
#    that loads, then three runs resuming the stored ORAM), re-run as it is there.
# One run per size; every output checked (access: each read; stored: verified.txt).
# Usage: [LOGS="16 18 20"] [SIZES="65535 262143 1048575"] bench-results/2026-11-28-gkk12-any-size/run.sh [OUT_DIR]
set -euo pipefail
out="${1:-$(dirname "$0")}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
cd "$(dirname "$0")/../.."
cargo build -q --release -p doram-gkk12 --example access
cargo build -q --release -p doram-cli
target="$(cd "${CARGO_TARGET_DIR:-target}" && pwd)"
load() { echo "$1 $(cut -d' ' -f1-3 /proc/loadavg) $(date +%H:%M:%S)" >> "$out/load.txt"; }
for log in ${LOGS:-16 18 20}; do
  load "start access $log"
  /usr/bin/time -f "%e s wall, %M KiB peak RSS" -o "$out/access-$log.time" \
    "$target/release/examples/access" "$log" 512 3 sorted > "$out/access-$log.txt"
done
SIZES="${SIZES:-65535 262143 1048575}" bench-results/2026-11-28-gkk12-stored/run.sh "$out"
