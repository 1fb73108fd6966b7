#!/usr/bin/env python3
"""Tables of the twenty-fifth session's probes (README.md).

call3/capped.json and call4/raced.json: c3lab's copy kernel with every CTA
traced (SM, start, end) beside a GEMM (TestGPUCopyCTAPlacement); per case
and mode the median over the repetitions after the first of the copy's
first CTA start, its last CTA end, its span and the SMs it used.
call4/gemm-launches-blind.txt.gz: ncu's launch statistics of the blind
set's GEMMs; per kernel its shared memory per CTA and the carveout the
driver configured.

Usage: python3 analyze.py   (from this folder)
"""
import csv
import gzip
import io
import json
import statistics as st


def probe(path, modes):
    rows = json.load(open(path))["rows"]
    for row in rows:
        by = {}
        for r in row["reps"]:
            by.setdefault(r["mode"], []).append(r)
        cells = []
        for m in modes:
            reps = by.get(m, [])[1:]
            if not reps:
                continue
            first = [min(c[1] for c in r["ctas"]) / 1e3 for r in reps]
            last = [max(c[2] for c in r["ctas"]) / 1e3 for r in reps]
            sms = [len({c[0] for c in r["ctas"]}) for r in reps]
            span = [b - a for a, b in zip(first, last)]
            cells.append(f"{m} {st.median(first):.0f}-{st.median(last):.0f} us ({st.median(span):.0f}, {st.median(sms):.0f} SMs)")
        gemm = [r["gemm_end_ns"] / 1e3 for r in by.get("gemm-alone", [])[1:]]
        print(f"{row['case']}: GEMM alone {st.median(gemm):.0f} us")
        print("   " + "; ".join(cells))


def kernels(path):
    lines = gzip.open(path, "rt").read().splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith('"ID"'))
    rows = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    h = {k: i for i, k in enumerate(rows[0])}
    seen = set()
    for r in rows[2:]:
        if len(r) != len(rows[0]):
            continue
        k = r[h["Kernel Name"]]
        if k in seen or not k.startswith("nvjet"):
            continue
        seen.add(k)
        print(f"{k[:58]:58s} shared/CTA {r[h['launch__shared_mem_per_block']]:>8s} B, carveout {r[h['launch__shared_mem_config_size']]:>8s} B")


print("== call 3: capped copies beside the two GEMMs the blind ctas-8 runs missed most")
probe("call3/capped.json", ["copy-alone", "race", "after"])
print("\n== call 4: an 8-CTA 128 MiB h2d copy raced with each of eleven GEMMs")
probe("call4/raced.json", ["copy-alone", "race", "after"])
print("\n== call 4: the blind GEMMs' kernels (ncu)")
kernels("call4/gemm-launches-blind.txt.gz")
