#!/bin/bash
# Session 20, call 1 (one H200). Fresh data to check the GEMM write-stall
# model against, none of it used to set it: the seven call-4 GEMMs of the
# nineteenth session beside a 256 MiB d2h copy kernel launched first at 16
# and 24 copy CTAs (call 4 had 8 and 32), four new shapes (other tile
# counts and tile lengths) at 8, 16, 24 and 32, twice; each new GEMM alone;
# and the decode GEMMs beside a 128 MiB h2d copy kernel at 8, 16 and 64 CTAs.
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > $OUT/smi-before.csv 2>&1
B=.gpu/c3lab
OLD=backends/cuda/results/2026-12-03-h200x1-s19/probe
NEW=backends/cuda/results/2026-12-03-h200x1-s20/probe
stamp() { date -u +%H:%M:%S.%N | cut -c1-12; }
ex() { # file tag flags...
  local f=$1 t=$2; shift 2
  local n=$(basename $f .yaml)
  echo "$n $t $(stamp)" >> $OUT/stamps.txt
  timeout -s INT 60 $B export --backend cuda --scenario $f "$@" --chrome $OUT/$n-$t.json --force > $OUT/$n-$t.out 2> $OUT/$n-$t.err
}
for pass in 1 2; do
  for f in $OLD/gs-*.yaml; do
    for c in 16 24; do ex $f c$c-p$pass --comm-ctas $c; done
  done
  for f in $NEW/gs-*.yaml; do
    for c in 8 16 24 32; do ex $f c$c-p$pass --comm-ctas $c; done
  done
  for c in 8 16 64; do ex $NEW/tc-gdec-x30-h128.yaml c$c-p$pass --comm-ctas $c; done
done
for f in $NEW/gs-*.yaml; do
  n=$(basename $f .yaml)
  timeout -s INT 60 $B run --backend cuda --scenario $f --precision off --reps 10 --json > $OUT/$n-run.json 2> $OUT/$n-run.err
done
echo "end $(stamp)" >> $OUT/stamps.txt
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-after.csv 2>&1
$B doctor --json > $OUT/doctor.json 2>&1
cd $OUT && tar czf all.tgz * && ls | wc -l
