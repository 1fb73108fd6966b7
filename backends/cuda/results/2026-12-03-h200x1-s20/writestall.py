#!/usr/bin/env python3
"""The simulator against the write-stall probes of the nineteenth and twentieth sessions.

usage (from the repository root): writestall.py C3LAB PROFILE [fit] [check] [stream] [-v]
C3LAB is a c3lab binary, PROFILE a profile file or built-in name (--sim-profile).
fit: the single GEMMs of s19 call 4 (8, 32 copy CTAs) and the GEMM streams of s19 calls 1-2;
check: the GEMMs of s20 call 1 (16, 24 CTAs; four more shapes at 8-32) and s20 call 2;
stream: the 64 MiB stream ops beside a 128 MiB copy (s19 calls 1-2);
length: three GEMMs beside copies of 16 to 256 MiB at 8 and 32 CTAs on one machine (s20 call 3).
Prints |error| median / p90 / max / mean of the first op's end and, for a stream, the last op's
end (µs from the copy's start), measured as the median of the passes; -v prints every row.
"""
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
B,PROF=sys.argv[1],sys.argv[2]
verbose='-v' in sys.argv[3:]
sets=[a for a in sys.argv[3:] if a!='-v'] or ['fit','check','stream','length']
R=os.path.join(os.path.dirname(os.path.abspath(__file__)),'..')+'/'
S19=R+'2026-12-03-h200x1-s19/'; S20=R+'2026-12-03-h200x1-s20/'
def load(p):
    d=json.load(open(p)); ev=d['traceEvents'] if isinstance(d,dict) else d
    sp=[e for e in ev if e.get('ph')=='X']
    cp=[e for e in sp if e.get('tid')=='copy']; ops=sorted([e for e in sp if e.get('tid')=='ops'],key=lambda e:e['ts'])
    t0=min(e['ts'] for e in cp)
    return [(e['ts']-t0,e['dur']) for e in ops]
cases=[]  # (set, name, probe, ctas, [trace files])
def add(st,probe,c,files):
    files=[f for f in files if os.path.exists(f)]
    if files: cases.append((st,os.path.basename(probe)[:-5],probe,c,files))
for f in sorted(glob.glob(S19+'probe/gs-*.yaml')):
    n=os.path.basename(f)[:-5]
    for c in (8,32): add('fit',f,c,glob.glob(S19+f'call4/{n}-c{c}-p*.json'))
    for c in (16,24): add('check',f,c,glob.glob(S20+f'call1/{n}-c{c}-p*.json'))
for f in sorted(glob.glob(S20+'probe/gs-*.yaml')):
    n=os.path.basename(f)[:-5]
    for c in (8,16,24,32): add('check',f,c,glob.glob(S20+f'call1/{n}-c{c}-p*.json'))
for n,cs in [('tc-gdec-x30-d128',(8,16,32,64)),('tc-g4096x12-d128',(8,16,32))]:
    for c in cs: add('fit',S19+f'probe/{n}.yaml',c,glob.glob(S19+f'call[12]/{n}-c{c}-p*.json'))
for c in (16,):
    add('check',S20+'probe/tc-g8192k2-x12-d256.yaml',c,glob.glob(S20+f'call2/tc-g8192k2-x12-d256-c{c}-p*.json'))
for f in sorted(glob.glob(S20+'probe/gs-*.yaml'))+[S19+'probe/gs-128x16384x8192-d256.yaml']:
    n=os.path.basename(f)[:-5]
    for c in (8,32): add('length',f,c,glob.glob(S20+f'call3/{n}-c{c}-p*.json'))
for c in (8,16,24,32,48,64):
    add('stream',S19+'probe/tc-s64x30-d128.yaml',c,glob.glob(S19+f'call[12]/tc-s64x30-d128-c{c}-p*.json'))
cases=[k for k in cases if k[0] in sets]
def run(k):
    st,n,probe,c,files=k
    out=os.path.join(tmp,f'sim-{n}-{c}.json')
    subprocess.run([B,'export','--backend','sim','--sim-profile',PROF,'--scenario',probe,'--comm-ctas',str(c),'--chrome',out,'--force'],check=True,capture_output=True)
    sim=load(out)
    meas=[load(f) for f in files]
    res=[]
    # first op's end, and the stream's end (if more than one op)
    m1=statistics.median(o[0][0]+o[0][1] for o in meas); s1=sim[0][0]+sim[0][1]
    res.append(('first',m1,s1))
    if len(sim)>1:
        me=statistics.median(o[-1][0]+o[-1][1] for o in meas); se=sim[-1][0]+sim[-1][1]
        res.append(('end',me,se))
    return k,res
with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(4) as ex:
    out=list(ex.map(run,cases))
errs={}
for (st,n,probe,c,files),res in out:
    for what,m,s in res:
        e=(s-m)/m; errs.setdefault(st,[]).append(abs(e))
        if verbose: print('%-6s %-28s c%-3d %-5s meas %6.0f sim %6.0f %+6.1f%%'%(st,n,c,what,m,s,100*e))
tot=[]
for st in sets:
    if st=='-v' or st not in errs: continue
    v=sorted(errs[st]); tot+=v
    print('%-6s n=%2d median %5.1f%% p90 %5.1f%% max %5.1f%% mean %5.1f%%'%(st,len(v),100*statistics.median(v),100*v[int(0.9*(len(v)-1))],100*v[-1],100*statistics.mean(v)))
