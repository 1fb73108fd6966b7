#!/usr/bin/env python3
"""The twenty-second session's call 2: predictions, then the measurements against them.

usage (from the repository root): call2.py C3LAB PROFILE [MEASURED_DIR]
Without MEASURED_DIR it prints the simulator's predictions (call2-sim.txt holds them, written
before the call ran). With it, each case against the H200's (call2/: c3lab run --json per chain,
c3lab export --chrome per stream probe and pass).
Chains: a 64 MiB h2d reload feeding a GEMM, whole and decomposed, T_c3 (µs).
Streams: GEMMs back to back beside a 128 MiB h2d copy kernel, compute-first at 16, 32 and 64 copy
CTAs: the first, fifth and last GEMM's end (µs from the first kernel's start) and the median gap
between GEMMs (µs).
"""
import glob
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
B, PROF = sys.argv[1], sys.argv[2]
M = sys.argv[3] if len(sys.argv) > 3 else None
D = os.path.dirname(os.path.abspath(__file__))
P = D + '/probe/'
chains = [('ck-reload-8192x14336x4096-h64', d, c) for d, c in ((1, 32), (4, 32), (8, 32), (8, 16), (8, 64))] + \
         [('ck-reload-4096x28672x8192-h64', d, 32) for d in (1, 4, 8)]
streams = [(s, c) for s in ('tc-g512x28672x4096x12-h128', 'tc-g2048x8192x8192x8-h128') for c in (16, 32, 64)]


def chain_tag(n, d, c):
    return f'{n}-d{d}-c{c}'


def stream_tag(n, c):
    return f'{n}-cf{c}'


def spans(trace):
    d = json.load(open(trace))
    ev = [e for e in (d['traceEvents'] if isinstance(d, dict) else d) if e.get('ph') == 'X']
    t0 = min(e['ts'] for e in ev)
    ops = sorted([e for e in ev if e.get('tid') == 'ops'], key=lambda e: e['ts'])
    ends = [e['ts'] + e['dur'] - t0 for e in ops]
    gaps = [ops[i + 1]['ts'] - (ops[i]['ts'] + ops[i]['dur']) for i in range(len(ops) - 1)]
    return ends[0], ends[4], ends[-1], statistics.median(gaps)


def sim_chain(n, d, c):
    out = subprocess.run([B, 'run', '--backend', 'sim', '--sim-profile', PROF, '--scenario', P + n + '.yaml', '--decompose', str(d),
                          '--comm-ctas', str(c), '--precision', 'off', '--json'], capture_output=True, text=True, check=True).stdout
    return json.loads(out)['t_c3']['median_ns'] / 1e3


def sim_stream(n, c):
    with tempfile.TemporaryDirectory() as td:
        subprocess.run([B, 'export', '--backend', 'sim', '--sim-profile', PROF, '--scenario', P + n + '.yaml', '--launch', 'compute-first',
                        '--comm-priority', '0', '--comm-ctas', str(c), '--chrome', td + '/t.json', '--force'], capture_output=True, check=True)
        return spans(td + '/t.json')


errs = []
for n, d, c in chains:
    s = sim_chain(n, d, c)
    line = f'chain  {chain_tag(n, d, c):40s} T_c3 sim {s:7.0f}'
    if M:
        f = f'{M}/{chain_tag(n, d, c)}.json'
        r = json.load(gzip.open(f + '.gz') if os.path.exists(f + '.gz') else open(f))['t_c3']
        m = r['median_ns'] / 1e3
        errs.append(abs(s / m - 1))
        line += f'  measured {m:7.0f} ({r["p10_ns"]/1e3:.0f}-{r["p90_ns"]/1e3:.0f})  {100*(s/m-1):+6.1f}%'
    print(line)
for n, c in streams:
    s = sim_stream(n, c)
    line = f'stream {stream_tag(n, c):40s} sim ends {s[0]:6.0f} {s[1]:6.0f} {s[2]:6.0f} gap {s[3]:4.0f}'
    if M:
        ms = [spans(f) for f in sorted(glob.glob(f'{M}/{stream_tag(n, c)}-p*.json'))]
        m = [statistics.median(x[i] for x in ms) for i in range(4)]
        errs += [abs(s[i] / m[i] - 1) for i in range(3)]
        line += f'  measured {m[0]:6.0f} {m[1]:6.0f} {m[2]:6.0f} gap {m[3]:4.0f}  ' + ' '.join(f'{100*(s[i]/m[i]-1):+6.1f}%' for i in range(3))
    print(line)
if errs:
    e = sorted(errs)
    print(f'|error| n={len(e)} median {100*statistics.median(e):.1f}% p90 {100*e[min(len(e)-1, int(.9*len(e)))]:.1f}% max {100*e[-1]:.1f}%')
