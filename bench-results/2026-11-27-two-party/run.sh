#!/bin/bash
# Two-party runs (--backend gkk12) of the RAM programs: bash run.sh path/to/doram (release).
# The graphs, arrays and preference lists are those of the three-party runs of 2026-11-27.
set -e
D=${1:-doram}
W=$(mktemp -d)
for ve in "101 1000" "300 3000" "1000 10000"; do
  set -- $ve
  python3 ../2026-11-27-programs/gen-graph.py $1 $2 $W/g$1.txt
  awk '{print $1, $2}' $W/g$1.txt > $W/b$1.txt
done
python3 ../2026-11-27-shuffle/gen-search.py 16383 1 $W/sorted.csv $W/keys.txt
python3 ../2026-11-27-programs/gen_prefs.py 33 > $W/prefs33.json
run() { # name, args...
  local name=$1; shift
  echo "$name $(cut -d' ' -f1-3 /proc/loadavg)" >> load.txt
  /usr/bin/time -f "%e %M" -o $W/time.txt "$D" --json -q "$@" --backend gkk12 > $name.json
  echo "$name wall_s,peak_kb $(cat $W/time.txt)" >> load.txt
}
for r in 1 2 3; do
  for v in 101 300; do
    run dijkstra-v$v-run$r run dijkstra --graph $W/g$v.txt --source 0
    run bfs-v$v-run$r run bfs --graph $W/b$v.txt --source 0
  done
  run binary-search-16383-run$r run binary-search --data $W/sorted.csv --keys $W/keys.txt
  run matching-k33-run$r run stable-matching --prefs $W/prefs33.json
done
run bfs-v1000-run1 run bfs --graph $W/b1000.txt --source 0
rm -r $W
