#!/bin/bash
# Session 24, call 2 (one H200, maybe another one). Call 1 again on the
# first GEMM, and how far clusters fill a last round's SMs: 32 CTAs in
# clusters of 1, 4 and 8, and as many CTAs as the round frees (52 behind
# 8192x8192x3584 in clusters of 4: 13 clusters; 48 behind
# 12288x4608x4096: 12), each CTA one to an SM (100 KiB of shared memory).
# Only the race mode matters (the copy ready with the GEMM).
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
cd .gpu && gunzip -kf cuda.test.gz && cd ..
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > $OUT/smi-before.csv 2>&1
stamp() { date -u +%H:%M:%S.%N | cut -c1-12; }
echo "clustertail2 $(stamp)" >> $OUT/stamps.txt
G1="8192x8192x3584 bf16"; G2="12288x4608x4096 fp16"; S="smem=100KiB"
C="$G1 h2d 16MiB 16 150us cluster=1 $S;$G1 h2d 16MiB 16 150us cluster=4 $S;"
C="$C$G1 h2d 32MiB 32 150us cluster=1 $S;$G1 h2d 32MiB 32 150us cluster=4 $S;$G1 h2d 32MiB 32 150us cluster=8 $S;"
C="$C$G1 h2d 52MiB 52 150us cluster=1 $S;$G1 h2d 52MiB 52 150us cluster=4 $S;"
C="$C$G2 h2d 48MiB 48 150us cluster=1 $S;$G2 h2d 48MiB 48 150us cluster=4 $S;$G2 h2d 48MiB 48 150us cluster=8 $S"
(cd backends/cuda && C3LAB_CTAPLACE_OUT=$OUT/clustertail2.json C3LAB_CTAPLACE_REPS=8 C3LAB_CTAPLACE_CASES="$C" timeout 500 ../../.gpu/cuda.test -test.run 'TestGPUCopyCTAPlacement$' -test.v -test.timeout 480s > $OUT/clustertail2.txt 2>&1); echo "rc $?" >> $OUT/clustertail2.txt
echo "end $(stamp)" >> $OUT/stamps.txt
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-after.csv 2>&1
cd $OUT && ls | wc -l
