#!/bin/bash
# Session 22, call 1 (one H200). Where the block scheduler puts c3lab's copy
# kernel's CTAs beside a GEMM (TestGPUCopyCTAPlacement: SM id, start and end
# of every CTA; alone, ready with the GEMM, enqueued while it runs), after
# the native GPU tests that compile and check c3lab's kernels (c3_copy's body
# is now shared with c3_copy_traced). Then the decomposed reload at 8 and 4
# chunks, kernel by kernel, with this build, and the same scenario's run.
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
cd .gpu && gunzip -kf c3lab.gz cuda.test.gz native.test.gz && cd ..
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > $OUT/smi-before.csv 2>&1
stamp() { date -u +%H:%M:%S.%N | cut -c1-12; }
echo "native $(stamp)" >> $OUT/stamps.txt
(cd native && timeout 120 ../.gpu/native.test -test.run 'GPU' -test.v > $OUT/native-gpu.txt 2>&1); echo "rc $?" >> $OUT/native-gpu.txt
echo "place $(stamp)" >> $OUT/stamps.txt
(cd backends/cuda && C3LAB_CTAPLACE_OUT=$OUT/ctaplace.json C3LAB_CTAPLACE_REPS=6 timeout 300 ../../.gpu/cuda.test -test.run 'TestGPUCopyCTAPlacement$' -test.v > $OUT/ctaplace.txt 2>&1); echo "rc $?" >> $OUT/ctaplace.txt
B=.gpu/c3lab
S=llama3-8b-act-reload-h2d-gemm-decomp4-1gpu
for d in 8 4; do
  echo "export d$d $(stamp)" >> $OUT/stamps.txt
  timeout -s INT 60 $B export --backend cuda --scenario $S --decompose $d --chrome $OUT/reload-d$d.json --force > $OUT/reload-d$d.out 2> $OUT/reload-d$d.err
done
echo "run $(stamp)" >> $OUT/stamps.txt
timeout -s INT 120 $B run --backend cuda --scenario $S --decompose 8 --precision off --json > $OUT/reload-d8-run.json 2> $OUT/reload-d8-run.err
echo "end $(stamp)" >> $OUT/stamps.txt
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-after.csv 2>&1
$B doctor --json > $OUT/doctor.json 2>&1
cd $OUT && find . -name '*.err' -size 0 -delete; tar czf all.tgz * && ls | wc -l
