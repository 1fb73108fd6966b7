#!/usr/bin/env python3
"""The simulator against the copy kernel's CTA placement probe (twenty-second session, call 1).

usage (from the repository root): ctaplace.py C3LAB PROFILE [-v]
C3LAB is a c3lab binary, PROFILE a profile file or built-in name (--sim-profile).
For each case of TestGPUCopyCTAPlacement, the race mode (GEMM and copy kernel ready together, the
GEMM enqueued first, as c3lab's compute-first launch does): the GEMM's end, the copy's first CTA's
start, the copy's end and the SMs its CTAs held (medians over the repetitions), against the
simulator's (the GEMM and the copy as a compute-first pair, the copy's SMs from the timeline's
sms_comm). Prints |error| median / p90 / max of the GEMM's and the copy's ends; -v every row.
"""
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
B, PROF = sys.argv[1], sys.argv[2]
verbose = '-v' in sys.argv[3:]
D = os.path.dirname(os.path.abspath(__file__))
rows = json.load(gzip.open(D + '/call1/ctaplace.json.gz'))['rows']
med = statistics.median


def sim(m, n, k, kind, size, ctas):
    y = f"""name: ctaplace
gpus: 1
streams:
  - name: ops
    ops:
      - {{name: g, kind: gemm, m: {m}, n: {n}, k: {k}, dtype: bf16}}
  - name: copy
    ops:
      - {{name: c, kind: {kind}, bytes: {size}}}
reps: 3
strategy:
  launch: compute-first
  comm_priority: 0
"""
    with tempfile.TemporaryDirectory() as td:
        p = td + '/p.yaml'
        open(p, 'w').write(y)
        out = subprocess.run([B, 'run', '--backend', 'sim', '--sim-profile', PROF, '--scenario', p, '--comm-ctas', str(ctas),
                              '--precision', 'off', '--json', '--timeline'], capture_output=True, text=True, check=True).stdout
    r = json.loads(out)
    sp = r['timeline']
    g = [s for s in sp if s['track'] == 'ops' or s['graph_op'] == 'g']
    c = [s for s in sp if s['graph_op'] == 'c']
    t0 = min(s['start_ns'] for s in sp)
    sms = max([x['value'] for x in r['samples'] if x['metric'] == 'sms_comm'] or [0])
    return (g[0]['end_ns'] - t0) / 1e3, (c[0]['start_ns'] - t0) / 1e3, (c[0]['end_ns'] - t0) / 1e3, sms


errs = {'gemm': [], 'copy': []}
for r in rows:
    race = [x for x in r['reps'] if x['mode'] == 'race']
    gm, kn, kk, dt = r['gemm'].split()[1].split('x') + [r['gemm'].split()[2]]
    m, n, k = int(gm), int(kn), int(kk)
    kind, size = r['copy'].split()[0], r['copy'].split()[1]
    real = (med(x['gemm_end_ns'] for x in race) / 1e3, med(min(a[1] for a in x['ctas']) for x in race) / 1e3,
            med(max(a[2] for a in x['ctas']) for x in race) / 1e3, med(len({a[0] for a in x['ctas']}) for x in race))
    s = sim(m, n, k, kind, size, r['ctas'])
    eg, ec = s[0] / real[0] - 1, s[2] / real[2] - 1
    errs['gemm'].append(abs(eg))
    errs['copy'].append(abs(ec))
    if verbose:
        print(f"{r['case']:46s} GEMM end {real[0]:6.0f} sim {s[0]:6.0f} {100*eg:+6.1f}% | copy {real[1]:5.0f}-{real[2]:6.0f} "
              f"sim {s[1]:5.0f}-{s[2]:6.0f} {100*ec:+6.1f}% | SMs {real[3]:4.0f} sim {s[3]:4.0f}")


def q(v, f):
    v = sorted(v)
    return v[min(len(v) - 1, int(f * len(v)))]


for key, v in errs.items():
    print(f"{key:5s} end n={len(v):2d} median {100*med(v):5.1f}% p90 {100*q(v, .9):5.1f}% max {100*max(v):5.1f}%")
