#!/bin/bash
# Session 24, call 4 (one H200). Call 3's local copies again, now also
# enqueued behind the GEMM on its own stream ("after": every SM free as
# it starts, the GEMM's output perhaps still in L2), to size what slows
# a kernel once the GEMM has ended; beside the decode GEMM too, whose
# output is 8 MiB (the others write 128 and 108 MiB).
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
cd .gpu && gunzip -kf cuda.test.gz && cd ..
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > $OUT/smi-before.csv 2>&1
stamp() { date -u +%H:%M:%S.%N | cut -c1-12; }
echo "after $(stamp)" >> $OUT/stamps.txt
S="cluster=1 smem=100KiB local"
C=""
for g in "8192x8192x3584 bf16" "12288x4608x4096 fp16" "128x32768x6144 bf16"; do
  C="$C$g h2d 16MiB 16 150us $S;$g h2d 64MiB 16 150us $S;"
done
(cd backends/cuda && C3LAB_CTAPLACE_OUT=$OUT/after.json C3LAB_CTAPLACE_REPS=8 C3LAB_CTAPLACE_CASES="$C" timeout 500 ../../.gpu/cuda.test -test.run 'TestGPUCopyCTAPlacement$' -test.v -test.timeout 480s > $OUT/after.txt 2>&1); echo "rc $?" >> $OUT/after.txt
echo "end $(stamp)" >> $OUT/stamps.txt
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-after.csv 2>&1
cd $OUT && ls | wc -l
