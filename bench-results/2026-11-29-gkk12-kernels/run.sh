#!/bin/bash
# The 2^20 × 512-bit sorted load by the two parties alone, alternating the session's start
# (d15e78a, /tmp/access-base) and c308617 (/tmp/access-s3), both built with
#   cargo build --release -p doram-gkk12 --examples
# and target/release/examples/access copied aside. The arguments number the pairs:
#   ./run.sh 1 2 3 > load20-ab.txt
pairs=("$@")
[ ${#pairs[@]} -eq 0 ] && pairs=(1 2)
for r in "${pairs[@]}"; do
  for b in base s3; do
    echo "== $b run $r $(date +%T) load $(cut -d' ' -f1 /proc/loadavg)"
    /usr/bin/time -f "wall %e user %U sys %S maxrss %M" /tmp/access-$b 20 512 1 sorted 2>&1 \
      | grep -E "loaded|sent|per access|wall"
  done
done
