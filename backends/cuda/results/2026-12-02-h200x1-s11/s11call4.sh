#!/bin/bash
# Session 11, call 4: A/B of the copy kernel's L1 preference (.gpu/c3lab, final) against the build
# without it (.gpu/c3lab-old) on the one-GPU stream scenarios, interleaved, same GPU.
set -u
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
S=/tmp/s11f; mkdir -p $S
tar xzf .gpu/bins.tgz -C .gpu
nvidia-smi --query-gpu=name,driver_version,uuid --format=csv > $S/gpu.txt 2>&1
for round in 1 2 3; do
for sc in llama3-8b-act-reload-h2d-gemm-decomp4-1gpu llama3-8b-act-reload-h2d-1gpu llama3-70b-qkv-wgrad-optimizer-swap-48m-1gpu; do
  for st in "base:" "ctas8:--comm-ctas 8"; do
    name=${st%%:*}; flags=${st#*:}
    for v in old new; do
      bin=.gpu/c3lab; [ $v = old ] && bin=.gpu/c3lab-old
      timeout 120 $bin run --backend cuda --scenario $sc $flags --precision off --reps 20 --json > $S/r$round-$sc-$name-$v.json 2> $S/r$round-$sc-$name-$v.err
      echo "r$round $sc $name $v rc=$?"
    done
  done
done
done
cd $S && tar czf $OUT/ab-graphs.tgz . && ls -la $OUT
