#!/bin/bash
# Session 22, call 3 (one H200). Why the 192 MiB expert fetch beside a
# 256x16384x6144 decode GEMM takes 5.33 ms at 16 copy CTAs and 3.94 at 8
# and 32 in every sweep since 2026-12-01 (the calibration's worst
# in-sample run): the copy kernel's CTAs traced (SM id, start, end) beside
# that GEMM at 8-32 CTAs, and the sweep's pair run at 12-32 CTAs.
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
cd .gpu && gunzip -kf c3lab.gz cuda.test.gz && cd ..
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > $OUT/smi-before.csv 2>&1
stamp() { date -u +%H:%M:%S.%N | cut -c1-12; }
echo "place $(stamp)" >> $OUT/stamps.txt
C="256x16384x6144 bf16 h2d 192MiB 8 40us;256x16384x6144 bf16 h2d 192MiB 12 40us;256x16384x6144 bf16 h2d 192MiB 16 40us;256x16384x6144 bf16 h2d 192MiB 20 40us;256x16384x6144 bf16 h2d 192MiB 32 40us;256x16384x6144 bf16 h2d 32MiB 16 40us;64x28672x8192 bf16 h2d 192MiB 16 40us;512x28672x4096 bf16 h2d 192MiB 16 60us"
(cd backends/cuda && C3LAB_CTAPLACE_OUT=$OUT/ctaplace3.json C3LAB_CTAPLACE_REPS=4 C3LAB_CTAPLACE_CASES="$C" timeout 300 ../../.gpu/cuda.test -test.run 'TestGPUCopyCTAPlacement$' -test.v > $OUT/ctaplace3.txt 2>&1); echo "rc $?" >> $OUT/ctaplace3.txt
B=.gpu/c3lab
for c in 8 12 16 20 24 32; do
  echo "run c$c $(stamp)" >> $OUT/stamps.txt
  timeout -s INT 120 $B run --backend cuda --scenario mixtral-8x22b-decode-expert-fetch-h2d-192m-1gpu --comm-ctas $c --precision off --json > $OUT/fetch-c$c.json 2> $OUT/fetch-c$c.err
done
echo "end $(stamp)" >> $OUT/stamps.txt
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-after.csv 2>&1
$B doctor --json > $OUT/doctor.json 2>&1
cd $OUT && find . -name '*.err' -size 0 -delete; tar czf all.tgz * && ls | wc -l
