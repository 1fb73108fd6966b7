package scenarios

import (
	"fmt"
	"strconv"
	"strings"
)

// Model dimensions the built-in shapes come from.
const (
	// Llama-3 70B: hidden 8192, FFN 28672, 64 query / 8 KV heads of 128, vocab 128256.
	llama70Hidden = 8192
	llama70FFN    = 28672
	llama70QKV    = (64 + 2*8) * 128 // 10240
	llama70Vocab  = 128256

	// Llama-3 405B: hidden 16384, FFN 53248, 128 query / 8 KV heads of 128.
	llama405Hidden = 16384
	llama405FFN    = 53248
	llama405QKV    = (128 + 2*8) * 128 // 18432

	// GPT-3 175B: hidden 12288, FFN 49152, 96 heads of 128 (no grouped KV).
	gpt3Hidden = 12288
	gpt3FFN    = 49152
	gpt3QKV    = 3 * 96 * 128 // 36864

	// Mixtral 8x22B: hidden 6144, expert FFN 16384, 8 experts, top-2,
	// 48 query / 8 KV heads of 128.
	mixtralHidden  = 6144
	mixtralFFN     = 16384
	mixtralQKV     = (48 + 2*8) * 128 // 8192
	mixtralExperts = 8
	mixtralTopK    = 2

	// tp is the tensor-parallel degree of the TP scenarios.
	tp = 8
	// bf16 is the bytes of a bf16 or fp16 activation or weight element.
	bf16 = 2

	mib = ByteSize(1 << 20)
)

// Source prefixes naming each model with the dimensions the shapes use.
const (
	srcLlama70  = "Llama-3 70B (hidden 8192, FFN 28672, 64 q / 8 kv heads x 128, vocab 128256)"
	srcLlama405 = "Llama-3 405B (hidden 16384, FFN 53248, 128 q / 8 kv heads x 128)"
	srcGPT3     = "GPT-3 175B (hidden 12288, FFN 49152, 96 heads x 128)"
	srcMixtral  = "Mixtral 8x22B (hidden 6144, expert FFN 16384, 8 experts top-2, 48 q / 8 kv heads x 128)"
)

// suiteGPUs is the GPU count the built-in suite runs on, the one its
// notes on what each scenario shows were written for.
const suiteGPUs = 2

// Builtin returns c3lab's built-in scenario suite, a new slice on every
// call (callers may change it freely): the pair scenarios, the host-copy
// pairs of one GPU (suite_host.go), then the stream and layer scenarios
// (format 2, suite_graph.go).
//
// Every pair scenario pairs a compute op from a real LLM layer with the
// collective that runs next to it in that parallelism, on 2 GPUs of an
// H200 node with the default strategy. The lab runs on 2 GPUs, so each
// collective is sized so that a GPU sends what it sends in the real run:
// at TP=8 a ring all-gather or reduce-scatter sends 7 shards per GPU and a
// ring all-reduce 1.75x its buffer, so those appear here as one exchange of
// that many bytes; FSDP=2, EP=2 and DP=2 map onto the pair directly.
//
// Names say the parallelism the shapes come from (tp, fsdp, ep, ulysses,
// dp) but no degree, and end in the GPU count the scenario runs on
// (-2gpu, -1gpu); c3lab sweep --gpus moves a built-in to another count and
// names it for that count (OnGPUs, Find). Sources say where the shapes
// come from ("shapes from TP=8 ..."); each description ends with what runs,
// generated from the scenario's fields (Scenario.Runs). Names the suite had
// before still resolve (Find, Renamed).
//
// Sizes were chosen from the rates measured on 2 x H200 (H200Rates: each
// op's isolated time, measured or interpolated from measured sizes and
// shapes) so that the 36 pairs split 12 GEMM-long, 12 balanced (T_comm /
// T_comp within [0.67, 1.5]) and 12 comm-long:
//
//	name                                                     compute                     comm                   T_comp T_comm ratio  class
//	llama3-70b-tp-qkv-ag-224m-2gpu                           gemm 16384x1280x8192 bf16   all-gather 224MiB       0.454  0.926  2.04  comm-long
//	llama3-70b-tp-ffn-gate-up-ag-112m-2gpu                   gemm 8192x7168x8192 bf16    all-gather 112MiB       1.244  0.486  0.39  gemm-long
//	llama3-70b-tp-swiglu-stream-ag-224m-2gpu                 stream 224MiB               all-gather 224MiB       0.123  0.926  7.53  comm-long
//	llama3-405b-tp-qkv-ag-224m-2gpu                          gemm 8192x2304x16384 bf16   all-gather 224MiB       0.799  0.926  1.16  balanced
//	llama3-405b-tp-ffn-gate-up-fp8-ag-112m-2gpu              gemm 4096x13312x16384 fp8   all-gather 112MiB       1.304  0.486  0.37  gemm-long
//	gpt3-175b-tp-qkv-ag-84m-2gpu                             gemm 4096x4608x12288 fp16   all-gather 84MiB        0.615  0.372  0.61  gemm-long
//	llama3-70b-tp-o-proj-rs-224m-2gpu                        gemm 16384x8192x1024 bf16   reduce-scatter 224MiB   0.400  0.967  2.42  comm-long
//	llama3-70b-tp-ffn-down-rs-112m-2gpu                      gemm 8192x8192x3584 bf16    reduce-scatter 112MiB   0.659  0.516  0.78  balanced
//	gpt3-175b-tp-o-proj-rs-168m-2gpu                         gemm 8192x12288x1536 fp16   reduce-scatter 168MiB   0.432  0.747  1.73  comm-long
//	llama3-70b-fsdp-ffn-up-ag-224m-2gpu                      gemm 4096x28672x8192 bf16   all-gather 224MiB       2.466  0.926  0.38  gemm-long
//	llama3-70b-fsdp-lm-head-ag-1002m-2gpu                    gemm 1024x128256x8192 bf16  all-gather 1002MiB      2.795  3.661  1.31  balanced
//	llama3-405b-fsdp-o-proj-ag-256m-2gpu                     gemm 4096x16384x16384 bf16  all-gather 256MiB       2.870  1.047  0.36  gemm-long
//	mixtral-8x22b-fsdp-expert-up-ag-96m-2gpu                 gemm 1536x16384x6144 bf16   all-gather 96MiB        0.411  0.419  1.02  balanced
//	llama3-405b-fsdp-qkv-mb128-ag-288m-2gpu                  gemm 128x18432x16384 bf16   all-gather 288MiB       0.159  1.164  7.31  comm-long
//	gpt3-175b-fsdp-ffn-up-mb16-ag-576m-2gpu                  gemm 16x49152x12288 fp16    all-gather 576MiB       0.297  2.214  7.44  comm-long
//	llama3-70b-fsdp-ffn-up-wgrad-rs-224m-2gpu                gemm 8192x28672x1536 bf16   reduce-scatter 224MiB   0.947  0.967  1.02  balanced
//	llama3-405b-fsdp-qkv-wgrad-mb256-rs-288m-2gpu            gemm 16384x18432x256 bf16   reduce-scatter 288MiB   0.296  1.201  4.05  comm-long
//	mixtral-8x22b-fsdp-expert-down-dgrad-rs-96m-2gpu         gemm 4096x16384x6144 bf16   reduce-scatter 96MiB    1.081  0.449  0.42  gemm-long
//	mixtral-8x22b-ep-expert-gate-up-a2a-96m-2gpu             gemm 2048x32768x6144 bf16   all-to-all 96MiB        1.078  0.207  0.19  gemm-long
//	mixtral-8x22b-ep-expert-down-a2a-192m-2gpu               gemm 4096x6144x16384 bf16   all-to-all 192MiB       1.060  0.373  0.35  gemm-long
//	mixtral-8x22b-ep-router-a2a-192m-2gpu                    gemm 8192x8x6144 bf16       all-to-all 192MiB       0.034  0.373 11.10  comm-long
//	mixtral-8x22b-ep-permute-stream-a2a-96m-2gpu             stream 96MiB                all-to-all 96MiB        0.058  0.207  3.56  comm-long
//	mixtral-8x22b-ep-o-proj-a2a-96m-2gpu                     gemm 2048x6144x6144 bf16    all-to-all 96MiB        0.209  0.207  0.99  balanced
//	mixtral-8x22b-ep-expert-down-mb512-a2a-72m-2gpu          gemm 512x6144x16384 bf16    all-to-all 72MiB        0.149  0.162  1.09  balanced
//	mixtral-8x22b-ep-decode-expert-up-a2a-18m-2gpu           gemm 64x16384x6144 bf16     all-to-all 18MiB        0.058  0.067  1.15  balanced
//	mixtral-8x22b-ep-decode-expert-gate-up-a2a-48m-2gpu      gemm 128x32768x6144 bf16    all-to-all 48MiB        0.114  0.119  1.04  balanced
//	mixtral-8x22b-ep-decode-expert-gate-up-fp8-a2a-36m-2gpu  gemm 256x32768x6144 fp8     all-to-all 36MiB        0.098  0.097  0.99  balanced
//	mixtral-8x22b-ep-decode-expert-down-a2a-144m-2gpu        gemm 32x6144x16384 bf16     all-to-all 144MiB       0.060  0.290  4.80  comm-long
//	llama3-70b-ulysses-qkv-a2a-320m-2gpu                     gemm 16384x10240x8192 bf16  all-to-all 320MiB       3.562  0.644  0.18  gemm-long
//	llama3-405b-ulysses-o-proj-a2a-256m-2gpu                 gemm 8192x16384x16384 bf16  all-to-all 256MiB       6.014  0.559  0.09  gemm-long
//	gpt3-175b-tp-dp-qkv-wgrad-ar-192m-2gpu                   gemm 12288x4608x4096 fp16   all-reduce 192MiB       0.635  0.680  1.07  balanced
//	llama3-70b-tp-dp-ffn-down-wgrad-ar-64m-2gpu              gemm 3584x8192x8192 bf16    all-reduce 64MiB        0.631  0.250  0.40  gemm-long
//	llama3-70b-tp-dp-qkv-wgrad-mb256-ar-16m-2gpu             gemm 8192x1280x256 bf16     all-reduce 16MiB        0.020  0.086  4.22  comm-long
//	llama3-70b-tp-dp-adam-stream-ar-160m-2gpu                stream 1GiB                 all-reduce 160MiB       0.529  0.572  1.08  balanced
//	llama3-405b-tp-decode-ffn-gate-up-fp8-ar-224m-2gpu       gemm 128x13312x16384 fp8    all-reduce 224MiB       0.067  0.787 11.71  comm-long
//	mixtral-8x22b-dp-qkv-wgrad-ar-96m-2gpu                   gemm 6144x8192x8192 bf16    all-reduce 96MiB        1.081  0.357  0.33  gemm-long
//
// (times in ms; TestBuiltinMeasuredClasses recomputes this table.)
func Builtin() []Scenario {
	entries := builtins()
	out := make([]Scenario, len(entries))
	for i, e := range entries {
		out[i] = e.on(e.home())
	}
	return out
}

