#!/usr/bin/env python3
"""The probe's cases (beside-gemm.json) on the simulator: where the copy
ends against its GEMM's end, measured ("race": launched as the protocol
launches compute-first) and simulated with the profile the binary embeds.

Usage, from the repository root:
    go build -o /tmp/c3lab ./cmd/c3lab
    python3 backends/cuda/results/2026-12-03-h200x1-s15/sim_beside.py /tmp/c3lab
"""
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def simulate(binary, tmp, m, n, k, dtype, coll, size, ctas):
    path = os.path.join(tmp, f"{m}-{n}-{k}-{coll}-{size}.yaml".lower())
    with open(path, "w") as f:
        f.write(f"name: beside-{m}-{n}-{k}-{coll}-{size.lower()}\ngpus: 1\nprofile: h200\n"
                f"compute:\n  kind: gemm\n  m: {m}\n  n: {n}\n  k: {k}\n  dtype: {dtype}\n"
                f"comm:\n  collective: {coll}\n  bytes: {size}\n")
    out = subprocess.run([binary, "run", "--backend", "sim", "--sim-gpus", "1", "--scenario", path,
                          "--comm-ctas", ctas, "--precision", "off", "--reps", "1", "--json"],
                         check=True, capture_output=True, text=True).stdout
    d = json.loads(out)
    return d["t_comp_in_c3"]["median_ns"] / 1e3, d["t_comm_in_c3"]["median_ns"] / 1e3


def main():
    binary = sys.argv[1]
    calls = [json.load(open(os.path.join(HERE, f)))["rows"] for f in ("beside-gemm.json", "beside-gemm-call2.json")]
    print("%-46s %8s %8s %8s | copy end - GEMM end, us: %7s %7s %7s" % ("case", "GEMM", "copy", "sim GEMM", "call 1", "call 2", "sim"))
    with tempfile.TemporaryDirectory() as tmp:
        for r1, r2 in zip(*calls):
            m = re.fullmatch(r"gemm (\d+)x(\d+)x(\d+) (\w+) (\w+) (\S+) ctas (\d+)", r1["case"])
            sg, sc = simulate(binary, tmp, *m.groups())
            d = [(r["race_copy_end_ns"] - r["race_gemm_end_ns"]) / 1e3 for r in (r1, r2)]
            print("%-46s %8.1f %8.1f %8.1f | %31s %+7.1f %+7.1f %+7.1f" % (
                r1["case"][:46], r1["race_gemm_end_ns"] / 1e3, r1["race_copy_end_ns"] / 1e3, sg, "", d[0], d[1], sc - sg))


if __name__ == "__main__":
    main()
