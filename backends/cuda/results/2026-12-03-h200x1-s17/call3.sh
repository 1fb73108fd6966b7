#!/bin/bash
# Session 17, call 3: the same probe pairs as call 2 in the other places the
# sweep grid puts a GEMM: compute partitions of 120 and 112 SMs and the rest
# of an 8-SM partition (dma-gemm-120, dma-gemm-112, dma-comm-sms-8: the 1 MiB
# copy on a copy engine, launched first, the GEMM alone in its place).
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
Q="--query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active"
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > $OUT/smi-before.csv 2>&1
nvidia-smi $Q --format=csv -lms 100 > $OUT/smi-log.csv 2>&1 &
SMI=$!
B=.gpu/c3lab
P=$(ls .gpu/s17/probe/pg-*.yaml | paste -sd,)
t0=$SECONDS
timeout -s INT 480 $B sweep --backend cuda --scenarios "$P" \
  --strategies baseline,dma-gemm-120,dma-gemm-112,dma-comm-sms-8 \
  --out $OUT/probe-compute.json > $OUT/probe-compute.txt 2> $OUT/probe-compute.err
echo "probe rc=$? took $((SECONDS-t0)) s"
kill $SMI
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-after.csv 2>&1
$B doctor --json > $OUT/doctor.json 2>&1
cd $OUT && tar czf all.tgz * && ls | wc -l
