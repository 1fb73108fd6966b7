#!/bin/bash
# Session 19, call 3 (one H200). Short GEMMs beside a long d2h copy kernel
# all but stop (calls 1-2). Is it their start or their progress? GEMMs
# launched before the copy (compute-first, sized for 100 SMs so that the
# copy gets the other 32) against launched after it (comm-first), and the
# same beside an h2d copy kernel, which writes nothing to host memory.
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > $OUT/smi-before.csv 2>&1
B=.gpu/c3lab
R=backends/cuda/results/2026-12-03-h200x1-s19/probe
stamp() { date -u +%H:%M:%S.%N | cut -c1-12; }
ex() { # name tag flags...
  local n=$1 t=$2; shift 2
  echo "$n $t $(stamp)" >> $OUT/stamps.txt
  timeout -s INT 60 $B export --backend cuda --scenario $R/$n.yaml "$@" --chrome $OUT/$n-$t.json --force > $OUT/$n-$t.out 2> $OUT/$n-$t.err
}
for pass in 1 2; do
  for n in tc-g8192-d128 tc-g8192-h128 tc-gdec-x30-d128 tc-gdec-x30-h128 tc-g4096x12-d128; do
    ex $n gfirst-p$pass --launch compute-first --comm-priority 0 --gemm-sm-target 100
    ex $n cfirst-p$pass --launch comm-first --comm-priority -5 --gemm-sm-target 100
  done
done
echo "end $(stamp)" >> $OUT/stamps.txt
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-after.csv 2>&1
$B doctor --json > $OUT/doctor.json 2>&1
cd $OUT && tar czf all.tgz * && ls | wc -l
