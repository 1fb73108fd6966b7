#!/bin/bash
# Issue 17, thirteenth session, second call: every probe GEMM timed alone the sweep way (two passes). First call: are the partition probe's whole-GPU times of the
# skinny GEMMs (the ones the simulator now corrects by) what the sweep's own
# path times for the same GEMM alone? Two passes of each, and the probe again.
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
W=/tmp/s13b; mkdir -p $W
nvidia-smi > $OUT/smi.txt 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv >> $OUT/smi.txt 2>&1
date -u > $OUT/date.txt
start=$SECONDS
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 1000 > $W/smi-samples.csv 2>&1 &
SMI=$!
for pass in a b; do
  for f in .gpu/s13scen2/alone-*.yaml; do
    n=$(basename $f .yaml)
    timeout 40 .gpu/c3lab run --backend cuda --scenario $f --precision off --reps 20 --json > $W/$n-$pass.json 2> $W/$n-$pass.err
    echo "$n $pass rc=$? t=$((SECONDS-start))"
  done
done
kill $SMI 2>/dev/null
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv >> $OUT/smi.txt 2>&1
python3 - <<'PY'
import json,glob,os,re
W='/tmp/s13b'; out=os.environ['OUT']; rows={}
for f in sorted(glob.glob(W+'/alone-*.json')):
  m=re.match(r'alone-(\d+)x(\d+)x(\d+)-(\w+)-(a|b)\.json',os.path.basename(f))
  try: x=json.load(open(f))
  except Exception as e: print(f,'unreadable',e); continue
  key='%sx%sx%s %s'%m.group(1,2,3,4)
  rows.setdefault(key,{})['run_'+m.group(5)]=x['t_comp']
try:
  pr=json.load(open(W+'/gemm-partitions-s13.json'))
  for s in pr['shapes']:
    key='%dx%dx%d %s'%(s['m'],s['n'],s['k'],s['dtype'])
    rows.setdefault(key,{})['probe_full']=s['stats'].get('full')
    rows[key]['probe_state']=s.get('state',{}).get('full')
except Exception as e: print('probe unreadable',e)
for k,v in rows.items():
  a=(v.get('run_a') or {}).get('median_ns'); b=(v.get('run_b') or {}).get('median_ns'); p=(v.get('probe_full') or {}).get('median_ns')
  if a and b: print(f"{k:24} run {a/1e3:8.1f} {b/1e3:8.1f}  a/b {a/b-1:+.3f}")
json.dump({'date':open(out+'/date.txt').read().strip(),'tool':'s13call2.sh: c3lab run --backend cuda --precision off --reps 20 --json, two passes over every GEMM of the partition probe','shapes':rows},open(out+'/gemm-alone-suite-s13.json','w'),indent=1)
PY
tar czf $OUT/s13call2-runs.tgz -C $W . 2>/dev/null
ls -la $OUT
