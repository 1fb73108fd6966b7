#!/usr/bin/env python3
"""PyTorch reference numbers for c3lab: isolated GEMMs and NCCL collectives.

c3lab profiles a GEMM running concurrently with a collective. Its "isolated"
baselines (GEMM alone, collective alone) anchor every speedup and slowdown it
reports, so they must match what a plain framework user would see. This script
measures those baselines with stock PyTorch, independently of c3lab's own
backends, so c3lab's real-GPU numbers can be checked against them:

* GEMM: torch.matmul (bf16/fp16/fp32, A[M,K] @ B[K,N], row-major) or
  torch._scaled_mm (fp8 e4m3, TN: A row-major, B column-major, bf16 out) on
  cuda:0; each timed rep is bracketed by its own pair of CUDA events.
* Collectives: torch.distributed with the NCCL backend, one process per GPU
  (torch.multiprocessing.spawn), bf16 buffers, NVLink multicast (NVLS) off.
  Each timed rep is preceded, untimed, by torch.cuda.synchronize() and
  dist.barrier(); rank 0 then records start, the op and end on its current
  stream. Sizes, algbw and busbw follow nccl-tests (and c3lab's
  CommOp.SizeBytes / BusBWFactor): size is the all-gather output, the
  reduce-scatter input, the all-reduce buffer, the all-to-all send buffer;
  busbw = algbw * (n-1)/n, or 2(n-1)/n for all-reduce. `bytes` is per rank,
  as in c3lab scenarios. Each op is checked once for correctness on random
  integer-valued data (exact in bf16).

Nothing here changes a GPU setting (clocks, power, MIG, persistence).
torch is imported lazily so `--help` works without it.
"""
import argparse, datetime, json, os, re, socket, subprocess, sys, tempfile

DTYPES = ("bf16", "fp16", "fp32", "fp8")
COLLECTIVES = ("all-gather", "reduce-scatter", "all-reduce", "all-to-all")
DEFAULT_GEMMS = ["8192x8192x8192:bf16", "4096x4096x4096:bf16", "16384x1280x8192:bf16",
                 "64x28672x8192:bf16", "8192x8192x8192:fp16"]
DEFAULT_COLLS = ["all-gather:64MiB", "all-gather:256MiB", "all-gather:1GiB",
                 "reduce-scatter:256MiB", "all-reduce:256MiB", "all-to-all:256MiB"]
