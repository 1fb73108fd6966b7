#!/bin/bash
# Session 25, call 6: CUPTI kernel records (C3LAB_CUPTI=1) checked against
# what ncu measured, then the decomposed reload's kernels as the GPU ran them.
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
smi() { nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-$1.csv 2>&1; }
smi before
gunzip -f .gpu/cuda.test.gz .gpu/c3lab.gz
(cd backends/cuda && timeout 120 ../../.gpu/cuda.test -test.run 'TestGPUCUPTIKernels$|TestGPUCUPTICopies$' -test.v -test.timeout 110s > $OUT/cupti-tests.txt 2>&1); echo "tests rc $?"
S=backends/sim/testdata/blind-h200x1/qwen2-7b-reload-h2d-gemm.yaml
mkdir -p /tmp/ex
for d in 1 4 8; do for rep in 1 2; do
  C3LAB_CUPTI=1 timeout 60 .gpu/c3lab export --backend cuda --scenario $S --decompose $d --chrome /tmp/ex/reload-d$d-$rep.json --force > /tmp/ex/reload-d$d-$rep.log 2>&1 || echo "export d$d rc=$?"
done; done
(cd /tmp/ex && tar czf $OUT/cupti-exports.tgz *)
smi after
tail -5 $OUT/cupti-tests.txt
