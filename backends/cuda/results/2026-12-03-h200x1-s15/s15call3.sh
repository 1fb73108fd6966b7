#!/bin/bash
# Session 15, call 3: do small kernels of another stream end inside a
# persistent GEMM, clustered (cuBLAS GEMMs) or not (c3lab's stream op)?
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/nvidia-smi-call3.csv 2>&1
for rep in 1 2 3; do
for f in .gpu/scen/tail-*.yaml; do
  b=$(basename $f .yaml)
  timeout 60 .gpu/c3lab export --backend cuda --scenario $f --chrome $OUT/$b-$rep.json --force > $OUT/$b-$rep.log 2>&1 || echo "$b rc=$?"
done
done
python3 .gpu/scen/inside.py $OUT/tail-*.json