// builtin is one scenario of the suite before it is put on a GPU count:
// its note on what it shows (on its home GPU count) and where its shapes
// come from, and either its one pair of ops or, for a stream scenario,
// the streams built for a GPU count.
type builtin struct {
	name, note, source string
	compute            ComputeOp
	comm               CommOp
	// gpus is the GPU count the note was written for; 0 means suiteGPUs.
	gpus int
	// graph, when set, makes the built-in a stream scenario (format 2):
	// its source and streams on gpus GPUs.
	graph func(gpus int) (source string, streams []StreamSpec)
	// overlap says a stream scenario is meant to overlap (its S_ideal
	// must be above 1), as a plain chain is not.
	overlap bool
}

// home is the GPU count the scenario is built for.
func (b builtin) home() int {
	if b.gpus > 0 {
		return b.gpus
	}
	return suiteGPUs
}

// minGPUs is the fewest GPUs the built-in runs on.
func (b builtin) minGPUs() int {
	if b.graph == nil {
		return b.comm.Collective.MinGPUs()
	}
	_, streams := b.graph(b.home())
	for _, ss := range streams {
		for _, o := range ss.Ops {
			if o.Kind.IsComm() && !Collective(o.Kind).IsHostCopy() {
				return 2
			}
		}
	}
	return 1
}

// gpuName is a built-in's name on gpus GPUs: the base name and the GPU
// count it runs on ("llama3-70b-tp-qkv-ag-224m-2gpu").
func gpuName(base string, gpus int) string { return fmt.Sprintf("%s-%dgpu", base, gpus) }

// splitGPUName splits "base-4gpu" into base and 4.
func splitGPUName(name string) (base string, gpus int, ok bool) {
	i := strings.LastIndex(name, "-")
	if i <= 0 || !strings.HasSuffix(name, "gpu") {
		return "", 0, false
	}
	n, err := strconv.Atoi(name[i+1 : len(name)-len("gpu")])
	if err != nil || n < 1 || strconv.Itoa(n) != name[i+1:len(name)-len("gpu")] {
		return "", 0, false
	}
	return name[:i], n, true
}

// on is the scenario on gpus GPUs, named for that count. Its description
// is the note, where the note was written for that many GPUs, and then
// what runs.
func (b builtin) on(gpus int) Scenario {
	sc := Scenario{
		Name: gpuName(b.name, gpus), Source: b.source, GPUs: gpus, Profile: "h200",
		Compute: b.compute, Comm: b.comm,
	}
	note := b.note
	if gpus != b.home() {
		note = "The suite's shapes on a GPU count its note was not written for: what they show here is for you to measure."
	}
	if b.graph != nil {
		sc.Source, sc.Streams = b.graph(gpus)
		sc = sc.WithLead()
		sc.Description = note + " " + graphRuns(sc) + "."
		return sc
	}
	sc.Description = note + " " + sc.Runs() + "."
	return sc
}

