#!/usr/bin/env python3
"""Per-kernel spans of the time-course probes (c3lab export --chrome).

usage: spans.py TRACE...   prints, per trace, the copy's end and each op on
the ops stream as start+duration in microseconds from the copy's start, then
a summary: the median duration of the ops that ran wholly while the copy
wrote (before the last quarter of its time, where its CTAs finish), the
median gap between those ops, and the median duration of the ops after it.
"""
import json
import statistics
import sys


def load(path):
    with open(path) as f:
        d = json.load(f)
    ev = d["traceEvents"] if isinstance(d, dict) else d
    spans = [e for e in ev if e.get("ph") == "X"]
    copy = [e for e in spans if e.get("tid") == "copy"]
    ops = [e for e in spans if e.get("tid") == "ops"]
    t0 = min(e["ts"] for e in copy)
    end = max(e["ts"] + e["dur"] for e in copy) - t0
    return end, [(e["ts"] - t0, e["dur"], e["name"]) for e in ops]


def summary(end, ops):
    inside = [(s, d) for s, d, _ in ops if s + d <= 0.75 * end]
    after = [d for s, d, _ in ops if s >= end]
    gaps = [b[0] - (a[0] + a[1]) for a, b in zip(inside, inside[1:])]
    med = lambda v: f"{statistics.median(v):.0f}" if v else "-"
    return f"inside {len(inside)} ops, median {med([d for _, d in inside])} us, gap {med(gaps)} us; after {len(after)} ops, median {med(after)} us"


def main():
    for path in sys.argv[1:]:
        end, ops = load(path)
        print(f"{path.split('/')[-1]}: copy ends {end:.0f} us")
        print("  " + " ".join(f"{s:.0f}+{d:.0f}" for s, d, _ in ops))
        print("  " + summary(end, ops))


if __name__ == "__main__":
    main()
