#!/bin/sh
# The runs behind BENCHMARKS.md "Half-gates on vector registers" (2026-11-29, ninth session),
# Intel Xeon host (model 207), 2 vCPUs, alternating builds: BASE = 6cb9fff, NEW = 05046a6.
set -e
# Garbling and evaluation alone, per AND gate (criterion, one thread, no I/O):
cargo bench -p doram-twopc --bench gc -- --warm-up-time 1 --measurement-time 3 "select|mux|chain"
# Binary searches at 2^18 over in-memory links (the example prints per-search medians):
cargo build --release -p doram-gkk12 --examples
for i in 1 2 3; do
  $BASE/examples/access 18 512 6 load search local
  $NEW/examples/access 18 512 6 load search local
done
# doram bench gkk12 at 2^20, alternating, over each transport:
for t in tls tcp local; do
  $BASE/doram --json -q bench gkk12 --log-n 20 --accesses 8 --searches 3 --backend $t
  $NEW/doram --json -q bench gkk12 --log-n 20 --accesses 8 --searches 3 --backend $t
done
# The two-party load of 2^20 x 512 bits over each transport (/usr/bin/time around each):
for t in tcp tls local; do $NEW/examples/access 20 512 1 sorted read $t; done
