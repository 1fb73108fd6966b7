#!/bin/bash
# Session 11, call 2: does the capped copy kernel's slowdown behind a GEMM come from the SMs'
# shared-memory carveout the GEMM leaves? A/B: the copy kernel as before, and with a preferred
# carveout of 0 % (C3LAB_COPY_CARVEOUT=l1), interleaved.
set -u
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
S=/tmp/s11d; mkdir -p $S
nvidia-smi > $S/smi-before.txt 2>&1
for round in 1 2; do
for sc in short lowpow long; do
  for cap in 4 8 16; do
    for v in before l1; do
      [ "$sc" = lowpow ] && [ "$cap" = 16 ] && continue
      if [ $v = l1 ]; then export C3LAB_COPY_CARVEOUT=l1; else unset C3LAB_COPY_CARVEOUT; fi
      timeout 120 .gpu/c3lab run --backend cuda --scenario .gpu/scen/h2d-$sc.yaml --comm-ctas $cap --precision off --reps 20 --json > $S/r$round-$sc-ctas$cap-$v.json 2> $S/r$round-$sc-ctas$cap-$v.err
      echo "r$round $sc ctas$cap $v rc=$?"
    done
  done
done
done
unset C3LAB_COPY_CARVEOUT
nvidia-smi > $S/smi-after.txt 2>&1
cd $S && tar czf $OUT/carveout-probe.tgz . && ls -la $OUT
