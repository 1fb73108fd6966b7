#!/bin/bash
# Session 25, call 1: the blind one-GPU set (backends/sim/testdata/blind-h200x1),
# measured with the committed binary after its predictions were committed.
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
smi() { nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-$1.csv 2>&1; }
smi before
gunzip -f .gpu/c3lab.gz && B=.gpu/c3lab
D=backends/sim/testdata/blind-h200x1
$B doctor --json > $OUT/doctor.json 2>&1
t0=$SECONDS
timeout -s INT 110 $B sweep --backend cuda --scenarios $D/qwen2-7b-reload-h2d-gemm.yaml \
  --strategies baseline,comm-first+prio,whole,decomp-2,decomp-4,decomp-8,dma,dma-decomp-4 \
  --out $OUT/blind-graph.json > $OUT/blind-graph.txt 2> $OUT/blind-graph.err
echo "graph rc=$? took $((SECONDS-t0)) s"
t0=$SECONDS
P=$(ls $D/*.yaml | grep -v reload-h2d-gemm | paste -sd,)
timeout -s INT 420 $B sweep --backend cuda --scenarios "$P" \
  --strategies baseline,comm-first+prio,comm-sms-16,comm-sms-32,ctas-8,ctas-16,dma,dma-comm-first,dma-chunk-8m,dma-1ce \
  --out $OUT/blind-pairs.json > $OUT/blind-pairs.txt 2> $OUT/blind-pairs.err
echo "pairs rc=$? took $((SECONDS-t0)) s"
smi after
tail -3 $OUT/blind-pairs.err
