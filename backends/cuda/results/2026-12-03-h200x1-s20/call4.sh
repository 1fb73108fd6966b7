#!/bin/bash
# Session 20, call 4 (one H200). The h2d copy kernel's read stall on GEMMs
# by the copy's CTAs (call 1 showed decode GEMMs 1.9x, 2.4x and 21x at 8,
# 16 and 64 CTAs, which the model's read stall does not follow): three
# GEMMs (4096^3, 8192^3, and 512x28672x4096, the one the read stall was
# set on) beside a 128 MiB h2d copy kernel launched first at 8, 16, 32
# and 64 CTAs, twice, and the decode stream at 32 CTAs on the whole GPU.
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > $OUT/smi-before.csv 2>&1
B=.gpu/c3lab
P=backends/cuda/results/2026-12-03-h200x1-s20/probe
stamp() { date -u +%H:%M:%S.%N | cut -c1-12; }
ex() { # file tag flags...
  local f=$1 t=$2; shift 2
  local n=$(basename $f .yaml)
  echo "$n $t $(stamp)" >> $OUT/stamps.txt
  timeout -s INT 40 $B export --backend cuda --scenario $f "$@" --chrome $OUT/$n-$t.json --force > $OUT/$n-$t.out 2> $OUT/$n-$t.err
}
for pass in 1 2; do
  for f in $P/gh-*.yaml; do
    for c in 8 16 32 64; do ex $f c$c-p$pass --comm-ctas $c; done
  done
  ex $P/tc-gdec-x30-h128.yaml c32-p$pass --comm-ctas 32
done
for f in $P/gh-*.yaml; do
  n=$(basename $f .yaml)
  timeout -s INT 40 $B run --backend cuda --scenario $f --precision off --reps 10 --json > $OUT/$n-run.json 2> $OUT/$n-run.err
done
echo "end $(stamp)" >> $OUT/stamps.txt
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-after.csv 2>&1
$B doctor --json > $OUT/doctor.json 2>&1
cd $OUT && tar czf all.tgz * && ls | wc -l
