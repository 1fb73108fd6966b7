#!/usr/bin/env python3
"""Where do a process's buffers land, and does it move its timings? (issue 16)

The same c3lab sweep run twice, one process after the other, differs by more
than its intervals, while the GPU's clocks, power and temperature do not move.
This probe looks for process-level state that a sweep's rounds and passes
cannot sample, because it is fixed when the process allocates its buffers:

  topology   NUMA nodes, the GPU's node, this process's CPUs.
  host       pinned host buffers bound to each NUMA node in turn (and left to
             the default policy): which node their pages are on (move_pages)
             and the h2d / d2h bandwidth of 64 MiB copies.
  gemm       one bf16 GEMM with its operands at several offsets inside one
             allocation: its time per offset.
  procs      the host and GEMM figures in N fresh processes, default policy:
             the spread between processes against the spread inside one.

Usage: placement_probe.py --out DIR [--procs 6]
Every figure is a median over repetitions after a warm-up, with min and max.
"""
import argparse
import ctypes
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys

import torch

# Linux syscall numbers.
SYSCALLS = {
    "x86_64": {"set_mempolicy": 238, "move_pages": 279},
    "aarch64": {"set_mempolicy": 237, "move_pages": 239},
}
MPOL_DEFAULT, MPOL_BIND = 0, 2
PAGE = os.sysconf("SC_PAGE_SIZE")
libc = ctypes.CDLL(None, use_errno=True)


def med(xs):
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs), "n": len(xs)}


def nr(name):
    return SYSCALLS[platform.machine()][name]


def numa_nodes():
    base = "/sys/devices/system/node"
    try:
        return sorted(int(d[4:]) for d in os.listdir(base) if d.startswith("node") and d[4:].isdigit())
    except OSError:
        return [0]


def set_policy(node):
    """Binds this thread's future page allocations to node (None: default)."""
    if node is None:
        rc = libc.syscall(nr("set_mempolicy"), MPOL_DEFAULT, None, ctypes.c_ulong(0))
    else:
        mask = ctypes.c_ulong(1 << node)
        rc = libc.syscall(nr("set_mempolicy"), MPOL_BIND, ctypes.byref(mask), ctypes.c_ulong(64))
    if rc != 0:
        raise OSError(ctypes.get_errno(), "set_mempolicy")


