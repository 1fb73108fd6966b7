#!/bin/bash
# Session 27, call 2: the GPU tests of backends/cuda that call 1's 290 s did not reach (its
# last, the partition probe TestGPUGEMMOnPartitions, is a measurement and is left out), and the
# CUPTI-traced exports again with the pprof export that counts each op's GPU time once.
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
R=$OUT/call2; mkdir -p $R
t00=$SECONDS
for f in c3lab cuda.test; do
  [ -f .gpu/$f ] || python3 -c "import lzma,sys; open(sys.argv[2],'wb').write(lzma.open(sys.argv[1]).read())" .gpu/$f.xz .gpu/$f
done
rm -f .gpu/*.xz; chmod +x .gpu/c3lab .gpu/cuda.test
B=$PWD/.gpu/c3lab
nvidia-smi --query-gpu=index,name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $R/smi-before.csv 2>&1
date -u > $R/date.txt
DONE='TestGPUBandwidths|TestGPUCopyBesideGEMM|TestGPUCopyCTAPlacement|TestGPUCopyEngineBaselineBias|TestGPUDuringReadingsCost|TestGPUGEMMLaunches|TestGPUGEMMOnPartitions|TestGPUGraphOffloadDecomposed|TestGPUGraphStreams|TestGPUGraphTPPairs|TestGPUHostCopies|TestGPUKernelBesideStream|TestGPUSettle'
t0=$SECONDS
(cd backends/cuda && timeout 400 ../../.gpu/cuda.test -test.v -test.run '^(TestGPU|TestNativeGPU)' -test.skip "^($DONE)\$" -test.timeout 390s > $R/gpu-tests-cuda-rest.txt 2>&1; echo "rc $? took $((SECONDS-t0)) s" >> $R/gpu-tests-cuda-rest.txt)
S=llama3-70b-ffn-gate-up-act-offload-d2h-112m-1gpu
for st in baseline dma; do
  flags=""; [ $st = dma ] && flags="--comm-engine dma"
  C3LAB_CUPTI=1 timeout 60 $B export --backend cuda --scenario $S $flags --pprof $R/export-$st-cupti.pb.gz --perfetto $R/export-$st-cupti.pftrace --force > $R/export-$st.txt 2>&1; echo "rc $?" >> $R/export-$st.txt
done
nvidia-smi --query-gpu=index,name,driver_version,serial,clocks.sm,power.draw,temperature.gpu --format=csv > $R/smi-after.csv 2>&1
nvidia-smi --query-compute-apps=pid,used_memory --format=csv > $R/leftover-processes.csv 2>&1
echo "call took $((SECONDS-t00)) s" >> $R/date.txt
cd $OUT && tar czf call2.tgz call2 && rm -rf call2 && ls -la
