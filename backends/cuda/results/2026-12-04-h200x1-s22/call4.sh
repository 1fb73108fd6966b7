#!/bin/bash
# Session 22, call 4 (one H200). A check set for the copy kernel's cohorts
# (the CTAs that got SMs together read host memory in the order they
# started, at most one CTA's bandwidth per SM): one GEMM of fewer CTAs than
# SMs beside a 192 MiB h2d or d2h copy kernel, compute-first, at several CTA
# counts (c3lab run, 20 repetitions). The simulator's predictions were
# written before the call (call4-sim.txt, call4.py).
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
cd .gpu && gunzip -kf c3lab.gz && cd ..
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > $OUT/smi-before.csv 2>&1
B=.gpu/c3lab
P=backends/cuda/results/2026-12-04-h200x1-s22/probe
stamp() { date -u +%H:%M:%S.%N | cut -c1-12; }
r() { # probe ctas
  echo "$1-c$2 $(stamp)" >> $OUT/stamps.txt
  timeout -s INT 120 $B run --backend cuda --scenario $P/$1.yaml --comm-ctas $2 --precision off --json > $OUT/$1-c$2.json 2> $OUT/$1-c$2.err
}
for c in 16 32 48 64; do r pf-64x8192x4096-h2d-192 $c; done
for c in 24 48 64; do r pf-128x28672x4096-h2d-192 $c; done
for c in 6 10 14 18 24; do r pf-256x16384x6144-h2d-192 $c; done
for c in 16 24; do r pf-256x16384x6144-d2h-192 $c; done
r pf-128x28672x4096-d2h-192 64
echo "end $(stamp)" >> $OUT/stamps.txt
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-after.csv 2>&1
$B doctor --json > $OUT/doctor.json 2>&1
cd $OUT && find . -name '*.err' -size 0 -delete; tar czf all.tgz * && ls | wc -l
