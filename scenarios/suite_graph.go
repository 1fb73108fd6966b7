package scenarios

import (
	"fmt"
	"strings"
)

// Llama-3 8B: hidden 4096, FFN 14336, 32 query / 8 KV heads of 128.
const (
	llama8Hidden = 4096
	llama8FFN    = 14336
	llama8QKV    = (32 + 2*8) * 128 // 6144

	srcLlama8 = "Llama-3 8B (hidden 4096, FFN 14336, 32 q / 8 kv heads x 128)"
)

// graphRuns says what a stream scenario runs, from its streams: "It runs
// on each of 2 GPUs stream compute (qkv: gemm ...) next to stream tp (ag:
// all-gather 64MiB, decomposed into 4 chunks)".
func graphRuns(sc Scenario) string {
	parts := make([]string, len(sc.Streams))
	for i, ss := range sc.Streams {
		ops := make([]string, len(ss.Ops))
		for j, o := range ss.Ops {
			s := o.Name + ": " + o.String()
			if len(o.After) > 0 {
				s += " after " + strings.Join(o.After, ", ")
			}
			if o.Decompose > 1 {
				s += fmt.Sprintf(", decomposed into %d chunks with what it waits for", o.Decompose)
			}
			ops[j] = s
		}
		parts[i] = fmt.Sprintf("stream %s (%s)", ss.Name, strings.Join(ops, "; "))
	}
	where := fmt.Sprintf("on each of %d GPUs", sc.GPUs)
	if sc.GPUs == 1 {
		where = "on one GPU"
	}
	return fmt.Sprintf("It runs %s %s", where, strings.Join(parts, " next to "))
}

// Stream-op builders for the suite's graphs.
func sgemm(name string, m, n, k int, dt DType, after ...string) StreamOp {
	return StreamOp{Name: name, Kind: OpKind(GEMM), M: m, N: n, K: k, DType: dt, After: after}
}

func sstream(name string, b ByteSize, after ...string) StreamOp {
	return StreamOp{Name: name, Kind: OpKind(Stream), Bytes: b, After: after}
}

func scomm(name string, c Collective, b ByteSize, after ...string) StreamOp {
	return StreamOp{Name: name, Kind: OpKind(c), Bytes: b, After: after}
}

func times(o StreamOp, n int) StreamOp {
	o.Count = n
	return o
}

