#!/bin/bash
# Session 27, call 1: the GPU tests of backends/cuda and native at this commit on one H200, a
# CUPTI-traced export (pprof and Perfetto) of a one-GPU scenario, and the two-GPU blind set's
# script on a one-GPU node (it must refuse, exit 2).
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
R=$OUT/call1; mkdir -p $R
t00=$SECONDS
for f in c3lab cuda.test native.test; do
  python3 -c "import lzma,sys; open(sys.argv[2],'wb').write(lzma.open(sys.argv[1]).read())" .gpu/$f.xz .gpu/$f && rm .gpu/$f.xz
done
chmod +x .gpu/*
B=$PWD/.gpu/c3lab
nvidia-smi --query-gpu=index,name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $R/smi-before.csv 2>&1
date -u > $R/date.txt; git log -1 --format=%H >> $R/date.txt 2>/dev/null
$B doctor --json > $R/doctor.json 2>&1
t0=$SECONDS
(cd backends/cuda && timeout 300 ../../.gpu/cuda.test -test.v -test.timeout 290s > $R/gpu-tests-cuda.txt 2>&1; echo "rc $? took $((SECONDS-t0)) s" >> $R/gpu-tests-cuda.txt)
t0=$SECONDS
(cd native && timeout 90 ../.gpu/native.test -test.v -test.timeout 80s > $R/gpu-tests-native.txt 2>&1; echo "rc $? took $((SECONDS-t0)) s" >> $R/gpu-tests-native.txt)
S=llama3-70b-ffn-gate-up-act-offload-d2h-112m-1gpu
for st in baseline dma; do
  flags=""; [ $st = dma ] && flags="--comm-engine dma"
  C3LAB_CUPTI=1 timeout 60 $B export --backend cuda --scenario $S $flags --pprof $R/export-$st-cupti.pb.gz --perfetto $R/export-$st-cupti.pftrace --force > $R/export-$st.txt 2>&1; echo "rc $?" >> $R/export-$st.txt
done
timeout 60 backends/sim/testdata/blind-h200x2/run.sh pairs > $R/blind-h200x2-on-one-gpu.txt 2>&1; echo "rc $?" >> $R/blind-h200x2-on-one-gpu.txt
nvidia-smi --query-gpu=index,name,driver_version,serial,clocks.sm,power.draw,temperature.gpu --format=csv > $R/smi-after.csv 2>&1
nvidia-smi --query-compute-apps=pid,used_memory --format=csv > $R/leftover-processes.csv 2>&1
echo "call took $((SECONDS-t00)) s" >> $R/date.txt
cd $OUT && tar czf call1.tgz call1 && rm -rf call1 && ls -la
