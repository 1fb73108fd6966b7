#!/bin/bash
# Session 21, call 6 (one H200). A check of the read model's launch-order
# rule on GEMMs it was not set on: three of call 1's GEMMs (2048x8192x8192,
# 8192x7168x8192 and the decode GEMM 64x28672x8192) enqueued before a
# 128 MiB h2d copy kernel (compute-first) at 16, 32 and 64 copy CTAs, twice;
# the simulator's predictions were written before the call (call6-sim.txt).
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
gunzip -kf .gpu/c3lab.gz
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > $OUT/smi-before.csv 2>&1
B=.gpu/c3lab
P=backends/cuda/results/2026-12-03-h200x1-s21/probe
stamp() { date -u +%H:%M:%S.%N | cut -c1-12; }
ex() { # file tag flags...
  local f=$1 t=$2; shift 2
  local n=$(basename $f .yaml)
  echo "$n $t $(stamp)" >> $OUT/stamps.txt
  timeout -s INT 60 $B export --backend cuda --scenario $f "$@" --chrome $OUT/$n-$t.json --force > $OUT/$n-$t.out 2> $OUT/$n-$t.err
}
for pass in 1 2; do
  for s in 2048x8192x8192 8192x7168x8192 64x28672x8192; do
    for c in 16 32 64; do ex $P/gh-$s-h128.yaml cf$c-p$pass --launch compute-first --comm-priority 0 --comm-ctas $c; done
  done
done
echo "end $(stamp)" >> $OUT/stamps.txt
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-after.csv 2>&1
$B doctor --json > $OUT/doctor.json 2>&1
cd $OUT && find . -name '*.err' -size 0 -delete; tar czf all.tgz * && ls | wc -l
