#!/bin/bash
# Session 25, call 7: the second blind one-GPU set
# (backends/sim/testdata/blind-h200x1-b), measured after its predictions
# were committed (625ec66).
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
smi() { nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-$1.csv 2>&1; }
smi before
gunzip -f .gpu/c3lab.gz && B=.gpu/c3lab
D=backends/sim/testdata/blind-h200x1-b
$B doctor --json > $OUT/doctor.json 2>&1
t0=$SECONDS
rm -f /tmp/bg.json /tmp/bp.json
timeout -s INT 90 $B sweep --backend cuda --scenarios $D/gemma2-27b-reload-h2d-gemm.yaml \
  --strategies baseline,comm-first+prio,whole,decomp-2,decomp-4,decomp-8,dma,dma-decomp-4 \
  --out /tmp/bg.json > $OUT/blind-b-graph.txt 2> $OUT/blind-b-graph.err
echo "graph rc=$? took $((SECONDS-t0)) s"
t0=$SECONDS
P=$(ls $D/*.yaml | grep -v reload-h2d-gemm | paste -sd,)
timeout -s INT 420 $B sweep --backend cuda --scenarios "$P" \
  --strategies baseline,comm-first+prio,comm-sms-16,comm-sms-32,ctas-8,ctas-16,dma,dma-comm-first,dma-chunk-8m,dma-1ce \
  --out /tmp/bp.json > $OUT/blind-b-pairs.txt 2> $OUT/blind-b-pairs.err
echo "pairs rc=$? took $((SECONDS-t0)) s"
for f in bg bp; do python3 backends/cuda/results/2026-12-02-h200x1-s8/slim_sweep.py /tmp/$f.json $OUT/$f.json; done
mv $OUT/bg.json $OUT/blind-b-graph.json; mv $OUT/bp.json $OUT/blind-b-pairs.json
smi after
ls -la $OUT
