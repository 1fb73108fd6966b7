#!/usr/bin/env python3
"""Real two-GPU torch.profiler (Kineto) traces for `c3lab import` (issue 21).

Run under torchrun on two GPUs of one node, one process per GPU:

    NCCL_NVLS_ENABLE=0 torchrun --nproc-per-node 2 \\
        backends/cuda/reference/kineto_samples_2gpu.py --out DIR

Each rank writes its own trace per sample (gzip Chrome trace JSON, 3 active
profiler steps after 1 warm-up, record_shapes=True), as a user's job would:

  tp-layer  a tensor-parallel MLP block (Llama-3 8B shapes, 2048 tokens):
            all-gather of the sequence-sharded input, the gate/up GEMM, the
            down GEMM, reduce-scatter of the output; the next micro-batch's
            all-gather issued on a side stream under the current GEMMs.
  fsdp      an FSDP-style step: each layer's weights all-gathered on a side
            stream one layer ahead of the GEMMs that use them, the gradients
            reduce-scattered on the side stream behind the backward GEMMs.

Writes DIR/<sample>-rank<R>.json.gz and, from rank 0, DIR/README.json with
the GPU, driver, torch and NCCL versions, the date and each file's size and
kernel names.
"""
import argparse
import datetime
import gzip
import json
import os
import shutil

import torch
import torch.distributed as dist
from torch.profiler import ProfilerActivity, profile, record_function, schedule

HIDDEN, FFN, TOKENS = 4096, 14336, 2048


def tp_layer(state):
    world = dist.get_world_size()
    x_shard, w_up, w_down, gathered, out, out_shard, side, nxt, nxt_gathered = state
    cur = torch.cuda.current_stream()
    with record_function("tp:all_gather_input"):
        dist.all_gather_into_tensor(gathered, x_shard)
    # The next micro-batch's input, gathered under this one's GEMMs.
    side.wait_stream(cur)
    with torch.cuda.stream(side), record_function("tp:prefetch_next"):
        dist.all_gather_into_tensor(nxt_gathered, nxt)
    with record_function("tp:gate_up"):
        h = torch.matmul(gathered, w_up)
    with record_function("tp:down"):
        torch.matmul(h[:, : FFN // world], w_down, out=out)
    with record_function("tp:reduce_scatter_output"):
        dist.reduce_scatter_tensor(out_shard, out)
    cur.wait_stream(side)


def fsdp_step(state):
    shards, fulls, grads, grad_shards, x, side = state
    cur = torch.cuda.current_stream()
    ready = []
    side.wait_stream(cur)
    for i, (s, f) in enumerate(zip(shards, fulls)):
        with torch.cuda.stream(side), record_function(f"fsdp:all_gather_layer{i}"):
            dist.all_gather_into_tensor(f, s)
        ev = torch.cuda.Event()
        ev.record(side)
        ready.append(ev)
    h = x
    for i, f in enumerate(fulls):
        cur.wait_event(ready[i])
        with record_function(f"fsdp:forward_layer{i}"):
            h = torch.matmul(h, f.view(HIDDEN, HIDDEN))
    for i in reversed(range(len(fulls))):
        with record_function(f"fsdp:backward_layer{i}"):
            torch.matmul(x.t(), h, out=grads[i].view(HIDDEN, HIDDEN))
        done = torch.cuda.Event()
        done.record(cur)
        side.wait_event(done)
        with torch.cuda.stream(side), record_function(f"fsdp:reduce_scatter_layer{i}"):
            dist.reduce_scatter_tensor(grad_shards[i], grads[i])
    cur.wait_stream(side)


def record(name, step, state, out, rank):
    for _ in range(2):
        step(state)
    torch.cuda.synchronize()
    dist.barrier()
    path = os.path.join(out, f"{name}-rank{rank}.json")
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=schedule(wait=0, warmup=1, active=3, repeat=1), record_shapes=True,
                 on_trace_ready=lambda p: p.export_chrome_trace(path)) as prof:
        for _ in range(5):
            step(state)
            torch.cuda.synchronize()
            prof.step()
    with open(path, "rb") as f, gzip.open(path + ".gz", "wb") as g:
        shutil.copyfileobj(f, g)
    os.unlink(path)
    with gzip.open(path + ".gz", "rt") as f:
        tr = json.load(f)
    return {"file": os.path.basename(path) + ".gz", "bytes": os.path.getsize(path + ".gz"),
            "gpu_names": sorted({e["name"] for e in tr.get("traceEvents", [])
                                 if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")})}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    rank, world = dist.get_rank(), dist.get_world_size()
    os.makedirs(args.out, exist_ok=True)
    bf = dict(device="cuda", dtype=torch.bfloat16)
    side = torch.cuda.Stream()
    samples = []

    shard_tokens = TOKENS // world
    tp_state = (torch.randn(shard_tokens, HIDDEN, **bf), torch.randn(HIDDEN, FFN // world * 2, **bf),
                torch.randn(FFN // world, HIDDEN, **bf), torch.empty(TOKENS, HIDDEN, **bf),
                torch.empty(TOKENS, HIDDEN, **bf), torch.empty(shard_tokens, HIDDEN, **bf), side,
                torch.randn(shard_tokens, HIDDEN, **bf), torch.empty(TOKENS, HIDDEN, **bf))
    try:
        samples.append(record("tp-layer", tp_layer, tp_state, args.out, rank))
    except Exception as e:
        samples.append({"file": f"tp-layer-rank{rank}", "error": repr(e)})

    layers, n = 4, HIDDEN * HIDDEN
    fsdp_state = ([torch.randn(n // world, **bf) for _ in range(layers)],
                  [torch.empty(n, **bf) for _ in range(layers)],
                  [torch.empty(n, **bf) for _ in range(layers)],
                  [torch.empty(n // world, **bf) for _ in range(layers)],
                  torch.randn(TOKENS, HIDDEN, **bf), side)
    try:
        samples.append(record("fsdp", fsdp_step, fsdp_state, args.out, rank))
    except Exception as e:
        samples.append({"file": f"fsdp-rank{rank}", "error": repr(e)})

    every = [None] * world
    dist.all_gather_object(every, samples)
    if rank == 0:
        doc = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
               "gpu": torch.cuda.get_device_name(local), "torch": torch.__version__,
               "cuda": torch.version.cuda, "nccl": ".".join(map(str, torch.cuda.nccl.version())),
               "world_size": world, "ranks": every}
        with open(os.path.join(args.out, "README.json"), "w") as f:
            json.dump(doc, f, indent=1)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
