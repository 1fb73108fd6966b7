#!/bin/bash
# Session 26, call 1: the third blind one-GPU set (backends/sim/testdata/blind-h200x1-c),
# measured after its predictions were committed: its 33 GEMMs alone in every placement
# (the partition probe), then its eight pairs swept.
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
smi() { nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-$1.csv 2>&1; }
smi before
# xz, not gzip: the working tree and the binaries must fit the 64 MiB a call carries.
for f in c3lab cuda.test; do
  python3 -c "import lzma,sys; open(sys.argv[2],'wb').write(lzma.open(sys.argv[1]).read())" .gpu/$f.xz .gpu/$f && rm .gpu/$f.xz
done
chmod +x .gpu/c3lab .gpu/cuda.test
B=.gpu/c3lab
D=backends/sim/testdata/blind-h200x1-c
$B doctor --json > $OUT/doctor.json 2>&1
date -u > $OUT/date.txt
t0=$SECONDS
rm -f /tmp/probe.json /tmp/pairs.json
C3LAB_GEMM_PARTITION_SHAPES=$PWD/$D/gemm-shapes.txt C3LAB_GEMM_PARTITION_OUT=/tmp/probe.json \
  timeout 260 .gpu/cuda.test -test.v -test.run '^TestGPUGEMMOnPartitions$' -test.timeout 250s > $OUT/probe.txt 2>&1
echo "probe rc=$? took $((SECONDS-t0)) s" | tee -a $OUT/probe.txt
gzip -c /tmp/probe.json > $OUT/probe.json.gz
smi middle
t0=$SECONDS
timeout -s INT 300 $B sweep --backend cuda --scenarios "$(ls $D/*.yaml | paste -sd,)" \
  --strategies baseline,comm-sms-16,comm-sms-32,dma,dma-comm-first,dma-gemm-120,dma-gemm-112 \
  --out /tmp/pairs.json > $OUT/blind-c-pairs.txt 2> $OUT/blind-c-pairs.err
echo "pairs rc=$? took $((SECONDS-t0)) s" | tee -a $OUT/blind-c-pairs.txt
python3 backends/cuda/results/2026-12-02-h200x1-s8/slim_sweep.py /tmp/pairs.json $OUT/blind-c-pairs.json
smi after
ls -la $OUT
