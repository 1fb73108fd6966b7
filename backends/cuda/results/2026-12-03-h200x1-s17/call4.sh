#!/bin/bash
# Session 17, call 4: the partition probe itself (TestGPUGEMMOnPartitions,
# runs of four repetitions in interleaved rounds) on three of the long GEMMs
# and the 1.2 ms control, twice, on one machine: does the probe's protocol
# still give the higher ratios on the rest of a partition that the placement
# table had from session 12, where calls 1-3's sweeps of probe pairs gave
# lower ones on three other H200s?
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > $OUT/smi-before.csv 2>&1
for rep in 1 2; do
  C3LAB_GEMM_PARTITION_SHAPES=.gpu/s17/probe/partition-shapes.txt C3LAB_GEMM_PARTITION_OUT=$OUT/gemm-partitions-$rep.json \
    timeout 250 .gpu/cuda.test -test.run 'TestGPUGEMMOnPartitions$' -test.v -test.timeout 240s > $OUT/gemm-partitions-$rep.txt 2>&1
  echo "probe $rep rc=$?"
done
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-after.csv 2>&1
cd $OUT && gzip -9 gemm-partitions-*.json && tar czf all.tgz * && ls | wc -l
