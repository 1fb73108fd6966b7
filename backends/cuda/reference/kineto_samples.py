#!/usr/bin/env python3
"""Small real torch.profiler (Kineto) traces for `c3lab import` (issue 21).

Each sample is a few training-like steps on one GPU, profiled with
record_shapes=True and exported as Chrome trace JSON (gzip):

  offload   per step: four bf16 GEMMs on the compute stream, an activation
            offloaded to pinned host memory (d2h) and the previous one reloaded
            (h2d) on a side stream, the reload awaited by the next GEMM.
  nccl-1rank per step: GEMMs next to an all-reduce and an all-gather on a
            side stream, through torch.distributed with NCCL on one rank (world
            size 1), so the trace holds NCCL's record_function annotations as
            torch writes them.

Usage: kineto_samples.py --out DIR
"""
import argparse
import datetime
import gzip
import json
import os
import shutil

import torch
from torch.profiler import ProfilerActivity, profile, record_function, schedule


def gemm_inputs(m, n, k):
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    return a, b


def offload_step(state):
    a, b, act, host, side = state
    cur = torch.cuda.current_stream()
    with record_function("forward"):
        for _ in range(4):
            torch.matmul(a, b)
    done = torch.cuda.Event()
    done.record(cur)
    side.wait_event(done)
    with torch.cuda.stream(side), record_function("offload"):
        host[0].copy_(act, non_blocking=True)
    with torch.cuda.stream(side), record_function("reload"):
        act.copy_(host[1], non_blocking=True)
    loaded = torch.cuda.Event()
    loaded.record(side)
    cur.wait_event(loaded)
    with record_function("backward"):
        torch.matmul(a, b)


def nccl_step(state):
    a, b, x, gathered, side = state
    import torch.distributed as dist
    with record_function("forward"):
        for _ in range(3):
            torch.matmul(a, b)
    with torch.cuda.stream(side):
        dist.all_reduce(x)
        dist.all_gather_into_tensor(gathered, x)
    with record_function("backward"):
        torch.matmul(a, b)
    torch.cuda.current_stream().wait_stream(side)


def record(name, step, state, out):
    for _ in range(2):
        step(state)
    torch.cuda.synchronize()
    plain = os.path.join(out, name + ".json")
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=schedule(wait=0, warmup=1, active=3, repeat=1), record_shapes=True,
                 on_trace_ready=lambda p: p.export_chrome_trace(plain)) as prof:
        for _ in range(5):
            step(state)
            torch.cuda.synchronize()
            prof.step()
    with open(plain, "rb") as f, gzip.open(plain + ".gz", "wb") as g:
        shutil.copyfileobj(f, g)
    os.unlink(plain)
    with gzip.open(plain + ".gz", "rt") as f:
        tr = json.load(f)
    cats = {}
    for e in tr.get("traceEvents", []):
        cats[e.get("cat", "")] = cats.get(e.get("cat", ""), 0) + 1
    return {"file": name + ".json.gz", "bytes": os.path.getsize(plain + ".gz"), "events_by_cat": cats,
            "gpu_names": sorted({e["name"] for e in tr.get("traceEvents", [])
                                 if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")})}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    doc = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
           "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "cuda": torch.version.cuda,
           "samples": []}
    side = torch.cuda.Stream()
    a, b = gemm_inputs(4096, 4096, 4096)
    act = torch.randn(32 << 20, device="cuda", dtype=torch.bfloat16)
    host = [torch.empty_like(act, device="cpu").pin_memory() for _ in range(2)]
    try:
        doc["samples"].append(record("offload", offload_step, (a, b, act, host, side), args.out))
    except Exception as e:
        doc["samples"].append({"file": "offload", "error": repr(e)})
    try:
        import torch.distributed as dist
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29533")
        dist.init_process_group("nccl", rank=0, world_size=1, device_id=torch.device("cuda:0"))
        doc["nccl"] = ".".join(map(str, torch.cuda.nccl.version()))
        x = torch.randn(8 << 20, device="cuda", dtype=torch.bfloat16)
        gathered = torch.empty_like(x)
        doc["samples"].append(record("nccl-1rank", nccl_step, (a, b, x, gathered, side), args.out))
        dist.destroy_process_group()
    except Exception as e:
        doc["samples"].append({"file": "nccl-1rank", "error": repr(e)})
    with open(os.path.join(args.out, "README.json"), "w") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
