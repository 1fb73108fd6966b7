#!/bin/bash
# Session 19, call 2 (one H200). Call 1 found that the ops beside one long
# d2h copy kernel slow far more than beside the same bytes cut into sixteen
# copy kernels, and wait long between kernels. Here: the copy cut into 2, 8
# and 32 MiB kernels beside the stream ops and the decode GEMMs; the
# 4096^3 GEMMs beside the long copy at 8 and 16 CTAs; the stream ops at 24
# and 48 CTAs; the long copy alone cut into kernels (its own time).
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > $OUT/smi-before.csv 2>&1
B=.gpu/c3lab
R=backends/cuda/results/2026-12-03-h200x1-s19/probe
stamp() { date -u +%H:%M:%S.%N | cut -c1-12; }
ex() { # name tag flags...
  local n=$1 t=$2; shift 2
  echo "$n $t $(stamp)" >> $OUT/stamps.txt
  timeout -s INT 60 $B export --backend cuda --scenario $R/$n.yaml "$@" --chrome $OUT/$n-$t.json --force > $OUT/$n-$t.out 2> $OUT/$n-$t.err
}
for pass in 1 2; do
  for n in tc-s64x30-d2x64 tc-s64x30-d32x4 tc-gdec-x30-d2x64 tc-gdec-x30-d8x16 tc-gdec-x30-d32x4; do
    ex $n c32-p$pass
  done
  for c in 8 16; do ex tc-g4096x12-d128 c$c-p$pass --comm-ctas $c; done
  for c in 24 48; do ex tc-s64x30-d128 c$c-p$pass --comm-ctas $c; done
  for c in 8 64; do ex tc-s64x30-d8x16 c$c-p$pass --comm-ctas $c; done
done
echo "end $(stamp)" >> $OUT/stamps.txt
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-after.csv 2>&1
$B doctor --json > $OUT/doctor.json 2>&1
cd $OUT && tar czf all.tgz * && ls | wc -l
