#!/bin/bash
# Issue 17: does a d2h copy kernel's stall on the op beside it depend on the copy's size?
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv > $OUT/smi3.txt 2>&1
start=$SECONDS
for f in .gpu/scen/hw-*.yaml; do  # the committed copies are in host-write/
  n=$(basename $f .yaml)
  for st in "cf:--launch comm-first --comm-priority -5" "sms16:--comm-sms 16"; do
    tag=${st%%:*}; args=${st#*:}
    timeout 120 .gpu/c3lab run --backend cuda --scenario $f $args --precision off --reps 20 --json > $OUT/$n-$tag.json 2> $OUT/$n-$tag.err
    echo "$n $tag rc=$? t=$((SECONDS-start))"
  done
done
python3 - <<'PY'
import json,glob,os
out=os.environ['OUT']; rows=[]
for f in sorted(glob.glob(out+'/hw-*.json')):
  try: x=json.load(open(f))
  except Exception as e: print(f, 'unreadable', e); continue
  r=lambda k: x[k]['median_ns']/1e3
  rows.append(dict(run=os.path.basename(f)[:-5], t_comp=r('t_comp'), t_comm=r('t_comm'), t_c3=r('t_c3'), comp_in=r('t_comp_in_c3'), comm_in=r('t_comm_in_c3')))
  print(f"{rows[-1]['run']:28} comp {r('t_comp'):8.1f} comm {r('t_comm'):8.1f} c3 {r('t_c3'):8.1f} comp_in {r('t_comp_in_c3'):8.1f} ({r('t_comp_in_c3')/r('t_comp'):.2f}x) comm_in {r('t_comm_in_c3'):8.1f}")
json.dump(rows,open(out+'/host-write-sizes.json','w'),indent=1)
PY
