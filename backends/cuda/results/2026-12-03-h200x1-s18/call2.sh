#!/bin/bash
# Session 18, call 2 (one H200). Beside the 32 MiB swap a 256 MiB stream op
# (134 µs alone) took 554-790 µs on the rest of a partition, 4-6x, where the
# 1 GiB Adam stream took 1.8-2.1x: per SM it moved at 7-8 GB/s against
# 16-20. Is the swap's stall front-loaded, its d2h half (posted writes)
# running first and its h2d half (reads, whose requests may not pass posted
# writes) after? Stream ops of 64-512 MiB beside the swap and beside a d2h
# copy alone; and the copy kernel next to nothing at 32 and 16 CTAs (the
# swap's halves have 16 each). NVML logged every 50 ms.
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
Q="--query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,pcie.link.gen.current,clocks_event_reasons.active"
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > $OUT/smi-before.csv 2>&1
nvidia-smi $Q --format=csv -lms 50 > $OUT/smi-log.csv 2>&1 &
SMI=$!
B=.gpu/c3lab
R=backends/cuda/results/2026-12-03-h200x1-s18/probe
stamp() { date -u +%H:%M:%S.%N | cut -c1-12; }
P=$(ls $R/st-*.yaml | paste -sd,)
for pass in 1 2; do
  echo "stream pass $pass start $(stamp)" >> $OUT/stamps.txt
  timeout -s INT 260 $B sweep --backend cuda --scenarios "$P" \
    --strategies comm-first+prio,comm-sms-16,comm-sms-32,ctas-16 \
    --out $OUT/stream-pass$pass.json > $OUT/stream-pass$pass.txt 2> $OUT/stream-pass$pass.err
  echo "stream pass $pass rc=$? end $(stamp)" >> $OUT/stamps.txt
done
kill $SMI
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-after.csv 2>&1
$B doctor --json > $OUT/doctor.json 2>&1
cd $OUT && tar czf all.tgz * && ls | wc -l
