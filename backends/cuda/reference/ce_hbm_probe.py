#!/usr/bin/env python3
"""Copy engines and SM kernels sharing HBM on one GPU (issue 17, item 1).

Each pair is one stream of GEMMs of low, medium or high arithmetic intensity
next to one stream of copies, both queued behind a gate so the GPU sees them
whole. For each, the per-op time of either stream alone, and inside the
window where both ran, give the slowdown of each side.

Copies:
  ce-d2d     256 MiB device -> same device on a copy engine
             (cuMemcpyBatchAsync, PREFER_OVERLAP_WITH_COMPUTE, as c3lab's
             dma engine does)
  plain-d2d  256 MiB device -> same device, cudaMemcpyAsync (torch copy_)
  h2d, d2h   64 MiB between pinned host memory and the device (copy engine)

Which engine ran each copy is read from a torch.profiler trace of one copy of
each kind (kernel or memcpy record).

Usage: ce_hbm_probe.py --out DIR [--reps 5]
"""
import argparse
import ctypes
import datetime
import json
import os
import statistics
import tempfile

import torch

# The gate and the median summary are the kernel-boundary probe's, beside this file.
from boundary_probe import Gate, med

GEMMS = {
    # name: (M, N, K) bf16; arithmetic intensity in flop per HBM byte
    "high-ai 8192x8192x8192": (8192, 8192, 8192),
    "mid-ai 8192x8192x256": (8192, 8192, 256),
    "low-ai 16x8192x8192": (16, 8192, 8192),
}


def intensity(m, n, k):
    return 2 * m * n * k / (2 * (m * k + k * n + m * n))


class CUmemLocation(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]


class CUmemcpyAttributes(ctypes.Structure):
    _fields_ = [("srcAccessOrder", ctypes.c_int), ("srcLocHint", CUmemLocation),
                ("dstLocHint", CUmemLocation), ("flags", ctypes.c_uint)]


class EngineCopy:
    """Same-device copies the driver is asked to run on a copy engine."""

    def __init__(self):
        self.cu = ctypes.CDLL("libcuda.so.1")
        self.v2 = hasattr(self.cu, "cuMemcpyBatchAsync_v2")
        self.fn = self.cu.cuMemcpyBatchAsync_v2 if self.v2 else self.cu.cuMemcpyBatchAsync
        dev = torch.cuda.current_device()
        self.attr = CUmemcpyAttributes(1, CUmemLocation(1, dev), CUmemLocation(1, dev), 1)

    def __call__(self, dst, src, stream):
        d = ctypes.c_uint64(dst.data_ptr())
        s = ctypes.c_uint64(src.data_ptr())
        n = ctypes.c_size_t(src.numel() * src.element_size())
        idx = ctypes.c_size_t(0)
        fail = ctypes.c_size_t(0)
        h = ctypes.c_void_p(stream.cuda_stream)
        if self.v2:
            rc = self.fn(ctypes.byref(d), ctypes.byref(s), ctypes.byref(n), ctypes.c_size_t(1),
                         ctypes.byref(self.attr), ctypes.byref(idx), ctypes.c_size_t(1), h)
        else:
            rc = self.fn(ctypes.byref(d), ctypes.byref(s), ctypes.byref(n), ctypes.c_size_t(1),
                         ctypes.byref(self.attr), ctypes.byref(idx), ctypes.c_size_t(1), ctypes.byref(fail), h)
        if rc != 0:
            raise RuntimeError("cuMemcpyBatchAsync returned %d" % rc)


def copies(kind, engine):
    if kind in ("ce-d2d", "plain-d2d"):
        n = 256 << 20
        src = torch.empty(n, dtype=torch.uint8, device="cuda").fill_(3)
        dst = torch.empty_like(src)
        if kind == "ce-d2d":
            return n, lambda st: engine(dst, src, st)
        return n, lambda st: dst.copy_(src, non_blocking=True)
    n = 64 << 20
    host = torch.empty(n, dtype=torch.uint8, pin_memory=True).fill_(1)
    dev = torch.empty(n, dtype=torch.uint8, device="cuda")
    if kind == "h2d":
        return n, lambda st: dev.copy_(host, non_blocking=True)
    return n, lambda st: host.copy_(dev, non_blocking=True)


