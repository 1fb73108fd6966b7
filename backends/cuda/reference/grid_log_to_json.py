#!/usr/bin/env python3
"""Rebuilds a GEMM grid report (TestGPUGEMMShapeGrid's JSON) from the
test's log lines, for a run that stopped before it wrote its JSON (the
first run of the random grid hit its time limit after 174 of 200 entries).

Each log line holds what the simulator's checks read: the shape, the
placement, the median time, the per-run medians, and the clocks during the
runs; the p10/p90 of the repetitions are not in the log and are left out.
The report says it was rebuilt ("from_log").

With --add REPORT.json (a later run of the entries the first missed,
as TestGPUGEMMShapeGrid wrote it), that run's entries join the rebuilt
ones, and the note says so.

Usage: grid_log_to_json.py gemm-grid-b.txt[.gz] SHAPES_FILE DATE [--add REPORT.json] > gemm-grid-b.json
"""
import gzip
import json
import re
import sys

LINE = re.compile(
    r"(\d+)/(\d+) gemm (\d+)x(\d+)x(\d+) (\w+)\s+(full|rest-of-(\d+))\s+([\d.]+) µs \(runs ([\d. ]+)\)\s+"
    r"(\d+) TFLOP/s\s+(\d+) MHz \(min\s+(\d+)\)\s+(\d+) W (.*)$")


def main():
    if len(sys.argv) not in (4, 6) or (len(sys.argv) == 6 and sys.argv[4] != "--add"):
        sys.exit("usage: grid_log_to_json.py LOG SHAPES_FILE DATE [--add REPORT.json]")
    path, shapes_file, date = sys.argv[1:4]
    add = json.load(open(sys.argv[5])) if len(sys.argv) == 6 else None
    opener = gzip.open if path.endswith(".gz") else open
    ops, placed, total = [], [], None
    with opener(path, "rt") as f:
        for line in f:
            m = LINE.search(line)
            if not m:
                continue
            total = int(m.group(2))
            mm, n, k = int(m.group(3)), int(m.group(4)), int(m.group(5))
            dtype, place, rest = m.group(6), m.group(7), m.group(8)
            runs = [float(x) * 1e3 for x in m.group(10).split()]
            reasons = m.group(15).strip()
            op = {
                "kind": "gemm", "label": f"gemm {mm}x{n}x{k} {dtype}",
                "time": {"median_ns": float(m.group(9)) * 1e3},
                "tflops": float(m.group(11)), "m": mm, "n": n, "k": k, "dtype": dtype,
                "sm_target": 0 if rest is None else 132 - int(rest), "placement": place,
                "run_median_ns": runs,
                "clock": {"sm_clock_median_mhz": float(m.group(12)), "sm_clock_min_mhz": float(m.group(13)),
                          "power_median_w": float(m.group(14)),
                          **({"reasons": [reasons]} if reasons and reasons != "none" else {})},
            }
            (ops if rest is None else placed).append(op)
    if not ops:
        sys.exit(f"{path}: no grid lines")
    note = (f"rebuilt from the test's log: {len(ops) + len(placed)} of {total} entries ran before its time limit; "
            "the medians of every repetition and of each run are the log's (rounded to 0.1 us), p10/p90 not kept")
    if add is not None:
        extra_ops, extra_placed = add.get("ops") or [], add.get("placed") or []
        ops, placed = ops + extra_ops, placed + extra_placed
        note += (f"; {len(extra_ops) + len(extra_placed)} more entries from a later run ({sys.argv[5].split('/')[-1]}, "
                 f"{add.get('date', '')}), with their p10/p90")
    json.dump({"tool": "c3lab GEMM shape grid", "date": date, "from_log": path.split("/")[-1],
               "note": note, "shapes_file": shapes_file, "ops": ops, "placed": placed}, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
