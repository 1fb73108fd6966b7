#!/usr/bin/env python3
"""The DRAM bytes ncu read for each GEMM of call 8 (call8/ncu/*.csv.gz).

Prints one JSON object per shape: the kernel, its grid and cluster, its
time under ncu, the bytes read and written, and the least a GEMM of that
shape reads and writes (A and B once in their type, D once in bf16).
Usage: ncu_dram.py call8/ncu > call8/gemm-dram.json
"""
import csv
import glob
import gzip
import json
import os
import sys

SIZE = {"bf16": 2, "fp16": 2, "fp8": 1}


def rows(path):
    with gzip.open(path, "rt") as f:
        lines = [l for l in f if not l.startswith("==")]
    start = next(i for i, l in enumerate(lines) if l.startswith('"ID"'))
    r = list(csv.reader(lines[start:]))
    head, units, data = r[0], r[1], r[2:]
    return [dict(zip(head, d)) for d in data], dict(zip(head, units))


def bytes_of(v, unit):
    scale = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "KB": 1e3, "MB": 1e6, "GB": 1e9}[unit]
    return float(v.replace(",", "")) * scale


def main():
    out = []
    for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.csv.gz"))):
        name = os.path.basename(path)[:-len(".csv.gz")]
        shape, dt = name.split("-")
        m, n, k = (int(x) for x in shape.split("x"))
        data, units = rows(path)
        if not data:
            print(f"{name}: no kernel profiled", file=sys.stderr)
            continue
        d = data[0]
        rd = bytes_of(d["dram__bytes_read.sum"], units["dram__bytes_read.sum"])
        wr = bytes_of(d["dram__bytes_write.sum"], units["dram__bytes_write.sum"])
        t = float(d["gpu__time_duration.sum"].replace(",", ""))
        tu = units["gpu__time_duration.sum"]
        t_us = t * {"ns": 1e-3, "nsecond": 1e-3, "us": 1, "usecond": 1, "ms": 1e3, "msecond": 1e3}[tu]
        least = SIZE[dt] * (m * k + k * n) + 2 * m * n
        out.append({"shape": shape, "dtype": dt, "kernel": d["Kernel Name"],
                    "grid": int(d["launch__grid_size"].replace(",", "")),
                    "cluster": [int(d["launch__cluster_dim_x"]), int(d["launch__cluster_dim_y"])],
                    "time_us_under_ncu": round(t_us, 2),
                    "dram_read_bytes": rd, "dram_write_bytes": wr, "least_bytes": least,
                    "over_least": round((rd + wr) / least, 3)})
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
