#!/bin/bash
# Session 22, call 2 (one H200). A check set for the copy kernel's CTA
# packing and the waits behind a packed copy, on pairs the model was not
# set on; the simulator's predictions were written before the call
# (call2-sim.txt, call2.py). Chains: a 64 MiB h2d reload feeding a GEMM,
# whole and decomposed into 4 and 8 chunks (c3lab run, 20 repetitions);
# streams: twelve 512x28672x4096 or eight 2048x8192x8192 GEMMs beside a
# 128 MiB h2d copy kernel, compute-first at 16, 32 and 64 CTAs, twice
# (c3lab export).
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
cd .gpu && gunzip -kf c3lab.gz && cd ..
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > $OUT/smi-before.csv 2>&1
B=.gpu/c3lab
P=backends/cuda/results/2026-12-04-h200x1-s22/probe
stamp() { date -u +%H:%M:%S.%N | cut -c1-12; }
ch() { # probe decompose ctas
  local t=$1-d$2-c$3
  echo "$t $(stamp)" >> $OUT/stamps.txt
  timeout -s INT 120 $B run --backend cuda --scenario $P/$1.yaml --decompose $2 --comm-ctas $3 --precision off --json > $OUT/$t.json 2> $OUT/$t.err
}
for d in 1 4 8; do ch ck-reload-8192x14336x4096-h64 $d 32; done
ch ck-reload-8192x14336x4096-h64 8 16
ch ck-reload-8192x14336x4096-h64 8 64
for d in 1 4 8; do ch ck-reload-4096x28672x8192-h64 $d 32; done
for pass in 1 2; do
  for s in tc-g512x28672x4096x12-h128 tc-g2048x8192x8192x8-h128; do
    for c in 16 32 64; do
      t=$s-cf$c-p$pass
      echo "$t $(stamp)" >> $OUT/stamps.txt
      timeout -s INT 60 $B export --backend cuda --scenario $P/$s.yaml --launch compute-first --comm-priority 0 --comm-ctas $c --chrome $OUT/$t.json --force > $OUT/$t.out 2> $OUT/$t.err
    done
  done
done
echo "end $(stamp)" >> $OUT/stamps.txt
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-after.csv 2>&1
$B doctor --json > $OUT/doctor.json 2>&1
cd $OUT && find . -name '*.err' -size 0 -delete; tar czf all.tgz * && ls | wc -l
