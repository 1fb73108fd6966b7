#!/bin/bash
# Session 11, call 1: does c3lab's copy kernel capped at 8 CTAs slow behind a GEMM because of the
# GEMM's power draw (SM clock), or after any GEMM?
set -u
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
S=/tmp/s11c; mkdir -p $S
nvidia-smi > $S/smi-before.txt 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,clocks_event_reasons.active --format=csv,noheader -lms 10 > $S/smi-trace.csv 2>&1 &
SMI=$!
.gpu/c3lab doctor --json > $S/doctor.json 2>&1
for round in 1 2; do
for sc in short lowpow long; do
  for st in "ctas4:--comm-ctas 4" "ctas8:--comm-ctas 8" "ctas16:--comm-ctas 16" "ctas8-commfirst:--comm-ctas 8 --launch comm-first" "ctas32-commfirst:--comm-ctas 32 --launch comm-first"; do
    name=${st%%:*}; flags=${st#*:}
    date +%s.%N > $S/r$round-$sc-$name.start
    timeout 120 .gpu/c3lab run --backend cuda --scenario .gpu/scen/h2d-$sc.yaml $flags --precision off --reps 20 --json > $S/r$round-$sc-$name.json 2> $S/r$round-$sc-$name.err
    echo "r$round $sc $name rc=$?"
  done
done
done
kill $SMI; nvidia-smi > $S/smi-after.txt 2>&1
cd $S && tar czf $OUT/capped-copy-probe.tgz . && ls -la $OUT
