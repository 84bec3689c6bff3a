#!/usr/bin/env bash
# A binary-search database kept between runs (`doram run binary-search --backend gkk12-tree
# --store DIR`): one run that loads n words by the two parties alone (the sorted load) and
# searches one key, then three runs that resume the stored ORAM and search one random key
# each. Both parties as threads of one process on this host, in-memory links. Each command's
# wall time and peak RSS from /usr/bin/time, its parties' parts in the JSON, the stores' sizes;
# every output checked against the array (verified.txt).
# Usage: [SIZES="65535 262143 1048575"] [STORE_ROOT=/tmp] bench-results/2026-11-28-gkk12-stored/run.sh [OUT_DIR]
set -euo pipefail
out="${1:-$(dirname "$0")}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
cd "$(dirname "$0")/../.."
cargo build -q --release -p doram-cli
target="$(cd "${CARGO_TARGET_DIR:-target}" && pwd)"
root="${STORE_ROOT:-/tmp}/doram-stored-bench"
load() { echo "$1 $(cut -d' ' -f1-3 /proc/loadavg) $(date +%H:%M:%S)" >> "$out/load.txt"; }
for size in ${SIZES:-65535 262143 1048575}; do
  rm -rf "$root" && mkdir -p "$root"
  # Sorted entries 0, 3, 6, …: keys that are multiples of 3 are found.
  awk -v n="$size" 'BEGIN { for (i = 0; i < n; i++) print 3 * i }' > "$root/data.txt"
  # One run searching `key`; its output checked against the array (index = ⌈key/3⌉ capped
  # at n, found iff key is a multiple of 3 below 3n).
  run() {
    local name="$1" key="$2"; shift 2
    load "start $name"
    /usr/bin/time -f "%e s wall, %M KiB peak RSS" -o "$out/$name.time" \
      "$target/release/doram" --json -q run binary-search --backend gkk12-tree \
      --store "$root/db" --key "$key" "$@" > "$out/$name.json"
    local index=$(( (key + 2) / 3 )) found=false
    (( index > size )) && index=$size
    (( key % 3 == 0 && key / 3 < size )) && found=true
    local want="{\"found\":$found,\"index\":$index}"
    local got
    got="$(tr -d ' \n' < "$out/$name.json" | grep -o '"results":\[{[^]]*}\]' | head -1 | sed 's/"results":\[\(.*\)\]/\1/')"
    if [ "$got" = "$want" ]; then echo "$name key $key: $got verified" >> "$out/verified.txt"
    else echo "$name key $key: got $got, want $want" >&2; exit 1; fi
  }
  run "load-$size" $((3 * (size / 2))) --data "$root/data.txt"
  du -b "$root/db/p0/search.db" "$root/db/p1/search.db" | sed "s|$root/||" > "$out/store-$size.txt"
  for r in 1 2 3; do
    run "resume-$size-$r" $(( (RANDOM * 32768 + RANDOM) % (3 * size + 3) ))
  done
done
rm -rf "$root"
load "end"
