#!/bin/bash
# Reproduces this directory's figures (release builds; the parties as threads of one process).
# 1. Alternating sorted loads of 2^20 x 512-bit items, f79f68e ("head": pad counters, load
#    extensions at k = 2, transposes unzeroed; the ORAM extension still k = 4) against 609f6be (built the
#    same way from that commit and copied to /tmp/access-609):
#      cargo build --release -p doram-gkk12 --example access
#      for r in 1 2 3 4; do for b in head 609; do /usr/bin/time -f "%e %U %M" \
#        /tmp/access-$b 20 512 3 sorted; done; done            > load-ab.txt
# 2. The bench command over TLS, this build:
set -eu
doram --json -q bench gkk12 --log-n 16,18,20 --accesses 10 --searches 3 > gkk12-run1.json
