#!/bin/bash
# Session 23, call 1 (one H200). Does an SM partition shield a latency-bound
# kernel of few CTAs from an HBM-streaming kernel? The 1 GiB stream op (the
# AdamW step's shape) beside c3lab's copy kernel (192 MiB device to device)
# or its reduction kernel (two local 96 MiB blocks into one) at 16, 32 and
# 64 CTAs: each alone, shared (kernel first, priority -5, whole GPU) and
# partitioned (kernel in a green context of as many SMs as its CTAs, the
# stream op in the rest).
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
cd .gpu && gunzip -kf cuda.test.gz && cd ..
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > $OUT/smi-before.csv 2>&1
stamp() { date -u +%H:%M:%S.%N | cut -c1-12; }
echo "besidestream $(stamp)" >> $OUT/stamps.txt
(cd backends/cuda && C3LAB_BESIDESTREAM_OUT=$OUT/besidestream.json C3LAB_BESIDESTREAM_REPS=20 timeout 300 ../../.gpu/cuda.test -test.run 'TestGPUKernelBesideStream$' -test.v > $OUT/besidestream.txt 2>&1); echo "rc $?" >> $OUT/besidestream.txt
echo "smaller stream $(stamp)" >> $OUT/stamps.txt
C="copy 256MiB 192MiB 32;reduce 256MiB 96MiB 32;copy 4GiB 192MiB 16;reduce 4GiB 96MiB 16"
(cd backends/cuda && C3LAB_BESIDESTREAM_OUT=$OUT/besidestream2.json C3LAB_BESIDESTREAM_REPS=10 C3LAB_BESIDESTREAM_CASES="$C" timeout 200 ../../.gpu/cuda.test -test.run 'TestGPUKernelBesideStream$' -test.v > $OUT/besidestream2.txt 2>&1); echo "rc $?" >> $OUT/besidestream2.txt
echo "end $(stamp)" >> $OUT/stamps.txt
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-after.csv 2>&1
cd $OUT && find . -name '*.err' -empty -delete; tar czf all.tgz * && ls | wc -l
