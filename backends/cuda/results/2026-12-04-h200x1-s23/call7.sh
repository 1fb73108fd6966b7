#!/bin/bash
# Session 23, call 7 (one H200, likely another one than calls 4 and 6).
# The simulator's PartitionLatencyShare comes from call 4 on one GPU; this
# call repeats call 4's cases and call 6's GEMM cases with the committed
# probe, to see how far the shares move from one H200 to another. Then
# more of the one-GPU GPU tests with CopyToDevice's synchronization (the
# strategies, partitions and graphs paths), which call 3 did not run.
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
cd .gpu && gunzip -kf cuda.test.gz && cd ..
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > $OUT/smi-before.csv 2>&1
stamp() { date -u +%H:%M:%S.%N | cut -c1-12; }
echo "besidestream $(stamp)" >> $OUT/stamps.txt
(cd backends/cuda && C3LAB_BESIDESTREAM_OUT=$OUT/besidestream-call4-cases.json C3LAB_BESIDESTREAM_REPS=12 timeout 120 ../../.gpu/cuda.test -test.run 'TestGPUKernelBesideStream$' -test.v -test.timeout 100s > $OUT/besidestream-call4-cases.txt 2>&1); echo "rc $?" >> $OUT/besidestream-call4-cases.txt
O=16384x8192x1024; D=128x32768x6144; W=8192x28672x1536
C="reduce $O 96MiB 32 16;reduce $O 96MiB 32;copy $O 192MiB 32 16;copy $O 192MiB 32"
C="$C;copy $D 192MiB 64 16;copy $D 192MiB 64 32;reduce $D 96MiB 32 16;reduce $D 96MiB 32"
C="$C;reduce $W 96MiB 32 16;reduce $W 96MiB 32;copy $W 192MiB 32 16;copy $W 192MiB 32"
(cd backends/cuda && C3LAB_BESIDESTREAM_OUT=$OUT/besidestream-call6-cases.json C3LAB_BESIDESTREAM_REPS=12 C3LAB_BESIDESTREAM_CASES="$C" timeout 120 ../../.gpu/cuda.test -test.run 'TestGPUKernelBesideStream$' -test.v -test.timeout 100s > $OUT/besidestream-call6-cases.txt 2>&1); echo "rc $?" >> $OUT/besidestream-call6-cases.txt
echo "gpu tests $(stamp)" >> $OUT/stamps.txt
(cd backends/cuda && timeout 260 ../../.gpu/cuda.test -test.run '^(TestGPUStrategiesTakeEffect|TestGPUPartitionLimitsSMs|TestGPUGraphStreams|TestGPUReferenceOps|TestGPUKernelsCompile|TestGPUOpsCorrect)$' -test.v -test.timeout 240s > $OUT/gpu-tests.txt 2>&1); echo "rc $?" >> $OUT/gpu-tests.txt
echo "end $(stamp)" >> $OUT/stamps.txt
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-after.csv 2>&1
cd $OUT && find . -name '*.err' -empty -delete; tar czf all.tgz * && ls | wc -l
