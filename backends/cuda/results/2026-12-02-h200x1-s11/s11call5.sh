#!/bin/bash
# Session 11, call 5: the copy kernel three ways, interleaved on one GPU: as before (old), asking
# for the most L1 (l1), and loading through L2 only (cg, no carveout preference).
set -u
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
S=/tmp/s11g; mkdir -p $S
tar xzf .gpu/bins.tgz -C .gpu
nvidia-smi --query-gpu=name,driver_version,uuid --format=csv > $S/gpu.txt 2>&1
C3LAB_COPY_VARIANT=cg timeout 100 .gpu/cuda.test -test.v -test.run '^(TestGPUOpsCorrect|TestGPUCappedCopyBehindGEMM)$' -test.timeout 90s > $S/gpu-tests-cg.txt 2>&1
echo "tests cg rc=$?"; grep -E "^(--- |ok|FAIL|panic)|µs after" $S/gpu-tests-cg.txt | head
for round in 1 2; do
  for cell in "short4:.gpu/scen/h2d-short.yaml:--comm-ctas 4" "short8:.gpu/scen/h2d-short.yaml:--comm-ctas 8" \
      "decomp4:llama3-8b-act-reload-h2d-gemm-decomp4-1gpu:" "reload8b:llama3-8b-act-reload-h2d-1gpu:" "swap8:llama3-70b-qkv-wgrad-optimizer-swap-48m-1gpu:--comm-ctas 8"; do
    name=${cell%%:*}; rest=${cell#*:}; sc=${rest%%:*}; flags=${rest#*:}
    for v in old l1 cg; do
      C3LAB_COPY_VARIANT=$v timeout 100 .gpu/c3lab run --backend cuda --scenario $sc $flags --precision off --reps 20 --json > $S/r$round-$name-$v.json 2> $S/r$round-$name-$v.err
      echo "r$round $name $v rc=$?"
    done
  done
done
cd $S && tar czf $OUT/variants.tgz . && ls -la $OUT
