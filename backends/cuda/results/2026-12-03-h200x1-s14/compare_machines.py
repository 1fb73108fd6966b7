#!/usr/bin/env python3
"""The one-GPU sweeps measured again on this session's H200, against the
same cells measured on earlier H200s (12-01, the sweeps the simulator is
fitted to and validated on, and 12-02's session 8): |difference| median /
p90 / max of T_comp, T_comm and T_c3 (relative, %) and F (points), over
all cells and apart for the SM-partition cells (comm-sms-*), then the
cells that moved most.

Usage, from the repository root:
    python3 backends/cuda/results/2026-12-03-h200x1-s14/compare_machines.py
"""
import gzip
import json
import os

HERE = os.path.relpath(os.path.dirname(os.path.abspath(__file__)))
R = os.path.dirname(HERE)


def pct(xs, q):
    xs = sorted(xs)
    i = q * (len(xs) - 1)
    lo = int(i)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (i - lo)


def stat(v):
    return "%5.1f / %5.1f / %5.1f" % (pct(v, 0.5), pct(v, 0.9), max(v)) if v else "        -         "


def cells(path):
    """A sweep's cells by (scenario, strategy), with the ops they ran: a
    scenario renamed or resized since (12-01 ran the swaps at twice
    today's bytes) is not the same cell."""
    out = {}
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        for r in json.load(f)["results"]:
            res = r.get("result")
            if not res:
                continue
            sc = res["scenario"]
            ops = json.dumps([sc.get("compute"), sc.get("comm"), sc.get("streams")], sort_keys=True)
            out[(r["scenario"].removesuffix("-1gpu"), r["strategy"], ops)] = res
    return out


def compare(a, b, label, keep=lambda k: True, worst=None):
    A, B = cells(a), cells(b)
    keys = [k for k in B if k in A and keep(k)]
    d = {"comp": [], "comm": [], "c3": [], "f": []}
    moved = []
    for k in keys:
        x, y = A[k], B[k]
        for name, field in (("comp", "t_comp"), ("comm", "t_comm"), ("c3", "t_c3")):
            d[name].append(abs(y[field]["median_ns"] / x[field]["median_ns"] - 1) * 100)
        moved.append((y["t_c3"]["median_ns"] / x["t_c3"]["median_ns"] - 1, k))
        fa, fb = x.get("fraction_of_ideal"), y.get("fraction_of_ideal")
        if fa is not None and fb is not None:
            d["f"].append(abs(fa - fb) * 100)
    if keys:
        print("%-46s %4d  %s  %s  %s  %s" % (label, len(keys), stat(d["comp"]), stat(d["comm"]), stat(d["c3"]), stat(d["f"])))
    if worst is not None:
        worst.extend(moved)


def main():
    new = {
        "host": os.path.join(HERE, "sweep-host.json.gz"),
        "fixed": os.path.join(HERE, "sweep-fixed-1.json"),
        "graphs": os.path.join(HERE, "sweep-graphs-1gpu.json.gz"),
    }
    old = [
        ("host", "2026-12-01-h200x1/sweep-host.json", "12-01"),
        ("host", "2026-12-02-h200x1-s8/sweep-host.json", "12-02 (s8)"),
        ("fixed", "2026-12-01-h200x1-i16/sweep-fixed-1.json", "12-01"),
        ("fixed", "2026-12-02-h200x1-s8/sweep-fixed.json", "12-02 (s8)"),
        ("graphs", "2026-12-01-h200x1-i15/sweep-graphs-1gpu.json", "12-01"),
        ("graphs", "2026-12-02-h200x1-s8/sweep-graphs-1gpu-3.json", "12-02 (s8, third H200)"),
    ]
    print("The same sweep cells on this session's H200 against earlier ones: |difference| median / p90 / max")
    print("%-46s %4s  %-20s  %-20s  %-20s  %s" % ("", "cells", "T_comp %", "T_comm %", "T_c3 %", "F points"))
    worst = []
    part = lambda k: k[1].startswith("comm-sms")
    for kind, path, when in old:
        a = os.path.join(R, path)
        compare(a, new[kind], "%s: %s against 12-03" % (kind, when), worst=worst if when == "12-01" else None)
        compare(a, new[kind], "  of which SM partitions", keep=part)
        compare(a, new[kind], "  the rest", keep=lambda k: not part(k))
    worst.sort(key=lambda m: -abs(m[0]))
    print("\nThe cells that moved most against 12-01 (T_c3, 12-03 / 12-01 - 1):")
    for m, k in worst[:12]:
        print("  %+6.1f %%  %-52s %s" % (100 * m, k[0], k[1]))


main()
