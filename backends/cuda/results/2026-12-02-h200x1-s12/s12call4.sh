#!/bin/bash
# Issue 17: the host-write stall beside a swap copy kernel by size, and beside a d2h copy kernel under CTA caps.
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv > $OUT/smi4.txt 2>&1
runs=/tmp/hw4; mkdir -p $runs
start=$SECONDS
one() { # name file tag args...
  local f=$1 tag=$2; shift 2
  local n=$(basename $f .yaml)
  timeout 120 .gpu/c3lab run --backend cuda --scenario $f "$@" --precision off --reps 20 --json > $runs/$n-$tag.json 2> $runs/$n-$tag.err
  echo "$n $tag rc=$? t=$((SECONDS-start))"
}
for f in .gpu/scen/hw-*-swap-*.yaml; do  # the committed copies are in host-write/
  one $f cf --launch comm-first --comm-priority -5
  one $f sms16 --comm-sms 16
done
for f in .gpu/scen/hw-*-d2h-16m.yaml .gpu/scen/hw-*-d2h-64m.yaml; do
  one $f cf-ctas8 --launch comm-first --comm-priority -5 --comm-ctas 8
  one $f cf-ctas16 --launch comm-first --comm-priority -5 --comm-ctas 16
done
tar czf $OUT/host-write-call4-runs.tgz -C $runs .
python3 - <<'PY'
import json,glob,os
runs='/tmp/hw4'; out=os.environ['OUT']; rows=[]
for f in sorted(glob.glob(runs+'/hw-*.json')):
  try: x=json.load(open(f))
  except Exception as e: print(f, 'unreadable', e); continue
  r=lambda k: x[k]['median_ns']/1e3
  rows.append(dict(run=os.path.basename(f)[:-5], t_comp=r('t_comp'), t_comm=r('t_comm'), t_c3=r('t_c3'), comp_in=r('t_comp_in_c3'), comm_in=r('t_comm_in_c3')))
  print(f"{rows[-1]['run']:30} comp {r('t_comp'):8.1f} comm {r('t_comm'):8.1f} c3 {r('t_c3'):8.1f} comp_in {r('t_comp_in_c3'):8.1f} ({r('t_comp_in_c3')/r('t_comp'):.2f}x) comm_in {r('t_comm_in_c3'):8.1f}")
dev=None
try: dev=json.load(open(sorted(glob.glob(runs+'/hw-*.json'))[0])).get('devices')
except Exception: pass
json.dump({'devices':dev,'rows':rows},open(out+'/host-write-call4.json','w'),indent=1)
PY
