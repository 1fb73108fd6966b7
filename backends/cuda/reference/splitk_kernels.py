#!/usr/bin/env python3
"""Kernel times of the split-K GEMMs: TestGPUGEMMLaunches under
`ncu --metrics gpu__time_duration.sum,launch__grid_size,...` (session 9).
ncu prints its CSV at the end, so launches are matched to shapes by order,
as gemm_launches.py does: each shape launches its kernel (and the split-K
reduction after it) 5 times, or 4 when the plan was verified before.
The GPU (gpu.txt: nvidia-smi's name, UUID, driver) and ncu's version
(ncu-version.txt) are read from the ncu output's folder.
Usage: splitk_kernels.py splitk-ncu.txt.gz gemm-shapes-splitk.txt gemm-grid.json gemm-grid-b.json > splitk-kernels.json"""
import csv, gzip, io, itertools, json, os, statistics, sys

def num(s):
    return float(s.replace(",", ""))

def main(out_path, shapes_path, grid_paths):
    op = gzip.open if out_path.endswith(".gz") else open
    lines = op(out_path, "rt").read().splitlines()
    rows = list(csv.reader(io.StringIO("\n".join(l for l in lines if l.startswith('"')))))
    hdr = rows[0]
    col = {h: i for i, h in enumerate(hdr)}
    kernels = [r for r in rows[1:] if r and r[0].isdigit()]
    shapes = []
    for line in open(shapes_path):
        f = line.split()
        if f and not f[0].startswith("#"):
            shapes.append((int(f[0]), int(f[1]), int(f[2]), f[3], int(f[4])))
    units = []
    for r in kernels:
        name = r[col["Kernel Name"]]
        if name.startswith("c3_"):
            continue
        k = {"kernel": name, "grid": int(num(r[col["launch__grid_size"]])), "ns": num(r[col["gpu__time_duration.sum"]])}
        if "splitKreduce" in name:
            units[-1]["reduce"] = k
        else:
            units.append({"main": k})
    sig = lambda u: (u["main"]["kernel"], u["main"]["grid"], u.get("reduce", {}).get("kernel"), u.get("reduce", {}).get("grid"))
    grid = {}
    for g in grid_paths:
        d = json.load(open(g))
        for e in d["ops"] + d.get("placed", []):
            grid[(e["m"], e["n"], e["k"], e["dtype"], e["sm_target"], e["placement"])] = e["time"]["median_ns"]
    out, i = [], 0
    for s, grp in itertools.groupby(units, key=sig):
        grp = list(grp)
        per = 5 if len(grp) % 5 == 0 else 4 if len(grp) % 4 == 0 else 0
        if per == 0:
            sys.exit(f"a group of {len(grp)} identical launches: neither 5 nor 4 per shape")
        for j in range(len(grp) // per):
            us = grp[j * per:(j + 1) * per]
            m, n, k, d, t = shapes[i]
            e = {"m": m, "n": n, "k": k, "dtype": d, "sm_target": t, "launches": per,
                 "main_kernel": s[0], "main_grid": s[1], "main_ns": statistics.median(u["main"]["ns"] for u in us)}
            if s[2]:
                e.update(reduce_kernel=s[2], reduce_grid=s[3], reduce_ns=statistics.median(u["reduce"]["ns"] for u in us))
            # the grid's event-timed median: whole GPU (target 0), or the rest of a partition
            ev = grid.get((m, n, k, d, 0, "full")) if t == 0 else grid.get((m, n, k, d, t, "rest-of-%d" % (132 - t)))
            if ev:
                e["event_ns"] = ev
            out.append(e)
            i += 1
    if i != len(shapes):
        sys.exit(f"{i} shapes matched of {len(shapes)}: the order does not match")
    here = os.path.dirname(out_path)
    read = lambda name: open(os.path.join(here, name)).read().strip().splitlines()
    gpu = read("gpu.txt")
    head = {"tool": "ncu gpu__time_duration of TestGPUGEMMLaunches (backends/cuda/reference/splitk_kernels.py)",
            "gpu": dict(zip([h.strip() for h in gpu[0].split(",")], [v.strip() for v in gpu[1].split(",")])),
            "ncu": [l for l in read("ncu-version.txt") if l.startswith("Version")][0],
            "ncu_options": "--clock-control none --cache-control none",
            "cuda_driver": "13.0", "cublaslt": "13.1.0",
            "date": read("date.txt")[0] if os.path.exists(os.path.join(here, "date.txt")) else "",
            "note": "main_ns, reduce_ns: medians over the shape's launches of the main nvjet kernel and cuBLASLt's splitKreduce_kernel; event_ns: the GEMM's median time in the grid probe (2026-12-02-h200x1-s7), whole GPU for sm_target 0, the rest of a 64-SM partition for 68 (the launches here planned for 68 SMs ran on the whole GPU)",
            "shapes": out}
    json.dump(head, sys.stdout, indent=1)

if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
