#!/bin/bash
# Session 26, call 2: does an h2d copy kernel in an SM partition of its own slow a GEMM on the
# rest of the GPU? Twelve GEMMs (K and tiles per CTA varied, and four of the third blind set's)
# timed alone on the partitions (the partition probe), then each beside a 256 MiB h2d copy
# kernel in a 16-SM partition at 32 CTAs (the default) and at 16, GEMM launched first, two
# passes in opposite orders. C3LAB_RUNS_ONLY=1 skips the probe (the first attempt's 48 run
# files did not come back; its probe did).
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
smi() { nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-$1.csv 2>&1; }
smi before
for f in c3lab cuda.test; do
  python3 -c "import lzma,sys; open(sys.argv[2],'wb').write(lzma.open(sys.argv[1]).read())" .gpu/$f.xz .gpu/$f && rm .gpu/$f.xz
done
chmod +x .gpu/c3lab .gpu/cuda.test
B=.gpu/c3lab
P=backends/cuda/results/2026-12-04-h200x1-s26/probe
$B doctor --json > $OUT/doctor.json 2>&1
t0=$SECONDS
[ -z "$C3LAB_RUNS_ONLY" ] && C3LAB_GEMM_PARTITION_SHAPES=$PWD/$P/shapes.txt C3LAB_GEMM_PARTITION_OUT=/tmp/probe.json \
  timeout 200 .gpu/cuda.test -test.v -test.run '^TestGPUGEMMOnPartitions$' -test.timeout 190s > $OUT/probe.txt 2>&1
[ -z "$C3LAB_RUNS_ONLY" ] && echo "probe rc=$? took $((SECONDS-t0)) s" | tee -a $OUT/probe.txt && gzip -c /tmp/probe.json > $OUT/probe.json.gz
mkdir -p $OUT/runs
t0=$SECONDS
files=$(ls $P/rs-*.yaml)
for pass in 1 2; do
  list=$files; [ $pass = 2 ] && list=$(echo "$files" | tac)
  for f in $list; do
    n=$(basename $f .yaml)
    for c in 32 16; do
      timeout -s INT 60 $B run --backend cuda --scenario $f --launch compute-first --comm-sms 16 --comm-ctas $c \
        --json > $OUT/runs/$n-c$c-p$pass.json 2> $OUT/runs/$n-c$c-p$pass.err
    done
  done
done
echo "runs took $((SECONDS-t0)) s" | tee $OUT/runs.txt
find $OUT/runs -name '*.err' -size 0 -delete
# One archive: a call brings back a few files, not 48.
tar czf $OUT/runs.tgz -C $OUT runs && rm -r $OUT/runs
smi after
