#!/usr/bin/env python3
"""Session 24: where a clustered kernel's CTAs start behind a persistent GEMM.

For each case of a clustertail.json (TestGPUCopyCTAPlacement with cluster
launches) and each mode (race: the copy ready with the GEMM; late: enqueued
while the GEMM runs), over the repetitions: the GEMM alone's end (median),
the GEMM's end beside the copy, how many of the copy's CTAs started before
the GEMM ended (median, min..max), how long before its end the first one
started, the distinct SMs they ran on over all repetitions, and how many
CTAs shared an SM (median over repetitions of CTAs / distinct SMs).

usage: analyze.py clustertail.json.gz
"""
import gzip, json, statistics as st, sys

d = json.load(gzip.open(sys.argv[1], "rt") if sys.argv[1].endswith(".gz") else open(sys.argv[1]))
print("%-62s %-5s %9s %9s %11s %13s %5s %7s" % ("case", "mode", "gemm µs", "beside", "CTAs in GEMM", "first before", "SMs", "per SM"))
for row in d["rows"]:
    reps = row["reps"]
    alone = [r["gemm_end_ns"] for r in reps if r["mode"] == "gemm-alone"]
    for mode in ("race", "late"):
        rs = [r for r in reps if r["mode"] == mode]
        if not rs:
            continue
        inside, lead, sms, per = [], [], set(), []
        for r in rs:
            end = r["gemm_end_ns"]
            starts = [c[1] for c in r["ctas"]]
            inside.append(sum(1 for s in starts if s < end))
            lead.append((end - min(starts)) / 1e3)
            sms.update(c[0] for c in r["ctas"])
            per.append(len(r["ctas"]) / len(set(c[0] for c in r["ctas"])))
        print("%-62s %-5s %9.1f %9.1f %5d (%d..%d) %10.1f µs %5d %7.2f" % (
            row["case"].replace("gemm ", "").replace(" h2d 16MiB", ""), mode, st.median(alone) / 1e3,
            st.median(r["gemm_end_ns"] for r in rs) / 1e3, st.median(inside), min(inside), max(inside),
            st.median(lead), len(sms), st.median(per)))
