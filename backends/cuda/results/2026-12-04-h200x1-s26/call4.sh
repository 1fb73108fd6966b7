#!/bin/bash
# Session 26, call 4: call 3 with the copy in a 32-SM partition instead of 16 (the model
# takes the wait to be the same whatever the partition): each
# GEMM beside a 1 MiB h2d copy in a 32-SM partition (probe/ra-*.yaml, the copy ends in about
# 25 µs, so the GEMM runs alone on the rest as a sweep times it) and beside the 256 MiB copy at
# 32 and 16 CTAs (probe/rs-*.yaml), two passes in opposite orders, all in one archive.
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
smi() { nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi-$1.csv 2>&1; }
smi before
python3 -c "import lzma,sys; open(sys.argv[2],'wb').write(lzma.open(sys.argv[1]).read())" .gpu/c3lab.xz .gpu/c3lab && rm .gpu/c3lab.xz
chmod +x .gpu/c3lab
B=.gpu/c3lab
P=backends/cuda/results/2026-12-04-h200x1-s26/probe
$B doctor --json > $OUT/doctor.json 2>&1
mkdir -p $OUT/runs
t0=$SECONDS
files=$(ls $P/rs-*.yaml)
for pass in 1 2; do
  list=$files; [ $pass = 2 ] && list=$(echo "$files" | tac)
  for f in $list; do
    n=$(basename $f .yaml); a=$P/ra-${n#rs-}.yaml
    timeout -s INT 60 $B run --backend cuda --scenario $a --launch compute-first --comm-sms 32 \
      --json > $OUT/runs/ra-${n#rs-}-p$pass.json 2> $OUT/runs/ra-${n#rs-}-p$pass.err
    for c in 32 16; do
      timeout -s INT 60 $B run --backend cuda --scenario $f --launch compute-first --comm-sms 32 --comm-ctas $c \
        --json > $OUT/runs/$n-c$c-p$pass.json 2> $OUT/runs/$n-c$c-p$pass.err
    done
  done
done
echo "runs took $((SECONDS-t0)) s" | tee $OUT/runs.txt
find $OUT/runs -name '*.err' -size 0 -delete
tar czf $OUT/runs.tgz -C $OUT runs && rm -r $OUT/runs
smi after