def enqueue(stream, fn, count):
    evs = []
    with torch.cuda.stream(stream):
        for _ in range(count):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record(stream)
            fn(stream)
            e.record(stream)
            evs.append((s, e))
    return evs


def enqueue_interleaved(sa, fa, na, sb, fb, nb):
    """Both streams' ops, launched in proportion, so that neither stream's
    queue waits on the host while the other's fills (the gate may open
    before the last launch)."""
    ea, eb = [], []
    while len(ea) < na or len(eb) < nb:
        if len(eb) >= nb or (len(ea) < na and len(ea) * nb <= len(eb) * na):
            ea += enqueue(sa, fa, 1)
        else:
            eb += enqueue(sb, fb, 1)
    return ea, eb


def p90(xs):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(0.9 * len(xs)))]


def spans(origin, evs):
    return [(origin.elapsed_time(s), origin.elapsed_time(e)) for s, e in evs]


def per_op(sp, lo=None, hi=None):
    xs = [e - s for s, e in sp if (lo is None or s >= lo) and (hi is None or e <= hi)]
    return statistics.median(xs) if xs else None, len(xs)


def pair(gemm_fn, g_count, copy_fn, c_count, gate, reps):
    sg, sc = torch.cuda.Stream(), torch.cuda.Stream()
    out = {"g_alone": [], "c_alone": [], "g_c3": [], "c_c3": [], "g_in": [], "c_in": [],
           "g_tput": [], "c_tput": [], "g_p90": [], "c_p90": []}
    for rep in range(reps + 1):
        torch.cuda.synchronize()
        gate.hold(sg)
        g = enqueue(sg, lambda st: gemm_fn(), g_count)
        torch.cuda.synchronize()
        ga, _ = per_op(spans(g[0][0], g)[1:])
        gate.hold(sc)
        c = enqueue(sc, copy_fn, c_count)
        torch.cuda.synchronize()
        ca, _ = per_op(spans(c[0][0], c)[1:])
        gate.hold(sg, sc)
        origin = torch.cuda.Event(enable_timing=True)
        origin.record(gate.stream)
        g, c = enqueue_interleaved(sg, lambda st: gemm_fn(), g_count, sc, copy_fn, c_count)
        torch.cuda.synchronize()
        gs, cs = spans(origin, g), spans(origin, c)
        lo = max(gs[0][0], cs[0][0])
        hi = min(gs[-1][1], cs[-1][1])
        gc, gn = per_op(gs, lo, hi)
        cc, cn = per_op(cs, lo, hi)
        if rep == 0 or gc is None or cc is None:
            continue
        out["g_alone"].append(ga)
        out["c_alone"].append(ca)
        out["g_c3"].append(gc)
        out["c_c3"].append(cc)
        out["g_in"].append(gn)
        out["c_in"].append(cn)
        # The window's throughput: ops whose middle lies inside it, against
        # the same ops alone. A median per op hides phases where one stream
        # stalls; this does not.
        gm = sum(1 for s, e in gs if lo <= (s + e) / 2 <= hi)
        cm = sum(1 for s, e in cs if lo <= (s + e) / 2 <= hi)
        out["g_tput"].append((hi - lo) / (gm * ga))
        out["c_tput"].append((hi - lo) / (cm * ca))
        out["g_p90"].append(p90([e - s for s, e in gs if s >= lo and e <= hi]) / ga)
        out["c_p90"].append(p90([e - s for s, e in cs if s >= lo and e <= hi]) / ca)
    if not out["g_c3"]:
        return {"error": "no overlap window with whole ops on both streams"}
    res = {k + "_ms": med(v) for k, v in out.items() if k in ("g_alone", "c_alone", "g_c3", "c_c3")}
    res["ops_in_window"] = {"gemm": med(out["g_in"]), "copy": med(out["c_in"])}
    res["gemm_slowdown"] = med([b / a for a, b in zip(out["g_alone"], out["g_c3"])])
    res["copy_slowdown"] = med([b / a for a, b in zip(out["c_alone"], out["c_c3"])])
    res["gemm_slowdown_window"] = med(out["g_tput"])
    res["copy_slowdown_window"] = med(out["c_tput"])
    res["gemm_p90_op_over_alone"] = med(out["g_p90"])
    res["copy_p90_op_over_alone"] = med(out["c_p90"])
    return res


