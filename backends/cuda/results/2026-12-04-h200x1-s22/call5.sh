#!/bin/bash
# Session 22, call 5 (one H200). How fast the copy kernel's late CTAs read
# host memory by how many share an SM: beside the 256x16384x6144 decode GEMM
# (4 SMs free, so 12 CTAs start at once and the rest as the GEMM ends), a
# 192 MiB h2d copy at 13-28 CTAs, every CTA traced (SM id, start, end).
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
cd .gpu && gunzip -kf cuda.test.gz && cd ..
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > $OUT/smi-before.csv 2>&1
stamp() { date -u +%H:%M:%S.%N | cut -c1-12; }
echo "place $(stamp)" >> $OUT/stamps.txt
C=""
for c in 13 14 15 17 18 24 28; do C="$C;256x16384x6144 bf16 h2d 192MiB $c 40us"; done
(cd backends/cuda && C3LAB_CTAPLACE_OUT=$OUT/ctaplace5.json C3LAB_CTAPLACE_REPS=4 C3LAB_CTAPLACE_CASES="$C" timeout 300 ../../.gpu/cuda.test -test.run 'TestGPUCopyCTAPlacement$' -test.v > $OUT/ctaplace5.txt 2>&1); echo "rc $?" >> $OUT/ctaplace5.txt
echo "end $(stamp)" >> $OUT/stamps.txt
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-after.csv 2>&1
cd $OUT && tar czf all.tgz * && ls | wc -l
