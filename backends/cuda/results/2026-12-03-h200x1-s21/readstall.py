#!/usr/bin/env python3
"""The simulator against the read-stall probes of the twentieth and twenty-first sessions.

usage (from the repository root): readstall.py C3LAB PROFILE [fit] [check] [length] [swap] [-v]
C3LAB is a c3lab binary, PROFILE a profile file or built-in name (--sim-profile).
fit: three bf16 GEMMs beside a 128 MiB h2d copy kernel at 8, 16, 32 and 64 CTAs (s20 call 4);
check: seven more GEMMs beside the same copy at 8, 16, 32, 48 and 64 CTAs (s21 call 1);
length: two GEMMs beside 32 MiB and 512 MiB h2d copies at 16, 32 and 64 CTAs (s21 call 1);
swap: two GEMMs beside a 128 MiB swap at 16, 32 and 64 CTAs (s21 call 1);
order: twelve 4096^3 GEMMs back to back beside a 128 MiB h2d copy kernel of 32 CTAs, the GEMMs
enqueued first (cf), the copy first (mf) and the copy first at priority -5 (mfp) (s21 call 2),
the first, fifth and last GEMM's end; and the GEMMs first at 16 and 64 CTAs (s21 call 3);
worder: the write side (call 4): twelve 4096^3 GEMMs beside a 128 MiB d2h copy kernel and the
decode GEMM beside a 16 MiB one, GEMMs first (cf) or the copy first (mf), at 8-32 CTAs;
part: twelve 4096^3 GEMMs enqueued first on the rest of the GPU beside a 128 MiB h2d or d2h copy
kernel in a partition of 16 or 32 SMs at 32 and 64 CTAs (call 5; the copy counts as started alone);
gfirst: three single GEMMs enqueued before a 128 MiB h2d copy kernel at 16, 32 and 64 CTAs (call 6:
the copy waits for a persistent GEMM's SMs; beside the decode GEMM it starts on the SMs left free);
stream: thirty 128x16384x8192 GEMMs back to back beside a 128 MiB h2d copy kernel at 8, 16, 32 and
64 CTAs (s20 calls 1 and 4), the first GEMM's end and the fifteenth's.
Prints |error| median / p90 / max / mean of the GEMM's end (µs from the copy's start), measured
as the median of the passes; -v prints every row with the copy's CTAs.
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
sets=[a for a in sys.argv[3:] if a!='-v'] or ['fit','check','length','swap','stream','order','worder','part','gfirst']
R=os.path.join(os.path.dirname(os.path.abspath(__file__)),'..')+'/'
S20=R+'2026-12-03-h200x1-s20/'; S21=R+'2026-12-03-h200x1-s21/'
def load(p):
    d=json.load(open(p)); ev=d['traceEvents'] if isinstance(d,dict) else d
    sp=[e for e in ev if e.get('ph')=='X']
    cp=[e for e in sp if e.get('tid')=='copy']; ops=sorted([e for e in sp if e.get('tid')=='ops'],key=lambda e:e['ts'])
    t0=min(e['ts'] for e in sp)
    return [(e['ts']-t0,e['dur']) for e in ops]
cases=[]  # (set, name, probe, ctas, [trace files])
def add(st,probe,c,files):
    files=[f for f in files if os.path.exists(f)]
    if files: cases.append((st,os.path.basename(probe)[:-5],probe,c,files))
for f in sorted(glob.glob(S20+'probe/gh-*.yaml')):
    n=os.path.basename(f)[:-5]
    for c in (8,16,32,64): add('fit',f,c,glob.glob(S20+f'call4/{n}-c{c}-p*.json'))
for f in sorted(glob.glob(S21+'probe/gh-*-h128.yaml')):
    n=os.path.basename(f)[:-5]
    for c in (8,16,32,48,64): add('check',f,c,glob.glob(S21+f'call1/{n}-c{c}-p*.json'))
for f in sorted(glob.glob(S21+'probe/gh-*-h32.yaml')+glob.glob(S21+'probe/gh-*-h512.yaml')):
    n=os.path.basename(f)[:-5]
    for c in (16,32,64): add('length',f,c,glob.glob(S21+f'call1/{n}-c{c}-p*.json'))
for f in sorted(glob.glob(S21+'probe/gw-*.yaml')):
    n=os.path.basename(f)[:-5]
    for c in (16,32,64): add('swap',f,c,glob.glob(S21+f'call1/{n}-c{c}-p*.json'))
for c in (8,16,32,64):
    add('stream',S20+'probe/tc-gdec-x30-h128.yaml',c,glob.glob(S20+f'call[14]/tc-gdec-x30-h128-c{c}-p*.json'))
for t,c,flags in (('cf',32,['--launch','compute-first']),('mf',32,['--launch','comm-first']),('mfp',32,['--launch','comm-first','--comm-priority','-5']),
                  ('cf16',16,['--launch','compute-first']),('cf64',64,['--launch','compute-first'])):
    f=S21+'probe/tc-g4096x12-h128.yaml'
    fs=[x for x in glob.glob(S21+f'call[23]/tc-g4096x12-h128-{t}-p*.json')]
    if fs: cases.append(('order',f'tc-g4096x12-h128-{t}',f,c,fs,flags))
for n,cs in (('tc-g4096x12-d128',(8,16,32)),('gs-64x28672x8192-d16',(8,32))):
    for c in cs:
        for t,flags in (('cf',['--launch','compute-first']),('mf',['--launch','comm-first'])):
            fs=glob.glob(S21+f'call4/{n}-{t}{c}-p*.json')
            if fs: cases.append(('worder',f'{n}-{t}',S21+f'probe/{n}.yaml',c,fs,flags))
for n in ('tc-g4096x12-h128','tc-g4096x12-d128'):
    for sms in (16,32):
        for c in (32,64):
            fs=glob.glob(S21+f'call5/{n}-s{sms}-c{c}-p*.json')
            if fs: cases.append(('part',f'{n}-s{sms}',S21+f'probe/{n}.yaml',c,fs,['--launch','compute-first','--comm-sms',str(sms)]))
for n in ('2048x8192x8192','8192x7168x8192','64x28672x8192'):
    for c in (16,32,64):
        fs=glob.glob(S21+f'call6/gh-{n}-h128-cf{c}-p*.json')
        if fs: cases.append(('gfirst',f'gh-{n}-h128-cf',S21+f'probe/gh-{n}-h128.yaml',c,fs,['--launch','compute-first','--comm-priority','0']))
cases=[k if len(k)==6 else k+([],) for k in cases]
cases=[k for k in cases if k[0] in sets]
def run(k):
    st,n,probe,c,files,flags=k
    out=os.path.join(tmp,f'sim-{n}-{c}.json')
    subprocess.run([B,'export','--backend','sim','--sim-profile',PROF,'--scenario',probe,'--comm-ctas',str(c),'--chrome',out,'--force']+flags,check=True,capture_output=True)
    sim=load(out)
    meas=[load(f) for f in files]
    rows=[]
    for i in ((0,14) if st=='stream' else (0,4,11) if st=='order' or (st in ('worder','part') and 'x12' in n) else (0,)):
        if all(len(o)>i for o in meas) and len(sim)>i:
            ends=[o[i][0]+o[i][1] for o in meas]
            rows.append((i,statistics.median(ends),sim[i][0]+sim[i][1],ends))
    return k,rows
with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(4) as ex:
    out=list(ex.map(run,cases))
errs={}
for (st,n,probe,c,files,flags),rows in out:
    for i,m,s,all_ in rows:
        e=(s-m)/m; errs.setdefault(st,[]).append(abs(e))
        if verbose: print('%-6s %-26s c%-3d op%-2d meas %6.0f (%s) sim %6.0f %+6.1f%%'%(st,n,c,i+1,m,' '.join('%.0f'%x for x in all_),s,100*e))
for st in sets:
    if st not in errs: continue
    v=sorted(errs[st])
    print('%-6s n=%2d median %5.1f%% p90 %5.1f%% max %5.1f%% mean %5.1f%%'%(st,len(v),100*statistics.median(v),100*v[int(0.9*(len(v)-1))],100*v[-1],100*statistics.mean(v)))
