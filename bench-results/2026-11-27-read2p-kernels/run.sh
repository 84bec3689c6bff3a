#!/bin/bash
# 2P-Duoram's READ after doram-spir's own NTT and first-dimension kernels and the one-pass
# answer (Server::answer_records), on F_p words (16-byte records) and on 64-bit words (8-byte
# records), beside 3P-Duoram's READ; then the two-party memory backend.
# bash run.sh READ2P DORAM DUORAM_BENCH (release builds of the example, the binary and the
# example), from this directory; load.txt records the load average before each command.
set -e
R=${1:-read2p}
D=${2:-doram}
B=${3:-duoram_bench}
note() { echo "$1 $(cut -d' ' -f1-3 /proc/loadavg)" >> load.txt; }
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
for l in 16 20; do
  note read-3p$l
  "$B" $l 16 reads > read-3p$l.txt
done
for l in 12 16 20; do
  note oram-2p$l
  "$D" --json -q bench oram --protocol duoram2p --log-n $l --accesses 8 > oram-2p$l.json
done
