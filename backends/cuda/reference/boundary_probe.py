#!/usr/bin/env python3
"""Kernel-boundary, fixed-cost and launch-gap probe on one GPU, with PyTorch.

What the simulator's graph model must get right in kind (issue 15), measured
on the GPU with CUDA events, independent of c3lab's own backend:

  big-gemm   one long GEMM on stream A, then N small copy kernels on stream B
             (same priority, and B at the highest priority): how many small
             kernels end before the GEMM does, and the GEMM's slowdown.
  gemm-stream  a stream of GEMMs on A next to N small copies on B: where the
             copies end relative to the GEMM kernel boundaries.
  fixed-cost N tiny kernels enqueued behind the gate (the GPU sees them
             back to back): GPU time per kernel; and the same kernels
             enqueued on an idle GPU: host launch gap per kernel.

Usage: boundary_probe.py --out probe.json [--reps 5]
Every run is queued behind a gate (a sleep kernel the streams wait for) so
the GPU sees it whole, as c3lab's start gate does. Prints one JSON document; every figure is the median over --reps runs after
a warm-up, with min and max.
"""
import argparse
import datetime
import json
import statistics
import time

import torch


def med(xs):
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs), "n": len(xs)}


def gemm_ops(m, n, k, dtype=torch.bfloat16):
    a = torch.randn(m, k, device="cuda", dtype=dtype)
    b = torch.randn(k, n, device="cuda", dtype=dtype)
    c = torch.empty(m, n, device="cuda", dtype=dtype)
    return lambda: torch.matmul(a, b, out=c)


