#!/bin/bash
# Session 18, call 4 (one H200). Call 3 for GEMMs: the d2h copy kernel's
# write stall on bf16 GEMMs of low, medium and high arithmetic intensity
# (a 128-row decode GEMM, 4096^3, 8192^3) beside d2h copies of 32 and 128
# MiB launched first with priority at 8, 16, 32 and 64 CTAs, and in a
# 32-SM partition at its default 32; each one `c3lab run` of 20
# repetitions after the default settling.
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > $OUT/smi-before.csv 2>&1
B=.gpu/c3lab
R=backends/cuda/results/2026-12-03-h200x1-s18/probe
stamp() { date -u +%H:%M:%S.%N | cut -c1-12; }
echo "start $(stamp)" >> $OUT/stamps.txt
for f in $R/wg-*.yaml; do
  n=$(basename $f .yaml)
  for c in 8 16 32 64; do
    timeout -s INT 30 $B run --backend cuda --scenario $f --launch comm-first --comm-priority -5 --comm-ctas $c \
      --precision off --reps 20 --json > $OUT/$n-first-c$c.json 2> $OUT/$n-first-c$c.err
  done
  timeout -s INT 30 $B run --backend cuda --scenario $f --comm-sms 32 \
    --precision off --reps 20 --json > $OUT/$n-sms32.json 2> $OUT/$n-sms32.err
done
echo "end $(stamp)" >> $OUT/stamps.txt
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-after.csv 2>&1
$B doctor --json > $OUT/doctor.json 2>&1
cd $OUT && tar czf all.tgz * && ls | wc -l
