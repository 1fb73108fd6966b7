#!/bin/bash
# Two-GPU probes for the simulator's largest held-out errors (issue 17,
# nineteenth session's closing note), ready for the next session lent two
# H200s. Run from the repository root on the node, with c3lab built here
# and carried in .gpu (CGO_ENABLED=1 go build -ldflags="-s -w" -o
# .gpu/c3lab ./cmd/c3lab); results land under $OUT. About 4 minutes (each
# sweep stops at 95 s, so six fit the node's 10-minute limit).
#   pa-*: a 192 MiB all-reduce in an SM partition of its own beside stream
#         ops and GEMMs of low to high arithmetic intensity, against
#         comm-first+prio: does a partitioned collective pay the latency
#         stall an HBM-heavy op puts on it outside a partition?
#   pc-*: all-to-alls of 16-320 MiB under CTA caps of 8 and 16 after a
#         short GEMM: the per-CTA rate against message size.
#   pr-*: a 112 MiB reduce-scatter launched after GEMMs of three shapes:
#         how much of it overlaps their tails under plain C3; then ncu's
#         launch statistics of its NCCL kernel behind the first of them.
# Every sweep runs twice; NCCL_NVLS_ENABLE stays 0 (no NVLink multicast).
set -u
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
B=.gpu/c3lab
P=backends/cuda/probes/h200x2-next/probe
nvidia-smi --query-gpu=index,name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > $OUT/smi-before.csv 2>&1
$B doctor --json > $OUT/doctor.json 2>&1
sweep() { # prefix strategies pass
  local files
  files=$(ls $P/$1*.yaml | paste -sd,)
  echo "$1 pass $3 $(date -u +%H:%M:%S)" >> $OUT/stamps.txt
  timeout -s INT 95 $B sweep --backend cuda --scenarios "$files" --strategies "$2" --precision off --passes 3 \
    --out $OUT/$1pass$3.json --force --json > $OUT/$1pass$3.out 2> $OUT/$1pass$3.err
}
for pass in 1 2; do
  sweep pa- baseline,comm-first+prio,comm-sms-16,comm-sms-32,comm-sms-64 $pass
  sweep pc- baseline,ctas-8,ctas-16 $pass
  sweep pr- baseline,ctas-8,ctas-16,comm-first+prio $pass
done
# NCCL's reduce-scatter kernel as it runs behind a GEMM with a partial
# last round (pr-rs112-g4096x8192x3584): ncu's launch statistics (threads,
# registers, shared memory, CTAs per SM) and its start against the GEMM's,
# for backends/sim/model.md, "A collective in a GEMM's last round".
echo "ncu $(date -u +%H:%M:%S)" >> $OUT/stamps.txt
timeout -s INT 120 ncu --clock-control none --kernel-name regex:'ncclDevKernel|nvjet' --launch-count 8 \
  --section LaunchStats --section Occupancy --csv \
  $B run --backend cuda --scenario $P/pr-rs112-g4096x8192x3584.yaml --reps 2 --precision off > $OUT/ncu-rs112.csv 2> $OUT/ncu-rs112.err
echo "end $(date -u +%H:%M:%S)" >> $OUT/stamps.txt
nvidia-smi --query-gpu=index,name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-after.csv 2>&1
cd $OUT && tar czf all.tgz * && ls | wc -l
