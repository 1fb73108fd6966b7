#!/bin/bash
# Session 15, call 1: where c3lab's copy kernel runs next to a GEMM.
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/nvidia-smi-call1.csv 2>&1
cd backends/cuda
C3LAB_BESIDE_OUT=$OUT/beside-gemm.json timeout 500 ../../.gpu/cuda.test -test.run 'TestGPUCopyBesideGEMM$' -test.v -test.timeout 480s > $OUT/beside-gemm.txt 2>&1
echo "rc=$?"
tail -40 $OUT/beside-gemm.txt
