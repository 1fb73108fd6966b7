#!/bin/bash
# Session 25, call 2: the blind set's pairs again (call 1's JSON was over the
# size that comes back); written outside $OUT, then slimmed and compressed.
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
smi() { nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-$1.csv 2>&1; }
smi before
gunzip -f .gpu/c3lab.gz && B=.gpu/c3lab
D=backends/sim/testdata/blind-h200x1
t0=$SECONDS
P=$(ls $D/*.yaml | grep -v reload-h2d-gemm | paste -sd,)
rm -f /tmp/blind-pairs.json
timeout -s INT 420 $B sweep --backend cuda --scenarios "$P" \
  --strategies baseline,comm-first+prio,comm-sms-16,comm-sms-32,ctas-8,ctas-16,dma,dma-comm-first,dma-chunk-8m,dma-1ce \
  --out /tmp/blind-pairs.json > $OUT/blind-pairs.txt 2> $OUT/blind-pairs.err
echo "pairs rc=$? took $((SECONDS-t0)) s"
python3 backends/cuda/results/2026-12-02-h200x1-s8/slim_sweep.py /tmp/blind-pairs.json $OUT/blind-pairs.json
gzip -9 -c /tmp/blind-pairs.json > $OUT/blind-pairs-full.json.gz
ls -la $OUT
smi after
