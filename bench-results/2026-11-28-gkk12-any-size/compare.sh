#!/usr/bin/env bash
# The 2^20 × 512-bit load by the two parties alone, this build against an earlier one on the
# same machine in alternating runs (the machine's speed drifts between runs): `--example access
# -- 20 512 3 sorted` of BASE (default 6bb1edd, the last build with bins of powers of two) and
# of the working tree, ROUNDS times each (default 2), base first. Output: compare.txt, one line
# per run (build, load seconds, bytes from the server, peak RSS, load average).
# Usage: [BASE=rev] [ROUNDS=2] [LOG=20] bench-results/2026-11-28-gkk12-any-size/compare.sh [OUT_DIR]
set -euo pipefail
out="${1:-$(dirname "$0")}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
cd "$(dirname "$0")/../.."
base="${BASE:-6bb1edd}"
wt="$(mktemp -d)/base"
git worktree add -q --detach "$wt" "$base"
trap 'git worktree remove --force "$wt"' EXIT
target="$(cd "${CARGO_TARGET_DIR:-target}" && pwd)"
(cd "$wt" && CARGO_TARGET_DIR="$target-base" cargo build -q --release -p doram-gkk12 --example access)
cargo build -q --release -p doram-gkk12 --example access
for r in $(seq "${ROUNDS:-2}"); do
  for build in base new; do
    bin="$target/release/examples/access"
    [ "$build" = base ] && bin="$target-base/release/examples/access"
    avg="$(cut -d' ' -f1-3 /proc/loadavg)"
    /usr/bin/time -f "%M" -o "$out/compare.rss" "$bin" "${LOG:-20}" 512 3 sorted > "$out/compare.out"
    secs="$(grep -o 'loaded (two parties alone) in [0-9.]* s' "$out/compare.out" | grep -o '[0-9.]* s')"
    bytes="$(grep -o 'server sent [0-9]* bytes' "$out/compare.out" | head -1 | grep -o '[0-9]*')"
    echo "$build $([ "$build" = base ] && echo "$base" || git rev-parse --short HEAD) load $secs server $bytes B peak $(cat "$out/compare.rss") KiB loadavg $avg" >> "$out/compare.txt"
  done
done
rm -f "$out/compare.out" "$out/compare.rss"
