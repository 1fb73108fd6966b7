#!/bin/bash
# Session 23, call 4 (one H200). The probe now runs each SM kernel once
# ungated before its repetitions (call 3: the reduction module's first
# load waited for the gated stream). Every case again, since call 1's
# report was not kept: c3lab's copy kernel (192 MiB, an all-gather's
# local traffic) and its reduction kernel (two 96 MiB blocks into one, an
# all-reduce's) at 16, 32 and 64 CTAs beside the 1 GiB stream op, then at
# 32 CTAs beside a 256 MiB one; each alone, sharing the SMs and in a green
# context of as many SMs as its CTAs.
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
cd .gpu && gunzip -kf cuda.test.gz && cd ..
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > $OUT/smi-before.csv 2>&1
stamp() { date -u +%H:%M:%S.%N | cut -c1-12; }
echo "besidestream $(stamp)" >> $OUT/stamps.txt
C="reduce 1GiB 96MiB 32;copy 1GiB 192MiB 32;reduce 1GiB 96MiB 16;copy 1GiB 192MiB 16;reduce 1GiB 96MiB 64;copy 1GiB 192MiB 64;reduce 256MiB 96MiB 32;copy 256MiB 192MiB 32"
(cd backends/cuda && C3LAB_BESIDESTREAM_OUT=$OUT/besidestream.json C3LAB_BESIDESTREAM_REPS=12 C3LAB_BESIDESTREAM_CASES="$C" timeout 500 ../../.gpu/cuda.test -test.run 'TestGPUKernelBesideStream$' -test.v -test.timeout 480s > $OUT/besidestream.txt 2>&1); echo "rc $?" >> $OUT/besidestream.txt
echo "end $(stamp)" >> $OUT/stamps.txt
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-after.csv 2>&1
cd $OUT && find . -name '*.err' -empty -delete; tar czf all.tgz * && ls | wc -l
