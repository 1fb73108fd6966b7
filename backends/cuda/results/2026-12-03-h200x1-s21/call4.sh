#!/bin/bash
# Session 21, call 4 (one H200). Do the d2h copy kernel's write stall and
# waits also depend on how the copy started, as the read ones do (calls
# 2-3)? Twelve 4096^3 GEMMs beside a 128 MiB d2h copy kernel at 8, 16 and
# 32 CTAs, the GEMMs enqueued first (compute-first) and the copy first
# (comm-first); the sweep pair's decode GEMM beside a 16 MiB d2h copy at 8
# and 32 CTAs in both orders; twice each.
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
  for c in 8 16 32; do
    ex $P/tc-g4096x12-d128.yaml cf$c-p$pass --launch compute-first --comm-ctas $c
    ex $P/tc-g4096x12-d128.yaml mf$c-p$pass --launch comm-first --comm-ctas $c
  done
  for c in 8 32; do
    ex $P/gs-64x28672x8192-d16.yaml cf$c-p$pass --launch compute-first --comm-ctas $c
    ex $P/gs-64x28672x8192-d16.yaml mf$c-p$pass --launch comm-first --comm-ctas $c
  done
done
echo "end $(stamp)" >> $OUT/stamps.txt
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-after.csv 2>&1
$B doctor --json > $OUT/doctor.json 2>&1
cd $OUT && find . -name '*.err' -size 0 -delete; tar czf all.tgz * && ls | wc -l