def copy_ops(nbytes, count):
    src = torch.empty(nbytes // 2, device="cuda", dtype=torch.bfloat16).normal_()
    dst = [torch.empty_like(src) for _ in range(min(count, 8))]
    return lambda i: dst[i % len(dst)].copy_(src)


class Gate:
    """Holds streams until every kernel of a run is enqueued, as c3lab's
    start gate does: a sleep kernel on its own stream, that the held
    streams wait for. Without it, small kernels launched from Python
    trickle in at the host's launch rate and never queue up."""

    def __init__(self, ms):
        self.stream = torch.cuda.Stream()
        self.cycles = int(ms * 1e-3 * 2.0e9)

    def hold(self, *streams):
        ev = torch.cuda.Event()
        with torch.cuda.stream(self.stream):
            torch.cuda._sleep(self.cycles)
            ev.record(self.stream)
        for st in streams:
            st.wait_event(ev)


def timed(stream, fn):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    with torch.cuda.stream(stream):
        s.record(stream)
        fn()
        e.record(stream)
    return s, e


def big_gemm(args, prio, shape=(32768, 8192, 8192)):
    lo, hi = torch.cuda.Stream(priority=0), torch.cuda.Stream(priority=prio)
    gemm = gemm_ops(*shape)
    cp = copy_ops(4 << 20, args.small)
    gate = Gate(args.gate_ms)
    alone_g, inside, slow, small_alone = [], [], [], []
    for rep in range(args.reps + 1):
        torch.cuda.synchronize()
        gs, ge = timed(lo, gemm)
        torch.cuda.synchronize()
        g_alone = gs.elapsed_time(ge)
        # Small kernels alone, queued up behind the gate.
        gate.hold(hi)
        evs = []
        for i in range(args.small):
            evs.append(timed(hi, lambda i=i: cp(i)))
        torch.cuda.synchronize()
        s_alone = evs[0][0].elapsed_time(evs[-1][1])
        # Together: the GEMM first, then the small kernels, all queued
        # before the gate opens.
        gate.hold(lo, hi)
        gs, ge = timed(lo, gemm)
        evs = [timed(hi, lambda i=i: cp(i)) for i in range(args.small)]
        torch.cuda.synchronize()
        g_c3 = gs.elapsed_time(ge)
        ends = [gs.elapsed_time(e) for _, e in evs]
        if rep == 0:
            continue
        alone_g.append(g_alone)
        small_alone.append(s_alone)
        slow.append(g_c3 / g_alone)
        inside.append(sum(1 for t in ends if t <= g_c3) / len(ends))
    return {"gemm": "%dx%dx%d bf16" % shape, "small": f"{args.small} x copy 4MiB", "small_priority": prio,
            "gemm_alone_ms": med(alone_g), "small_alone_ms": med(small_alone),
            "gemm_slowdown": med(slow), "share_of_small_ending_inside_gemm": med(inside)}


def gemm_stream(args):
    a, b = torch.cuda.Stream(priority=0), torch.cuda.Stream(priority=0)
    gemm = gemm_ops(4096, 4096, 4096)
    cp = copy_ops(4 << 20, args.small)
    gate = Gate(args.gate_ms)
    out = {"gemms": f"{args.gemms} x 4096^3 bf16", "small": f"{args.small} x copy 4MiB"}
    t_g, t_s, t_c3, boundary_share = [], [], [], []
    for rep in range(args.reps + 1):
        torch.cuda.synchronize()
        gate.hold(a)
        ge = [timed(a, gemm) for _ in range(args.gemms)]
        torch.cuda.synchronize()
        g_alone = ge[0][0].elapsed_time(ge[-1][1])
        gate.hold(b)
        se = [timed(b, lambda i=i: cp(i)) for i in range(args.small)]
        torch.cuda.synchronize()
        s_alone = se[0][0].elapsed_time(se[-1][1])
        gate.hold(a, b)
        start = torch.cuda.Event(enable_timing=True)
        start.record(gate.stream)
        ge = [timed(a, gemm) for _ in range(args.gemms)]
        se = [timed(b, lambda i=i: cp(i)) for i in range(args.small)]
        torch.cuda.synchronize()
        g_ends = [start.elapsed_time(e) for _, e in ge]
        s_ends = [start.elapsed_time(e) for _, e in se]
        wall = max(g_ends[-1], s_ends[-1])
        if rep == 0:
            continue
        t_g.append(g_alone)
        t_s.append(s_alone)
        t_c3.append(wall)
        # Copies ending while the GEMM stream was still running.
        boundary_share.append(sum(1 for t in s_ends if t <= g_ends[-1]) / len(s_ends))
    out.update({"gemms_alone_ms": med(t_g), "small_alone_ms": med(t_s), "c3_ms": med(t_c3),
                "share_of_small_ending_inside_gemm_stream": med(boundary_share)})
    return out


def fixed_cost(args):
    x = torch.zeros(1, device="cuda")
    gate = Gate(args.gate_ms)
    s = torch.cuda.Stream()
    gpu_per, host_per = [], []
    n = args.tiny
    for rep in range(args.reps + 1):
        torch.cuda.synchronize()
        gate.hold(s)
        with torch.cuda.stream(s):
            e0 = torch.cuda.Event(enable_timing=True)
            e1 = torch.cuda.Event(enable_timing=True)
            e0.record(s)
            for _ in range(n):
                x.add_(1)
            e1.record(s)
        torch.cuda.synchronize()
        gpu = e0.elapsed_time(e1) / n * 1000  # us per kernel, queued back to back
        torch.cuda.synchronize()
        t = time.perf_counter()
        with torch.cuda.stream(s):
            for _ in range(n):
                x.add_(1)
        host = (time.perf_counter() - t) / n * 1e6
        torch.cuda.synchronize()
        if rep == 0:
            continue
        gpu_per.append(gpu)
        host_per.append(host)
    return {"kernels": f"{n} x add on 1 element", "gpu_us_per_kernel_back_to_back": med(gpu_per),
            "host_us_per_launch": med(host_per)}


def launches(shapes):
    """The grid and CTA size of the kernels torch runs for each GEMM shape,
    from the profiler's trace (CUPTI kernel records)."""
    import os
    import tempfile
    from torch.profiler import ProfilerActivity, profile
    out = []
    for shape in shapes:
        gemm = gemm_ops(*shape)
        gemm()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            gemm()
            torch.cuda.synchronize()
        fd, path = tempfile.mkstemp(suffix=".json")
        os.close(fd)
        prof.export_chrome_trace(path)
        with open(path) as f:
            trace = json.load(f)
        os.remove(path)
        ks = [{"name": e.get("name", ""), "grid": e["args"].get("grid"), "block": e["args"].get("block"),
               "registers": e["args"].get("registers per thread"), "shared_bytes": e["args"].get("shared memory"),
               "blocks_per_sm": e["args"].get("blocks per SM"), "dur_us": e.get("dur")}
              for e in trace.get("traceEvents", []) if e.get("cat") == "kernel"]
        out.append({"gemm": "%dx%dx%d bf16" % shape, "kernels": ks})
    return out


def parse_shape(s):
    m, n, k = (int(x) for x in s.lower().split("x"))
    return (m, n, k)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--small", type=int, default=256)
    p.add_argument("--gemms", type=int, default=16)
    p.add_argument("--tiny", type=int, default=2000)
    p.add_argument("--gate-ms", type=float, default=60, help="how long the gate holds the streams while the host enqueues")
    p.add_argument("--driver", default="", help="driver version, for the record (nvidia-smi's)")
    p.add_argument("--shapes", default="", help="more bf16 GEMMs (MxNxK,...) for the big-GEMM hand-over and the launch records")
    args = p.parse_args()
    res = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "gpu": torch.cuda.get_device_name(0),
        "driver": args.driver,
        "torch": torch.__version__, "cuda": torch.version.cuda,
        "reps": args.reps, "gate_ms": args.gate_ms,
        "big_gemm_same_priority": big_gemm(args, 0),
        "big_gemm_small_high_priority": big_gemm(args, -5),
        "gemm_stream": gemm_stream(args),
        "fixed_cost": fixed_cost(args),
    }
    shapes = [parse_shape(x) for x in args.shapes.split(",") if x]
    if shapes:
        res["big_gemm_by_shape"] = [big_gemm(args, prio, sh) for sh in shapes for prio in (0, -5)]
        res["launches"] = launches([(32768, 8192, 8192)] + shapes)
    text = json.dumps(res, indent=1)
    with open(args.out + ".tmp", "w") as f:
        f.write(text)
    import os
    os.replace(args.out + ".tmp", args.out)
    print(text)


if __name__ == "__main__":
    main()