// sameOps reports whether two scenarios run the same ops.
func sameOps(a, b Scenario) bool {
	a.Name, a.Description, a.Source, a.GPUs, a.Profile, a.Reps, a.Strategy = "", "", "", 0, "", 0, Strategy{}
	b.Name, b.Description, b.Source, b.GPUs, b.Profile, b.Reps, b.Strategy = "", "", "", 0, "", 0, Strategy{}
	return a.Equal(b)
}

// OnGPUs returns sc on gpus GPUs (c3lab sweep --gpus). A built-in keeps its
// ops (a stream scenario's are rebuilt for the count), is named for the
// new count and has its texts rewritten for it; any other scenario only
// changes its GPU count.
func OnGPUs(sc Scenario, gpus int) Scenario {
	base, n, ok := splitGPUName(sc.Name)
	if ok {
		for _, b := range builtins() {
			if b.name != base || !(sameOps(sc, b.on(n)) || sameOps(sc, b.on(sc.GPUs))) {
				continue
			}
			out := b.on(gpus)
			out.Reps, out.Strategy, out.Profile = sc.Reps, sc.Strategy, sc.Profile
			return out
		}
	}
	sc.GPUs = gpus
	return sc
}

// builtins lists the suite.
func builtins() []builtin {
	gemm := func(m, n, k int, dt DType) ComputeOp {
		return ComputeOp{Kind: GEMM, M: m, N: n, K: k, DType: dt}
	}
	stream := func(b ByteSize) ComputeOp { return ComputeOp{Kind: Stream, Bytes: b} }
	var out []builtin
	add := func(name, note, source string, c ComputeOp, coll Collective, bytes ByteSize) {
		out = append(out, builtin{name: name, note: note, source: source, compute: c, comm: CommOp{Collective: coll, Bytes: bytes}})
	}

	// Tensor parallelism with sequence parallelism (Megatron-style): an
	// all-gather of the sequence-sharded activations feeds each
	// column-parallel GEMM and a reduce-scatter drains each row-parallel
	// one, overlapped chunk by chunk (async tensor parallelism).
	add("llama3-70b-tp-qkv-ag-224m",
		"A skinny QKV shard finishes before the sequence-parallel all-gather beside it, so the collective sets the pace and every SM the GEMM takes from it shows.",
		srcLlama70+", shapes from TP=8 with sequence parallelism, 16384 tokens: fused QKV projection, per-GPU shard (16384x1280x8192), next to the all-gather of the layer-norm output (224MiB per GPU: the seven 2048-token shards of 32MiB a GPU sends at TP=8)",
		gemm(16384, llama70QKV/tp, llama70Hidden, BF16), AllGather, (tp-1)*(16384/tp)*llama70Hidden*bf16)
	add("llama3-70b-tp-ffn-gate-up-ag-112m",
		"The fat gate/up GEMM runs four times longer than its all-gather, so overlap can save a fifth at most and the lesson is to keep the collective from stretching the GEMM.",
		srcLlama70+", shapes from TP=8 with sequence parallelism, 8192 tokens: fused gate+up projection, per-GPU shard (8192x7168x8192), next to the all-gather of the layer-norm output (112MiB per GPU: the seven 1024-token shards of 16MiB a GPU sends at TP=8)",
		gemm(8192, 2*llama70FFN/tp, llama70Hidden, BF16), AllGather, (tp-1)*(8192/tp)*llama70Hidden*bf16)
	add("llama3-70b-tp-swiglu-stream-ag-224m",
		"An elementwise op that only streams HBM, five times shorter than the all-gather: the cleanest view of a collective competing for memory bandwidth rather than SMs.",
		srcLlama70+", shapes from TP=8 with sequence parallelism, 16384 tokens: the SwiGLU activation, a memory-bound pass over the fused gate+up output shard (16384 x 7168 x 2B = 224MiB), next to the all-gather of the next chunk's layer-norm output (224MiB per GPU: the seven shards a GPU sends at TP=8)",
		stream((16384*2*llama70FFN/tp)*bf16), AllGather, (tp-1)*(16384/tp)*llama70Hidden*bf16)
	add("llama3-405b-tp-qkv-ag-224m",
		"A QKV GEMM only 40 % longer than its all-gather: near enough to balanced that launch order and SM reservation decide whether overlap pays.",
		srcLlama405+", shapes from TP=8 with sequence parallelism, 8192 tokens: fused QKV projection, per-GPU shard (8192x2304x16384), next to the all-gather of the layer-norm output (224MiB per GPU: the seven 1024-token shards of 32MiB a GPU sends at TP=8)",
		gemm(8192, llama405QKV/tp, llama405Hidden, BF16), AllGather, (tp-1)*(8192/tp)*llama405Hidden*bf16)
	add("llama3-405b-tp-ffn-gate-up-fp8-ag-112m",
		"Even at FP8 tensor-core speed the gate/up GEMM outlasts its all-gather four times: a compute-bound GEMM that should lose as few SMs as possible.",
		srcLlama405+", shapes from FP8 prefill, TP=8 with sequence parallelism, 4096 tokens: fused gate+up projection in FP8, per-GPU shard (4096x13312x16384), next to the all-gather of the bf16 layer-norm output (112MiB per GPU: the seven 512-token shards of 16MiB a GPU sends at TP=8)",
		gemm(4096, 2*llama405FFN/tp, llama405Hidden, FP8), AllGather, (tp-1)*(4096/tp)*llama405Hidden*bf16)
	add("gpt3-175b-tp-qkv-ag-84m",
		"An FP16 QKV shard nearly three times longer than its all-gather: the classic GEMM-long pair, where C3 can at best hide the collective.",
		srcGPT3+", shapes from FP16 training, TP=8 with sequence parallelism, 4096 tokens: fused QKV projection, per-GPU shard (4096x4608x12288), next to the all-gather of the layer-norm output (84MiB per GPU: the seven 512-token shards of 12MiB a GPU sends at TP=8)",
		gemm(4096, gpt3QKV/tp, gpt3Hidden, FP16), AllGather, (tp-1)*(4096/tp)*gpt3Hidden*bf16)
	add("llama3-70b-tp-o-proj-rs-224m",
		"A reduce-scatter must add as it moves, so it needs SMs even when copy engines carry its bytes: a comm-long case for a small reduction partition.",
		srcLlama70+", shapes from TP=8 with sequence parallelism, 16384 tokens: attention output projection, per-GPU shard (16384x8192x1024), next to the reduce-scatter of the previous chunk's partial sums (224MiB per GPU: the seven 2048-token shards of 32MiB a GPU sends at TP=8)",
		gemm(16384, llama70Hidden, llama70Hidden/tp, BF16), ReduceScatter, (tp-1)*(16384/tp)*llama70Hidden*bf16)
	add("llama3-70b-tp-ffn-down-rs-112m",
		"The down projection's long K keeps it twice as long as its reduce-scatter, so the collective's SMs cost the GEMM more than overlap saves unless they are few.",
		srcLlama70+", shapes from TP=8 with sequence parallelism, 8192 tokens: FFN down projection, per-GPU shard (8192x8192x3584), next to the reduce-scatter of the previous chunk's partial sums (112MiB per GPU: the seven 1024-token shards of 16MiB a GPU sends at TP=8)",
		gemm(8192, llama70Hidden, llama70FFN/tp, BF16), ReduceScatter, (tp-1)*(8192/tp)*llama70Hidden*bf16)
	add("gpt3-175b-tp-o-proj-rs-168m",
		"Output projection and reduce-scatter within 10 % of each other: the balanced case with the most to gain and the most to lose to interference.",
		srcGPT3+", shapes from FP16 training, TP=8 with sequence parallelism, 8192 tokens: attention output projection, per-GPU shard (8192x12288x1536), next to the reduce-scatter of the previous chunk's partial sums (168MiB per GPU: the seven 1024-token shards of 24MiB a GPU sends at TP=8)",
		gemm(8192, gpt3Hidden, gpt3Hidden/tp, FP16), ReduceScatter, (tp-1)*(8192/tp)*gpt3Hidden*bf16)

	// Fully sharded data parallelism over the pair: each layer's GEMM runs
	// next to the all-gather of the next layer's weight shards (forward)
	// or the reduce-scatter of the last layer's gradients (backward).
	add("llama3-70b-fsdp-ffn-up-ag-224m",
		"FSDP's prefetch of the next layer's weights under a GEMM two and a half times longer: the all-gather hides completely if it costs the GEMM no SMs, the textbook case for copy engines.",
		srcLlama70+", shapes from FSDP=2 training, 4096 tokens per GPU: FFN up projection (4096x28672x8192) next to the all-gather of the next layer's up-projection weight (448MiB, a 224MiB shard per GPU)",
		gemm(4096, llama70FFN, llama70Hidden, BF16), AllGather, llama70Hidden*llama70FFN*bf16/2)
	add("llama3-70b-fsdp-lm-head-ag-1002m",
		"The biggest transfer in the suite, a 1GiB weight shard, against a vocabulary-wide GEMM of about the same length: balanced at a scale where bandwidth, not latency, decides.",
		srcLlama70+", shapes from FSDP=2 training, 1024 tokens per GPU: LM head (1024x128256x8192) next to the all-gather of the 2004MiB input-embedding table that FSDP prefetches for the next micro-batch (a 1002MiB shard per GPU)",
		gemm(1024, llama70Vocab, llama70Hidden, BF16), AllGather, llama70Vocab*llama70Hidden*bf16/2)
	add("llama3-405b-fsdp-o-proj-ag-256m",
		"A square compute-bound GEMM almost three times longer than the weight all-gather beside it: GEMM-long, so every SM the collective takes shows as GEMM slowdown.",
		srcLlama405+", shapes from FSDP=2 training, 4096 tokens per GPU: attention output projection (4096x16384x16384) next to the all-gather of the next layer's output-projection weight (512MiB, a 256MiB shard per GPU)",
		gemm(4096, llama405Hidden, llama405Hidden, BF16), AllGather, llama405Hidden*llama405Hidden*bf16/2)
	add("mixtral-8x22b-fsdp-expert-up-ag-96m",
		"Expert weights streamed in by FSDP while another expert computes, balanced at 0.4 ms, where launch overheads start to count.",
		srcMixtral+", shapes from FSDP=2 fine-tuning: one expert's up projection on the 1536 tokens routed to it (1536x16384x6144) next to the all-gather of the next expert's up-projection weight (192MiB, a 96MiB shard per GPU)",
		gemm(1536, mixtralFFN, mixtralHidden, BF16), AllGather, mixtralHidden*mixtralFFN*bf16/2)
	add("llama3-405b-fsdp-qkv-mb128-ag-288m",
		"A memory-bound GEMM that needs few SMs beside a weight all-gather five times longer: taking SMs from the GEMM for the collective costs almost nothing here.",
		srcLlama405+", shapes from FSDP=2 fine-tuning with 128-token micro-batches: fused QKV projection (128x18432x16384, memory-bound on its 576MiB weight) next to the all-gather of the next layer's QKV weight (576MiB, a 288MiB shard per GPU)",
		gemm(128, llama405QKV, llama405Hidden, BF16), AllGather, llama405Hidden*llama405QKV*bf16/2)
	add("gpt3-175b-fsdp-ffn-up-mb16-ag-576m",
		"A GEMV-like 16-token GEMM that only streams its weight, against a weight all-gather that competes for the same HBM: the paper's ideal is out of reach and the bound is the target.",
		srcGPT3+", shapes from FP16, FSDP=2 with 16-token micro-batches: FFN up projection (16x49152x12288, memory-bound on its 1152MiB weight) next to the all-gather of the next layer's up-projection weight (1152MiB, a 576MiB shard per GPU)",
		gemm(16, gpt3FFN, gpt3Hidden, FP16), AllGather, gpt3Hidden*gpt3FFN*bf16/2)
	add("llama3-70b-fsdp-ffn-up-wgrad-rs-224m",
		"FSDP's gradient reduce-scatter against a weight-gradient GEMM of equal length: balanced, but the reduction needs SMs, so copy engines alone cannot carry it.",
		srcLlama70+", shapes from FSDP=2 backward, 1536 tokens per GPU: weight gradient of the FFN up projection (8192x28672x1536, K = tokens) next to the reduce-scatter of the previous layer's up-projection gradient (448MiB, a 224MiB shard per GPU)",
		gemm(llama70Hidden, llama70FFN, 1536, BF16), ReduceScatter, llama70Hidden*llama70FFN*bf16/2)
	add("llama3-405b-fsdp-qkv-wgrad-mb256-rs-288m",
		"With only 256 tokens of K the weight-gradient GEMM is short and the gradient reduce-scatter dominates: the case for a generous communication partition.",
		srcLlama405+", shapes from FSDP=2 backward with 256-token micro-batches: weight gradient of the fused QKV projection (16384x18432x256) next to the reduce-scatter of the previous layer's QKV gradient (576MiB, a 288MiB shard per GPU)",
		gemm(llama405Hidden, llama405QKV, 256, BF16), ReduceScatter, llama405Hidden*llama405QKV*bf16/2)
	add("mixtral-8x22b-fsdp-expert-down-dgrad-rs-96m",
		"A compute-bound input-gradient GEMM more than twice as long as the gradient reduce-scatter: the only question is how little the collective may slow it.",
		srcMixtral+", shapes from FSDP=2 backward: input gradient of one expert's down projection for its 4096 routed tokens (4096x16384x6144) next to the reduce-scatter of another expert's down-projection gradient (192MiB, a 96MiB shard per GPU)",
		gemm(4096, mixtralFFN, mixtralHidden, BF16), ReduceScatter, mixtralFFN*mixtralHidden*bf16/2)

	// Expert parallelism: 4 of Mixtral's 8 experts per GPU; the dispatch
	// all-to-all sends each token's top-2 copies to their experts and the
	// combine brings them back. Serving scenarios use two-batch overlap:
	// one micro-batch computes while the other communicates.
	const tokenBytes = mixtralTopK * mixtralHidden * bf16 // 24KiB per token
	// perExpert is the average number of tokens one expert receives when
	// each of the 2 GPUs routes t tokens to their top-2 of 8 experts.
	perExpert := func(t int) int { return 2 * t * mixtralTopK / mixtralExperts }
	add("mixtral-8x22b-ep-expert-gate-up-a2a-96m",
		"A training-size expert GEMM eight times longer than the token dispatch: the all-to-all should cost it nothing, and on copy engines it does not need a single SM.",
		srcMixtral+", shapes from EP=2 (4 experts per GPU), 4096 tokens per GPU: one expert's fused gate+up projection on its average 2048 routed tokens (2048x32768x6144) next to the dispatch all-to-all of the next micro-batch (4096 tokens x top-2 x 6144 x 2B = 96MiB per GPU)",
		gemm(perExpert(4096), 2*mixtralFFN, mixtralHidden, BF16), AllToAll, 4096*tokenBytes)
	add("mixtral-8x22b-ep-expert-down-a2a-192m",
		"The combine all-to-all against a long down-projection GEMM: a check that an all-to-all on SMs does not slow the expert by more than it hides.",
		srcMixtral+", shapes from EP=2 (4 experts per GPU), 8192 tokens per GPU: one expert's down projection on its average 4096 routed tokens (4096x6144x16384) next to the combine all-to-all returning the previous micro-batch's expert outputs (8192 tokens x top-2 x 6144 x 2B = 192MiB per GPU)",
		gemm(perExpert(8192), mixtralHidden, mixtralFFN, BF16), AllToAll, 8192*tokenBytes)
	add("mixtral-8x22b-ep-router-a2a-192m",
		"A router GEMM with N = 8 is pure memory traffic and ends in a tenth of the all-to-all's time: comm-long, with almost nothing to overlap.",
		srcMixtral+", shapes from EP=2 (4 experts per GPU), 8192 tokens per GPU: the router GEMM scoring 8 experts (8192x8x6144, memory-bound on its 96MiB input) next to the dispatch all-to-all of the previous micro-batch (8192 tokens x top-2 x 6144 x 2B = 192MiB per GPU)",
		gemm(8192, mixtralExperts, mixtralHidden, BF16), AllToAll, 8192*tokenBytes)
	add("mixtral-8x22b-ep-permute-stream-a2a-96m",
		"A memory-streaming op against an all-to-all that also reads and writes HBM: HBM contention without tensor cores in the picture.",
		srcMixtral+", shapes from EP=2 (4 experts per GPU), 4096 tokens per GPU: the permutation that groups top-2 token copies by expert (a memory-bound gather over 4096 x 2 x 6144 x 2B = 96MiB) next to the dispatch all-to-all of the previous micro-batch (96MiB per GPU)",
		stream(4096*tokenBytes), AllToAll, 4096*tokenBytes)
	add("mixtral-8x22b-ep-o-proj-a2a-96m",
		"Attention of one micro-batch hides the other's token dispatch, as in two-batch overlap, here balanced within 5 %.",
		srcMixtral+", shapes from EP=2 (4 experts per GPU) with two-batch overlap: attention output projection of a 2048-token micro-batch (2048x6144x6144) next to the dispatch all-to-all of a 4096-token micro-batch (4096 tokens x top-2 x 6144 x 2B = 96MiB per GPU)",
		gemm(2048, mixtralHidden, 48*128, BF16), AllToAll, 4096*tokenBytes)
	add("mixtral-8x22b-ep-expert-down-mb512-a2a-72m",
		"A mid-sized expert GEMM at the edge of compute-bound against a combine all-to-all of the same length: balanced and sensitive to every SM it loses.",
		srcMixtral+", shapes from EP=2 (4 experts per GPU) with two-batch overlap: one expert's down projection for 512 routed tokens (512x6144x16384) next to the combine all-to-all of a 3072-token micro-batch (3072 tokens x top-2 x 6144 x 2B = 72MiB per GPU)",
		gemm(512, mixtralHidden, mixtralFFN, BF16), AllToAll, 3072*tokenBytes)
	add("mixtral-8x22b-ep-decode-expert-up-a2a-18m",
		"A decode-sized expert GEMM that only streams its weight beside a small dispatch all-to-all of about its length: balanced, latency-bound, and both fight for HBM.",
		srcMixtral+", shapes from EP=2 serving with two-batch overlap: one expert's up projection for 64 routed decode tokens (64x16384x6144, memory-bound on its 192MiB weight) next to the dispatch all-to-all of a 768-token prefill chunk (768 tokens x top-2 x 6144 x 2B = 18MiB per GPU)",
		gemm(64, mixtralFFN, mixtralHidden, BF16), AllToAll, 768*tokenBytes)
	add("mixtral-8x22b-ep-decode-expert-gate-up-a2a-48m",
		"A memory-bound expert GEMM and a dispatch all-to-all of equal length: balanced on paper, but both stream HBM, so the bound, not the ideal, is the target.",
		srcMixtral+", shapes from EP=2 serving with two-batch overlap: one expert's fused gate+up projection for 128 routed decode tokens (128x32768x6144, memory-bound on its 384MiB weight) next to the dispatch all-to-all of a 2048-token prefill chunk (2048 tokens x top-2 x 6144 x 2B = 48MiB per GPU)",
		gemm(128, 2*mixtralFFN, mixtralHidden, BF16), AllToAll, 2048*tokenBytes)
	add("mixtral-8x22b-ep-decode-expert-gate-up-fp8-a2a-36m",
		"FP8 halves both the GEMM's weight traffic and the dispatch: a balanced pair under 0.1 ms, where copy-engine launch overhead starts to matter.",
		srcMixtral+", shapes from FP8 serving, EP=2 with two-batch overlap: one expert's fused gate+up projection in FP8 for 256 routed decode tokens (256x32768x6144) next to an FP8 dispatch all-to-all of a 3072-token prefill chunk (3072 tokens x top-2 x 6144 x 1B = 36MiB per GPU)",
		gemm(256, 2*mixtralFFN, mixtralHidden, FP8), AllToAll, 3072*tokenBytes/2)
	add("mixtral-8x22b-ep-decode-expert-down-a2a-144m",
		"A tiny decode GEMM beside a big combine all-to-all: strongly comm-long, so the collective can have every SM it wants.",
		srcMixtral+", shapes from EP=2 serving with two-batch overlap: one expert's down projection for 32 routed decode tokens (32x6144x16384, memory-bound on its 192MiB weight) next to the combine all-to-all of a 6144-token prefill chunk (6144 tokens x top-2 x 6144 x 2B = 144MiB per GPU)",
		gemm(32, mixtralHidden, mixtralFFN, BF16), AllToAll, 6144*tokenBytes)

	// Ulysses (DeepSpeed) sequence parallelism: all-to-alls re-shard the
	// attention inputs from sequence to heads and the outputs back.
	add("llama3-70b-ulysses-qkv-a2a-320m",
		"Long-context sequence parallelism: the QKV GEMM is nine times longer than the head-resharding all-to-all, so overlap hides the collective entirely if the GEMM keeps its SMs.",
		srcLlama70+", shapes from Ulysses sequence parallelism of degree 2, a 32768-token sequence: fused QKV projection of the local 16384 tokens (16384x10240x8192) next to the all-to-all re-sharding the previous chunk's Q, K and V from sequence to heads (16384 x 10240 x 2B = 320MiB per GPU)",
		gemm(16384, llama70QKV, llama70Hidden, BF16), AllToAll, 16384*llama70QKV*bf16)
	add("llama3-405b-ulysses-o-proj-a2a-256m",
		"A GEMM seventeen times longer than its all-to-all leaves an ideal speedup barely above 1x: a control case where no strategy should change much.",
		srcLlama405+", shapes from Ulysses sequence parallelism of degree 2, a 16384-token sequence: attention output projection of the local 8192 tokens (8192x16384x16384) next to the all-to-all returning the attention output from heads to sequence shards (8192 x 16384 x 2B = 256MiB per GPU)",
		gemm(8192, llama405Hidden, llama405Hidden, BF16), AllToAll, 8192*llama405Hidden*bf16)

	// Data parallelism: gradient buckets are all-reduced while the backward
	// pass goes on; at TP=8 a tensor-parallel all-reduce sends 1.75x its
	// buffer per GPU.
	add("gpt3-175b-tp-dp-qkv-wgrad-ar-192m",
		"A gradient all-reduce against a weight-gradient GEMM of equal length: balanced, and an all-reduce needs SMs for its additions however its bytes travel.",
		srcGPT3+", shapes from FP16 training, TP=8 x DP=2, 4096 tokens per replica: weight gradient of the QKV shard (12288x4608x4096, K = tokens) next to the data-parallel all-reduce of a 192MiB gradient bucket",
		gemm(gpt3Hidden, gpt3QKV/tp, 4096, FP16), AllReduce, 192*mib)
	add("llama3-70b-tp-dp-ffn-down-wgrad-ar-64m",
		"A long weight-gradient GEMM hides a small gradient bucket easily, so the all-reduce should take as few SMs as it can.",
		srcLlama70+", shapes from TP=8 x DP=2, 8192 tokens per replica: weight gradient of the FFN down-projection shard (3584x8192x8192) next to the data-parallel all-reduce of a 64MiB gradient bucket",
		gemm(llama70FFN/tp, llama70Hidden, 8192, BF16), AllReduce, 64*mib)
	add("llama3-70b-tp-dp-qkv-wgrad-mb256-ar-16m",
		"The smallest message in the suite beside a microsecond-scale GEMM: latency, not bandwidth, dominates, and copy-engine launch cost shows.",
		srcLlama70+", shapes from TP=8 x DP=2 with 256-token micro-batches: weight gradient of the QKV shard (8192x1280x256) next to the data-parallel all-reduce of a 16MiB gradient bucket",
		gemm(llama70Hidden, llama70QKV/tp, 256, BF16), AllReduce, 16*mib)
	add("llama3-70b-tp-dp-adam-stream-ar-160m",
		"An optimizer step that only streams HBM beside an all-reduce that needs HBM too: balanced on paper, bounded in practice by shared memory bandwidth.",
		srcLlama70+", shapes from TP=8 x DP=2: fused AdamW step over a slice of 64Mi parameters of FP32 state (weights, gradients and two moments: 1GiB) next to the data-parallel all-reduce of the next 160MiB gradient bucket",
		stream(64*mib*16), AllReduce, 160*mib)
	add("llama3-405b-tp-decode-ffn-gate-up-fp8-ar-224m",
		"Decode and prefill sharing the GPUs: the memory-bound decode GEMM is done in a tenth of the prefill all-reduce's time, leaving little to hide.",
		srcLlama405+", shapes from FP8 serving at TP=8 with chunked prefill: fused gate+up projection shard for a 128-token decode batch (128x13312x16384, memory-bound on its 208MiB FP8 weight) next to the tensor-parallel all-reduce of a 4096-token prefill chunk's output (128MiB; at TP=8 a ring all-reduce moves 1.75x that per GPU, 224MiB)",
		gemm(128, 2*llama405FFN/tp, llama405Hidden, FP8), AllReduce, 4096*llama405Hidden*bf16*2*(tp-1)/tp)
	add("mixtral-8x22b-dp-qkv-wgrad-ar-96m",
		"Attention gradients all-reduced while a weight-gradient GEMM four times longer runs: GEMM-long, the collective should stay out of the GEMM's way.",
		srcMixtral+", shapes from DP=2 for attention, 8192 tokens per replica: weight gradient of the fused QKV projection (6144x8192x8192) next to the data-parallel all-reduce of a 96MiB attention-gradient bucket",
		gemm(mixtralHidden, mixtralQKV, 8192, BF16), AllReduce, 96*mib)
	out = append(out, hostCopySuite()...)
	return append(out, graphBuiltins()...)
}

