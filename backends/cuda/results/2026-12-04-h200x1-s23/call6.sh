#!/bin/bash
# Session 23, call 6 (one H200). Call 5 hung on its first GEMM case:
# cuBLASLt's first launch in the partition's rest came while the stream
# waited on the start gate. The probe now runs the neighbour once ungated
# on both plans first. Call 5's GEMM cases: the o-proj GEMM
# (16384x8192x1024), the decode expert GEMM (128x32768x6144, memory-bound)
# and the FFN weight-gradient GEMM (8192x28672x1536), all bf16, in the
# stream op's place beside the copy and reduction kernels, in partitions
# of as many SMs as their CTAs and of fewer (NCCL's 32 CTAs in 16 SMs, an
# all-to-all's 64 in 16 or 32).
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
cd .gpu && gunzip -kf cuda.test.gz && cd ..
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > $OUT/smi-before.csv 2>&1
stamp() { date -u +%H:%M:%S.%N | cut -c1-12; }
echo "besidestream $(stamp)" >> $OUT/stamps.txt
O=16384x8192x1024; D=128x32768x6144; W=8192x28672x1536
C="reduce $O 96MiB 32 16;reduce $O 96MiB 32;copy $O 192MiB 32 16;copy $O 192MiB 32"
C="$C;copy $D 192MiB 64 16;copy $D 192MiB 64 32;reduce $D 96MiB 32 16;reduce $D 96MiB 32"
C="$C;reduce $W 96MiB 32 16;reduce $W 96MiB 32;copy $W 192MiB 32 16;copy $W 192MiB 32"
(cd backends/cuda && C3LAB_BESIDESTREAM_OUT=$OUT/besidestream.json C3LAB_BESIDESTREAM_REPS=12 C3LAB_BESIDESTREAM_CASES="$C" timeout 240 ../../.gpu/cuda.test -test.run 'TestGPUKernelBesideStream$' -test.v -test.timeout 220s > $OUT/besidestream.txt 2>&1); echo "rc $?" >> $OUT/besidestream.txt
echo "end $(stamp)" >> $OUT/stamps.txt
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-after.csv 2>&1
cd $OUT && find . -name '*.err' -empty -delete; tar czf all.tgz * && ls | wc -l
