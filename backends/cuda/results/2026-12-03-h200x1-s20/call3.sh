#!/bin/bash
# Session 20, call 3 (one H200). Does the d2h copy kernel's write stall on
# a GEMM depend on the copy's length (the sweeps' pairs of a GEMM and a
# 16-112 MiB copy slowed far less than the 256 MiB probes)? On one
# machine: the decode GEMM of s19 call 4 beside 16, 64 and 256 MiB copies,
# the sweeps' two d2h GEMMs beside their own copies and 256 MiB, at 8 and
# 32 copy CTAs, twice; and the kv-offload sweep pair itself, comm-first
# with priority, twice.
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > $OUT/smi-before.csv 2>&1
B=.gpu/c3lab
P=backends/cuda/results/2026-12-03-h200x1-s20/probe
O=backends/cuda/results/2026-12-03-h200x1-s19/probe
stamp() { date -u +%H:%M:%S.%N | cut -c1-12; }
ex() { # file tag flags...
  local f=$1 t=$2; shift 2
  local n=$(basename $f .yaml)
  echo "$n $t $(stamp)" >> $OUT/stamps.txt
  timeout -s INT 40 $B export --backend cuda --scenario $f "$@" --chrome $OUT/$n-$t.json --force > $OUT/$n-$t.out 2> $OUT/$n-$t.err
}
for pass in 1 2; do
  for f in $P/gs-128x16384x8192-d16.yaml $P/gs-128x16384x8192-d64.yaml $O/gs-128x16384x8192-d256.yaml \
           $P/gs-64x28672x8192-d16.yaml $P/gs-64x28672x8192-d256.yaml $P/gs-8192x7168x8192-d112.yaml $P/gs-8192x7168x8192-d256.yaml; do
    for c in 8 32; do ex $f c$c-p$pass --comm-ctas $c; done
  done
  echo "pair p$pass $(stamp)" >> $OUT/stamps.txt
  timeout -s INT 40 $B export --backend cuda --scenario llama3-70b-decode-ffn-up-kv-offload-d2h-16m-1gpu --launch comm-first --comm-priority -5 \
    --chrome $OUT/pair-kv-offload-d2h-16m-first-p$pass.json --force > $OUT/pair-p$pass.out 2> $OUT/pair-p$pass.err
done
echo "end $(stamp)" >> $OUT/stamps.txt
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-after.csv 2>&1
$B doctor --json > $OUT/doctor.json 2>&1
cd $OUT && tar czf all.tgz * && ls | wc -l
