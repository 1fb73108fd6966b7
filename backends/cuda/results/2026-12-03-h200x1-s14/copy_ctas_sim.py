#!/usr/bin/env python3
"""c3lab's copy kernel behind a GEMM at many CTA caps (call 3,
copy-ctas-summary.json) against the simulator with the profile the binary
embeds: T_c3 measured, simulated and the simulator's error.

Usage, from the repository root:
    go build -o /tmp/c3lab ./cmd/c3lab
    python3 backends/cuda/results/2026-12-03-h200x1-s14/copy_ctas_sim.py /tmp/c3lab
"""
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIOS = {
    "fetch": "mixtral-8x22b-decode-expert-fetch-h2d-192m-1gpu",
    "swap": "llama3-70b-qkv-wgrad-optimizer-swap-48m-1gpu",
    "reload": "llama3-70b-prefill-ffn-up-kv-reload-h2d-64m-1gpu",
    "offload": "llama3-70b-ffn-gate-up-act-offload-d2h-112m-1gpu",
}


def simulate(binary, scenario, ctas):
    out = subprocess.run(
        [binary, "run", "--backend", "sim", "--sim-gpus", "1", "--scenario", scenario,
         "--comm-ctas", str(ctas), "--precision", "off", "--reps", "2", "--json"],
        check=True, capture_output=True, text=True).stdout
    return json.loads(out)["t_c3"]["median_ns"]


def main():
    binary = sys.argv[1]
    with open(os.path.join(HERE, "copy-ctas-summary.json")) as f:
        runs = json.load(f)["runs"]
    print("%-8s %5s  %9s  %9s  %7s" % ("copy", "CTAs", "T_c3 us", "sim us", "error"))
    cells = []
    for r in runs:
        m = re.fullmatch(r"(\w+)-ctas-(\d+)", r["run"])
        if m:
            cells.append((m.group(1), int(m.group(2)), r))
    for kind, ctas, r in sorted(cells, key=lambda c: (c[0], c[1])):
        sim = simulate(binary, SCENARIOS[kind], ctas)
        print("%-8s %5d  %9.0f  %9.0f  %+6.1f %%" % (kind, ctas, r["t_c3"] / 1e3, sim / 1e3, 100 * (sim / r["t_c3"] - 1)))


main()
