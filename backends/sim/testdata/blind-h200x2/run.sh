#!/bin/bash
# Measures the two-GPU blind set on a node lent two H200s (run from the repository root, with
# c3lab built here and carried in .gpu as .gpu/c3lab or .gpu/c3lab.xz). Arguments: the parts to
# run (default all of them: pairs async-tp layers op-streams), and gpu-tests for the cuda
# backend's two-GPU tests (.gpu/cuda.test or .xz). Each part's sweep stops at
# C3LAB_BLIND_PART_S seconds (default 270, so two parts fit one 10-minute call); results land
# under $OUT, packed into blind-h200x2.tgz (a call brings back only a few files).
set -u
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
. backends/sim/testdata/blind-h200x2/parts.sh
OUT=${OUT:?set OUT to the folder for the results}
if [ -f .gpu/c3lab.xz ] && [ ! -f .gpu/c3lab ]; then
  python3 -c "import lzma,sys; open(sys.argv[2],'wb').write(lzma.open(sys.argv[1]).read())" .gpu/c3lab.xz .gpu/c3lab
fi
chmod +x .gpu/c3lab
B=.gpu/c3lab
res=$OUT/blind-h200x2
mkdir -p $res
gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null | wc -l)
if [ "$gpus" -lt 2 ]; then
  echo "blind-h200x2: this node has $gpus GPU(s); the set needs two" | tee $res/skipped.txt
  exit 2
fi
smi() {
  nvidia-smi --query-gpu=index,name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu \
    --format=csv > $res/smi-$1.csv 2>&1
}
smi before
$B version > $res/version.txt 2>&1
$B doctor --json > $res/doctor.json 2>&1
# The cuda backend's GPU tests that need two GPUs (none of them ran on the one-GPU nodes of
# sessions 4 to 27), with .gpu/cuda.test built here: part "gpu-tests".
two_gpu_tests='^(TestGPUGraphTPPairs|TestGPUPeerLoad|TestGPUPerProcessTwoGPU.*|TestGPUStrategiesTakeEffect|TestGPUCopyEngineCollectives|TestGPUCopyEngineSizes)$'
for part in ${@:-$PARTS}; do
  if [ $part = gpu-tests ]; then
    if [ -f .gpu/cuda.test.xz ] && [ ! -f .gpu/cuda.test ]; then
      python3 -c "import lzma,sys; open(sys.argv[2],'wb').write(lzma.open(sys.argv[1]).read())" .gpu/cuda.test.xz .gpu/cuda.test
    fi
    chmod +x .gpu/cuda.test
    t0=$SECONDS
    (cd backends/cuda && timeout ${C3LAB_BLIND_PART_S:-270} ../../.gpu/cuda.test -test.v -test.run "$two_gpu_tests" \
      -test.timeout $((${C3LAB_BLIND_PART_S:-270} - 10))s > $res/gpu-tests.txt 2>&1)
    echo "gpu-tests rc=$? took $((SECONDS - t0)) s" >> $res/stamps.txt
    continue
  fi
  files=$(part_files $part)
  if [ -z "$files" ]; then
    echo "blind-h200x2: unknown part $part" | tee -a $res/stamps.txt
    continue
  fi
  echo "$part start $(date -u +%FT%TZ)" >> $res/stamps.txt
  t0=$SECONDS
  timeout -s INT ${C3LAB_BLIND_PART_S:-270} $B sweep --backend cuda --scenarios "$files" \
    --strategies "$(part_strategies $part)" --out /tmp/blind-$part.json --force \
    > $res/$part.txt 2> $res/$part.err
  echo "$part rc=$? took $((SECONDS - t0)) s" >> $res/stamps.txt
  if [ -f /tmp/blind-$part.json ]; then
    python3 backends/cuda/results/2026-12-02-h200x1-s8/slim_sweep.py /tmp/blind-$part.json $res/$part.json
  fi
  smi after-$part
done
cat $res/stamps.txt
cd $OUT && tar czf blind-h200x2.tgz blind-h200x2 && rm -rf blind-h200x2 && tar tzvf blind-h200x2.tgz
