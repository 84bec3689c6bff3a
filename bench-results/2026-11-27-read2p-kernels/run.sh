#!/bin/bash
# 2P-Duoram's READ after doram-spir's own NTT and first-dimension kernels and the one-pass
# answer (Server::answer_records), on F_p words (16-byte records) and on 64-bit words (8-byte
# records), beside 3P-Duoram's READ; then the two-party memory backend.
# bash run.sh READ2P DORAM DUORAM_BENCH UPDATE2P (release builds of the examples and the
# binary), from this directory; load.txt records the load average before each command.
set -e
R=${1:-read2p}
D=${2:-doram}
B=${3:-duoram_bench}
U=${4:-update2p}
note() { echo "$1 $(cut -d' ' -f1-3 /proc/loadavg)" >> load.txt; }
# The READs (the set -- below reuses the positional parameters).
for w in u64 fp; do
  arg=$([ "$w" = u64 ] && echo u64 || true)
  for p in "16 10" "20 5" "22 3" "24 2"; do
    set -- $p
    note read-2p$1-$w
    "$R" $1 $2 $arg > read-2p$1-$w.txt
  done
  note read-2p20-1mbit-100ms-$w
  "$R" 20 3 100 1 $arg > read-2p20-1mbit-100ms-$w.txt
done
# Two more runs of the headline READs at 2^20, 15 READs each.
for k in 2 3; do
  for w in u64 fp; do
    arg=$([ "$w" = u64 ] && echo u64 || true)
    note read-2p20-$w-run$k
    "$R" 20 15 $arg > read-2p20-$w-run$k.txt
  done
done
for l in 16 20; do
  note read-3p$l
  "$B" $l 16 reads > read-3p$l.txt
done
for l in 12 16 20; do
  note oram-2p$l
  "$D" --json -q bench oram --protocol duoram2p --log-n $l --accesses 8 > oram-2p$l.json
done
# 2P UPDATE on 64-bit words beside 3P-Duoram's over the same ring, and the 64-bit backend.
for p in "16 64" "20 16"; do
  set -- $p
  note update-2p$1-u64
  "$U" $1 $2 --u64 > update-2p$1-u64.txt
done
for l in 12 16 20; do
  note oram-2p$l-z64
  "$D" --json -q bench oram --protocol duoram2p-z64 --log-n $l --accesses 8 > oram-2p$l-z64.json
done
# Larger UPDATEs on 64-bit words, 2P only.
for p in "22 4" "24 2"; do
  set -- $p
  note update-2p$1-u64
  "$U" $1 $2 --u64 --no-3p > update-2p$1-u64.txt
done
# Binary search by backend and size: where 2P-Duoram (F_p words, the two-party machine's)
# overtakes the two-party scan machine, now with the faster READ.
for b in gkk12 duoram2p; do
  note program-$b
  "$D" --json -q bench program --program binary-search --sizes 255,1023,4095,16383 \
    --backend $b > program-binary-search-$b.json
done
