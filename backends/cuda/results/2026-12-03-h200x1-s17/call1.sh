#!/bin/bash
# Session 17, call 1: does a GEMM on the rest of an SM partition take, in a
# sweep's conditions, the ratio the placement table (the partition probe of
# session 12) gives it? The one-GPU sweeps put the GEMMs of the h2d pairs
# at 1.16-1.18x on the rest of 16 SMs where the table says 1.24-1.25.
# Probe pairs: each GEMM beside a 1 MiB h2d copy kernel that ends in
# microseconds, so under comm-sms-N the GEMM runs alone on the rest; swept
# settled (the default, 300 ms) and unsettled; NVML clock and power are
# logged every 100 ms throughout. Then two h2d pairs again.
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
Q="--query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active"
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > $OUT/smi-before.csv 2>&1
nvidia-smi $Q --format=csv -lms 100 > $OUT/smi-log.csv 2>&1 &
SMI=$!
B=.gpu/c3lab
P=$(ls .gpu/s17/probe/pg-*.yaml | paste -sd,)
stamp() { date -u +%H:%M:%S.%N | cut -c1-12; }
for settle in auto off; do
  echo "probe settle=$settle start $(stamp)" >> $OUT/stamps.txt
  timeout -s INT 170 $B sweep --backend cuda --scenarios "$P" --settle $settle \
    --strategies baseline,comm-sms-16,comm-sms-32 \
    --out $OUT/probe-settle-$settle.json > $OUT/probe-settle-$settle.txt 2> $OUT/probe-settle-$settle.err
  echo "probe settle=$settle rc=$? end $(stamp)" >> $OUT/stamps.txt
done
S=llama3-70b-prefill-ffn-up-kv-reload-h2d-64m-1gpu,llama3-70b-ffn-down-dgrad-act-reload-h2d-128m-1gpu
echo "pairs start $(stamp)" >> $OUT/stamps.txt
timeout -s INT 150 $B sweep --backend cuda --scenarios "$S" \
  --strategies baseline,comm-sms-16,comm-sms-32 \
  --out $OUT/sweep-h2d-partitions.json > $OUT/sweep-h2d-partitions.txt 2> $OUT/sweep-h2d-partitions.err
echo "pairs rc=$? end $(stamp)" >> $OUT/stamps.txt
kill $SMI
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-after.csv 2>&1
$B doctor --json > $OUT/doctor.json 2>&1
cd $OUT && tar czf all.tgz * && ls | wc -l