// Names returns the names of the built-in scenarios, in suite order.
func Names() []string {
	suite := Builtin()
	names := make([]string, len(suite))
	for i, sc := range suite {
		names[i] = sc.Name
	}
	return names
}

// Find returns the built-in scenario called name. A built-in's name ends
// in the GPU count it runs on; the same name with another count
// (llama3-70b-tp-qkv-ag-224m-4gpu) finds it on that many GPUs, as c3lab
// sweep --gpus names it. A name the suite had before (as committed results
// and recordings say) finds the scenario under its current name (Renamed
// tells callers, so they can say so); a scenario re-sized since runs its
// current shapes. On a miss the error is an *UnknownError suggesting the
// closest names.
func Find(name string) (Scenario, error) {
	if now, ok := Renamed(name); ok {
		name = now
	}
	suite := Builtin()
	for _, sc := range suite {
		if sc.Name == name {
			return sc, nil
		}
	}
	if base, n, ok := splitGPUName(name); ok && n <= MaxGPUCount {
		for _, b := range builtins() {
			if b.name == base && n >= b.minGPUs() {
				return b.on(n), nil
			}
		}
	}
	names := make([]string, len(suite))
	for i, sc := range suite {
		names[i] = sc.Name
	}
	return Scenario{}, &UnknownError{Name: name, Suggestions: Closest(name, names, 3)}
}

