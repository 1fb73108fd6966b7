# Writes synthetic-tp2-rank{0,1}.json: hand-made Kineto-style traces of a
# TP layer on 2 GPUs (made up, not recorded; field names as torch.profiler
# writes them). Run: python3 gen_synthetic.py
import json

def trace(rank):
    ev = []
    base = 1_700_000_000_000.0  # µs
    ext = [100]
    corr = [5000]
    def cpu(name, ts, dur, args):
        ext[0] += 1
        a = {"External id": ext[0], "Record function id": 0, "Sequence number": ext[0]}
        a.update(args)
        ev.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 1234, "tid": 1234,
                   "ts": round(base + ts, 3), "dur": dur, "args": a})
        return ext[0]
    def launch(eid, ts, kname, cat, kts, kdur, stream, kargs):
        corr[0] += 1
        c = corr[0]
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1234, "tid": 1234,
                   "ts": round(base + ts, 3), "dur": 4.1, "args": {"External id": eid, "cbid": 211, "correlation": c}})
        a = {"External id": eid, "device": rank, "context": 1, "stream": stream, "correlation": c}
        a.update(kargs)
        ev.append({"ph": "X", "cat": cat, "name": kname, "pid": rank, "tid": stream,
                   "ts": round(base + kts, 3), "dur": kdur, "args": a})
        ev.append({"ph": "s", "id": c, "pid": 1234, "tid": 1234, "ts": round(base + ts, 3), "cat": "ac2g", "name": "ac2g"})
        ev.append({"ph": "f", "id": c, "pid": rank, "tid": stream, "ts": round(base + kts, 3), "cat": "ac2g", "name": "ac2g", "bp": "e"})
    gemm = "nvjet_hsh_256x128_64x4_2x1_v_bz_coopB_NNN"
    ag = "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
    rs = "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
    ew = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)"
    for step in range(2):
        t0 = step * 2000.0
        ev.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step+3}", "pid": 1234, "tid": 1234,
                   "ts": round(base + t0, 3), "dur": 1900.0, "args": {"External id": 1 + step}})
        ev.append({"ph": "X", "cat": "gpu_user_annotation", "name": f"ProfilerStep#{step+3}", "pid": rank, "tid": 7,
                   "ts": round(base + t0 + 30, 3), "dur": 1800.0, "args": {"External id": 1 + step}})
        comm = {"Collective name": "_allgather_base", "In msg nelems": 4194304, "Out msg nelems": 8388608,
                "dtype": "BFloat16", "Group size": 2, "Process Group Name": "0"}
        e = cpu("record_param_comms", t0 + 10, 30, comm)
        launch(e, t0 + 20, ag, "kernel", t0 + 40, 400.0 + 7 * rank, 23, dict(comm, grid=[2, 1, 1], block=[512, 1, 1]))
        # GEMM after the gather: 2 x 300 µs, the first beside the gather
        for i in range(2):
            e = cpu("aten::mm", t0 + 50 + i * 20, 15, {"Input Dims": [[8192, 8192], [8192, 4096]], "Input type": ["c10::BFloat16", "c10::BFloat16"],
                                                       "Input Strides": [[8192, 1], [4096, 1]], "Concrete Inputs": ["", ""]})
            launch(e, t0 + 55 + i * 20, gemm, "kernel", t0 + 100 + i * 310, 300.0 + (40 if i == 0 else 0), 7, {"grid": [16, 32, 1], "block": [384, 1, 1]})
        e = cpu("aten::add", t0 + 100, 10, {"Input Dims": [[8192, 4096], [8192, 4096], []], "Input type": ["c10::BFloat16", "c10::BFloat16", "Scalar"]})
        launch(e, t0 + 105, ew, "kernel", t0 + 720, 60.0, 7, {"grid": [65536, 1, 1], "block": [128, 1, 1]})
        comm2 = {"Collective name": "_reduce_scatter_base", "In msg nelems": 8388608, "Out msg nelems": 4194304,
                 "dtype": "BFloat16", "Group size": 2, "Process Group Name": "0"}
        e = cpu("record_param_comms", t0 + 120, 20, comm2)
        launch(e, t0 + 125, rs, "kernel", t0 + 790, 500.0, 23, dict(comm2, grid=[2, 1, 1], block=[512, 1, 1]))
        e = cpu("aten::mm", t0 + 140, 15, {"Input Dims": [[8192, 4096], [4096, 8192]], "Input type": ["c10::BFloat16", "c10::BFloat16"]})
        launch(e, t0 + 145, gemm, "kernel", t0 + 800, 320.0, 7, {"grid": [32, 32, 1], "block": [384, 1, 1]})
        e = cpu("aten::zero_", t0 + 160, 5, {"Input Dims": [[1024]], "Input type": ["float"]})
        corr[0] += 1
        ev.append({"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": rank, "tid": 7,
                   "ts": round(base + t0 + 1130, 3), "dur": 1.5, "args": {"device": rank, "context": 1, "stream": 7, "correlation": corr[0], "bytes": 4096, "memory bandwidth (GB/s)": 2.7}})
        e = cpu("aten::copy_", t0 + 170, 5, {"Input Dims": [[4096, 4096], [4096, 4096], []], "Input type": ["c10::BFloat16", "c10::BFloat16", "Scalar"]})
        corr[0] += 1
        ev.append({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pinned -> Device)", "pid": rank, "tid": 19,
                   "ts": round(base + t0 + 1150, 3), "dur": 600.0, "args": {"device": rank, "context": 1, "stream": 19, "correlation": corr[0], "bytes": 33554432, "memory bandwidth (GB/s)": 55.9}})
        ev.append({"ph": "X", "cat": "python_function", "name": "torch/nn/modules/module.py(1739): _call_impl", "pid": 1234, "tid": 1234,
                   "ts": round(base + t0 + 1, 3), "dur": 150.0, "args": {"Python parent id": 1, "Python id": 2}})
    return {"schemaVersion": 1,
            "deviceProperties": [{"id": rank, "name": "NVIDIA H200", "totalGlobalMem": 150109880320, "computeMajor": 9, "computeMinor": 0, "numSms": 132}],
            "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": 2, "pg_count": 1, "pg_config": [], "nccl_version": "2.27.7"},
            "record_shapes": 1,
            "traceEvents": ev,
            "traceName": f"synthetic-tp2-rank{rank}.json",
            "displayTimeUnit": "ms",
            "baseTimeNanoseconds": 1700000000000000000}

for r in range(2):
    with open(f"synthetic-tp2-rank{r}.json", "w") as f:
        json.dump(trace(r), f, indent=1)
