#!/usr/bin/env python3
"""Turns the output of gpu-suite.sh step gemm-launches (TestGPUGEMMLaunches
under `ncu --section LaunchStats --csv --page raw`) into a table of the
kernels cuBLASLt runs for each GEMM shape as c3lab plans it.

ncu prints its CSV at the end, so kernels are matched to shapes by order:
the test runs every shape once in the listed order, and every shape
launches the same kernel (a main kernel, and a split-K reduction after it
when the algorithm splits K) a fixed number of times; consecutive shapes
that launch identical kernels are told apart by that count.

With --partial, a run cut off before its last shape (a timeout) gives
the table of the shapes whose launches all came: the shapes list is cut
to the shapes that started, and the launches of the last one, which may
be incomplete, are left out.

Usage: gemm_launches.py gemm-launches.txt gemm-shapes.txt doctor.json [--partial] > table.json
"""
import csv
import datetime
import io
import itertools
import json
import sys


def num(s):
    s = s.replace(",", "")
    try:
        return int(s)
    except ValueError:
        return float(s)


def ncu_version(out_path):
    import os
    path = os.path.join(os.path.dirname(out_path), "ncu-version.txt")
    try:
        return [l for l in open(path).read().splitlines() if l.startswith("Version")][0]
    except (OSError, IndexError):
        return ""


def main():
    out_path, shapes_path, doctor_path = sys.argv[1:4]
    partial = sys.argv[4:] == ["--partial"]
    if len(sys.argv) not in (4, 5) or (len(sys.argv) == 5 and not partial):
        sys.exit("usage: gemm_launches.py gemm-launches.txt gemm-shapes.txt doctor.json [--partial]")
    lines = open(out_path).read().splitlines()
    rows = list(csv.reader(io.StringIO("\n".join(l for l in lines if l.startswith('"')))))
    hdr = rows[0]
    col = {h: i for i, h in enumerate(hdr)}
    kernels = [r for r in rows[1:] if r and r[0].isdigit()]
    markers = [l.split()[1:] for l in lines if l.startswith("C3LAB-SHAPE ")]
    shapes = []
    for line in open(shapes_path):
        f = line.split()
        if f and not f[0].startswith("#"):
            shapes.append({"m": int(f[0]), "n": int(f[1]), "k": int(f[2]), "dtype": f[3], "sm_target": int(f[4])})
    if partial and len(markers) < len(shapes):
        shapes = shapes[:len(markers)]
    if len(markers) != len(shapes):
        sys.exit(f"{len(markers)} shapes ran, the list has {len(shapes)}")

    def launch(r):
        g = lambda name: num(r[col[name]])
        return {"kernel": r[col["Kernel Name"]], "grid": g("launch__grid_size"), "block": g("launch__block_size"),
                "cluster": g("launch__cluster_size"), "registers": g("launch__registers_per_thread"),
                "shared_bytes": g("launch__shared_mem_per_block"),
                "ctas_per_sm": min(g("launch__occupancy_limit_" + k) for k in ("blocks", "registers", "shared_mem", "warps")),
                "waves": g("launch__waves_per_multiprocessor")}

    # Units: a main kernel and the split-K reduction launched after it.
    units = []
    for r in kernels:
        name = r[col["Kernel Name"]]
        if name.startswith("c3_"):
            continue
        if "splitKreduce" in name:
            units[-1]["reduce"] = launch(r)
            continue
        units.append({"main": launch(r)})
    key = lambda u: json.dumps(u, sort_keys=True)
    groups = [(json.loads(k), len(list(g))) for k, g in itertools.groupby(units, key=key)]
    if partial and groups:
        # The last shape's launches may have been cut off.
        groups = groups[:-1]
        shapes = shapes[:-1]
    # A shape launches its kernel 5 times the first time its GEMM (M, N, K,
    # type) runs, and 4 times at every later SM target, the backend having
    # verified that GEMM already. Consecutive shapes that launch identical
    # kernels share a group, which is split by those counts in list order.
    seen = set()

    def per_shape(j):
        g = (shapes[j]["m"], shapes[j]["n"], shapes[j]["k"], shapes[j]["dtype"])
        per = 4 if g in seen else 5
        seen.add(g)
        return per

    table, i = [], 0
    for u, count in groups:
        while count > 0:
            if i >= len(shapes):
                sys.exit("more kernel groups than shapes: the order does not match")
            per = per_shape(i)
            if count < per:
                sys.exit(f"a group of identical launches ends {count} launches into shape {i}, which launches {per}")
            table.append({**shapes[i], **u, "launches": per})
            count -= per
            i += 1
    if partial and len(shapes) - i == 1:
        # The group left out may have held the last two shapes' launches
        # when they were identical; the one matched in full stays out too.
        shapes = shapes[:i]
    if i != len(shapes):
        sys.exit(f"{i} shapes matched of {len(shapes)}: the order does not match")
    sms = num(kernels[0][col["launch__sm_count"]])
    for t in table:
        slots = sms * t["main"]["ctas_per_sm"]
        t["persistent"] = t["main"]["grid"] <= slots
    doctor = json.load(open(doctor_path))
    print(json.dumps({"tool": "ncu launch statistics of TestGPUGEMMLaunches (backends/cuda/reference/gemm_launches.py)",
                      "date": datetime.date.today().isoformat(), "ncu": ncu_version(out_path),
                      "doctor": doctor, "sms": sms, "shapes": table}, indent=1))


if __name__ == "__main__":
    main()
