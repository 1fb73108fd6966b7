#!/bin/bash
# Session 17, call 6: TestGPUGEMMPartitionModes again with 3 untimed
# repetitions before each run, as c3lab's profiler makes, twice.
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > $OUT/smi-before.csv 2>&1
for rep in 1 2; do
  C3LAB_GEMM_MODES_WARMUP=3 C3LAB_GEMM_MODES_OUT=$OUT/gemm-modes-w3-$rep.json timeout 250 .gpu/cuda.test -test.run 'TestGPUGEMMPartitionModes$' -test.v -test.timeout 240s > $OUT/gemm-modes-w3-$rep.txt 2>&1
  echo "modes $rep rc=$?"
done
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-after.csv 2>&1
cd $OUT && tar czf all.tgz * && ls | wc -l
