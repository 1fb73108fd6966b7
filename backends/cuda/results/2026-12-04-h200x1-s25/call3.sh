#!/bin/bash
# Session 25, call 3: why the blind set's CTA-capped host copies miss.
# Every CTA of c3lab's copy kernel traced (SM, start, end) beside the two
# blind GEMMs whose ctas-8 runs the simulator got most wrong, alone, raced,
# enqueued late and behind; then the decomposed reload's kernel spans.
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
smi() { nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-$1.csv 2>&1; }
smi before
gunzip -f .gpu/c3lab.gz .gpu/cuda.test.gz
C="2048x8192x8192 bf16 swap 128MiB 8 100us; 2048x8192x8192 bf16 swap 128MiB 16 100us; 2048x8192x8192 bf16 swap 128MiB 32 100us; 2048x8192x8192 bf16 h2d 128MiB 8 100us; 2048x8192x8192 bf16 d2h 128MiB 8 100us; 4096x10240x8192 bf16 h2d 160MiB 8 200us; 4096x10240x8192 bf16 h2d 160MiB 32 200us; 4096x10240x8192 bf16 swap 64MiB 8 200us"
t0=$SECONDS
(cd backends/cuda && C3LAB_CTAPLACE_OUT=$OUT/capped.json C3LAB_CTAPLACE_REPS=6 C3LAB_CTAPLACE_CASES="$C" timeout 300 ../../.gpu/cuda.test -test.run 'TestGPUCopyCTAPlacement$' -test.v -test.timeout 280s > $OUT/capped.txt 2>&1); echo "probe rc $? took $((SECONDS-t0)) s"
S=backends/sim/testdata/blind-h200x1/qwen2-7b-reload-h2d-gemm.yaml
mkdir -p /tmp/ex
for d in 4 8; do for rep in 1 2; do
  timeout 60 .gpu/c3lab export --backend cuda --scenario $S --decompose $d --chrome /tmp/ex/reload-d$d-$rep.json --force > /tmp/ex/reload-d$d-$rep.log 2>&1 || echo "export d$d rc=$?"
done; done
(cd /tmp/ex && tar czf $OUT/reload-exports.tgz *)
smi after
ls -la $OUT
