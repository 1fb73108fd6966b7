#!/bin/bash
# Session 24, call 1 (one H200). Does a kernel launched in thread-block
# clusters of 4 (as NCCL launches its kernels on Hopper) start on the SMs
# a persistent nvjet GEMM's last, partial round frees, or wait for the
# GEMM's end? c3lab's traced copy kernel (16 CTAs, h2d 16 MiB), enqueued
# 150 us after the GEMM started (late) and at the same moment (race), in
# clusters of 1, 2 and 4 CTAs, each asking for 100 KiB of shared memory
# (one CTA to an SM, as NCCL's), and in clusters of 4 without it; beside
# four GEMMs: three with partial last rounds (52, 56 and 48 SMs free in
# them), one whose last round is nearly full (2 of 132 CTAs).
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
cd .gpu && gunzip -kf cuda.test.gz && cd ..
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > $OUT/smi-before.csv 2>&1
stamp() { date -u +%H:%M:%S.%N | cut -c1-12; }
echo "clustertail $(stamp)" >> $OUT/stamps.txt
C=""
for g in "8192x8192x3584 bf16" "8192x7168x8192 bf16" "12288x4608x4096 fp16" "16384x8192x1024 bf16"; do
  for v in "cluster=1 smem=100KiB" "cluster=2 smem=100KiB" "cluster=4 smem=100KiB" "cluster=4"; do
    C="$C$g h2d 16MiB 16 150us $v;"
  done
done
(cd backends/cuda && C3LAB_CTAPLACE_OUT=$OUT/clustertail.json C3LAB_CTAPLACE_REPS=8 C3LAB_CTAPLACE_CASES="$C" timeout 500 ../../.gpu/cuda.test -test.run 'TestGPUCopyCTAPlacement$' -test.v -test.timeout 480s > $OUT/clustertail.txt 2>&1); echo "rc $?" >> $OUT/clustertail.txt
echo "end $(stamp)" >> $OUT/stamps.txt
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-after.csv 2>&1
cd $OUT && ls | wc -l
