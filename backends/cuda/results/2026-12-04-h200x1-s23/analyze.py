#!/usr/bin/env python3
"""Shares of the latency stall a kernel keeps in an SM partition of its own.

Reads a TestGPUKernelBesideStream report (call4/besidestream.json) and, per
case, takes medians of each mode's end times. While the stream op runs, the
SM kernel moves at a ratio r of its rate alone (on the same SMs): the part
of its work done by the stream op's end, over that time. Shared as the
simulator shares HBM (in proportion to the demands alone) it would keep
b = min(1, D_stream / (D_kernel + D_stream)); the rest is the stall,
X = b / r - 1. The share is X in the partition over X sharing the SMs.
Usage: analyze.py call4/besidestream.json
"""
import json
import statistics
import sys


def med(reps, mode, key):
    v = [x[key] for x in reps if x["mode"] == mode and x.get(key)]
    return statistics.median(v) / 1e3  # µs


def stall(kernel_bytes, stream_bytes, alone, stream_alone, end, stream_end):
    """X for one mode, or None when the kernel made no progress beside it."""
    if end <= stream_end:
        r = alone / end
    else:
        done = 1 - (end - stream_end) / alone  # the rest ran alone after it
        if done <= 0:
            return None
        r = done * alone / stream_end
    d_kernel = kernel_bytes / alone
    d_stream = stream_bytes / stream_alone
    b = min(1.0, d_stream / (d_kernel + d_stream))
    return b / r - 1


def main():
    rep = json.load(open(sys.argv[1]))
    shares = {"copy": [], "reduce": []}
    print(f"{'case':42s} {'X shared':>8s} {'X part':>7s} {'share':>6s}")
    for row in rep["rows"]:
        reps, k = row["reps"], row["kernel"]
        # HBM bytes: the copy reads and writes its bytes; the reduction
        # reads two blocks and writes one. The stream op reads and writes.
        kb = (2 if k == "copy" else 3) * row["kernel_bytes"]
        sb = 2 * row["stream_bytes"]
        out = {}
        for mode, alone_k, alone_s in (("shared", "kernel-alone", "stream-alone"),
                                       ("partition", "kernel-part", "stream-rest")):
            a, sa = med(reps, alone_k, "kernel_end_ns"), med(reps, alone_s, "stream_end_ns")
            e, se = med(reps, mode, "kernel_end_ns"), med(reps, mode, "stream_end_ns")
            out[mode] = stall(kb, sb, a, sa, e, se)
        xs, xp = out["shared"], out["partition"]
        share = xp / xs if xs and xp is not None and xs > 0 else None
        if share is not None:
            shares[k].append(share)
        f = lambda v: "   -" if v is None else f"{v:.2f}"
        print(f"{row['case']:42s} {f(xs):>8s} {f(xp):>7s} {f(share):>6s}")
    for k, v in shares.items():
        if v:
            print(f"{k}: share median {statistics.median(v):.2f}, range {min(v):.2f}-{max(v):.2f} ({len(v)} cases)")


if __name__ == "__main__":
    main()
