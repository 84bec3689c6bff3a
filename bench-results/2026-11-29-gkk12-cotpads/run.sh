#!/bin/bash
# The 2^20 × 512-bit sorted load by the two parties alone, alternating the session's start
# (41d05dd, /tmp/access-old) and its end (90b9bf6, /tmp/access-new2): both built with
#   cargo build --release -p doram-gkk12 --examples
# and target/release/examples/access copied aside. The arguments number the pairs:
#   ./run.sh 1 2 > load20-ab.txt     (before CI on the final HEAD)
#   ./run.sh 3 4 > load20-ab2.txt    (after it)
pairs=("$@")
[ ${#pairs[@]} -eq 0 ] && pairs=(1 2)
for r in "${pairs[@]}"; do
  for b in old new2; do
    echo "== $b run $r $(date +%T) load $(cut -d' ' -f1 /proc/loadavg)"
    /usr/bin/time -f "wall %e user %U sys %S maxrss %M" /tmp/access-$b 20 512 1 sorted 2>&1 \
      | grep -E "loaded|sent|per access|wall"
  done
done
