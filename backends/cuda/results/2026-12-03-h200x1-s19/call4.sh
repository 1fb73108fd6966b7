#!/bin/bash
# Session 19, call 4 (one H200). How much the d2h copy kernel's writes slow
# a GEMM, by its size and arithmetic intensity: one bf16 GEMM of seven
# shapes (decode to 16384x8192x8192) beside a 256 MiB d2h copy launched
# first, at 8 and 32 copy CTAs, twice; and each GEMM's time alone from
# c3lab run (t_comp, its isolated run).
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
  for f in $R/gs-*.yaml; do
    n=$(basename $f .yaml)
    for c in 8 32; do ex $n c$c-p$pass --comm-ctas $c; done
  done
done
for f in $R/gs-*.yaml; do
  n=$(basename $f .yaml)
  timeout -s INT 60 $B run --backend cuda --scenario $f --precision off --reps 10 --json > $OUT/$n-run.json 2> $OUT/$n-run.err
done
echo "end $(stamp)" >> $OUT/stamps.txt
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-after.csv 2>&1
$B doctor --json > $OUT/doctor.json 2>&1
cd $OUT && tar czf all.tgz * && ls | wc -l
