#!/bin/bash
# Issue 17, thirteenth session: are the partition probe's whole-GPU times of the
# skinny GEMMs (the ones the simulator now corrects by) what the sweep's own
# path times for the same GEMM alone? Two passes of each, and the probe again.
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
W=/tmp/s13; mkdir -p $W
nvidia-smi > $OUT/smi.txt 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv >> $OUT/smi.txt 2>&1
date -u > $OUT/date.txt
start=$SECONDS
for pass in a b; do
  for f in .gpu/s13scen/alone-*.yaml; do
    n=$(basename $f .yaml)
    timeout 60 .gpu/c3lab run --backend cuda --scenario $f --precision off --reps 20 --json > $W/$n-$pass.json 2> $W/$n-$pass.err
    echo "$n $pass rc=$? t=$((SECONDS-start))"
  done
done
C3LAB_GEMM_PARTITION_SHAPES=.gpu/s13shapes.txt C3LAB_GEMM_PARTITION_OUT=$W/gemm-partitions-s13.json \
  timeout 240 .gpu/cuda.test -test.v -test.run '^TestGPUGEMMOnPartitions$' -test.timeout 230s > $W/gemm-partitions-s13.txt 2>&1
echo "probe rc=$? t=$((SECONDS-start))"
tail -20 $W/gemm-partitions-s13.txt
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv >> $OUT/smi.txt 2>&1
python3 - <<'PY'
import json,glob,os,re
W='/tmp/s13'; out=os.environ['OUT']; rows={}
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
  print(f"{k:24} run {a and a/1e3:8.1f} {b and b/1e3:8.1f}  probe {p and p/1e3:8.1f}  run/probe {a and p and (a+b)/2/p-1:+.3f}")
json.dump({'date':open(out+'/date.txt').read().strip(),'tool':'s13call1.sh: c3lab run --backend cuda --precision off --reps 20 --json (two passes) and TestGPUGEMMOnPartitions on .gpu/s13shapes.txt','shapes':rows},open(out+'/gemm-alone-s13.json','w'),indent=1)
PY
cp $W/gemm-partitions-s13.json $W/gemm-partitions-s13.txt $OUT/ 2>/dev/null
gzip -f $OUT/gemm-partitions-s13.json
tar czf $OUT/s13call1-runs.tgz -C $W . 2>/dev/null
ls -la $OUT
