#!/bin/bash
# Session 17, call 2: every suite GEMM pair of 1.3 ms or more (and the
# 1.2 ms control that agreed with the table in call 1) alone on the rest of
# 16-, 32- and 64-SM partitions in a sweep's conditions, through the probe
# pairs (a GEMM beside a 1 MiB h2d copy kernel that ends in microseconds).
# NVML clock and power are logged every 100 ms.
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
Q="--query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active"
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > $OUT/smi-before.csv 2>&1
nvidia-smi $Q --format=csv -lms 100 > $OUT/smi-log.csv 2>&1 &
SMI=$!
B=.gpu/c3lab
P=$(ls .gpu/s17/probe/pg-*.yaml | paste -sd,)
t0=$SECONDS
timeout -s INT 480 $B sweep --backend cuda --scenarios "$P" \
  --strategies baseline,comm-sms-16,comm-sms-32,comm-sms-64 \
  --out $OUT/probe-rest.json > $OUT/probe-rest.txt 2> $OUT/probe-rest.err
echo "probe rc=$? took $((SECONDS-t0)) s"
kill $SMI
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-after.csv 2>&1
$B doctor --json > $OUT/doctor.json 2>&1
cd $OUT && tar czf all.tgz * && ls | wc -l
