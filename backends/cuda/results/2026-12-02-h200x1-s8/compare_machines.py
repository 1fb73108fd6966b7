#!/usr/bin/env python3
"""How far a measurement moves between H200s and days: the same cells of
the one-GPU sweeps and the same GEMMs alone, measured again on the H200s of
this session against the committed results of earlier sessions (other
H200s, other days), beside the same sweep run twice on one H200.

Prints |difference| median / p90 / max: T_comp, T_comm and T_c3 relative in
%, F (fraction of ideal) in points; then, for the GEMMs alone, the line
T_then = a x T_now + b fitted per earlier sweep (relative least squares).

Usage, from the repository root:
    python3 backends/cuda/results/2026-12-02-h200x1-s8/compare_machines.py
"""
import json
import os

HERE = os.path.relpath(os.path.dirname(os.path.abspath(__file__)))
R = os.path.dirname(HERE)


def pct(xs, q):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    i = q * (len(xs) - 1)
    lo = int(i)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (i - lo)


def stat(v):
    return "%5.1f / %5.1f / %5.1f" % (pct(v, 0.5), pct(v, 0.9), max(v)) if v else "-"


def cells(path):
    out = {}
    with open(path) as f:
        for r in json.load(f)["results"]:
            res = r.get("result")
            if res:
                # Earlier one-GPU sweeps named the scenarios without "-1gpu".
                out[(r["scenario"].removesuffix("-1gpu"), r["strategy"])] = res
    return out


def compare_sweeps(a, b, label):
    A, B = cells(a), cells(b)
    keys = [k for k in B if k in A]
    d = {"comp": [], "comm": [], "c3": [], "f": []}
    for k in keys:
        x, y = A[k], B[k]
        for name, field in (("comp", "t_comp"), ("comm", "t_comm"), ("c3", "t_c3")):
            d[name].append(abs(y[field]["median_ns"] / x[field]["median_ns"] - 1) * 100)
        fa, fb = x.get("fraction_of_ideal"), y.get("fraction_of_ideal")
        if fa is not None and fb is not None:
            d["f"].append(abs(fa - fb) * 100)
    print("%-44s %4d  %s  %s  %s  %s" % (label, len(keys), stat(d["comp"]), stat(d["comm"]), stat(d["c3"]), stat(d["f"])))


def line_fit(pts):
    """a, b minimizing sum(((a x + b) / y - 1)^2) over (x, y)."""
    sxx = sx = s1 = sxy = sy = 0.0
    for x, y in pts:
        u, v = x / y, 1 / y
        sxx, sx, s1, sxy, sy = sxx + u * u, sx + u * v, s1 + v * v, sxy + u, sy + v
    det = sxx * s1 - sx * sx
    return (sxy * s1 - sx * sy) / det, (sxx * sy - sx * sxy) / det


