#!/usr/bin/env python3
"""Copies a c3lab sweep file without the bulk a comparison does not read:
each result's per-round drift readings (the per-GPU and during-run summaries
stay), its timed-window use and its explanations; written compact.

Usage: python3 slim_sweep.py IN.json OUT.json
"""
import json
import sys

src, dst = sys.argv[1], sys.argv[2]
with open(src) as f:
    sweep = json.load(f)
for entry in sweep["results"]:
    res = entry.get("result")
    if not res:
        continue
    if isinstance(res.get("drift"), dict):
        res["drift"].pop("runs", None)
    res.pop("timed_use", None)
    res.pop("explain", None)
with open(dst, "x") as f:
    json.dump(sweep, f, separators=(",", ":"))
    f.write("\n")
