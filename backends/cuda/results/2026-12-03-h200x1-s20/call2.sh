#!/bin/bash
# Session 20, call 2 (one H200). Which cuBLASLt kernels the write-stall
# probes' GEMMs run (ncu launch statistics, the eleven shapes of s19 call 4
# and s20 call 1 on the whole GPU), and how the stall goes over a 256 MiB
# d2h copy kernel GEMM by GEMM: 60 decode GEMMs at 8, 16, 24 and 32 copy
# CTAs, 12 GEMMs 8192x8192x2048 at 8 and 16, twice.
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > $OUT/smi-before.csv 2>&1
B=.gpu/c3lab
P=backends/cuda/results/2026-12-03-h200x1-s20/probe
stamp() { date -u +%H:%M:%S.%N | cut -c1-12; }
echo "launches $(stamp)" >> $OUT/stamps.txt
OUT=$OUT GEMM_SHAPES=$P/gemm-shapes-writestall.txt GEMM_LAUNCHES_OUT=gemm-writestall-launches.txt LAUNCH_LIMIT=240 \
  bash backends/cuda/gpu-suite.sh gemm-launches > $OUT/launches.log 2>&1
ex() { # file tag flags...
  local f=$1 t=$2; shift 2
  local n=$(basename $f .yaml)
  echo "$n $t $(stamp)" >> $OUT/stamps.txt
  timeout -s INT 60 $B export --backend cuda --scenario $f "$@" --chrome $OUT/$n-$t.json --force > $OUT/$n-$t.out 2> $OUT/$n-$t.err
}
for pass in 1 2; do
  for c in 8 16 24 32; do ex $P/tc-gdec-x60-d256.yaml c$c-p$pass --comm-ctas $c; done
  for c in 8 16; do ex $P/tc-g8192k2-x12-d256.yaml c$c-p$pass --comm-ctas $c; done
done
echo "end $(stamp)" >> $OUT/stamps.txt
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-after.csv 2>&1
$B doctor --json > $OUT/doctor.json 2>&1
cd $OUT && tar czf all.tgz * && ls | wc -l
