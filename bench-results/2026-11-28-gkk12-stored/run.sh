#!/usr/bin/env bash
# A binary-search database kept between runs (`doram run binary-search --backend gkk12-tree
# --store DIR`): one run that loads n words by the two parties alone (the sorted load) and
# searches one key, then three runs that resume the stored ORAM and search one random key
# each. Both parties as threads of one process on this host, in-memory links. Each command's
# wall time and peak RSS from /usr/bin/time, its parties' parts in the JSON, the stores' sizes.
# Usage: [SIZES="65535 262143"] [STORE_ROOT=/tmp] bench-results/2026-11-28-gkk12-stored/run.sh [OUT_DIR]
set -euo pipefail
out="${1:-$(dirname "$0")}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
cd "$(dirname "$0")/../.."
cargo build -q --release -p doram-cli
target="$(cd "${CARGO_TARGET_DIR:-target}" && pwd)"
root="${STORE_ROOT:-/tmp}/doram-stored-bench"
load() { echo "$1 $(cut -d' ' -f1-3 /proc/loadavg) $(date +%H:%M:%S)" >> "$out/load.txt"; }
for size in ${SIZES:-65535 262143}; do
  rm -rf "$root" && mkdir -p "$root"
  # Sorted entries 0, 3, 6, …: keys that are multiples of 3 are found.
  awk -v n="$size" 'BEGIN { for (i = 0; i < n; i++) print 3 * i }' > "$root/data.txt"
  run() {
    local name="$1"; shift
    load "start $name"
    /usr/bin/time -f "%e s wall, %M KiB peak RSS" -o "$out/$name.time" \
      "$target/release/doram" --json -q run binary-search --backend gkk12-tree \
      --store "$root/db" "$@" > "$out/$name.json"
  }
  run "load-$size" --data "$root/data.txt" --key $((3 * (size / 2)))
  du -b "$root/db/p0/search.db" "$root/db/p1/search.db" | sed "s|$root/||" > "$out/store-$size.txt"
  for r in 1 2 3; do
    run "resume-$size-$r" --key $(( (RANDOM * 32768 + RANDOM) % (3 * size + 3) ))
  done
done
rm -rf "$root"
load "end"
