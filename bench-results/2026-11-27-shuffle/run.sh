#!/bin/bash
# Reproduces this directory's reports: bash run.sh path/to/doram (release build).
set -e
D=${1:-doram}
W=$(mktemp -d)
for ve in "101 1000" "300 3000" "1000 10000"; do
  set -- $ve
  python3 ../2026-11-27-programs/gen-graph.py $1 $2 $W/g$1.txt
  awk '{print $1, $2}' $W/g$1.txt > $W/b$1.txt
done
python3 gen-search.py 131073 1000 $W/sorted.csv $W/keys.txt
run() { # name, args...
  local name=$1; shift
  echo "$name $(cut -d' ' -f1-3 /proc/loadavg)" >> load.txt
  /usr/bin/time -f "%e %M" -o $W/time.txt "$D" --json -q "$@" > $name.json
  echo "$name wall_s,peak_kb $(cat $W/time.txt)" >> load.txt
}
for r in 1 2 3; do
  for v in 101 300 1000; do
    run dijkstra-v$v-run$r run dijkstra --graph $W/g$v.txt --source 0
    run bfs-v$v-run$r run bfs --graph $W/b$v.txt --source 0
  done
done
run binary-search-131073-1000keys-ramen run binary-search --data $W/sorted.csv --keys $W/keys.txt --backend ramen
run binary-search-131073-1000keys-duoram run binary-search --data $W/sorted.csv --keys $W/keys.txt
rm -r $W
