#!/bin/bash
# Session 21, call 5 (one H200). Does a copy kernel in an SM partition of its
# own count as started alone (the model's rule since call 4): twelve 4096^3
# GEMMs on the rest of the GPU, enqueued first, beside a 128 MiB h2d or d2h
# copy kernel in a partition of 16 or 32 SMs, at 32 and 64 copy CTAs; the
# simulator's predictions were written before this call ran (call5-sim.txt).
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
  for f in $P/tc-g4096x12-h128.yaml $P/tc-g4096x12-d128.yaml; do
    for s in 16 32; do
      for c in 32 64; do ex $f s$s-c$c-p$pass --launch compute-first --comm-sms $s --comm-ctas $c; done
    done
  done
done
echo "end $(stamp)" >> $OUT/stamps.txt
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-after.csv 2>&1
$B doctor --json > $OUT/doctor.json 2>&1
cd $OUT && find . -name '*.err' -size 0 -delete; tar czf all.tgz * && ls | wc -l
