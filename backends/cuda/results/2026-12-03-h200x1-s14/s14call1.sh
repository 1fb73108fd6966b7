#!/bin/bash
# Session 14, call 1: the one-GPU sweeps again on whatever machine this is,
# to set the simulator's held-out errors beside the measurement's own
# machine-to-machine spread.
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
R=$OUT
mkdir -p /tmp/s14
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $R/nvidia-smi-start.csv 2>&1
OUT=/tmp/s14 bash backends/cuda/gpu-suite.sh doctor sweep-host 2>&1 | tail -40
S1=llama3-70b-ffn-gate-up-act-offload-d2h-112m-1gpu,llama3-70b-ffn-down-dgrad-act-reload-h2d-128m-1gpu,llama3-70b-qkv-wgrad-optimizer-swap-48m-1gpu,llama3-70b-prefill-ffn-up-kv-reload-h2d-64m-1gpu,llama3-8b-act-reload-h2d-gemm-decomp4-1gpu
t0=$SECONDS
timeout -s INT 200 .gpu/c3lab sweep --backend cuda --scenarios "$S1" --precision off \
  --strategies baseline,comm-first+prio,dma,dma-comm-first --out /tmp/s14/sweep-fixed-1.json > /tmp/s14/sweep-fixed-1.txt 2> /tmp/s14/sweep-fixed-1.err
echo "sweep-fixed-1 rc=$? took $((SECONDS - t0)) s"
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $R/nvidia-smi-end.csv 2>&1
cd /tmp/s14 && cp *.json *.txt $R/ 2>/dev/null; ls -la /tmp/s14
