#!/usr/bin/env python3
"""Writes the GEMM shapes of the pair scenarios in the given sweep files,
"M N K dtype sm_target", each on the whole GPU (0) and at 68 SMs (the rest
of comm-sms-64), for TestGPUGEMMShapeGrid (C3LAB_GEMM_GRID_SHAPES): the
sweeps' own GEMMs timed alone again, on another day and another GPU, to
see how far an isolated GEMM's time moves between H200s.

Usage: python3 sweep_gemm_shapes.py SWEEP.json [MORE.json ...] > gemm-shapes-sweeps.txt
"""
import json
import sys


def main(paths):
    shapes = set()
    for p in paths:
        with open(p) as f:
            sweep = json.load(f)
        for r in sweep["results"]:
            res = r.get("result")
            if not res:
                continue
            sc = res["scenario"]
            c = sc.get("compute") or {}
            if sc.get("ops") or c.get("kind") != "gemm":
                continue
            shapes.add((c["m"], c["n"], c["k"], c["dtype"]))
    print("# The GEMMs of the pair scenarios of these sweeps (sweep_gemm_shapes.py), \"M N K dtype sm_target\":")
    for p in paths:
        print("#   " + p)
    for target in (0, 68):
        for m, n, k, d in sorted(shapes):
            print(f"{m} {n} {k} {d} {target}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
