#!/bin/bash
# Session 18, call 1 (one H200). Two questions.
# (1) In the one-GPU host sweep, the 32 MiB optimizer swap (c3lab's copy
#     kernel) ran 4-9 % faster beside the Adam stream, or beside a GEMM, than
#     alone, and the Adam stream on the rest of 16 or 32 SMs slowed 1.8-2.1x
#     beside it. Which half of the swap slows the stream op, and is the
#     swap faster beside anything (a stream op that ends in microseconds),
#     beside a stream op, or beside a compute-bound GEMM?
# (2) The partition probe and the sweeps part on the 2.4 ms GEMM on the rest
#     of 16 SMs (1.20-1.26x against 1.163). What does c3lab run, the
#     profiler's own path, give in runs of 4 and of 20 repetitions?
# NVML clock and power are logged every 50 ms throughout.
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
Q="--query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,pcie.link.gen.current,clocks_event_reasons.active"
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > $OUT/smi-before.csv 2>&1
nvidia-smi $Q --format=csv -lms 50 > $OUT/smi-log.csv 2>&1 &
SMI=$!
B=.gpu/c3lab
R=backends/cuda/results/2026-12-03-h200x1-s18/probe
stamp() { date -u +%H:%M:%S.%N | cut -c1-12; }
P=$(ls $R/sw-*.yaml | paste -sd,)
for pass in 1 2; do
  echo "swap pass $pass start $(stamp)" >> $OUT/stamps.txt
  timeout -s INT 200 $B sweep --backend cuda --scenarios "$P" \
    --strategies baseline,comm-first+prio,comm-sms-16,comm-sms-32,ctas-16 \
    --out $OUT/swap-pass$pass.json > $OUT/swap-pass$pass.txt 2> $OUT/swap-pass$pass.err
  echo "swap pass $pass rc=$? end $(stamp)" >> $OUT/stamps.txt
done
G=backends/cuda/results/2026-12-03-h200x1-s17/probe/pg-4096x28672x8192.yaml
for reps in 4 20; do
  for st in "" "--comm-sms 16"; do
    tag=run-reps$reps${st:+-sms16}
    echo "$tag start $(stamp)" >> $OUT/stamps.txt
    for i in 1 2 3; do
      timeout -s INT 60 $B run --backend cuda --scenario $G $st --precision off --reps $reps --settle off --json > $OUT/$tag-$i.json 2> $OUT/$tag-$i.err
    done
    echo "$tag rc=$? end $(stamp)" >> $OUT/stamps.txt
  done
done
kill $SMI
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-after.csv 2>&1
$B doctor --json > $OUT/doctor.json 2>&1
cd $OUT && tar czf all.tgz * && ls | wc -l
