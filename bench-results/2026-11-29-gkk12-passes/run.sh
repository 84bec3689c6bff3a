#!/bin/sh
# How the figures of BENCHMARKS.md "Fewer passes over memory" were taken (Intel Xeon, 2 vCPUs,
# 2026-11-29). BASE is a release build of c308617's CLI (reads and searches as at 265e7cc), NEW
# of the change (d9f10a2 for "t4", b47d41c for "t5"); the builds alternate.
set -e
ab() { # ab PAIRS BACKEND BIN...
  pairs=$1; be=$2; shift 2
  for i in $(seq "$pairs"); do for b in "$@"; do
    "$b" --json -q bench gkk12 --log-n 20 --accesses 8 --searches 3 --backend "$be" > /tmp/ab.json
    python3 -c "import json;d=json.load(open('/tmp/ab.json'))['sizes'][0];print('$b', '$be', 'read', round(d['access']['median_ms']/1e3,3), 'search', round(d['search']['median_ms']/1e3,2), '(min', round(d['search']['min_ms']/1e3,2), end=')\n')"
  done; done
}
ab 3 tls "$BASE" "$NEW"          # ab-tls.txt
ab 1 tcp "$BASE" "$NEW"          # ab-tcp-local.txt
ab 1 local "$BASE" "$NEW"
# The load by the two parties alone over each transport (access example, its 6th argument):
for be in tls tcp local; do
  /usr/bin/time -f "%e s wall %U user %S sys" target/release/examples/access 20 512 1 sorted read $be
done                              # load20.txt
