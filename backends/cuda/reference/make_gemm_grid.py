#!/usr/bin/env python3
"""Writes gemm-shapes-grid.txt: GEMM shapes the suite does not have, for
TestGPUGEMMShapeGrid (times) and TestGPUGEMMLaunches under ncu (launches).

The grid covers the families where the simulator's GEMM model is least
sure: skinny decode GEMMs (M 16-512), small K (128-1024), squares, the
mid-size prefill and training shapes, and long-K weight gradients, in
bf16 with some fp8 and fp16. Every shape of the built-in scenarios
(gemm-shapes.txt, whole and chunked) and of c3lab's reference ops is left
out, so that no sweep scenario's own GEMM is in it: the grid can join a
calibration without leaking a held-out scenario's time into the fit.

Each shape is listed twice, "M N K dtype sm_target": on the whole GPU (0)
and at 68 SMs, what cuBLASLt is planned for on the rest of a 64-SM
communication partition (comm-sms-64).

With --random N --seed S it writes instead N shapes drawn at random
(M log-uniform over 8..16384 in steps of 8, 16 for fp8, N and K over 256..65536 in
steps of 128, bf16, fp8 or fp16 about 6:3:1, kept when their bf16 time at
the H200's dense rate is 5 us to 5 ms), none of the suite's nor of the
fixed grid's: a second set, measured apart, to check a model fitted or
designed on the first.

Usage: python3 make_gemm_grid.py > gemm-shapes-grid.txt
       python3 make_gemm_grid.py --random 100 --seed 7 > gemm-shapes-grid-b.txt
"""
import math
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def suite_shapes():
    out = set()
    with open(os.path.join(HERE, "gemm-shapes.txt")) as f:
        for line in f:
            fs = line.split()
            if len(fs) == 5 and not fs[0].startswith("#"):
                out.add((int(fs[0]), int(fs[1]), int(fs[2]), fs[3]))
    # c3lab's reference ops (TestGPUReferenceOps)
    for s in [(8192, 8192, 8192, "bf16"), (4096, 4096, 4096, "bf16"), (16384, 1280, 8192, "bf16"),
              (64, 28672, 8192, "bf16"), (8192, 8192, 8192, "fp16"), (8192, 8192, 8192, "fp8")]:
        out.add(s)
    return out


def grid():
    shapes = []
    # Decode: skinny M against weight matrices.
    for m in (16, 32, 64, 128, 256, 512):
        for n, k in ((4096, 4096), (14336, 4096), (4096, 14336), (8192, 8192), (28672, 4096)):
            shapes.append((m, n, k, "bf16"))
        for n, k in ((14336, 4096), (8192, 8192), (28672, 8192)):
            shapes.append((m, n, k, "fp8"))
    # Small K: the epilogue against the main loop.
    for m, n in ((4096, 4096), (8192, 8192), (16384, 2048)):
        for k in (128, 256, 512, 1024):
            shapes.append((m, n, k, "bf16"))
        shapes.append((m, n, 512, "fp8"))
    # Squares.
    for s in (1024, 2048, 3072, 4096, 6144, 12288, 16384):
        shapes.append((s, s, s, "bf16"))
    for s in (2048, 4096, 12288):
        shapes.append((s, s, s, "fp16"))
        shapes.append((s, s, s, "fp8"))
    # Prefill and training: mid-size M against the usual hidden sizes.
    for m in (2048, 4096, 8192):
        for n, k in ((4096, 14336), (14336, 4096), (6144, 4096), (10240, 8192), (8192, 28672)):
            shapes.append((m, n, k, "bf16"))
        shapes.append((m, 14336, 4096, "fp8"))
        shapes.append((m, 6144, 4096, "fp16"))
    # Weight gradients: long K.
    for m, n in ((4096, 4096), (8192, 1024), (1024, 8192)):
        for k in (16384, 32768, 65536):
            shapes.append((m, n, k, "bf16"))
    return shapes


def random_grid(n, seed):
    rng = random.Random(seed)
    fixed = set(grid())
    out = []
    while len(out) < n:
        d = rng.choices(["bf16", "fp8", "fp16"], weights=[6, 3, 1])[0]
        step = 16 if d == "fp8" else 8  # fp8 GEMMs want every dimension a multiple of 16
        m = max(step, int(round(math.exp(rng.uniform(math.log(8), math.log(16384))) / step)) * step)
        nn, k = (max(256, int(round(math.exp(rng.uniform(math.log(256), math.log(65536))) / 128)) * 128) for _ in range(2))
        t = 2 * m * nn * k / 790e12
        s = (m, nn, k, d)
        if 5e-6 <= t <= 5e-3 and s not in fixed:
            out.append(s)
    return out


def main():
    skip = suite_shapes()
    seen = set()
    rows = []
    shapes = grid()
    label = "GEMM shapes the suite does not have (make_gemm_grid.py)"
    if len(sys.argv) == 5 and sys.argv[1] == "--random" and sys.argv[3] == "--seed":
        shapes = random_grid(int(sys.argv[2]), int(sys.argv[4]))
        label = f"random GEMM shapes (make_gemm_grid.py --random {sys.argv[2]} --seed {sys.argv[4]})"
    elif len(sys.argv) != 1:
        sys.exit("usage: make_gemm_grid.py [--random N --seed S]")
    for s in shapes:
        if s in skip or s in seen:
            continue
        seen.add(s)
        rows.append(s)
    w = sys.stdout.write
    w(f"# {label}, \"M N K dtype sm_target\":\n")
    w("# each on the whole GPU (0) and at 68 SMs (the rest of comm-sms-64). For\n")
    w("# TestGPUGEMMShapeGrid (times) and TestGPUGEMMLaunches under ncu (gpu-suite.sh step gemm-grid).\n")
    for target in (0, 68):
        for m, n, k, d in rows:
            w(f"{m} {n} {k} {d} {target}\n")


if __name__ == "__main__":
    main()