def page_nodes(ptr, nbytes, samples=64):
    """The NUMA node of sampled pages of [ptr, ptr+nbytes), as a histogram."""
    step = max(PAGE, (nbytes // samples) // PAGE * PAGE)
    addrs = list(range(ptr - ptr % PAGE, ptr + nbytes, step))[:samples]
    pages = (ctypes.c_void_p * len(addrs))(*addrs)
    status = (ctypes.c_int * len(addrs))()
    rc = libc.syscall(nr("move_pages"), 0, ctypes.c_ulong(len(addrs)), pages, None, status, 0)
    if rc != 0:
        return {"error": os.strerror(ctypes.get_errno())}
    hist = {}
    for s in status:
        k = str(s) if s >= 0 else "err%d" % -s
        hist[k] = hist.get(k, 0) + 1
    return hist


def gpu_numa_node():
    try:
        bus = subprocess.run(["nvidia-smi", "--query-gpu=pci.bus_id", "--format=csv,noheader", "-i", "0"],
                             capture_output=True, text=True, timeout=20).stdout.strip()
        dom, rest = bus.split(":", 1)
        path = "/sys/bus/pci/devices/%s:%s/numa_node" % (dom[-4:].lower(), rest.lower())
        with open(path) as f:
            return {"bus_id": bus, "numa_node": int(f.read().strip())}
    except Exception as e:  # report, don't fail the probe
        return {"error": repr(e)}


def time_copies(dst, src, reps, stream):
    times = []
    for i in range(reps + 3):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        with torch.cuda.stream(stream):
            s.record(stream)
            dst.copy_(src, non_blocking=True)
            e.record(stream)
        e.synchronize()
        if i >= 3:
            times.append(s.elapsed_time(e))
    gbs = [src.numel() * src.element_size() / (t * 1e-3) / 1e9 for t in times]
    return med(gbs)


def host_case(node, nbytes, reps):
    """Pinned host buffers allocated under node's binding (None: default).
    torch caches pinned blocks: the cache is emptied first, so each case
    gets pages of its own."""
    if hasattr(torch._C, "_host_emptyCache"):
        torch._C._host_emptyCache()
    out = {"policy": "default" if node is None else "bind node %d" % node}
    set_policy(node)
    try:
        # torch's pinned allocator (cudaHostAlloc) and our own pages registered with CUDA.
        h_torch = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
        h_torch.fill_(1)
    finally:
        if node is not None:
            set_policy(None)
    out["pinned_pages_by_node"] = page_nodes(h_torch.data_ptr(), nbytes)
    d = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    st = torch.cuda.Stream()
    out["h2d_GBps"] = time_copies(d, h_torch, reps, st)
    out["d2h_GBps"] = time_copies(h_torch, d, reps, st)
    del h_torch, d
    torch.cuda.synchronize()
    if hasattr(torch._C, "_host_emptyCache"):
        torch._C._host_emptyCache()
    return out


def gemm_time(a, b, c, reps):
    times = []
    for i in range(reps + 5):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        torch.matmul(a, b, out=c)
        e.record()
        e.synchronize()
        if i >= 5:
            times.append(s.elapsed_time(e))
    return med(times)


def gemm_offsets(n, reps, offsets_bytes):
    """One n^3 bf16 GEMM with A, B and C at each offset inside one buffer."""
    el = n * n
    pad = max(offsets_bytes) // 2 + 1
    buf = torch.empty(3 * (el + pad), dtype=torch.bfloat16, device="cuda").normal_()
    out = []
    for off in offsets_bytes:
        o = off // 2
        a = buf[o:o + el].view(n, n)
        b = buf[el + pad + o:el + pad + o + el].view(n, n)
        c = buf[2 * (el + pad) + o:2 * (el + pad) + o + el].view(n, n)
        out.append({"offset_bytes": off, "a_ptr_mod_2MiB": a.data_ptr() % (2 << 20),
                    "ms": gemm_time(a, b, c, reps)})
    # Fresh allocations, as a new process would get them.
    a = torch.empty(n, n, dtype=torch.bfloat16, device="cuda").normal_()
    b = torch.empty(n, n, dtype=torch.bfloat16, device="cuda").normal_()
    c = torch.empty(n, n, dtype=torch.bfloat16, device="cuda")
    out.append({"offset_bytes": "fresh", "a_ptr_mod_2MiB": a.data_ptr() % (2 << 20), "ms": gemm_time(a, b, c, reps)})
    return out


def one_process(args):
    """What a fresh process sees with the default policy (run as a child)."""
    torch.cuda.init()
    res = {"cpu": os.sched_getaffinity(0).__len__(), "cpu_now": os.sched_getcpu() if hasattr(os, "sched_getcpu") else None}
    res["host"] = host_case(None, 64 << 20, args.reps)
    res["gemm_8192"] = gemm_offsets(8192, args.reps, [0])
    res["gemm_4096"] = gemm_offsets(4096, args.reps, [0])
    return res


def cpus_of_node(node):
    try:
        with open("/sys/devices/system/node/node%d/cpulist" % node) as f:
            return f.read().strip()
    except OSError:
        return ""


def parse_cpulist(s):
    cpus = set()
    for part in s.split(","):
        if not part:
            continue
        if "-" in part:
            a, b = part.split("-")
            cpus.update(range(int(a), int(b) + 1))
        else:
            cpus.add(int(part))
    return cpus


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--procs", type=int, default=6)
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--child", action="store_true")
    ap.add_argument("--pin-node", type=int, default=None)
    args = ap.parse_args()
    if args.child:
        if args.pin_node is not None:
            mine = parse_cpulist(cpus_of_node(args.pin_node)) & os.sched_getaffinity(0)
            if mine:
                os.sched_setaffinity(0, mine)
        print(json.dumps(one_process(args)))
        return
    os.makedirs(args.out, exist_ok=True)
    nodes = numa_nodes()
    doc = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
        "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
        "cuda": torch.version.cuda, "machine": platform.machine(),
        "numa_nodes": {str(n): cpus_of_node(n) for n in nodes},
        "process_cpus": sorted(os.sched_getaffinity(0)),
        "gpu_numa": gpu_numa_node(),
    }
    doc["host_by_policy"] = [host_case(n, 64 << 20, args.reps) for n in [None] + nodes]
    doc["gemm_offsets_8192"] = gemm_offsets(8192, args.reps, [0, 256, 4096, 65536, 1 << 20, 2 << 20, (2 << 20) + 4096])
    procs = []
    for i in range(args.procs):
        pin = None
        if len(nodes) > 1:
            pin = nodes[i % len(nodes)]
        cmd = [sys.executable, __file__, "--out", args.out, "--child", "--reps", str(args.reps)]
        if pin is not None and i >= args.procs // 2:
            cmd += ["--pin-node", str(pin)]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        try:
            child = json.loads(r.stdout.strip().splitlines()[-1])
        except Exception:
            child = {"error": r.stderr[-2000:]}
        child["pinned_to_node"] = pin if "--pin-node" in cmd else None
        procs.append(child)
        print("process %d done" % i, file=sys.stderr, flush=True)
    doc["processes"] = procs
    with open(os.path.join(args.out, "placement.json"), "w") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
