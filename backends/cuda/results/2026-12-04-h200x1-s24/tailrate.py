#!/usr/bin/env python3
"""Session 24, call 3: how fast a copy kernel's CTAs move HBM data when
they start in a GEMM's last round.

For each case of a tailrate.json: the GEMM alone and beside the copy
(race), when the copy's CTAs started and ended against the GEMM's end,
each CTA's time in the race against its time alone (medians over all CTAs
of all repetitions), and the share of the copy's CTAs that ended before
the GEMM did; then, per CTA that started inside the GEMM and ended after it,
its pace inside (the work it did there over the time it spent there, against
its pace alone), on the assumption that it ran at its pace alone once the
GEMM had ended.

usage: tailrate.py tailrate.json
"""
import json, statistics as st, sys

d = json.load(open(sys.argv[1]))
print("%-54s %7s %7s %10s %10s %8s %8s %6s %9s" % ("case", "gemm", "beside", "1st start", "last end", "CTA alone", "CTA race", "ratio", "ended in"))
for row in d["rows"]:
    reps = row["reps"]
    med = lambda v: st.median(v) if v else float("nan")
    alone_g = med([r["gemm_end_ns"] for r in reps if r["mode"] == "gemm-alone"])
    alone = [c[2] - c[1] for r in reps if r["mode"] == "copy-alone" for c in r["ctas"]]
    race = [r for r in reps if r["mode"] == "race"]
    dur = [c[2] - c[1] for r in race for c in r["ctas"]]
    first = med([r["gemm_end_ns"] - min(c[1] for c in r["ctas"]) for r in race])
    last = med([max(c[2] for c in r["ctas"]) - r["gemm_end_ns"] for r in race])
    ended = sum(1 for r in race for c in r["ctas"] if c[2] <= r["gemm_end_ns"]) / max(1, sum(len(r["ctas"]) for r in race))
    print("%-54s %7.1f %7.1f %8.1f µs %+8.1f µs %8.1f %8.1f %6.2f %8.0f%%" % (
        row["case"].replace("gemm ", "").replace(" smem 102400", "").replace(" h2d", ""), alone_g / 1e3,
        med([r["gemm_end_ns"] for r in race]) / 1e3, first / 1e3, last / 1e3, med(alone) / 1e3, med(dur) / 1e3,
        med(dur) / med(alone), 100 * ended))
print("1st start: how long before the GEMM's end the copy's first CTA started; last end: its last CTA's end after it")
print()
print("%-54s %5s %12s" % ("case", "CTAs", "pace inside (p25 / median / p75)"))
for row in d["rows"]:
    reps = row["reps"]
    alone = st.median([c[2] - c[1] for r in reps if r["mode"] == "copy-alone" for c in r["ctas"]])
    paces = []
    for r in reps:
        if r["mode"] != "race":
            continue
        end = r["gemm_end_ns"]
        for c in r["ctas"]:
            if c[1] < end < c[2]:
                done = max(0.0, 1 - (c[2] - end) / alone)
                paces.append(done * alone / (end - c[1]))
    if paces:
        q = sorted(paces)
        print("%-54s %5d %6.2f / %.2f / %.2f" % (row["case"].replace("gemm ", "").replace(" smem 102400", "").replace(" h2d", ""),
                                             len(q), q[len(q) // 4], st.median(q), q[3 * len(q) // 4]))
print("pace 0: the CTA took longer after the GEMM's end than its whole time alone (it ran slower than alone after the end too)")
rows = [r for r in d["rows"] if any(x["mode"] == "after" for x in r["reps"])]
if rows:
    print()
    print("after: the copy behind the GEMM on its stream (every SM free as it starts)")
    print("%-54s %9s %9s %6s %11s %11s" % ("case", "CTA alone", "CTA after", "ratio", "copy alone", "copy after"))
    for row in rows:
        reps = row["reps"]
        span = lambda r: max(c[2] for c in r["ctas"]) - min(c[1] for c in r["ctas"])
        a = st.median([c[2] - c[1] for r in reps if r["mode"] == "copy-alone" for c in r["ctas"]])
        f = st.median([c[2] - c[1] for r in reps if r["mode"] == "after" for c in r["ctas"]])
        sa = st.median([span(r) for r in reps if r["mode"] == "copy-alone"])
        sf = st.median([span(r) for r in reps if r["mode"] == "after"])
        print("%-54s %9.1f %9.1f %6.2f %9.1f µs %9.1f µs" % (row["case"].replace("gemm ", "").replace(" smem 102400", "").replace(" h2d", ""),
                                                     a / 1e3, f / 1e3, f / a, sa / 1e3, sf / 1e3))
