#!/bin/bash
# Session 17, call 5: TestGPUGEMMPartitionModes, twice: each GEMM on the
# whole GPU alone, on the rest of 16 SMs alone (the probe's way) and there
# beside a 1 MiB h2d copy kernel (a sweep's concurrent run), in runs of 4
# and of 20 repetitions, interleaved.
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > $OUT/smi-before.csv 2>&1
for rep in 1 2; do
  C3LAB_GEMM_MODES_OUT=$OUT/gemm-modes-$rep.json timeout 250 .gpu/cuda.test -test.run 'TestGPUGEMMPartitionModes$' -test.v -test.timeout 240s > $OUT/gemm-modes-$rep.txt 2>&1
  echo "modes $rep rc=$?"
done
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-after.csv 2>&1
cd $OUT && tar czf all.tgz * && ls | wc -l
