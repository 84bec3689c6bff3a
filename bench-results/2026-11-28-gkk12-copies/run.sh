#!/bin/bash
# Reproduces this directory's figures (release builds; the parties as threads of one process).
# Both builds of the example come from `cargo build --release -p doram-gkk12 --example access`,
# at 470c691 (copied to /tmp/access-base) and at b9de027 (/tmp/access-final3).
# 1. Reads at 2^18 after the three-party load, alternating, with perf's software counters:
#      for r in 1 2 3; do for v in base final3; do
#        perf stat -e page-faults,task-clock /tmp/access-$v 18 512 41 load; done; done > access-ab.txt
# 2. The sorted load of 2^20 items by the two parties alone, one pair:
#      for v in final3 base; do /usr/bin/time -f "%e s wall, %U s user, %M KB max RSS" \
#        /tmp/access-$v 20 512 3 sorted; done                               > load-ab.txt
# 3. Kept SoftSpoken column buffers or not: /tmp/access-head at 1f9f291 against /tmp/access-nocols,
#    the same with 1a2c0e4's change to softspoken.rs reverted, as in step 1 > cols-ab.txt
# 4. The bench command over TLS, the doram binary built at b9de027, twice:
set -eu
doram --json -q bench gkk12 --log-n 16,18,20 --accesses 10 --searches 3 > gkk12-run1.json
doram --json -q bench gkk12 --log-n 16,18,20 --accesses 10 --searches 3 > gkk12-run2.json
