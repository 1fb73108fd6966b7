#!/bin/bash
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
nvidia-smi > $OUT/smi.txt 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv >> $OUT/smi.txt 2>&1
date -u > $OUT/date.txt
C3LAB_GEMM_PARTITION_SHAPES=.gpu/s12shapes.txt C3LAB_GEMM_PARTITION_OUT=$OUT/gemm-partitions-sweep-shapes.json \
  timeout 200 .gpu/cuda.test -test.v -test.run '^TestGPUGEMMOnPartitions$' -test.timeout 190s > $OUT/gemm-partitions-sweep-shapes.txt 2>&1
echo "rc=$?" >> $OUT/gemm-partitions-sweep-shapes.txt
tail -15 $OUT/gemm-partitions-sweep-shapes.txt
C3LAB_GEMM_PARTITION_OUT=$OUT/gemm-partitions-suite.json \
  timeout 300 .gpu/cuda.test -test.v -test.run '^TestGPUGEMMOnPartitions$' -test.timeout 290s > $OUT/gemm-partitions-suite.txt 2>&1
echo "rc=$?" >> $OUT/gemm-partitions-suite.txt
tail -5 $OUT/gemm-partitions-suite.txt
gzip -k $OUT/*.json 2>/dev/null; ls -la $OUT