def compare_gemms():
    with open(os.path.join(HERE, "gemm-sweeps.json")) as f:
        g = json.load(f)
    now = {(o["m"], o["n"], o["k"], o["dtype"]): o["time"]["median_ns"] / 1e3 for o in g["ops"]}
    sweeps = [
        ("2026-11-30-h200x2-gated/sweep.json", "two-GPU node, 11-30"),
        ("2026-11-30-h200x2-session3/sweep-copies.json", "two-GPU node, 11-30"),
        ("2026-11-30-h200x2-session3/sweep-reductions-run3.json", "two-GPU node, 11-30"),
        ("2026-12-01-h200x1/sweep-host.json", "one-GPU node, 12-01"),
        ("2026-12-01-h200x1-i16/sweep-fixed-1.json", "one-GPU node, 12-01"),
    ]
    print("\nGEMMs alone (baseline T_comp of the pair scenarios) against this session's H200, whole GPU:")
    print("%-54s %-20s %3s  %-21s  %s" % ("sweep", "", "n", "|then/now - 1| %", "then = a x now + b"))
    pooled = {"two-GPU": [], "one-GPU": []}
    for path, what in sweeps:
        pts = []
        with open(os.path.join(R, path)) as f:
            for r in json.load(f)["results"]:
                res = r.get("result")
                if not res or r["strategy"] != "baseline":
                    continue
                sc = res["scenario"]
                c = sc.get("compute") or {}
                if sc.get("streams") or c.get("kind") != "gemm":
                    continue
                x = now.get((c["m"], c["n"], c["k"], c["dtype"]))
                if x:
                    pts.append((x, res["t_comp"]["median_ns"] / 1e3))
        pooled[what.split(" ")[0]] += pts
        rel = [abs(y / x - 1) * 100 for x, y in pts]
        a, b = line_fit(pts)
        print("%-54s %-20s %3d  %s  a %.4f, b %+5.2f us" % (path, what, len(pts), stat(rel), a, b))
    with open(os.path.join(HERE, "gemm-grid-a-again.json")) as f:
        again = {(o["m"], o["n"], o["k"], o["dtype"]): o["time"]["median_ns"] / 1e3 for o in json.load(f)["ops"]}
    with open(os.path.join(R, "2026-12-02-h200x1-s7/gemm-grid.json")) as f:
        s7 = {(o["m"], o["n"], o["k"], o["dtype"]): o["time"]["median_ns"] / 1e3 for o in json.load(f)["ops"]}
    pts = [(again[k], s7[k]) for k in again if k in s7]
    pooled["one-GPU"] += pts
    a, b = line_fit(pts)
    print("%-54s %-20s %3d  %s  a %.4f, b %+5.2f us" % ("2026-12-02-h200x1-s7/gemm-grid.json (the designed grid)", "one-GPU node, 12-02", len(pts),
                                                        stat([abs(y / x - 1) * 100 for x, y in pts]), a, b))
    with open(os.path.join(HERE, "gemm-sweeps-3.json")) as f:
        third = {(o["m"], o["n"], o["k"], o["dtype"]): o["time"]["median_ns"] / 1e3 for o in json.load(f)["ops"]}
    pts = [(now[k], third[k]) for k in third if k in now]
    a, b = line_fit(pts)
    print("%-54s %-20s %3d  %s  a %.4f, b %+5.2f us" % ("gemm-sweeps-3.json (the same 42 GEMMs, a third H200)", "one-GPU node, 12-02", len(pts),
                                                        stat([abs(y / x - 1) * 100 for x, y in pts]), a, b))
    # A GEMM in a two-GPU run against the same GEMM in a one-GPU run: both
    # pooled lines against this session's H200, one divided into the other
    # (the simulator's MultiGPUComputeScale and MultiGPUComputeDelay).
    a2, b2 = line_fit(pooled["two-GPU"])
    a1, b1 = line_fit(pooled["one-GPU"])
    scale = a2 / a1
    print("\npooled: two-GPU runs a %.4f, b %+.2f us (%d GEMMs); one-GPU runs a %.4f, b %+.2f us (%d GEMMs)"
          % (a2, b2, len(pooled["two-GPU"]), a1, b1, len(pooled["one-GPU"])))
    print("a GEMM in a two-GPU run = %.4f x the same GEMM in a one-GPU run %+.2f us" % (scale, b2 - scale * b1))


def main():
    print("The same sweep cells measured twice: |difference| median / p90 / max")
    print("%-44s %4s  %-21s  %-21s  %-21s  %s" % ("", "cells", "T_comp %", "T_comm %", "T_c3 %", "F points"))
    i16 = os.path.join(R, "2026-12-01-h200x1-i16")
    compare_sweeps(os.path.join(i16, "sweep-fixed-1.json"), os.path.join(i16, "sweep-fixed-2.json"), "fixed: one H200, back to back (12-01)")
    compare_sweeps(os.path.join(R, "2026-12-01-h200x1/sweep-host-run1.json"), os.path.join(R, "2026-12-01-h200x1/sweep-host.json"),
                   "host: one H200, one session (12-01)")
    compare_sweeps(os.path.join(i16, "sweep-fixed-1.json"), os.path.join(HERE, "sweep-fixed.json"), "fixed: 12-01 against another H200 (12-02)")
    compare_sweeps(os.path.join(R, "2026-12-01-h200x1/sweep-host.json"), os.path.join(HERE, "sweep-host.json"),
                   "host: 12-01 against another H200 (12-02)")
    compare_sweeps(os.path.join(R, "2026-12-01-h200x1-i15/sweep-graphs-1gpu.json"), os.path.join(HERE, "sweep-graphs-1gpu.json"),
                   "graphs: 12-01 against another H200 (12-02)")
    compare_sweeps(os.path.join(R, "2026-12-01-h200x1-i15/sweep-graphs-1gpu.json"), os.path.join(HERE, "sweep-graphs-1gpu-3.json"),
                   "graphs: 12-01 against a third H200 (12-02)")
    compare_sweeps(os.path.join(HERE, "sweep-graphs-1gpu.json"), os.path.join(HERE, "sweep-graphs-1gpu-3.json"),
                   "graphs: two H200s of 12-02")
    compare_gemms()


if __name__ == "__main__":
    main()
