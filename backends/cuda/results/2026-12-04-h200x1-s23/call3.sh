#!/bin/bash
# Session 23, call 3 (one H200). Call 2's first case (the reduction kernel
# beside the 1 GiB stream op) ended nothing in 420 s. This call runs it
# again under the Go test timeout, which prints every goroutine's stack
# when it fires, so a hang shows where it waits; then the copy case of
# call 1 for the host timing of each repetition; then the GPU tests that
# load device memory from the host (CopyToDevice now waits for the
# legacy stream), to check the fix does not hang or break them.
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
cd .gpu && gunzip -kf cuda.test.gz && cd ..
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > $OUT/smi-before.csv 2>&1
stamp() { date -u +%H:%M:%S.%N | cut -c1-12; }
echo "besidestream $(stamp)" >> $OUT/stamps.txt
C="reduce 1GiB 96MiB 32;copy 1GiB 192MiB 32"
(cd backends/cuda && C3LAB_BESIDESTREAM_OUT=$OUT/besidestream.json C3LAB_BESIDESTREAM_REPS=6 C3LAB_BESIDESTREAM_CASES="$C" timeout 200 ../../.gpu/cuda.test -test.run 'TestGPUKernelBesideStream$' -test.v -test.timeout 170s > $OUT/besidestream.txt 2>&1); echo "rc $?" >> $OUT/besidestream.txt
echo "gpu tests $(stamp)" >> $OUT/stamps.txt
(cd backends/cuda && timeout 200 ../../.gpu/cuda.test -test.run '^(TestGPUOpsCorrect|TestGPUDoctor|TestGPUHostCopies|TestGPUCancel|TestGPUTooLarge|TestGPUKernelsCompile)$' -test.v -test.timeout 180s > $OUT/gpu-tests.txt 2>&1); echo "rc $?" >> $OUT/gpu-tests.txt
echo "end $(stamp)" >> $OUT/stamps.txt
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-after.csv 2>&1
cd $OUT && find . -name '*.err' -empty -delete; tar czf all.tgz * && ls | wc -l
