#!/bin/bash
# Session 16, call 2: the fix (a copy or collective that feeds a GEMM
# carries random operands in the timed runs): the fed GEMM's time before
# (call 1) and after, then the one-GPU sweeps with fed GEMMs measured anew.
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-before.csv 2>&1
B=.gpu/c3lab
S=llama3-8b-act-reload-h2d-gemm-1gpu
for rep in 1 2; do
  for d in 1 4 8; do
    timeout 60 $B export --backend cuda --scenario $S --decompose $d --chrome $OUT/fix-reload-d$d-$rep.json --force > $OUT/fix-reload-d$d-$rep.log 2>&1 || echo "d$d rc=$?"
  done
done
timeout 60 $B run --backend cuda --scenario .gpu/s16/hold-gemm-short.yaml --json > $OUT/plain-gemm-run.json 2> $OUT/plain-gemm-run.err || echo "plain rc=$?"
timeout 60 $B run --backend cuda --scenario $S --json > $OUT/reload-gemm-run.json 2> $OUT/reload-gemm-run.err || echo "reload run rc=$?"
t0=$SECONDS
G1=llama3-8b-act-offload-d2h-1gpu,llama3-8b-act-reload-h2d-1gpu,llama3-8b-act-reload-h2d-gemm-1gpu,llama3-8b-act-reload-h2d-gemm-decomp4-1gpu
timeout -s INT 300 $B sweep --backend cuda --scenarios "$G1" \
  --strategies baseline,comm-first+prio,whole,decomp-2,decomp-4,decomp-8,dma,dma-decomp-4 \
  --out $OUT/sweep-graphs-1gpu.json > $OUT/sweep-graphs-1gpu.txt 2> $OUT/sweep-graphs-1gpu.err
echo "graphs rc=$? took $((SECONDS-t0)) s"
t0=$SECONDS
S1=llama3-70b-ffn-gate-up-act-offload-d2h-112m-1gpu,llama3-70b-ffn-down-dgrad-act-reload-h2d-128m-1gpu,llama3-70b-qkv-wgrad-optimizer-swap-48m-1gpu,llama3-70b-prefill-ffn-up-kv-reload-h2d-64m-1gpu,llama3-8b-act-reload-h2d-gemm-decomp4-1gpu
timeout -s INT 200 $B sweep --backend cuda --scenarios "$S1" --precision off \
  --strategies baseline,comm-first+prio,dma,dma-comm-first \
  --out $OUT/sweep-fixed.json > $OUT/sweep-fixed.txt 2> $OUT/sweep-fixed.err
echo "fixed rc=$? took $((SECONDS-t0)) s"
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-after.csv 2>&1
$B doctor --json > $OUT/doctor.json 2>&1
cd $OUT && tar czf all.tgz * && ls | wc -l