// MaxGPUCount is the largest GPU count Find puts a built-in on.
const MaxGPUCount = 64

// Renamed returns the current name of a built-in scenario that was called
// old, and whether old is such a former name.
func Renamed(old string) (string, bool) {
	now, ok := renamed()[old]
	return now, ok
}

// renamed maps the suite's former names to its current ones: the names of
// issue 14 (no GPU count, some since re-sized from the rates measured on
// H200s) and, through them, the first names, which stated a parallel
// degree (tp8, fsdp2) that read as the GPU count.
func renamed() map[string]string {
	out := map[string]string{}
	for old, now := range suiteV1Names() {
		out[old] = now
	}
	for first, old := range firstNames() {
		out[first] = out[old]
	}
	return out
}

// UnknownError says that no built-in scenario has the name asked for,
// with up to three close names to suggest.
type UnknownError struct {
	Name        string
	Suggestions []string
}

// Error reads like `unknown scenario "x"; did you mean a, b, c? (c3lab
// scenarios lists all)`.
func (e *UnknownError) Error() string {
	msg := fmt.Sprintf("unknown scenario %q", e.Name)
	if len(e.Suggestions) > 0 {
		msg += "; did you mean " + strings.Join(e.Suggestions, ", ") + "?"
	}
	return msg + " (c3lab scenarios lists all)"
}

