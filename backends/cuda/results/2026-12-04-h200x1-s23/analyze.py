#!/usr/bin/env python3
"""Shares of the latency stall a kernel keeps in an SM partition of its own.

Reads TestGPUKernelBesideStream reports and, per case, takes the medians of
each mode's end times. While its neighbour (the stream op or a GEMM) runs,
the SM kernel moves at a ratio r of its rate alone on the same SMs: the
part of its work done by the neighbour's end, over that time, if the rest
ran alone after it. Were HBM divided as the simulator divides it, in
proportion to the two demands alone, the kernel would keep
b = min(1, C / (D_kernel + D_neighbour)) of its rate, C being HBM's
bandwidth as the stream op alone reaches it (in the case, or in call 4). The rest is a stall,
X = b / r - 1. The share of the stall kept in a partition is X(partition)
over X(shared), where both are defined. A GEMM's demand counts the least it
reads and writes (A, B and D once), so its HBM share ("others") is a floor.
Usage: analyze.py REPORT.json [MORE.json ...]
"""
import json
import statistics
import sys

STREAM_HBM = 2 * 2**30 / 527.0  # bytes/µs: the 1 GiB stream op alone, call 4


def med(reps, mode, key):
    v = [x[key] for x in reps if x["mode"] == mode and x.get(key)]
    return statistics.median(v) / 1e3  # µs


def moved(alone, end, neighbour_end):
    """r: the kernel's rate beside its neighbour over its rate alone."""
    if end <= neighbour_end:
        return alone / end
    done = 1 - (end - neighbour_end) / alone  # the rest ran alone after it
    return done * alone / neighbour_end if done > 0 else None


def main():
    shares = {"copy": [], "reduce": []}
    print(f"{'case':60s} {'others':>6s} {'X shared':>8s} {'X part':>7s} {'share':>6s}")
    for path in sys.argv[1:]:
        for row in json.load(open(path))["rows"]:
            reps, k = row["reps"], row["kernel"]
            # HBM bytes: the copy reads and writes its bytes; the reduction
            # reads two blocks and writes one; the stream op reads and
            # writes its bytes.
            kb = (2 if k == "copy" else 3) * row["kernel_bytes"]
            nb = row.get("gemm_hbm_bytes") or 2 * row["stream_bytes"]
            out, others = {}, None
            for mode, alone_k, alone_n in (("shared", "kernel-alone", "stream-alone"),
                                           ("partition", "kernel-part", "stream-rest")):
                a, na = med(reps, alone_k, "kernel_end_ns"), med(reps, alone_n, "stream_end_ns")
                e, ne = med(reps, mode, "kernel_end_ns"), med(reps, mode, "stream_end_ns")
                d_kernel, d_neighbour = kb / a, nb / na
                if mode == "partition":
                    others = min(1.0, d_neighbour / STREAM_HBM)
                r = moved(a, e, ne)
                # HBM's bandwidth: what the stream op reached alone in this
                # case, or, beside a GEMM, in call 4.
                c = STREAM_HBM if row.get("gemm") else d_neighbour
                b = min(1.0, c / (d_kernel + d_neighbour))
                out[mode] = None if r is None else b / r - 1
            xs, xp = out["shared"], out["partition"]
            share = xp / xs if xs and xs > 0 and xp is not None else None
            if share is not None and not row.get("gemm") and row.get("partition_sms", row["ctas"]) == row["ctas"]:
                shares[k].append(share)
            f = lambda v: "-" if v is None else f"{v:.2f}"
            print(f"{row['case']:60s} {others:6.2f} {f(xs):>8s} {f(xp):>7s} {f(share):>6s}")
    print("the shares beside the stream op, in partitions of as many SMs as CTAs:")
    for k, v in shares.items():
        if v:
            print(f"  {k}: median {statistics.median(v):.2f}, range {min(v):.2f}-{max(v):.2f} ({len(v)} cases)")


if __name__ == "__main__":
    main()
