#!/bin/bash
# Session 14, call 3: c3lab's copy kernel behind a GEMM at many CTA caps.
# The 192 MiB expert fetch runs 1.36x slower under ctas-16 than under 8 or
# the default 32 (reproduced on two H200s); this maps the CTA count.
export XDG_CACHE_HOME=/tmp/xdgcache NCCL_NVLS_ENABLE=0
R=$OUT; T=/tmp/s14c; mkdir -p $T
nvidia-smi --query-gpu=name,driver_version,serial,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $R/nvidia-smi-call3.csv 2>&1
run() { # name scenario args...
  local name=$1 sc=$2; shift 2
  timeout 60 .gpu/c3lab run --backend cuda --scenario $sc --precision off --reps 10 --json "$@" > $T/$name.json 2> $T/$name.err
  echo "$name rc=$?"
}
F=mixtral-8x22b-decode-expert-fetch-h2d-192m-1gpu
for c in 4 6 8 10 12 14 16 20 24 28 32 48 64; do run fetch-ctas-$c $F --comm-ctas $c; done
run fetch-ctas-16-commfirst $F --comm-ctas 16 --launch comm-first
run fetch-ctas-8-commfirst $F --comm-ctas 8 --launch comm-first
S=llama3-70b-qkv-wgrad-optimizer-swap-48m-1gpu
for c in 4 8 12 16 24 32 64; do run swap-ctas-$c $S --comm-ctas $c; done
K=llama3-70b-prefill-ffn-up-kv-reload-h2d-64m-1gpu
for c in 4 8 12 16 24 32 64; do run reload-ctas-$c $K --comm-ctas $c; done
D=llama3-70b-ffn-gate-up-act-offload-d2h-112m-1gpu
for c in 4 8 16 32; do run offload-ctas-$c $D --comm-ctas $c; done
python3 - <<PY > $R/copy-ctas-summary.json
import json,glob,os
out=[]
for f in sorted(glob.glob("$T/*.json")):
    try: d=json.load(open(f))
    except Exception as e: out.append({"run":os.path.basename(f),"error":str(e)}); continue
    g=lambda k: (d.get(k) or {}).get("median_ns")
    out.append({"run":os.path.basename(f)[:-5],"t_comp":g("t_comp"),"t_comm":g("t_comm"),"t_c3":g("t_c3"),"t_comp_in_c3":g("t_comp_in_c3"),"t_comm_in_c3":g("t_comm_in_c3")})
print(json.dumps({"date":"$(date -u +%FT%TZ)","gpu":open("$R/nvidia-smi-call3.csv").read(),"runs":out},indent=1))
PY
cat $R/copy-ctas-summary.json | python3 -c "
import json,sys
d=json.load(sys.stdin)
for r in d['runs']:
  if 't_c3' in r and r['t_c3']: print('%-28s comp %8.1f comm %8.1f c3 %8.1f commin %8.1f'%(r['run'],r['t_comp']/1e3,r['t_comm']/1e3,r['t_c3']/1e3,r['t_comm_in_c3']/1e3))
  else: print(r)
"
cd $T && tar czf $R/copy-ctas-runs.tgz *.json *.err
