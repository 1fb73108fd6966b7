#!/bin/bash
# Session 11, call 3: the final code (copy kernel asking for the most L1): GPU tests, the capped-copy
# probe again, and the one-GPU scenarios swept under the CTA caps for validate --against.
set -u
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
S=/tmp/s11e; mkdir -p $S
nvidia-smi --query-gpu=name,driver_version,uuid,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv > $S/gpu.txt 2>&1
.gpu/c3lab doctor --json > $S/doctor.json 2>$S/doctor.err
timeout 200 .gpu/cuda.test -test.v -test.run '^(TestGPUCappedCopyBehindGEMM|TestGPUOpsCorrect|TestGPUDoctor)$' -test.timeout 190s > $S/gpu-tests.txt 2>&1
echo "gpu tests rc=$?"; grep -E "^(--- |ok|FAIL|panic)|isolated time|µs after" $S/gpu-tests.txt
for sc in short long; do for cap in 4 8 16; do
  timeout 120 .gpu/c3lab run --backend cuda --scenario .gpu/scen/h2d-$sc.yaml --comm-ctas $cap --precision off --reps 20 --json > $S/final-$sc-ctas$cap.json 2> $S/final-$sc-ctas$cap.err
  echo "final $sc ctas$cap rc=$?"
done; done
SC=llama3-70b-ffn-gate-up-act-offload-d2h-112m-1gpu,llama3-70b-ffn-down-dgrad-act-reload-h2d-128m-1gpu,llama3-70b-decode-ffn-up-kv-offload-d2h-16m-1gpu,llama3-70b-prefill-ffn-up-kv-reload-h2d-64m-1gpu,llama3-70b-adam-stream-optimizer-swap-16m-1gpu,llama3-70b-qkv-wgrad-optimizer-swap-48m-1gpu,llama3-70b-ffn-down-weight-stream-h2d-448m-1gpu,mixtral-8x22b-decode-expert-fetch-h2d-192m-1gpu,llama3-8b-act-offload-d2h-1gpu,llama3-8b-act-reload-h2d-1gpu,llama3-8b-act-reload-h2d-gemm-1gpu,llama3-8b-act-reload-h2d-gemm-decomp4-1gpu
timeout 420 .gpu/c3lab sweep --backend cuda --scenarios $SC --strategies baseline,ctas-8,ctas-16,comm-sms-32,comm-first+prio --passes 1 --out $S/sweep-1gpu-s11.json > $S/sweep.txt 2> $S/sweep.err
echo "sweep rc=$?"; tail -3 $S/sweep.err
gzip -f $S/sweep-1gpu-s11.json
cd $S && tar czf $OUT/s11-final.tgz . && ls -la $OUT
