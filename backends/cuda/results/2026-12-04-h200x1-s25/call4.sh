#!/bin/bash
# Session 25, call 4: which kernels cuBLASLt runs for the blind set's GEMMs
# (ncu launch statistics: grid, CTA size, registers, shared memory), and
# how fast an 8-CTA h2d copy kernel raced against each of them moves, to
# tell which GEMMs leave their SMs slow for the copy's host reads.
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
smi() { nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-$1.csv 2>&1; }
smi before
gunzip -f .gpu/c3lab.gz .gpu/cuda.test.gz
.gpu/c3lab doctor --json > $OUT/doctor.json 2>&1
R=backends/cuda/results/2026-12-04-h200x1-s25
t0=$SECONDS
OUT=$OUT GEMM_SHAPES=$R/gemm-shapes-blind.txt GEMM_LAUNCHES_OUT=gemm-launches-blind.txt LAUNCH_LIMIT=300 \
  bash backends/cuda/gpu-suite.sh gemm-launches > $OUT/suite.log 2>&1
echo "launches took $((SECONDS-t0)) s"
gzip -9 $OUT/gemm-launches-blind.txt
C="8192x8192x8192 bf16 h2d 128MiB 8 100us; 16384x8192x8192 fp16 h2d 128MiB 8 100us; 8192x28672x8192 fp8 h2d 128MiB 8 100us; 4096x14336x4096 bf16 h2d 128MiB 8 100us; 2048x128256x4096 bf16 h2d 128MiB 8 100us; 8192x4096x14336 bf16 h2d 128MiB 8 100us; 8192x14336x4096 bf16 h2d 128MiB 8 100us; 8192x12288x12288 fp16 h2d 128MiB 8 100us; 2048x8192x8192 bf16 h2d 128MiB 8 100us; 4096x10240x8192 bf16 h2d 128MiB 8 100us; 4096x37888x3584 bf16 h2d 128MiB 8 100us"
t0=$SECONDS
(cd backends/cuda && C3LAB_CTAPLACE_OUT=$OUT/raced.json C3LAB_CTAPLACE_REPS=5 C3LAB_CTAPLACE_CASES="$C" timeout 240 ../../.gpu/cuda.test -test.run 'TestGPUCopyCTAPlacement$' -test.v -test.timeout 230s > $OUT/raced.txt 2>&1); echo "probe rc $? took $((SECONDS-t0)) s"
smi after
ls -la $OUT; tail -3 $OUT/suite.log
