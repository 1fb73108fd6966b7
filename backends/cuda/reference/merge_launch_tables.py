#!/usr/bin/env python3
"""Merges launch tables written by gemm_launches.py into one: a shape
(M, N, K, dtype, SM target) found in more than one table takes the entry of
the last table that has it. The merged table keeps the last table's ncu
version and doctor and lists every source.

Usage: merge_launch_tables.py older.json newer.json ... > merged.json
"""
import json
import sys


def main():
    merged, sources, last = {}, [], None
    for path in sys.argv[1:]:
        with open(path) as f:
            t = json.load(f)
        sources.append({"file": path, "date": t.get("date", ""), "shapes": len(t["shapes"])})
        for s in t["shapes"]:
            merged[(s["m"], s["n"], s["k"], s["dtype"], s["sm_target"])] = s
        last = t
    if last is None:
        sys.exit("usage: merge_launch_tables.py older.json newer.json ... > merged.json")
    out = dict(last)
    out["tool"] = last["tool"] + ", merged by merge_launch_tables.py"
    out["sources"] = sources
    out["shapes"] = list(merged.values())
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
