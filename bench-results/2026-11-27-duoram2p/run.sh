#!/bin/bash
# 2P-Duoram (two parties, no helper): READ by SPIR per size and on an emulated slow network,
# the SharedMemory backend through doram bench oram, and binary search on it beside the
# two-party scan machine's run of 2026-11-27-two-party (same array).
# bash run.sh DORAM READ2P UPDATE2P DUORAM_BENCH (release builds of the binary and the examples).
set -e
D=${1:-doram}
R=${2:-read2p}
W=$(mktemp -d)
note() { echo "$1 $(cut -d' ' -f1-3 /proc/loadavg)" >> load.txt; }
for p in "16 10" "20 5" "22 3"; do
  set -- $p
  note read-2p$1
  "$R" $1 $2 > read-2p$1.txt
done
note read-2p20-1mbit-100ms
"$R" 20 3 100 1 > read-2p20-1mbit-100ms.txt
for l in 12 16 20; do
  note oram-2p$l
  "$D" --json -q bench oram --protocol duoram2p --log-n $l --accesses 8 > oram-2p$l.json
done
python3 ../2026-11-27-shuffle/gen-search.py 16383 1 $W/sorted.csv $W/keys.txt
python3 ../2026-11-27-shuffle/gen-search.py 1048575 1 $W/sorted20.csv $W/keys20.txt
note binary-search-16383
/usr/bin/time -f "%e %M" -o $W/t.txt "$D" --json -q run binary-search --data $W/sorted.csv \
  --keys $W/keys.txt --backend duoram2p > binary-search-16383.json
echo "binary-search-16383 wall_s,peak_kb $(cat $W/t.txt)" >> load.txt
note binary-search-1048575
/usr/bin/time -f "%e %M" -o $W/t.txt "$D" --json -q run binary-search --data $W/sorted20.csv \
  --keys $W/keys20.txt --backend duoram2p > binary-search-1048575.json
echo "binary-search-1048575 wall_s,peak_kb $(cat $W/t.txt)" >> load.txt
rm -r $W
# Binary search by backend and size: where 2P-Duoram overtakes the two-party scan machine.
for b in gkk12 duoram2p; do
  note program-$b
  "$D" --json -q bench program --program binary-search --sizes 255,1023,4095,16383 \
    --backend $b > program-binary-search-$b.json
done
# The largest sizes: READ at 2^24, UPDATE at 2^22 and 2^24 (update2p example, 2P only).
note read-2p24
"$R" 24 2 > read-2p24.txt
U=${3:-update2p}
for p in "22 4" "24 2"; do
  set -- $p
  note update-2p$1
  "$U" $1 $2 --no-3p > update-2p$1.txt
done
# 3P-Duoram's online READ beside it (Z_2^64 words, three parties): the duoram_bench example.
B=${4:-duoram_bench}
for l in 16 20; do
  note read-3p$l
  "$B" $l 16 reads > read-3p$l.txt
done
# quiet/: the same READ (2^16 once, 2^20 three times) and backend runs with nothing else running.
