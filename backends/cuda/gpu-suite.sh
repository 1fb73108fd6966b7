#!/bin/bash
# The GPU checks and measurements c3lab runs on a GPU node, in one go, with
# results under $OUT (default ./gpu-out). Build on the development machine
# first; this script builds nothing:
#   CGO_CFLAGS=-Wno-deprecated-declarations go build -o .gpu/c3lab ./cmd/c3lab
#   CGO_CFLAGS=-Wno-deprecated-declarations go test -c -o .gpu/cuda.test ./backends/cuda
# then run: bash backends/cuda/gpu-suite.sh [quick]
set -u
export NCCL_NVLS_ENABLE=0 # never NVLink multicast
cd "$(dirname "$0")/../.."
OUT=${OUT:-gpu-out}
mkdir -p "$OUT"
start=$SECONDS
step() { echo "== $1 (t=$((SECONDS - start))s)"; }

step doctor
.gpu/c3lab doctor > "$OUT/doctor.txt" 2>&1
.gpu/c3lab doctor --json > "$OUT/doctor.json" 2>&1

step "GPU tests"
C3LAB_REF_OUT="$OUT/c3lab-ref.json" C3LAB_OVERHEAD_OUT="$OUT/harness-overhead.json" \
  timeout 400 .gpu/cuda.test -test.v -test.run 'GPU' -test.timeout 390s > "$OUT/gpu-tests.txt" 2>&1
echo "gpu tests rc=$?" >> "$OUT/gpu-tests.txt"
grep -E "^(--- |ok|FAIL)|overhead|gated|busbw" "$OUT/gpu-tests.txt" | head -60

[ "${1:-}" = quick ] && exit 0

step "PyTorch reference"
timeout 150 python3 backends/cuda/reference/torch_reference.py --out "$OUT/torch.json" --json-only \
  --gemm 8192x8192x8192:bf16 --gemm 4096x4096x4096:bf16 --gemm 16384x1280x8192:bf16 \
  --gemm 64x28672x8192:bf16 --gemm 8192x8192x8192:fp16 --gemm 8192x8192x8192:fp8 > "$OUT/torch.log" 2>&1

step "sweep (SM strategies)"
timeout 420 .gpu/c3lab sweep --backend cuda --out "$OUT/sweep.json" > "$OUT/sweep.txt" 2> "$OUT/sweep.err"
cat "$OUT/sweep.txt"

step "sweep (copy engines against NCCL)"
timeout 300 .gpu/c3lab sweep --backend cuda --strategies baseline,comm-first+prio,dma,dma-1ce,dma-chunk-8m,dma-comm-first,nccl-ce \
  --out "$OUT/sweep-dma.json" > "$OUT/sweep-dma.txt" 2> "$OUT/sweep-dma.err"
cat "$OUT/sweep-dma.txt"
step done
