#!/bin/bash
# Session 16, call 1: where the decomposed activation reload loses its
# overlap (per-kernel spans), and whether a GEMM launched while a copy
# kernel holds SMs waits for them.
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-before.csv 2>&1
B=.gpu/c3lab
S=llama3-8b-act-reload-h2d-gemm-1gpu
for rep in 1 2; do
  for d in 1 2 4 8; do
    timeout 60 $B export --backend cuda --scenario $S --decompose $d --chrome $OUT/reload-d$d-$rep.json --force > $OUT/reload-d$d-$rep.log 2>&1 || echo "d$d rc=$?"
  done
  timeout 60 $B export --backend cuda --scenario $S --decompose 4 --comm-engine dma --chrome $OUT/reload-dma-d4-$rep.json --force > $OUT/reload-dma-d4-$rep.log 2>&1 || echo "dma rc=$?"
  for f in hold-gemm hold-gemm-short; do
    for l in comm-first compute-first; do
      timeout 60 $B export --backend cuda --scenario .gpu/s16/$f.yaml --launch $l --chrome $OUT/$f-$l-$rep.json --force > $OUT/$f-$l-$rep.log 2>&1 || echo "$f $l rc=$?"
    done
    timeout 60 $B export --backend cuda --scenario .gpu/s16/$f.yaml --launch comm-first --comm-priority -5 --chrome $OUT/$f-comm-first-prio-$rep.json --force > $OUT/$f-comm-first-prio-$rep.log 2>&1 || echo "$f prio rc=$?"
  done
done
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-after.csv 2>&1
cd $OUT && tar czf all.tgz *.json *.log *.csv && ls | wc -l
