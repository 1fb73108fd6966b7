#!/bin/bash
# Session 25, call 5: the CTA-placement probe's "late" mode with the host
# wait spun (spinFor) instead of slept, so that the late copy is enqueued
# while the GEMM runs.
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
smi() { nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-$1.csv 2>&1; }
smi before
gunzip -f .gpu/cuda.test.gz
C="2048x8192x8192 bf16 h2d 128MiB 8 100us; 4096x10240x8192 bf16 h2d 160MiB 8 300us; 8192x8192x8192 bf16 h2d 16MiB 32 300us; 8192x8192x8192 bf16 h2d 16MiB 32 1ms"
(cd backends/cuda && C3LAB_CTAPLACE_OUT=$OUT/late.json C3LAB_CTAPLACE_REPS=6 C3LAB_CTAPLACE_CASES="$C" timeout 200 ../../.gpu/cuda.test -test.run 'TestGPUCopyCTAPlacement$' -test.v -test.timeout 190s > $OUT/late.txt 2>&1); echo "probe rc $?"
smi after
