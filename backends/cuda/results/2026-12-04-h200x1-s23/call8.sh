#!/bin/bash
# Session 23, call 8 (one H200). How many bytes do the suite's GEMMs move
# through HBM? The simulator's wave-panel model (backends/sim/ops.go,
# gemmModel) gives 1.0-4.1x the least a GEMM reads and writes, and that
# traffic sets its share of HBM beside copies and collectives. ncu reads
# the DRAM counters of the first cuBLASLt kernel c3lab runs for each shape
# (whole GPU, untimed verification or warm-up, so before any gated
# repetition), with --clock-control none so that ncu leaves the clocks as
# they are, and its default cache flush before the kernel (cold L2).
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
cd .gpu && gunzip -kf c3lab.gz && cd ..
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > $OUT/smi-before.csv 2>&1
ncu --version > $OUT/ncu-version.txt 2>&1
S="1024x128256x8192:bf16 1024x28672x8192:bf16 12288x8192x28672:bf16 16384x10240x8192:bf16 16384x1280x8192:bf16 16384x8192x1024:bf16 2048x10240x8192:bf16 2048x32768x6144:bf16 3584x8192x8192:bf16 4096x16384x16384:bf16 4096x28672x8192:bf16 4096x4096x4096:bf16 6144x8192x8192:bf16 8192x10240x8192:bf16 8192x28672x1536:bf16 8192x28672x8192:bf16 8192x8192x4096:bf16 8192x2304x16384:bf16 1536x16384x6144:bf16 4096x14336x4096:bf16 8192x12288x1536:fp16 12288x4608x4096:fp16 128x32768x6144:bf16 64x28672x8192:bf16 8192x1280x256:bf16"
mkdir -p /tmp/sc $OUT/ncu
for s in $S; do
  shape=${s%%:*}; dt=${s##*:}; IFS=x read m n k <<< "$shape"
  f=/tmp/sc/$shape-$dt.yaml
  printf 'name: gemm-%s-%s\ngpus: 1\nprofile: h200\ncompute:\n  kind: gemm\n  m: %s\n  n: %s\n  k: %s\n  dtype: %s\ncomm:\n  collective: h2d\n  bytes: 1MiB\n' $shape $dt $m $n $k $dt > $f
  timeout 60 ncu --clock-control none --target-processes all -k 'regex:nvjet|gemm|xmma|cutlass' --launch-count 1 \
    --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,launch__grid_size,launch__cluster_dim_x,launch__cluster_dim_y \
    --csv --page raw .gpu/c3lab run --backend cuda --scenario $f --reps 2 --precision off --settle off > $OUT/ncu/$shape-$dt.csv 2> $OUT/ncu/$shape-$dt.err
  echo "$shape $dt rc $?" >> $OUT/ncu/rc.txt
  # No DRAM figure for the first shape (no counter access, say): stop.
  grep -q dram__bytes_read $OUT/ncu/$shape-$dt.csv || { echo "no DRAM counters; stopped" >> $OUT/ncu/rc.txt; break; }
done
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-after.csv 2>&1
cd $OUT && find . -name '*.err' -empty -delete; tar czf all.tgz ncu *.csv *.txt && rm -rf ncu && ls | wc -l