def engines_used(kinds, engine):
    """Kernel or memcpy: what a trace of one copy of each kind shows."""
    from torch.profiler import ProfilerActivity, profile
    out = {}
    for kind in kinds:
        _, fn = copies(kind, engine)
        st = torch.cuda.Stream()
        fn(st)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn(st)
            torch.cuda.synchronize()
        fd, path = tempfile.mkstemp(suffix=".json")
        os.close(fd)
        prof.export_chrome_trace(path)
        with open(path) as f:
            tr = json.load(f)
        os.unlink(path)
        out[kind] = sorted({(e.get("cat", ""), e.get("name", "")) for e in tr.get("traceEvents", [])
                            if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")})
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--window-ms", type=float, default=40.0)
    ap.add_argument("--pairs", default="ce-d2d,plain-d2d,h2d,d2h", help="the copies to pair with each GEMM")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    engine = EngineCopy()
    kinds = ["ce-d2d", "plain-d2d", "h2d", "d2h"]
    doc = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
           "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "cuda": torch.version.cuda,
           "batch_copy_api": "cuMemcpyBatchAsync_v2" if engine.v2 else "cuMemcpyBatchAsync",
           "engines": [list(map(list, v)) for v in engines_used(kinds, engine).values()],
           "engine_kinds": kinds, "pairs": []}
    gate = Gate(150)
    # Per-op times alone set the counts, so each stream covers the window.
    st = torch.cuda.Stream()
    for gname, (m, n, k) in GEMMS.items():
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        gfn = lambda: torch.matmul(a, b, out=c)
        probe = enqueue(st, lambda s: gfn(), 12)
        torch.cuda.synchronize()
        g_ms, _ = per_op(spans(probe[0][0], probe)[2:])
        for kind in args.pairs.split(","):
            nbytes, cfn = copies(kind, engine)
            probe = enqueue(st, cfn, 6)
            torch.cuda.synchronize()
            c_ms, _ = per_op(spans(probe[0][0], probe)[1:])
            g_count = max(8, int(args.window_ms / g_ms))
            c_count = max(4, int(args.window_ms / c_ms))
            r = pair(gfn, g_count, cfn, c_count, gate, args.reps)
            r.update({"gemm": gname, "arith_intensity_flop_per_byte": round(intensity(m, n, k), 1),
                      "gemm_tflops_alone": 2 * m * n * k / (g_ms * 1e-3) / 1e12, "copy": kind,
                      "copy_bytes": nbytes, "copy_GBps_alone": nbytes / (c_ms * 1e-3) / 1e9,
                      "counts": {"gemm": g_count, "copy": c_count}})
            doc["pairs"].append(r)
            print("%s + %s: gemm x%.3f (window x%.3f) copy x%.3f (window x%.3f)" % (
                gname, kind, r.get("gemm_slowdown", {}).get("median", 0), r.get("gemm_slowdown_window", {}).get("median", 0),
                r.get("copy_slowdown", {}).get("median", 0), r.get("copy_slowdown_window", {}).get("median", 0)), flush=True)
            del cfn
            torch.cuda.synchronize()
    with open(os.path.join(args.out, "ce-hbm.json"), "w") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
