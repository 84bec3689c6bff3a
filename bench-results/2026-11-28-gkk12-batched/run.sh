#!/usr/bin/env bash
# Peak memory of the two-party load after its destinations went in batches of 2^18 entries
# (`doram run binary-search --backend gkk12-tree`, F_p words, one key, no store): the first
# run of bench-results/2026-11-28-gkk12-phased without the save. Both parties as threads of one
# process, in-memory links; wall time and peak RSS from /usr/bin/time; every output checked.
# Usage: [SIZES="262143 1048575"] bench-results/2026-11-28-gkk12-batched/run.sh [OUT_DIR]
set -euo pipefail
out="${1:-$(dirname "$0")}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
cd "$(dirname "$0")/../.."
cargo build -q --release -p doram-cli
target="$(cd "${CARGO_TARGET_DIR:-target}" && pwd)"
tmp="$(mktemp -d)"
load() { echo "$1 $(cut -d' ' -f1-3 /proc/loadavg) $(date +%H:%M:%S)" >> "$out/load.txt"; }
for size in ${SIZES:-262143 1048575}; do
  awk -v n="$size" 'BEGIN { for (i = 0; i < n; i++) print 3 * i }' > "$tmp/data.txt"
  key=$((3 * (size / 2)))
  load "start load-$size"
  /usr/bin/time -f "%e s wall, %M KiB peak RSS" -o "$out/load-$size.time" \
    "$target/release/doram" --json -q run binary-search --backend gkk12-tree \
    --data "$tmp/data.txt" --key "$key" > "$out/load-$size.json"
  got="$(tr -d ' \n' < "$out/load-$size.json" | grep -o '"results":\[{[^]]*}\]' | head -1)"
  want="\"results\":[{\"found\":true,\"index\":$((size / 2))}]"
  if [ "$got" = "$want" ]; then echo "load-$size key $key: verified" >> "$out/verified.txt"
  else echo "load-$size: got $got, want $want" >&2; exit 1; fi
done
rm -rf "$tmp"
load "end"