// firstNames maps the suite's first names, which stated a parallel degree,
// to its names of issue 14.
func firstNames() map[string]string {
	return map[string]string{
		"llama3-70b-tp8-qkv-ag-224m":                          "llama3-70b-tp-qkv-ag-224m",
		"llama3-70b-tp8-ffn-gate-up-ag-112m":                  "llama3-70b-tp-ffn-gate-up-ag-112m",
		"llama3-70b-tp8-swiglu-stream-ag-224m":                "llama3-70b-tp-swiglu-stream-ag-224m",
		"llama3-405b-tp8-qkv-ag-224m":                         "llama3-405b-tp-qkv-ag-224m",
		"llama3-405b-tp8-ffn-gate-up-fp8-ag-112m":             "llama3-405b-tp-ffn-gate-up-fp8-ag-112m",
		"gpt3-175b-tp8-qkv-ag-84m":                            "gpt3-175b-tp-qkv-ag-84m",
		"llama3-70b-tp8-o-proj-rs-224m":                       "llama3-70b-tp-o-proj-rs-224m",
		"llama3-70b-tp8-ffn-down-rs-112m":                     "llama3-70b-tp-ffn-down-rs-112m",
		"gpt3-175b-tp8-o-proj-rs-168m":                        "gpt3-175b-tp-o-proj-rs-168m",
		"llama3-70b-fsdp2-ffn-up-ag-224m":                     "llama3-70b-fsdp-ffn-up-ag-224m",
		"llama3-70b-fsdp2-lm-head-ag-1002m":                   "llama3-70b-fsdp-lm-head-ag-1002m",
		"llama3-405b-fsdp2-o-proj-ag-256m":                    "llama3-405b-fsdp-o-proj-ag-256m",
		"mixtral-8x22b-fsdp2-expert-up-ag-96m":                "mixtral-8x22b-fsdp-expert-up-ag-96m",
		"llama3-405b-fsdp2-qkv-mb128-ag-288m":                 "llama3-405b-fsdp-qkv-mb128-ag-288m",
		"gpt3-175b-fsdp2-ffn-up-mb16-ag-576m":                 "gpt3-175b-fsdp-ffn-up-mb16-ag-576m",
		"llama3-70b-fsdp2-ffn-up-wgrad-rs-224m":               "llama3-70b-fsdp-ffn-up-wgrad-rs-224m",
		"llama3-405b-fsdp2-qkv-wgrad-mb256-rs-288m":           "llama3-405b-fsdp-qkv-wgrad-mb256-rs-288m",
		"mixtral-8x22b-fsdp2-expert-down-dgrad-rs-96m":        "mixtral-8x22b-fsdp-expert-down-dgrad-rs-96m",
		"mixtral-8x22b-ep2-expert-gate-up-a2a-96m":            "mixtral-8x22b-ep-expert-gate-up-a2a-96m",
		"mixtral-8x22b-ep2-expert-down-a2a-192m":              "mixtral-8x22b-ep-expert-down-a2a-192m",
		"mixtral-8x22b-ep2-router-a2a-192m":                   "mixtral-8x22b-ep-router-a2a-192m",
		"mixtral-8x22b-ep2-permute-stream-a2a-96m":            "mixtral-8x22b-ep-permute-stream-a2a-96m",
		"mixtral-8x22b-ep2-o-proj-a2a-144m":                   "mixtral-8x22b-ep-o-proj-a2a-144m",
		"mixtral-8x22b-ep2-expert-down-mb512-a2a-96m":         "mixtral-8x22b-ep-expert-down-mb512-a2a-96m",
		"mixtral-8x22b-ep2-decode-expert-up-a2a-48m":          "mixtral-8x22b-ep-decode-expert-up-a2a-48m",
		"mixtral-8x22b-ep2-decode-expert-gate-up-a2a-72m":     "mixtral-8x22b-ep-decode-expert-gate-up-a2a-72m",
		"mixtral-8x22b-ep2-decode-expert-gate-up-fp8-a2a-36m": "mixtral-8x22b-ep-decode-expert-gate-up-fp8-a2a-36m",
		"mixtral-8x22b-ep2-decode-expert-down-a2a-144m":       "mixtral-8x22b-ep-decode-expert-down-a2a-144m",
		"llama3-70b-ulysses2-qkv-a2a-320m":                    "llama3-70b-ulysses-qkv-a2a-320m",
		"llama3-405b-ulysses2-o-proj-a2a-256m":                "llama3-405b-ulysses-o-proj-a2a-256m",
		"gpt3-175b-tp8-dp2-qkv-wgrad-ar-256m":                 "gpt3-175b-tp-dp-qkv-wgrad-ar-256m",
		"llama3-70b-tp8-dp2-ffn-down-wgrad-ar-64m":            "llama3-70b-tp-dp-ffn-down-wgrad-ar-64m",
		"llama3-70b-tp8-dp2-qkv-wgrad-mb256-ar-16m":           "llama3-70b-tp-dp-qkv-wgrad-mb256-ar-16m",
		"llama3-70b-tp8-dp2-adam-stream-ar-192m":              "llama3-70b-tp-dp-adam-stream-ar-192m",
		"llama3-405b-tp8-decode-ffn-gate-up-fp8-ar-224m":      "llama3-405b-tp-decode-ffn-gate-up-fp8-ar-224m",
		"mixtral-8x22b-dp2-qkv-wgrad-ar-96m":                  "mixtral-8x22b-dp-qkv-wgrad-ar-96m",
	}
}

