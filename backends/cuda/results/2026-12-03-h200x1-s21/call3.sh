#!/bin/bash
# Session 21, call 3 (one H200). The in-sample decomposed reload kernel by
# kernel at 2 and 8 chunks (the model after call 2 has decomp-8 10 % fast),
# and the twelve 4096^3 GEMMs with the first GEMM enqueued first at 16 and
# 64 copy CTAs (call 2 had 32).
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
gunzip -kf .gpu/c3lab.gz
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > $OUT/smi-before.csv 2>&1
B=.gpu/c3lab
P=backends/cuda/results/2026-12-03-h200x1-s21/probe
stamp() { date -u +%H:%M:%S.%N | cut -c1-12; }
ex() { # file-or-name tag flags...
  local f=$1 t=$2; shift 2
  local n=$(basename $f .yaml)
  echo "$n $t $(stamp)" >> $OUT/stamps.txt
  timeout -s INT 60 $B export --backend cuda --scenario $f "$@" --chrome $OUT/$n-$t.json --force > $OUT/$n-$t.out 2> $OUT/$n-$t.err
}
for pass in 1 2; do
  ex llama3-8b-act-reload-h2d-gemm-decomp4-1gpu d8-p$pass --decompose 8
  ex llama3-8b-act-reload-h2d-gemm-decomp4-1gpu d2-p$pass --decompose 2
  ex $P/tc-g4096x12-h128.yaml cf16-p$pass --launch compute-first --comm-ctas 16
  ex $P/tc-g4096x12-h128.yaml cf64-p$pass --launch compute-first --comm-ctas 64
done
echo "end $(stamp)" >> $OUT/stamps.txt
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-after.csv 2>&1
$B doctor --json > $OUT/doctor.json 2>&1
cd $OUT && tar czf all.tgz * && ls | wc -l
