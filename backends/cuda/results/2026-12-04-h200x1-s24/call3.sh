#!/bin/bash
# Session 24, call 3 (one H200). Does a kernel that starts in a GEMM's
# last round move HBM data there at its own pace? c3lab's traced copy
# kernel copying between two device buffers (HBM to HBM, as a
# collective's local traffic), 16 CTAs of 1 or 4 MiB each and 52 of
# 1.25 MiB, in clusters of 4 (and 1), one CTA to an SM (100 KiB of shared
# memory), ready with the GEMM (race) and alone. Each CTA's time in the
# race against its time alone says whether the last round stalls it.
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
cd .gpu && gunzip -kf cuda.test.gz && cd ..
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > $OUT/smi-before.csv 2>&1
stamp() { date -u +%H:%M:%S.%N | cut -c1-12; }
echo "tailrate $(stamp)" >> $OUT/stamps.txt
G1="8192x8192x3584 bf16"; G2="12288x4608x4096 fp16"; S="smem=100KiB local"
C=""
for g in "$G1" "$G2"; do
  C="$C$g h2d 16MiB 16 150us cluster=1 $S;$g h2d 16MiB 16 150us cluster=4 $S;$g h2d 64MiB 16 150us cluster=4 $S;"
done
C="$C$G1 h2d 65MiB 52 150us cluster=4 $S"
(cd backends/cuda && C3LAB_CTAPLACE_OUT=$OUT/tailrate.json C3LAB_CTAPLACE_REPS=8 C3LAB_CTAPLACE_CASES="$C" timeout 500 ../../.gpu/cuda.test -test.run 'TestGPUCopyCTAPlacement$' -test.v -test.timeout 480s > $OUT/tailrate.txt 2>&1); echo "rc $?" >> $OUT/tailrate.txt
echo "end $(stamp)" >> $OUT/stamps.txt
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-after.csv 2>&1
cd $OUT && ls | wc -l