// suiteV1Names maps the suite's names of issue 14 to its current ones:
// each name now ends in the GPU count the scenario runs on, and the pairs
// re-sized from the rates measured on H200s end in their new size.
func suiteV1Names() map[string]string {
	return map[string]string{
		"llama3-70b-tp-qkv-ag-224m":                          "llama3-70b-tp-qkv-ag-224m-2gpu",
		"llama3-70b-tp-ffn-gate-up-ag-112m":                  "llama3-70b-tp-ffn-gate-up-ag-112m-2gpu",
		"llama3-70b-tp-swiglu-stream-ag-224m":                "llama3-70b-tp-swiglu-stream-ag-224m-2gpu",
		"llama3-405b-tp-qkv-ag-224m":                         "llama3-405b-tp-qkv-ag-224m-2gpu",
		"llama3-405b-tp-ffn-gate-up-fp8-ag-112m":             "llama3-405b-tp-ffn-gate-up-fp8-ag-112m-2gpu",
		"gpt3-175b-tp-qkv-ag-84m":                            "gpt3-175b-tp-qkv-ag-84m-2gpu",
		"llama3-70b-tp-o-proj-rs-224m":                       "llama3-70b-tp-o-proj-rs-224m-2gpu",
		"llama3-70b-tp-ffn-down-rs-112m":                     "llama3-70b-tp-ffn-down-rs-112m-2gpu",
		"gpt3-175b-tp-o-proj-rs-168m":                        "gpt3-175b-tp-o-proj-rs-168m-2gpu",
		"llama3-70b-fsdp-ffn-up-ag-224m":                     "llama3-70b-fsdp-ffn-up-ag-224m-2gpu",
		"llama3-70b-fsdp-lm-head-ag-1002m":                   "llama3-70b-fsdp-lm-head-ag-1002m-2gpu",
		"llama3-405b-fsdp-o-proj-ag-256m":                    "llama3-405b-fsdp-o-proj-ag-256m-2gpu",
		"mixtral-8x22b-fsdp-expert-up-ag-96m":                "mixtral-8x22b-fsdp-expert-up-ag-96m-2gpu",
		"llama3-405b-fsdp-qkv-mb128-ag-288m":                 "llama3-405b-fsdp-qkv-mb128-ag-288m-2gpu",
		"gpt3-175b-fsdp-ffn-up-mb16-ag-576m":                 "gpt3-175b-fsdp-ffn-up-mb16-ag-576m-2gpu",
		"llama3-70b-fsdp-ffn-up-wgrad-rs-224m":               "llama3-70b-fsdp-ffn-up-wgrad-rs-224m-2gpu",
		"llama3-405b-fsdp-qkv-wgrad-mb256-rs-288m":           "llama3-405b-fsdp-qkv-wgrad-mb256-rs-288m-2gpu",
		"mixtral-8x22b-fsdp-expert-down-dgrad-rs-96m":        "mixtral-8x22b-fsdp-expert-down-dgrad-rs-96m-2gpu",
		"mixtral-8x22b-ep-expert-gate-up-a2a-96m":            "mixtral-8x22b-ep-expert-gate-up-a2a-96m-2gpu",
		"mixtral-8x22b-ep-expert-down-a2a-192m":              "mixtral-8x22b-ep-expert-down-a2a-192m-2gpu",
		"mixtral-8x22b-ep-router-a2a-192m":                   "mixtral-8x22b-ep-router-a2a-192m-2gpu",
		"mixtral-8x22b-ep-permute-stream-a2a-96m":            "mixtral-8x22b-ep-permute-stream-a2a-96m-2gpu",
		"mixtral-8x22b-ep-o-proj-a2a-144m":                   "mixtral-8x22b-ep-o-proj-a2a-96m-2gpu",
		"mixtral-8x22b-ep-expert-down-mb512-a2a-96m":         "mixtral-8x22b-ep-expert-down-mb512-a2a-72m-2gpu",
		"mixtral-8x22b-ep-decode-expert-up-a2a-48m":          "mixtral-8x22b-ep-decode-expert-up-a2a-18m-2gpu",
		"mixtral-8x22b-ep-decode-expert-gate-up-a2a-72m":     "mixtral-8x22b-ep-decode-expert-gate-up-a2a-48m-2gpu",
		"mixtral-8x22b-ep-decode-expert-gate-up-fp8-a2a-36m": "mixtral-8x22b-ep-decode-expert-gate-up-fp8-a2a-36m-2gpu",
		"mixtral-8x22b-ep-decode-expert-down-a2a-144m":       "mixtral-8x22b-ep-decode-expert-down-a2a-144m-2gpu",
		"llama3-70b-ulysses-qkv-a2a-320m":                    "llama3-70b-ulysses-qkv-a2a-320m-2gpu",
		"llama3-405b-ulysses-o-proj-a2a-256m":                "llama3-405b-ulysses-o-proj-a2a-256m-2gpu",
		"gpt3-175b-tp-dp-qkv-wgrad-ar-256m":                  "gpt3-175b-tp-dp-qkv-wgrad-ar-192m-2gpu",
		"llama3-70b-tp-dp-ffn-down-wgrad-ar-64m":             "llama3-70b-tp-dp-ffn-down-wgrad-ar-64m-2gpu",
		"llama3-70b-tp-dp-qkv-wgrad-mb256-ar-16m":            "llama3-70b-tp-dp-qkv-wgrad-mb256-ar-16m-2gpu",
		"llama3-70b-tp-dp-adam-stream-ar-192m":               "llama3-70b-tp-dp-adam-stream-ar-160m-2gpu",
		"llama3-405b-tp-decode-ffn-gate-up-fp8-ar-224m":      "llama3-405b-tp-decode-ffn-gate-up-fp8-ar-224m-2gpu",
		"mixtral-8x22b-dp-qkv-wgrad-ar-96m":                  "mixtral-8x22b-dp-qkv-wgrad-ar-96m-2gpu",
		"llama3-70b-ffn-gate-up-act-offload-d2h-112m":        "llama3-70b-ffn-gate-up-act-offload-d2h-112m-1gpu",
		"llama3-70b-ffn-down-dgrad-act-reload-h2d-128m":      "llama3-70b-ffn-down-dgrad-act-reload-h2d-128m-1gpu",
		"llama3-70b-decode-ffn-up-kv-offload-d2h-16m":        "llama3-70b-decode-ffn-up-kv-offload-d2h-16m-1gpu",
		"llama3-70b-prefill-ffn-up-kv-reload-h2d-64m":        "llama3-70b-prefill-ffn-up-kv-reload-h2d-64m-1gpu",
		"llama3-70b-adam-stream-optimizer-swap-32m":          "llama3-70b-adam-stream-optimizer-swap-16m-1gpu",
		"llama3-70b-qkv-wgrad-optimizer-swap-96m":            "llama3-70b-qkv-wgrad-optimizer-swap-48m-1gpu",
		"llama3-70b-ffn-down-weight-stream-h2d-448m":         "llama3-70b-ffn-down-weight-stream-h2d-448m-1gpu",
		"mixtral-8x22b-decode-expert-fetch-h2d-192m":         "mixtral-8x22b-decode-expert-fetch-h2d-192m-1gpu",
	}
}
