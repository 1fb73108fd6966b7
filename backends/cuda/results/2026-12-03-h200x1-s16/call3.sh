#!/bin/bash
# Session 16, call 3: the first chunk of the decomposed reload taken apart.
# A GEMM chunk fed by a 4 or 8 MiB reload, with nothing, one or two more
# copies queued on the copy stream (pc, pa, pb), a longer second copy (pd),
# and the GEMM alone with a copy queued behind it (pe, compute-first).
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-before.csv 2>&1
B=.gpu/c3lab
for rep in 1 2 3; do
  for f in .gpu/s16/probe/*.yaml; do
    n=$(basename $f .yaml)
    timeout 60 $B export --backend cuda --scenario $f --chrome $OUT/$n-$rep.json --force > $OUT/$n-$rep.log 2>&1 || echo "$n rc=$?"
    [ "${n#pe}" != "$n" ] && timeout 60 $B export --backend cuda --scenario $f --launch comm-first --chrome $OUT/$n-cf-$rep.json --force > $OUT/$n-cf-$rep.log 2>&1
  done
done
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-after.csv 2>&1
cd $OUT && tar czf all.tgz *.json *.csv && ls | wc -l
