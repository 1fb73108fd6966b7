#!/usr/bin/env python3
"""Summarize the session-11 capped-copy runs (c3lab run --json files) into one small JSON.

usage: summarize.py OUT.json CALL=DIR [CALL=DIR ...]
Each DIR holds the runs of one device call (r<round>-<cell>-<variant>.json, final-*.json) and its
gpu.txt / smi-before.txt. Per run: median, p10 and p90 of T_c3, and the medians of T_comp, T_comm
and the compute op's time inside the C3 run, in microseconds.
"""
import json, os, re, sys

def stat(d, k):
    s = d.get(k) or {}
    return {q: round(s[q + '_ns'] / 1e3, 1) for q in ('median', 'p10', 'p90') if q + '_ns' in s}

out = {'tool': 'backends/cuda/results/2026-12-02-h200x1-s11/summarize.py', 'calls': {}}
for arg in sys.argv[2:]:
    call, d = arg.split('=', 1)
    runs = []
    for f in sorted(os.listdir(d)):
        if not f.endswith('.json') or f == 'doctor.json':
            continue
        r = json.load(open(os.path.join(d, f)))
        if 't_c3' not in r:
            continue
        dev = (r.get('devices') or [{}])[0]
        runs.append({'run': f[:-5], 'scenario': r['scenario']['name'], 'strategy': r.get('strategy'),
                     't_c3': stat(r, 't_c3'), 't_comp': stat(r, 't_comp')['median'], 't_comm': stat(r, 't_comm')['median'],
                     't_comp_in_c3': stat(r, 't_comp_in_c3')['median'], 'gpu': dev.get('name')})
    meta = {}
    for name in ('gpu.txt', 'smi-before.txt'):
        p = os.path.join(d, name)
        if os.path.exists(p):
            meta[name] = open(p).read().strip().splitlines()[:12]
    out['calls'][call] = {'meta': meta, 'runs': runs}
json.dump(out, open(sys.argv[1], 'w'), indent=1)
