#!/bin/bash
# Session 21, call 1 (one H200). The check set for a read stall by the copy's
# CTAs (fitted on s20 call 4, before this call was read): seven more bf16
# GEMMs (1 to 13 tiles per CTA, the decode GEMM among them) beside a 128 MiB
# h2d copy kernel launched first at 8, 16, 32, 48 and 64 copy CTAs; two GEMMs
# beside 32 MiB and 512 MiB h2d copies at 16, 32 and 64; two beside a
# 128 MiB swap at 16, 32 and 64; each pass twice; every GEMM alone.
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
  timeout -s INT 40 $B export --backend cuda --scenario $f "$@" --chrome $OUT/$n-$t.json --force > $OUT/$n-$t.out 2> $OUT/$n-$t.err
}
for pass in 1 2; do
  for f in $P/gh-*-h128.yaml; do
    for c in 8 16 32 48 64; do ex $f c$c-p$pass --comm-ctas $c; done
  done
  for f in $P/gh-*-h32.yaml $P/gh-*-h512.yaml $P/gw-*.yaml; do
    for c in 16 32 64; do ex $f c$c-p$pass --comm-ctas $c; done
  done
done
for f in $P/gh-*-h128.yaml $P/gw-*.yaml; do
  n=$(basename $f .yaml)
  timeout -s INT 40 $B run --backend cuda --scenario $f --precision off --reps 10 --json > $OUT/$n-run.json 2> $OUT/$n-run.err
done
echo "end $(stamp)" >> $OUT/stamps.txt
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-after.csv 2>&1
$B doctor --json > $OUT/doctor.json 2>&1
cd $OUT && tar czf all.tgz * && ls | wc -l