// graphBuiltins lists the suite's stream and layer scenarios (format 2).
// Each builds its streams for a GPU count, so that c3lab sweep --gpus
// keeps the data an op hands another the size the consumer reads.
func graphBuiltins() []builtin {
	var out []builtin
	add := func(name, note string, gpus int, overlap bool, graph func(n int) (string, []StreamSpec)) {
		out = append(out, builtin{name: name, note: note, gpus: gpus, overlap: overlap, graph: graph})
	}
	two := func(compute, comm StreamSpec) []StreamSpec { return []StreamSpec{compute, comm} }

	// Streams of small collectives next to streams of GEMMs: every GEMM
	// boundary hands SMs to the queued collectives, and every collective
	// pays its own fixed cost.
	add("llama3-8b-fsdp-proj-x16-ag-4m-x64",
		"Many small all-gathers queued behind a stream of GEMMs: each GEMM boundary is a chance for the collectives to get SMs, and each 4MiB message pays its fixed cost.",
		2, true, func(n int) (string, []StreamSpec) {
			return fmt.Sprintf("%s, shapes from FSDP=%d training, 4096 tokens per GPU: 16 of its square projections (q and o of 8 layers, 4096x4096x4096) next to 64 all-gathers of small parameter groups (a 4MiB shard per GPU)", srcLlama8, n),
				two(StreamSpec{Name: "compute", Ops: []StreamOp{times(sgemm("proj", 4096, llama8Hidden, llama8Hidden, BF16), 16)}},
					StreamSpec{Name: "fsdp", Ops: []StreamOp{times(scomm("ag", AllGather, 4*mib), 64)}})
		})
	add("llama3-8b-fsdp-proj-x16-ag-16m-x32",
		"A stream of 16MiB all-gathers of about the GEMM stream's length: balanced, with half the fixed costs of the 4MiB stream.",
		2, true, func(n int) (string, []StreamSpec) {
			return fmt.Sprintf("%s, shapes from FSDP=%d training, 4096 tokens per GPU: 16 square projections (4096x4096x4096) next to 32 all-gathers of parameter groups (a 16MiB shard per GPU)", srcLlama8, n),
				two(StreamSpec{Name: "compute", Ops: []StreamOp{times(sgemm("proj", 4096, llama8Hidden, llama8Hidden, BF16), 16)}},
					StreamSpec{Name: "fsdp", Ops: []StreamOp{times(scomm("ag", AllGather, 16*mib), 32)}})
		})
	add("llama3-8b-fsdp-wgrad-x16-rs-16m-x32",
		"Gradient reduce-scatters streamed under weight-gradient GEMMs: each needs SMs for its additions, so it waits for a GEMM boundary to get them.",
		2, true, func(n int) (string, []StreamSpec) {
			return fmt.Sprintf("%s, shapes from FSDP=%d backward, 4096 tokens per GPU: 16 weight gradients of square projections (4096x4096x4096, K = tokens) next to 32 reduce-scatters of gradient groups (a 16MiB shard per GPU)", srcLlama8, n),
				two(StreamSpec{Name: "compute", Ops: []StreamOp{times(sgemm("wgrad", llama8Hidden, llama8Hidden, 4096, BF16), 16)}},
					StreamSpec{Name: "fsdp", Ops: []StreamOp{times(scomm("rs", ReduceScatter, 16*mib), 32)}})
		})
	add("llama3-8b-dp-wgrad-x16-ar-4m-x64",
		"Small gradient all-reduces under a stream of weight-gradient GEMMs: latency-bound messages whose reductions compete for SMs at every boundary.",
		2, true, func(n int) (string, []StreamSpec) {
			return fmt.Sprintf("%s, shapes from DP=%d backward, 4096 tokens per GPU: 16 weight gradients of square projections (4096x4096x4096, K = tokens) next to 64 all-reduces of small 4MiB gradient buckets", srcLlama8, n),
				two(StreamSpec{Name: "compute", Ops: []StreamOp{times(sgemm("wgrad", llama8Hidden, llama8Hidden, 4096, BF16), 16)}},
					StreamSpec{Name: "dp", Ops: []StreamOp{times(scomm("ar", AllReduce, 4*mib), 64)}})
		})
	add("llama3-70b-fsdp-gate-up-x8-ag-64m-x16",
		"Weight all-gathers of 64MiB streamed under eight gate/up GEMMs of about their total length: balanced streams where bandwidth, not fixed cost, decides.",
		2, true, func(n int) (string, []StreamSpec) {
			return fmt.Sprintf("%s, shapes from FSDP=%d training, 1024 tokens per GPU: eight FFN gate or up projections (1024x28672x8192) next to 16 all-gathers of weight slices (a 64MiB shard per GPU)", srcLlama70, n),
				two(StreamSpec{Name: "compute", Ops: []StreamOp{times(sgemm("gate-up", 1024, llama70FFN, llama70Hidden, BF16), 8)}},
					StreamSpec{Name: "fsdp", Ops: []StreamOp{times(scomm("ag", AllGather, 64*mib), 16)}})
		})

	// Tensor parallelism with sequence parallelism over the GPUs the
	// scenario runs on: the all-gather of the sequence-sharded input feeds
	// the column-parallel QKV GEMM, and the row-parallel output projection
	// feeds the reduce-scatter, whole or decomposed (async TP).
	type tpModel struct {
		key, src           string
		tokens, hidden, qk int
	}
	for _, mdl := range []tpModel{
		{"llama3-70b", srcLlama70, 8192, llama70Hidden, llama70QKV},
		{"llama3-405b", srcLlama405, 4096, llama405Hidden, llama405QKV},
	} {
		for _, chunks := range []int{1, 2, 4, 8} {
			suffix, how, note := "", "whole, so the GEMM waits for all of it", "The undecomposed pair is a chain: the GEMM cannot start before the all-gather ends, so overlap has nothing to hide, the reference its decompositions are measured against."
			if chunks > 1 {
				suffix = fmt.Sprintf("-decomp%d", chunks)
				how = fmt.Sprintf("decomposed into %d chunks, GEMM chunk i starting when all-gather chunk i lands", chunks)
				note = fmt.Sprintf("Async TP in %d chunks: each slice of the GEMM runs as soon as its slice of the input has arrived, so only the first chunk's transfer stays exposed.", chunks)
			}
			add(mdl.key+"-tp-qkv-ag-gemm"+suffix, note, 2, chunks > 1, func(n int) (string, []StreamSpec) {
				ag := scomm("ag", AllGather, ByteSize(mdl.tokens*mdl.hidden*bf16/n))
				qkv := sgemm("qkv", mdl.tokens, mdl.qk/n, mdl.hidden, BF16, "ag")
				if chunks > 1 {
					qkv.Decompose = chunks
				}
				return fmt.Sprintf("%s, shapes from TP=%d with sequence parallelism, %d tokens: the all-gather of the sequence-sharded layer-norm output (%d x %d x 2B over %d GPUs) feeding the fused QKV projection's shard (%dx%dx%d), %s", mdl.src, n, mdl.tokens, mdl.tokens, mdl.hidden, n, mdl.tokens, mdl.qk/n, mdl.hidden, how),
					[]StreamSpec{{Name: "tp", Ops: []StreamOp{ag}}, {Name: "compute", Ops: []StreamOp{qkv}}}
			})
			howRS := "whole, so the reduce-scatter waits for all of the GEMM"
			noteRS := "The undecomposed pair is a chain: the reduce-scatter cannot start before the GEMM ends, so overlap has nothing to hide, the reference its decompositions are measured against."
			if chunks > 1 {
				howRS = fmt.Sprintf("decomposed into %d chunks, reduce-scatter chunk i starting when GEMM chunk i ends", chunks)
				noteRS = fmt.Sprintf("Async TP in %d chunks: each slice of the output is reduced and scattered while the GEMM computes the next, so only the last chunk's reduction stays exposed.", chunks)
			}
			add(mdl.key+"-tp-o-proj-gemm-rs"+suffix, noteRS, 2, chunks > 1, func(n int) (string, []StreamSpec) {
				o := sgemm("o-proj", mdl.tokens, mdl.hidden, mdl.hidden/n, BF16)
				rs := scomm("rs", ReduceScatter, ByteSize(mdl.tokens*mdl.hidden*bf16/n), "o-proj")
				if chunks > 1 {
					rs.Decompose = chunks
				}
				return fmt.Sprintf("%s, shapes from TP=%d with sequence parallelism, %d tokens: the attention output projection's shard (%dx%dx%d) feeding the reduce-scatter of its partial sums back to sequence shards (%d x %d x 2B over %d GPUs), %s", mdl.src, n, mdl.tokens, mdl.tokens, mdl.hidden, mdl.hidden/n, mdl.tokens, mdl.hidden, n, howRS),
					[]StreamSpec{{Name: "compute", Ops: []StreamOp{o}}, {Name: "tp", Ops: []StreamOp{rs}}}
			})
		}
	}

	// FSDP: the next layer's weights are gathered under this layer's GEMMs.
	add("llama3-70b-fsdp-layer-prefetch",
		"A whole layer's forward GEMMs with the next layer's four weight all-gathers under them: the prefetch hides if the collectives get bandwidth without stretching the GEMMs.",
		2, true, func(n int) (string, []StreamSpec) {
			const t = 2048
			return fmt.Sprintf("%s, shapes from FSDP=%d training, %d tokens per GPU: this layer's QKV, output, fused gate+up and down projections (%dx%dx%d, %dx%dx%d, %dx%dx%d, %dx%dx%d) next to the all-gathers of the next layer's four weights (each GPU holding 1/%d of each)", srcLlama70, n, t,
					t, llama70QKV, llama70Hidden, t, llama70Hidden, llama70Hidden, t, 2*llama70FFN, llama70Hidden, t, llama70Hidden, llama70FFN, n),
				[]StreamSpec{
					{Name: "compute", Ops: []StreamOp{
						sgemm("qkv", t, llama70QKV, llama70Hidden, BF16),
						sgemm("o-proj", t, llama70Hidden, llama70Hidden, BF16),
						sgemm("gate-up", t, 2*llama70FFN, llama70Hidden, BF16),
						sgemm("down", t, llama70Hidden, llama70FFN, BF16),
					}},
					{Name: "prefetch", Ops: []StreamOp{
						scomm("ag-qkv", AllGather, ByteSize(llama70QKV*llama70Hidden*bf16/n)),
						scomm("ag-o-proj", AllGather, ByteSize(llama70Hidden*llama70Hidden*bf16/n)),
						scomm("ag-gate-up", AllGather, ByteSize(2*llama70FFN*llama70Hidden*bf16/n)),
						scomm("ag-down", AllGather, ByteSize(llama70FFN*llama70Hidden*bf16/n)),
					}},
				}
		})

	// MoE with expert parallelism: dispatch, the experts, combine, in four
	// micro-batches so one's all-to-alls run under another's experts.
	add("mixtral-8x22b-ep-moe-fp8-layer",
		"An MoE layer in four micro-batches: each dispatch feeds its experts' GEMMs and each expert output feeds its combine, so the all-to-alls of one micro-batch run under the experts of another.",
		2, true, func(n int) (string, []StreamSpec) {
			const tokens = 1024                    // per micro-batch and GPU
			rows := tokens * mixtralTopK           // routed token copies a GPU receives, routing balanced
			disp := ByteSize(rows * mixtralHidden) // FP8 dispatch
			comb := ByteSize(rows * mixtralHidden * bf16)
			var d, c, e []StreamOp
			for i := range 4 {
				s := fmt.Sprint(i)
				d = append(d, scomm("dispatch"+s, AllToAll, disp))
				e = append(e,
					sgemm("gate-up"+s, rows, 2*mixtralFFN, mixtralHidden, FP8, "dispatch"+s),
					sstream("swiglu"+s, ByteSize(rows*2*mixtralFFN*bf16)),
					sgemm("down"+s, rows, mixtralHidden, mixtralFFN, FP8))
				c = append(c, scomm("combine"+s, AllToAll, comb, "down"+s))
			}
			return fmt.Sprintf("%s, shapes from FP8 training with EP=%d, DeepSeek-V3 style (FP8 dispatch, bf16 combine), 4 micro-batches of %d tokens per GPU: each dispatch all-to-all (%d tokens x top-2 x 6144 x 1B) feeds the local experts' fused gate+up projections as one grouped FP8 GEMM (%dx%dx%d), the SwiGLU and the down projections (%dx%dx%d), whose output the combine all-to-all returns (x 2B)", srcMixtral, n, tokens, tokens, rows, 2*mixtralFFN, mixtralHidden, rows, mixtralHidden, mixtralFFN),
				[]StreamSpec{{Name: "dispatch", Ops: d}, {Name: "experts", Ops: e}, {Name: "combine", Ops: c}}
		})

	// Data parallelism: gradient buckets all-reduced as the backward pass
	// produces them.
	add("llama3-8b-dp-backward-bucketed-ar",
		"A layer's backward GEMMs with each weight gradient's buckets all-reduced as soon as it is computed: all but the last buckets can hide under the GEMMs that follow.",
		2, true, func(n int) (string, []StreamSpec) {
			const t = 4096
			return fmt.Sprintf("%s, shapes from DP=%d backward, %d tokens per GPU: input and weight gradients of the down, fused gate+up, output and QKV projections, each weight gradient all-reduced in gradient buckets of 24 to 32MiB as it is produced", srcLlama8, n, t),
				[]StreamSpec{
					{Name: "compute", Ops: []StreamOp{
						sgemm("down-dgrad", t, llama8FFN, llama8Hidden, BF16),
						sgemm("down-wgrad", llama8Hidden, llama8FFN, t, BF16),
						sgemm("gate-up-dgrad", t, llama8Hidden, 2*llama8FFN, BF16),
						sgemm("gate-up-wgrad", 2*llama8FFN, llama8Hidden, t, BF16),
						sgemm("o-dgrad", t, llama8Hidden, llama8Hidden, BF16),
						sgemm("o-wgrad", llama8Hidden, llama8Hidden, t, BF16),
						sgemm("qkv-dgrad", t, llama8Hidden, llama8QKV, BF16),
						sgemm("qkv-wgrad", llama8QKV, llama8Hidden, t, BF16),
					}},
					{Name: "dp", Ops: []StreamOp{
						times(scomm("ar-down", AllReduce, 28*mib, "down-wgrad"), 4),
						times(scomm("ar-gate-up", AllReduce, 28*mib, "gate-up-wgrad"), 8),
						scomm("ar-o", AllReduce, 32*mib, "o-wgrad"),
						times(scomm("ar-qkv", AllReduce, 24*mib, "qkv-wgrad"), 2),
					}},
				}
		})

	// Serving: a memory-bound decode layer, two micro-batches so one's
	// tensor-parallel all-reduces run under the other's GEMMs.
	add("llama3-70b-tp-decode-layer",
		"A decode layer in two micro-batches: memory-bound GEMMs and the attention's KV-cache read, each all-reduce feeding the next GEMM of its micro-batch while the other micro-batch computes.",
		2, true, func(n int) (string, []StreamSpec) {
			const b = 64 // sequences per micro-batch
			kv := ByteSize(b * 4096 * (8 / min(n, 8)) * 128 * 2 * bf16 / 2)
			ar := ByteSize(b * llama70Hidden * bf16)
			var comp, comm []StreamOp
			for _, mb := range []string{"a", "b"} {
				comp = append(comp,
					sgemm(mb+"-qkv", b, llama70QKV/n, llama70Hidden, BF16),
					sstream(mb+"-attn", kv),
					sgemm(mb+"-o-proj", b, llama70Hidden, llama70Hidden/n, BF16))
				comm = append(comm, scomm(mb+"-ar-o", AllReduce, ar, mb+"-o-proj"))
			}
			for _, mb := range []string{"a", "b"} {
				comp = append(comp,
					sgemm(mb+"-gate-up", b, 2*llama70FFN/n, llama70Hidden, BF16, mb+"-ar-o"),
					sgemm(mb+"-down", b, llama70Hidden, llama70FFN/n, BF16))
				comm = append(comm, scomm(mb+"-ar-down", AllReduce, ar, mb+"-down"))
			}
			return fmt.Sprintf("%s, shapes from serving at TP=%d, two micro-batches of %d decoding sequences with 4096 tokens of context: per micro-batch the QKV, output, fused gate+up and down projection shards (M = %d), the attention's read of its KV cache as a stream op (it reads and writes half the %s of K and V a GPU holds) and the two all-reduces of the %s layer output", srcLlama70, n, b, b, (2 * kv).Human(), ar.Human()),
				[]StreamSpec{{Name: "compute", Ops: comp}, {Name: "tp", Ops: comm}}
		})

	// One GPU: offload to and reload from host memory over PCIe.
	add("llama3-8b-act-offload-d2h",
		"Activation offload in a forward pass: each layer's output goes to host memory while the next layer computes, so only the last copy stays exposed.",
		1, true, func(n int) (string, []StreamSpec) {
			const t = 4096
			var comp, copies []StreamOp
			for l := range 4 {
				s := fmt.Sprintf("l%d-", l)
				comp = append(comp,
					sgemm(s+"qkv", t, llama8QKV, llama8Hidden, BF16),
					sgemm(s+"o-proj", t, llama8Hidden, llama8Hidden, BF16),
					sgemm(s+"gate-up", t, 2*llama8FFN, llama8Hidden, BF16),
					sgemm(s+"down", t, llama8Hidden, llama8FFN, BF16))
				copies = append(copies, scomm(s+"offload", DeviceToHost, ByteSize(t*llama8Hidden*bf16), s+"down"))
			}
			return fmt.Sprintf("%s, shapes from one GPU training with CPU activation offload, %d tokens: four layers' QKV, output, fused gate+up and down projections, each layer's output (%d x %d x 2B) copied to pinned host memory as the down projection writes it", srcLlama8, t, t, llama8Hidden),
				[]StreamSpec{{Name: "compute", Ops: comp}, {Name: "offload", Ops: copies}}
		})
	add("llama3-8b-act-reload-h2d",
		"Activation reload in a backward pass: each layer's saved input comes back from host memory ahead of the weight-gradient GEMM that reads it, under the layer's other gradients.",
		1, true, func(n int) (string, []StreamSpec) {
			const t = 4096
			var comp, copies []StreamOp
			for l := range 4 {
				s := fmt.Sprintf("l%d-", l)
				copies = append(copies, scomm(s+"reload", HostToDevice, ByteSize(t*llama8Hidden*bf16)))
				comp = append(comp,
					sgemm(s+"down-dgrad", t, llama8FFN, llama8Hidden, BF16),
					sgemm(s+"gate-up-dgrad", t, llama8Hidden, 2*llama8FFN, BF16),
					sgemm(s+"o-dgrad", t, llama8Hidden, llama8Hidden, BF16),
					sgemm(s+"qkv-wgrad", llama8Hidden, llama8QKV, t, BF16, s+"reload"))
			}
			return fmt.Sprintf("%s, shapes from one GPU training with CPU activation offload, %d tokens: four layers' backward, each reloading its saved input (%d x %d x 2B) from pinned host memory to feed the QKV weight gradient (%dx%dx%d, A = the input transposed) after the down, gate+up and output input gradients", srcLlama8, t, t, llama8Hidden, llama8Hidden, llama8QKV, t),
				[]StreamSpec{{Name: "reload", Ops: copies}, {Name: "compute", Ops: comp}}
		})
	for _, chunks := range []int{1, 4} {
		suffix, note, how := "", "A reloaded activation feeding one GEMM whole: a chain, with nothing to overlap, the reference for its decomposition.", "whole"
		if chunks > 1 {
			suffix = fmt.Sprintf("-decomp%d", chunks)
			note = fmt.Sprintf("A reloaded activation feeding a GEMM in %d chunks: each slice of rows is multiplied as soon as it arrives over PCIe.", chunks)
			how = fmt.Sprintf("decomposed into %d chunks of rows", chunks)
		}
		add("llama3-8b-act-reload-h2d-gemm"+suffix, note, 1, chunks > 1, func(n int) (string, []StreamSpec) {
			const t = 4096
			up := sgemm("gate-up", t, 2*llama8FFN, llama8Hidden, BF16, "reload")
			if chunks > 1 {
				up.Decompose = chunks
			}
			return fmt.Sprintf("%s, shapes from one GPU recomputing with CPU activation offload, %d tokens: the reload of a layer's saved input (%d x %d x 2B) from pinned host memory feeding its fused gate+up projection (%dx%dx%d), %s", srcLlama8, t, t, llama8Hidden, t, 2*llama8FFN, llama8Hidden, how),
				[]StreamSpec{{Name: "reload", Ops: []StreamOp{scomm("reload", HostToDevice, ByteSize(t*llama8Hidden*bf16))}}, {Name: "compute", Ops: []StreamOp{up}}}
		})
	}
	return out
}
