#!/bin/bash
# Session 21, call 2 (one H200). Why the sweeps' h2d pairs show less read
# stall than the single-GEMM probes: (1) three probes of call 1 timed by
# `c3lab run` (per-op events, no timeline export) at 8, 32 and 64 CTAs;
# (2) twelve 4096^3 GEMMs back to back beside a 128 MiB h2d copy kernel at
# 32 CTAs launched compute-first, comm-first, and comm-first at priority -5;
# (3) two in-sample sweep scenarios exported kernel by kernel.
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
gunzip -kf .gpu/c3lab.gz
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > $OUT/smi-before.csv 2>&1
B=.gpu/c3lab
P=backends/cuda/results/2026-12-03-h200x1-s21/probe
stamp() { date -u +%H:%M:%S.%N | cut -c1-12; }
ex() { # file-or-name tag flags...
  local f=$1 t=$2; shift 2
  local n=$(basename $f .yaml)
  echo "$n $t $(stamp)" >> $OUT/stamps.txt
  timeout -s INT 60 $B export --backend cuda --scenario $f "$@" --chrome $OUT/$n-$t.json --force > $OUT/$n-$t.out 2> $OUT/$n-$t.err
}
for f in gh-4096x4096x4096-h32 gh-2048x8192x8192-h128 gh-8192x7168x8192-h128; do
  for c in 8 32 64; do
    echo "$f run c$c $(stamp)" >> $OUT/stamps.txt
    timeout -s INT 60 $B run --backend cuda --scenario $P/$f.yaml --comm-ctas $c --precision off --reps 10 --json > $OUT/$f-c$c-run.json 2> $OUT/$f-c$c-run.err
  done
done
for pass in 1 2; do
  ex $P/tc-g4096x12-h128.yaml cf-p$pass --launch compute-first --comm-ctas 32
  ex $P/tc-g4096x12-h128.yaml mf-p$pass --launch comm-first --comm-ctas 32
  ex $P/tc-g4096x12-h128.yaml mfp-p$pass --launch comm-first --comm-priority -5 --comm-ctas 32
  ex llama3-8b-act-reload-h2d-gemm-decomp4-1gpu base-p$pass
  ex llama3-8b-act-reload-h2d-gemm-decomp4-1gpu mfp-p$pass --launch comm-first --comm-priority -5
  ex llama3-70b-ffn-down-dgrad-act-reload-h2d-128m-1gpu mfp-p$pass --launch comm-first --comm-priority -5
done
echo "end $(stamp)" >> $OUT/stamps.txt
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-after.csv 2>&1
$B doctor --json > $OUT/doctor.json 2>&1
cd $OUT && tar czf all.tgz * && ls | wc -l
