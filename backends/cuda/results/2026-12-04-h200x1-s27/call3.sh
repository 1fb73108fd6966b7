#!/bin/bash
# Session 27, call 3: every one-GPU built-in scenario at full size on one H200 under the
# strategies of backends/cuda's TestEveryScenarioRunsOnTheFakeGPU that apply on one GPU, the
# real-GPU side of that test at this code (binary built at a9aa014).
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
R=$OUT/call3; mkdir -p $R
t00=$SECONDS
python3 -c "import lzma,sys; open(sys.argv[2],'wb').write(lzma.open(sys.argv[1]).read())" .gpu/c3lab.xz .gpu/c3lab && rm .gpu/c3lab.xz
chmod +x .gpu/c3lab; B=$PWD/.gpu/c3lab
nvidia-smi --query-gpu=index,name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $R/smi-before.csv 2>&1
date -u > $R/date.txt
P=llama3-70b-ffn-gate-up-act-offload-d2h-112m-1gpu,llama3-70b-ffn-down-dgrad-act-reload-h2d-128m-1gpu,llama3-70b-decode-ffn-up-kv-offload-d2h-16m-1gpu,llama3-70b-prefill-ffn-up-kv-reload-h2d-64m-1gpu,llama3-70b-adam-stream-optimizer-swap-16m-1gpu,llama3-70b-qkv-wgrad-optimizer-swap-48m-1gpu,llama3-70b-ffn-down-weight-stream-h2d-448m-1gpu,mixtral-8x22b-decode-expert-fetch-h2d-192m-1gpu
G=llama3-8b-act-offload-d2h-1gpu,llama3-8b-act-reload-h2d-1gpu,llama3-8b-act-reload-h2d-gemm-1gpu
t0=$SECONDS
timeout -s INT 260 $B sweep --backend cuda --scenarios "$P" --strategies baseline,comm-first+prio,comm-sms-16,ctas-8,dma \
  --out /tmp/pairs.json --force > $R/pairs.txt 2> $R/pairs.err; echo "pairs rc=$? took $((SECONDS-t0)) s" >> $R/date.txt
t0=$SECONDS
timeout -s INT 200 $B sweep --backend cuda --scenarios "$G" --strategies baseline,comm-first+prio,dma,decomp-4,dma-decomp-4 \
  --out /tmp/graphs.json --force > $R/graphs.txt 2> $R/graphs.err; echo "graphs rc=$? took $((SECONDS-t0)) s" >> $R/date.txt
for f in pairs graphs; do [ -f /tmp/$f.json ] && python3 backends/cuda/results/2026-12-02-h200x1-s8/slim_sweep.py /tmp/$f.json $R/$f.json; done
nvidia-smi --query-gpu=index,name,serial,clocks.sm,power.draw,temperature.gpu --format=csv > $R/smi-after.csv 2>&1
nvidia-smi --query-compute-apps=pid,used_memory --format=csv > $R/leftover-processes.csv 2>&1
echo "call took $((SECONDS-t00)) s" >> $R/date.txt
cd $OUT && tar czf call3.tgz call3 && rm -rf call3 && ls -la
