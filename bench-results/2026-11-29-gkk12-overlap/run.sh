#!/bin/bash
# Alternating pairs: doram bench gkk12 at 2^20 over TLS, before (028c611, /tmp/doram-old) and
# after the steps overlap (a5db715, /tmp/doram-new). Output in ab20.txt.
for r in 1 2 3; do
  for b in old new; do
    echo "== $b run $r $(date +%T) load $(cut -d' ' -f1 /proc/loadavg)"
    /usr/bin/time -f "wall %e user %U sys %S" /tmp/doram-$b -q bench gkk12 --log-n 20 --accesses 10 --searches 3 --backend tls 2>&1 | grep -E "read|wall"
  done
done
