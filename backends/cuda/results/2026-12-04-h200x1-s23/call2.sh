#!/bin/bash
# Session 23, call 2 (one H200). Call 1's probe again with the cases it did
# not reach: the reduction kernel (two local 96 MiB blocks into one, an
# all-reduce's local traffic) at 16, 32 and 64 CTAs and the copy kernel at
# 16, beside the 1 GiB stream op, each alone, shared and partitioned; then
# a 256 MiB stream op. The cuda.test carries CopyToDevice's new
# synchronization (the first case of call 1 failed its h2d check) and
# times each repetition on the host (call 1 took ~2.5 min a case).
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
cd .gpu && gunzip -kf cuda.test.gz && cd ..
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > $OUT/smi-before.csv 2>&1
stamp() { date -u +%H:%M:%S.%N | cut -c1-12; }
echo "besidestream $(stamp)" >> $OUT/stamps.txt
C="reduce 1GiB 96MiB 32;copy 1GiB 192MiB 16;reduce 1GiB 96MiB 16;reduce 1GiB 96MiB 64;reduce 256MiB 96MiB 32;copy 256MiB 192MiB 64"
(cd backends/cuda && C3LAB_BESIDESTREAM_OUT=$OUT/besidestream.json C3LAB_BESIDESTREAM_REPS=8 C3LAB_BESIDESTREAM_CASES="$C" timeout 420 ../../.gpu/cuda.test -test.run 'TestGPUKernelBesideStream$' -test.v > $OUT/besidestream.txt 2>&1); echo "rc $?" >> $OUT/besidestream.txt
echo "end $(stamp)" >> $OUT/stamps.txt
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-after.csv 2>&1
cd $OUT && find . -name '*.err' -empty -delete; tar czf all.tgz * && ls | wc -l
