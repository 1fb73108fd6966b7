#!/bin/bash
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv > $OUT/smi2.txt 2>&1
.gpu/c3lab doctor --json > $OUT/doctor-call2.json 2>&1
start=$SECONDS
.gpu/c3lab sweep --backend cuda --scenarios llama3-70b-adam-stream-optimizer-swap-16m-1gpu,llama3-70b-decode-ffn-up-kv-offload-d2h-16m-1gpu,llama3-70b-ffn-down-dgrad-act-reload-h2d-128m-1gpu,llama3-70b-ffn-down-weight-stream-h2d-448m-1gpu,llama3-70b-ffn-gate-up-act-offload-d2h-112m-1gpu,llama3-70b-prefill-ffn-up-kv-reload-h2d-64m-1gpu,llama3-70b-qkv-wgrad-optimizer-swap-48m-1gpu,llama3-8b-act-offload-d2h-1gpu,llama3-8b-act-reload-h2d-1gpu,llama3-8b-act-reload-h2d-gemm-1gpu,llama3-8b-act-reload-h2d-gemm-decomp4-1gpu,mixtral-8x22b-decode-expert-fetch-h2d-192m-1gpu --strategies comm-sms-16,comm-sms-32,comm-sms-64,dma-gemm-112 --passes 1 --out $OUT/sweep-1gpu-partitions.json > $OUT/sweep-1gpu-partitions.txt 2>&1
echo "rc=$? seconds=$((SECONDS-start))" >> $OUT/sweep-1gpu-partitions.txt
tail -20 $OUT/sweep-1gpu-partitions.txt
gzip -k $OUT/sweep-1gpu-partitions.json