_UNITS = [("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10),
          ("TB", 10**12), ("GB", 10**9), ("MB", 10**6), ("KB", 10**3), ("B", 1)]
QUIET = False


def log(msg):
    if not QUIET:
        print(f"[torch_reference] {msg}", file=sys.stderr, flush=True)


def parse_bytes(s):
    """Parse "268435456", "256MiB", "1.5GiB", "64 MB" (same rules as c3lab)."""
    t = s.strip()
    for suf, mul in _UNITS:
        if t.endswith(suf):
            try:
                v = float(t[: -len(suf)].strip()) * mul
            except ValueError:
                break
            if v >= 0 and v == int(v):
                return int(v)
            break
    if re.fullmatch(r"\d+", t):
        return int(t)
    raise argparse.ArgumentTypeError(f"bad size {s!r}: want e.g. 268435456 or 256MiB")


def parse_gemm(s):
    m = re.fullmatch(r"(\d+)x(\d+)x(\d+)(?::(\w+))?", s.strip())
    if not m or (m.group(4) or "bf16") not in DTYPES:
        raise argparse.ArgumentTypeError(f"bad GEMM {s!r}: want MxNxK[:{'|'.join(DTYPES)}]")
    return {"m": int(m.group(1)), "n": int(m.group(2)), "k": int(m.group(3)),
            "dtype": m.group(4) or "bf16"}


def parse_coll(s):
    name, _, size = s.partition(":")
    if name not in COLLECTIVES or not size:
        raise argparse.ArgumentTypeError(f"bad collective {s!r}: want {{{','.join(COLLECTIVES)}}}:SIZE")
    return {"collective": name, "bytes": parse_bytes(size)}


def stats_ns(times_ms):
    """median/p10/p90/min/max in ns (linear interpolation, as numpy's default)."""
    xs = sorted(t * 1e6 for t in times_ms)

    def pct(p):
        i = (len(xs) - 1) * p / 100.0
        lo = int(i)
        hi = min(lo + 1, len(xs) - 1)
        return xs[lo] + (xs[hi] - xs[lo]) * (i - lo)
    return {k: round(v, 1) for k, v in (("median_ns", pct(50)), ("p10_ns", pct(10)),
            ("p90_ns", pct(90)), ("min_ns", xs[0]), ("max_ns", xs[-1]))}


def time_events(torch, fn, reps, warmup, sync_each=False):
    """Warm up, then time `reps` calls of fn, each between its own event pair.
    With sync_each the host waits for each call before the next, as c3lab's
    protocol does; otherwise the calls run back to back."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
          for _ in range(reps)]
    for s, e in ev:
        s.record()
        fn()
        e.record()
        if sync_each:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) for s, e in ev]


# ---------------------------------------------------------------- GEMM
def run_gemm(torch, spec, reps, warmup, layout="nn", sync_each=False):
    m, n, k, dt = spec["m"], spec["n"], spec["k"], spec["dtype"]
    res = dict(spec, device="cuda:0", reps=reps, warmup=warmup, flops=2 * m * n * k, sync_each=sync_each)
    dev = torch.device("cuda", 0)
    try:
        if dt == "fp8":
            f8 = getattr(torch, "float8_e4m3fn", None)
            if f8 is None or not hasattr(torch, "_scaled_mm"):
                return dict(res, status="skipped", reason="torch has no float8_e4m3fn/_scaled_mm")
            if torch.cuda.get_device_capability(dev) < (8, 9):
                return dict(res, status="skipped", reason="fp8 needs compute capability >= 8.9")
            if k % 16 or n % 16:
                return dict(res, status="skipped", reason="_scaled_mm needs K and N divisible by 16")
            a = torch.randn(m, k, device=dev).to(f8)
            b = torch.randn(n, k, device=dev).to(f8).t()  # [K,N] column-major: TN layout
            one = torch.ones((), device=dev, dtype=torch.float32)
            fn = lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
            res.update(op="torch._scaled_mm", layout="TN", out_dtype="bf16")
        else:
            tdt = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[dt]
            a = torch.randn(m, k, device=dev, dtype=tdt)
            if layout == "tn":  # B stored [N,K] and transposed: c3lab's cuBLASLt layout
                b = torch.randn(n, k, device=dev, dtype=tdt).t()
            else:
                b = torch.randn(k, n, device=dev, dtype=tdt)
            fn = lambda: torch.matmul(a, b)
            res.update(op="torch.matmul", layout=layout.upper(), out_dtype=dt)
        try:
            fn()
        except Exception as e:  # e.g. fp8 unsupported by this build or GPU
            return dict(res, status="skipped", reason=f"{type(e).__name__}: {e}".strip()[:300])
        st = stats_ns(time_events(torch, fn, reps, warmup, sync_each))
        res.update(st, status="ok", tflops=2 * m * n * k / (st["median_ns"] * 1e-9) / 1e12)
        return res
    except Exception as e:
        return dict(res, status="error", reason=f"{type(e).__name__}: {e}"[:300])
    finally:
        a = b = fn = None
        torch.cuda.synchronize()
        torch.cuda.empty_cache()


# ---------------------------------------------------------------- collectives
def _coll_worker(rank, world, specs, reps, warmup, quiet, out_path):
    global QUIET
    QUIET = quiet or rank != 0
    os.environ["NCCL_NVLS_ENABLE"] = "0"  # never NVLink multicast (also set by parent)
    import torch
    import torch.distributed as dist
    dev = torch.device("cuda", rank)
    torch.cuda.set_device(dev)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=dev,
                            timeout=datetime.timedelta(seconds=180))
    results = []

    def emit(r):  # rank 0 rewrites the file after every op so a later failure keeps these
        results.append(r)
        if rank == 0:
            with open(out_path, "w") as f:
                json.dump(results, f)
    try:
        for idx, spec in enumerate(specs):
            name, nbytes = spec["collective"], spec["bytes"]
            size = nbytes * world if name in ("all-gather", "reduce-scatter") else nbytes
            factor = (world - 1) / world * (2 if name == "all-reduce" else 1)
            res = dict(spec, ranks=world, dtype="bf16", size_bytes=size, busbw_factor=factor,
                       reps=reps, warmup=warmup, timed_on="rank 0 current stream")
            if nbytes % (2 * world):
                emit(dict(res, status="skipped", checked=False,
                                    reason=f"bytes must be a multiple of 2*ranks={2 * world}"))
                continue
            log(f"{name} {nbytes} B/rank")
            E = nbytes // 2  # bf16 elements per rank

            def gen(r, numel):  # same data on every rank for a given r; ints keep bf16 sums exact
                g = torch.Generator(device=dev)
                g.manual_seed(1000003 * (idx + 1) + r)
                return torch.randint(-8, 9, (numel,), generator=g, device=dev,
                                     dtype=torch.int32).to(torch.bfloat16)
            if name == "all-gather":
                inp, out = gen(rank, E), torch.empty(world * E, device=dev, dtype=torch.bfloat16)
                fn = lambda: dist.all_gather_into_tensor(out, inp)
                expect = lambda: torch.cat([gen(r, E) for r in range(world)])
            elif name == "reduce-scatter":
                inp, out = gen(rank, world * E), torch.empty(E, device=dev, dtype=torch.bfloat16)
                fn = lambda: dist.reduce_scatter_tensor(out, inp)
                expect = lambda: sum(gen(r, world * E)[rank * E:(rank + 1) * E].float()
                                     for r in range(world)).bfloat16()
            elif name == "all-reduce":
                # In-place: values double each rep after the check; harmless to timing.
                inp = out = gen(rank, E)
                fn = lambda: dist.all_reduce(inp)
                expect = lambda: sum(gen(r, E).float() for r in range(world)).bfloat16()
            else:  # all-to-all: rank r's chunk j goes to rank j's chunk r
                c = E // world
                inp, out = gen(rank, E), torch.empty(E, device=dev, dtype=torch.bfloat16)
                fn = lambda: dist.all_to_all_single(out, inp)
                expect = lambda: torch.cat([gen(r, E)[rank * c:(rank + 1) * c] for r in range(world)])
            fn()
            torch.cuda.synchronize()
            ok = torch.tensor([1 if torch.equal(out, expect()) else 0], device=dev, dtype=torch.int32)
            dist.all_reduce(ok, op=dist.ReduceOp.MIN)  # true only if every rank matched
            res["checked"] = bool(ok.item())
            torch.cuda.empty_cache()
            for _ in range(warmup):
                fn()
            times = []
            for _ in range(reps):
                torch.cuda.synchronize()
                dist.barrier()  # untimed; aligns ranks before each rep
                torch.cuda.synchronize()
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
                fn()
                e.record()
                torch.cuda.synchronize()
                times.append(s.elapsed_time(e))
            st = stats_ns(times)
            algbw = size / (st["median_ns"] * 1e-9) / 1e9
            res.update(st, status="ok", algbw_gb_s=algbw, busbw_gb_s=algbw * factor)
            emit(res)
            del inp, out, fn, expect
            torch.cuda.empty_cache()
    finally:
        dist.destroy_process_group()


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_collectives(torch, specs, world, reps, warmup):
    skip = lambda why: [dict(s, ranks=world, status="skipped", checked=False, reason=why) for s in specs]
    if not specs:
        return []
    import torch.distributed as dist
    if not dist.is_available() or not dist.is_nccl_available():
        return skip("torch.distributed with NCCL is not available")
    if world < 2:
        return skip("collectives need --ranks >= 2")
    if torch.cuda.device_count() < world:
        return skip(f"need {world} GPUs, found {torch.cuda.device_count()}")
    import torch.multiprocessing as mp
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), NCCL_NVLS_ENABLE="0")
    fd, path = tempfile.mkstemp(prefix="torch_reference_", suffix=".json")
    os.close(fd)
    err = None
    try:
        with open(path, "w") as f:
            f.write("[]")
        try:
            mp.spawn(_coll_worker, args=(world, specs, reps, warmup, QUIET, path), nprocs=world, join=True)
        except Exception as e:
            err = f"{type(e).__name__}: {e}".strip()[-500:]
            print(f"[torch_reference] collectives failed: {err}", file=sys.stderr)
        with open(path) as f:
            done = json.load(f)
    finally:
        os.unlink(path)
    rest = specs[len(done):]
    return done + [dict(s, ranks=world, status="error", checked=False, reason=err or "not run")
                   for s in rest]


# ---------------------------------------------------------------- main
def gpu_info(torch):
    smi = {}
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=index,uuid,driver_version",
                              "--format=csv,noheader"], capture_output=True, text=True, timeout=20)
        for line in out.stdout.strip().splitlines():
            i, uuid, drv = [x.strip() for x in line.split(",")]
            smi[int(i)] = (uuid, drv)
    except Exception:
        pass
    gpus = []
    for i in range(torch.cuda.device_count()):
        p = torch.cuda.get_device_properties(i)
        uuid = getattr(p, "uuid", None)
        g = {"index": i, "name": p.name, "memory_bytes": p.total_memory,
             "capability": f"{p.major}.{p.minor}"}
        if uuid is not None:
            u = str(uuid)
            g["uuid"] = u if u.startswith("GPU-") else "GPU-" + u
        gpus.append(g)
    # nvidia-smi indices are physical; they match torch's only without CUDA_VISIBLE_DEVICES.
    return gpus, (smi[min(smi)][1] if smi else None)


def main(argv=None):
    global QUIET
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="Defaults:\n  --gemm " + " ".join(DEFAULT_GEMMS)
                                 + "\n  --coll " + " ".join(DEFAULT_COLLS))
    ap.add_argument("--out", required=True, help="JSON file to write")
    ap.add_argument("--gemm", action="append", type=parse_gemm, metavar="MxNxK[:DTYPE]",
                    help=f"GEMM to time, DTYPE in {DTYPES} (default bf16); repeatable")
    ap.add_argument("--coll", action="append", type=parse_coll, metavar="NAME:BYTES",
                    help=f"collective and per-rank bytes, NAME in {COLLECTIVES}; repeatable")
    ap.add_argument("--no-gemm", action="store_true", help="skip GEMMs")
    ap.add_argument("--no-coll", action="store_true", help="skip collectives")
    ap.add_argument("--ranks", type=int, default=2, help="GPUs for collectives (default 2)")
    ap.add_argument("--reps", type=int, default=50, help="timed reps (default 50)")
    ap.add_argument("--warmup", type=int, default=10, help="warm-up reps (default 10)")
    ap.add_argument("--layout", choices=("nn", "tn"), default="nn",
                    help="GEMM operand layout: nn (plain A @ B) or tn (B transposed, as c3lab's cuBLASLt GEMM)")
    ap.add_argument("--sync-each", action="store_true",
                    help="wait for each timed GEMM before launching the next, as c3lab does")
    ap.add_argument("--json-only", action="store_true", help="no progress on stderr, only errors")
    a = ap.parse_args(argv)
    if a.reps < 1 or a.warmup < 0:
        ap.error("--reps must be >= 1 and --warmup >= 0")
    QUIET = a.json_only
    gemms = [] if a.no_gemm else (a.gemm or [parse_gemm(g) for g in DEFAULT_GEMMS])
    colls = [] if a.no_coll else (a.coll or [parse_coll(c) for c in DEFAULT_COLLS])

    try:
        import torch
    except ImportError as e:
        print(f"torch_reference: cannot import torch: {e}", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("torch_reference: no CUDA device visible", file=sys.stderr)
        return 2
    gpus, driver = gpu_info(torch)
    nccl = None
    try:
        v = torch.cuda.nccl.version()
        nccl = ".".join(str(x) for x in v) if isinstance(v, tuple) else str(v)
    except Exception:
        pass
    report = {"tool": "torch_reference",
              "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "host": socket.gethostname(), "torch": torch.__version__, "cuda": torch.version.cuda,
              "nccl": nccl, "driver": driver, "gpus": gpus,
              "settings": {"reps": a.reps, "warmup": a.warmup,
                           "matmul_allow_tf32": torch.backends.cuda.matmul.allow_tf32,
                           "NCCL_NVLS_ENABLE": "0",
                           "CUDA_VISIBLE_DEVICES": os.environ.get("CUDA_VISIBLE_DEVICES")},
              "gemm": [], "collectives": []}
    log(f"torch {torch.__version__}, CUDA {torch.version.cuda}, NCCL {nccl}, {len(gpus)} GPU(s)")
    for g in gemms:
        r = run_gemm(torch, g, a.reps, a.warmup, a.layout, a.sync_each)
        report["gemm"].append(r)
        log(f"gemm {g['m']}x{g['n']}x{g['k']} {g['dtype']}: " + (
            f"{r['median_ns'] / 1e3:.1f} us, {r['tflops']:.1f} TFLOP/s" if r["status"] == "ok"
            else f"{r['status']}: {r.get('reason')}"))
    report["collectives"] = run_collectives(torch, colls, a.ranks, a.reps, a.warmup)
    for r in report["collectives"]:
        log(f"{r['collective']} {r['bytes']} B/rank: " + (
            f"{r['median_ns'] / 1e3:.1f} us, busbw {r['busbw_gb_s']:.1f} GB/s, checked={r['checked']}"
            if r["status"] == "ok" else f"{r['status']}: {r.get('reason')}"))
    out_dir = os.path.dirname(os.path.abspath(a.out))
    os.makedirs(out_dir, exist_ok=True)
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(report, f, indent=2)
        f.write("\n")
    os.replace(tmp, a.out)
    log(f"wrote {a.out}")
    bad = [r for r in report["gemm"] + report["collectives"]
           if r["status"] == "error" or (r["status"] == "ok" and not r.get("checked", True))]
    for r in bad:
        print(f"torch_reference: problem: {json.dumps(r)}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
