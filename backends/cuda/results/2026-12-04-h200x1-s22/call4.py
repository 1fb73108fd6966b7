#!/usr/bin/env python3
"""The twenty-second session's call 4: predictions, then the measurements against them.

usage (from the repository root): call4.py C3LAB PROFILE [MEASURED_DIR]
A check set for the copy kernel's cohorts (model.md, "Where the copy's CTAs run"): one GEMM of
fewer CTAs than SMs beside a 192 MiB copy kernel, both ready together, at several CTA counts
(probe/pf-*.yaml). Without MEASURED_DIR it prints the simulator's T_c3 and its copy alone
(call4-sim.txt holds them, written before the call ran); with it, each against the H200's
(call4/: c3lab run --json per case).
"""
import gzip
import json
import os
import statistics
import subprocess
import sys
B, PROF = sys.argv[1], sys.argv[2]
M = sys.argv[3] if len(sys.argv) > 3 else None
P = os.path.dirname(os.path.abspath(__file__)) + '/probe/'
cases = [('pf-64x8192x4096-h2d-192', c) for c in (16, 32, 48, 64)] + \
        [('pf-128x28672x4096-h2d-192', c) for c in (24, 48, 64)] + \
        [('pf-256x16384x6144-h2d-192', c) for c in (6, 10, 14, 18, 24)] + \
        [('pf-256x16384x6144-d2h-192', c) for c in (16, 24)] + [('pf-128x28672x4096-d2h-192', 64)]


def tag(n, c):
    return f'{n}-c{c}'


errs = []
for n, c in cases:
    out = subprocess.run([B, 'run', '--backend', 'sim', '--sim-profile', PROF, '--scenario', P + n + '.yaml', '--comm-ctas', str(c),
                          '--precision', 'off', '--json'], capture_output=True, text=True, check=True).stdout
    r = json.loads(out)
    s, sa = r['t_c3']['median_ns'] / 1e3, r['t_comm']['median_ns'] / 1e3
    line = f'{tag(n, c):34s} T_c3 sim {s:6.0f} (copy alone {sa:6.0f})'
    if M:
        f = f'{M}/{tag(n, c)}.json'
        m = json.load(gzip.open(f + '.gz') if os.path.exists(f + '.gz') else open(f))
        mc, ma = m['t_c3']['median_ns'] / 1e3, m['t_comm']['median_ns'] / 1e3
        errs.append(abs(s / mc - 1))
        line += f'  measured {mc:6.0f} (copy alone {ma:6.0f})  {100*(s/mc-1):+6.1f}%'
    print(line)
if errs:
    e = sorted(errs)
    print(f'|error| n={len(e)} median {100*statistics.median(e):.1f}% p90 {100*e[min(len(e)-1, int(.9*len(e)))]:.1f}% max {100*e[-1]:.1f}%')
