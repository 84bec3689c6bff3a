#!/bin/bash
# The session's final build (bc4d5fb): two scripted runs of doram bench gkk12 over TLS, then
# two alternating pairs at 2^20 against the session's start (028c611).
for r in 1 2; do
  echo "== final run $r $(date +%T) load $(cut -d' ' -f1 /proc/loadavg)"
  /tmp/doram-final --json -q bench gkk12 --log-n 16,18,20 --accesses 10 --searches 3 > gkk12-run$r.json
done
for r in 1 2; do
  for b in old final; do
    echo "== $b run $r $(date +%T) load $(cut -d' ' -f1 /proc/loadavg)"
    /usr/bin/time -f "wall %e user %U sys %S" /tmp/doram-$b -q bench gkk12 --log-n 20 --accesses 10 --searches 3 --backend tls 2>&1 | grep -E "read|wall"
  done
done
