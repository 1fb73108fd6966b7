#!/bin/bash
# Session 24, call 5 (one H200). Calls 1-4 asked for 100 KiB of shared
# memory per CTA to keep one CTA to an SM, but two such CTAs fit an SM's
# 228 KiB, and behind a GEMM they did pack two to an SM. Again with 150
# KiB (one to an SM, as NCCL's CTAs are meant to be here): clusters of 1,
# 4 and 8, 16 CTAs and as many as the last round frees (52 and 48),
# local copies (HBM to HBM), race, alone and after.
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
cd .gpu && gunzip -kf cuda.test.gz && cd ..
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > $OUT/smi-before.csv 2>&1
stamp() { date -u +%H:%M:%S.%N | cut -c1-12; }
echo "onepersm $(stamp)" >> $OUT/stamps.txt
G1="8192x8192x3584 bf16"; G2="12288x4608x4096 fp16"; S="smem=150KiB local"
C="$G1 h2d 16MiB 16 150us cluster=1 $S;$G1 h2d 16MiB 16 150us cluster=4 $S;$G1 h2d 16MiB 16 150us cluster=8 $S;"
C="$C$G1 h2d 52MiB 52 150us cluster=1 $S;$G1 h2d 52MiB 52 150us cluster=4 $S;"
C="$C$G2 h2d 16MiB 16 150us cluster=1 $S;$G2 h2d 16MiB 16 150us cluster=4 $S;"
C="$C$G2 h2d 48MiB 48 150us cluster=1 $S;$G2 h2d 48MiB 48 150us cluster=4 $S;$G2 h2d 48MiB 48 150us cluster=8 $S;"
C="$C$G1 h2d 64MiB 16 150us cluster=4 $S"
(cd backends/cuda && C3LAB_CTAPLACE_OUT=$OUT/onepersm.json C3LAB_CTAPLACE_REPS=8 C3LAB_CTAPLACE_CASES="$C" timeout 500 ../../.gpu/cuda.test -test.run 'TestGPUCopyCTAPlacement$' -test.v -test.timeout 480s > $OUT/onepersm.txt 2>&1); echo "rc $?" >> $OUT/onepersm.txt
echo "end $(stamp)" >> $OUT/stamps.txt
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-after.csv 2>&1
cd $OUT && ls | wc -l
