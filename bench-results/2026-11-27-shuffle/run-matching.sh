#!/bin/bash
# Stable matching reports of this directory: bash run-matching.sh path/to/doram.
set -e
D=${1:-doram}
W=$(mktemp -d)
for k in 33 100; do python3 ../2026-11-27-programs/gen_prefs.py $k > $W/prefs$k.json; done
for r in 1 2 3; do
  for k in 33 100; do
    for b in default ramen linear-scan; do
      echo "matching-k$k-$b-run$r $(cut -d' ' -f1-3 /proc/loadavg)" >> load.txt
      if [ $b = default ]; then extra=""; else extra="--backend $b"; fi
      "$D" --json -q bench program --program stable-matching --sizes $k $extra > matching-k$k-$b-run$r.json
    done
    echo "matching-run-k$k-run$r $(cut -d' ' -f1-3 /proc/loadavg)" >> load.txt
    "$D" --json -q run stable-matching --prefs $W/prefs$k.json > matching-run-k$k-run$r.json
  done
done
rm -r $W
