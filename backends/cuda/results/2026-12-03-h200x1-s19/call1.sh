#!/bin/bash
# Session 19, call 1 (one H200). The d2h copy kernel's write stall on the
# kernels beside it, over time: streams of short ops back to back beside one
# long copy launched first (comm-first, priority), exported as per-kernel
# spans (c3lab export --chrome). Each op's span says how the stall goes over
# the copy: with the copy's time (ops later in the copy run faster), with
# each kernel's own start (every op alike), or with the copy kernel's start
# (sixteen short copies in place of one long one).
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
  for n in tc-s64x30-d128 tc-gdec-x30-d128; do
    for c in 8 16 32 64; do ex $n c$c-p$pass --comm-ctas $c; done
  done
  ex tc-s64x30-d128 sms32-p$pass --launch compute-first --comm-priority 0 --comm-sms 32
  for n in tc-s64x30-d32 tc-g4096x12-d128 tc-late-s64x20-d256 tc-late2-s1g-s64x20-d256 tc-s64x30-d8x16; do
    ex $n c32-p$pass
  done
done
echo "end $(stamp)" >> $OUT/stamps.txt
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-after.csv 2>&1
$B doctor --json > $OUT/doctor.json 2>&1
cd $OUT && tar czf all.tgz * && ls | wc -l
