package scenarios

// hostCopySuite returns the built-in scenarios of the C3 one GPU has on its
// own: a kernel next to a host<->device copy over PCIe (activation offload
// and reload, KV-cache offload, optimizer offload, weight streaming). They
// run on one GPU, so a one-GPU node runs them on its GPU and a node of
// several GPUs on its first; their strategies pit the copy engines against
// c3lab's SM copy kernel.
//
// Sizes were chosen from the rates measured on one H200 (H200Rates: the
// GEMMs, stream ops and c3lab's copy kernel over PCIe, each alone) so that
// the set holds each class:
//
//	name                                                     compute                     comm                   T_comp T_comm ratio  class
//	llama3-70b-ffn-gate-up-act-offload-d2h-112m-1gpu         gemm 8192x7168x8192 bf16    d2h 112MiB              1.244  2.239  1.80  comm-long
//	llama3-70b-ffn-down-dgrad-act-reload-h2d-128m-1gpu       gemm 8192x28672x8192 bf16   h2d 128MiB              4.886  2.622  0.54  gemm-long
//	llama3-70b-decode-ffn-up-kv-offload-d2h-16m-1gpu         gemm 64x28672x8192 bf16     d2h 16MiB               0.120  0.322  2.69  comm-long
//	llama3-70b-prefill-ffn-up-kv-reload-h2d-64m-1gpu         gemm 4096x28672x8192 bf16   h2d 64MiB               2.466  1.314  0.53  gemm-long
//	llama3-70b-adam-stream-optimizer-swap-16m-1gpu           stream 1GiB                 swap 16MiB              0.529  0.507  0.96  balanced
//	llama3-70b-qkv-wgrad-optimizer-swap-48m-1gpu             gemm 8192x10240x8192 bf16   swap 48MiB              1.765  1.547  0.88  balanced
//	llama3-70b-ffn-down-weight-stream-h2d-448m-1gpu          gemm 12288x8192x28672 bf16  h2d 448MiB              7.307  9.168  1.25  balanced
//	mixtral-8x22b-decode-expert-fetch-h2d-192m-1gpu          gemm 256x16384x6144 bf16    h2d 192MiB              0.075  3.935 52.40  comm-long
//
// (times in ms; TestHostCopySuiteClasses recomputes this table.)
func hostCopySuite() []builtin {
	gemm := func(m, n, k int) ComputeOp { return ComputeOp{Kind: GEMM, M: m, N: n, K: k, DType: BF16} }
	var out []builtin
	add := func(name, note, source string, c ComputeOp, coll Collective, bytes ByteSize) {
		out = append(out, builtin{name: name, note: note, source: source, compute: c, comm: CommOp{Collective: coll, Bytes: bytes}, gpus: 1})
	}
	// Per layer and token, Llama-3 70B keeps 8 KV heads of 128 for K and V.
	const kvBytesPerToken = 2 * 8 * 128 * bf16

	add("llama3-70b-ffn-gate-up-act-offload-d2h-112m",
		"Activation offload in the forward pass: the copy to the host outlasts the GEMM, and whether it runs on the copy engines or on SMs decides what the GEMM loses.",
		srcLlama70+", shapes from one GPU's shard at TP=8 (8192 tokens), forward with CPU activation offload: the fused gate+up projection of this micro-batch (8192x7168x8192) next to the offload of the previous micro-batch's saved gate+up output (8192 x 7168 x 2B = 112MiB) to pinned host memory",
		gemm(8192, 2*llama70FFN/tp, llama70Hidden), DeviceToHost, 8192*(2*llama70FFN/tp)*bf16)
	add("llama3-70b-ffn-down-dgrad-act-reload-h2d-128m",
		"Activation reload in the backward pass: a long input-gradient GEMM hides the prefetch of the next layer's activations, if the copy takes no SMs from it.",
		srcLlama70+", shapes from one GPU, backward with CPU activation offload (8192 tokens): the input gradient of the FFN down projection (8192x28672x8192) next to the reload of the previous layer's saved input (8192 x 8192 x 2B = 128MiB) from pinned host memory",
		gemm(8192, llama70FFN, llama70Hidden), HostToDevice, 8192*llama70Hidden*bf16)
	add("llama3-70b-decode-ffn-up-kv-offload-d2h-16m",
		"KV-cache offload while decoding: a memory-bound decode GEMM is over long before the copy, so only a copy that costs it nothing is worth having.",
		srcLlama70+", shapes from one GPU serving 64 sequences: the decode step's FFN up projection (64x28672x8192, memory-bound on its 448MiB weight) next to the eviction of one layer's KV cache for 4096 tokens (4096 tokens x 8 KV heads x 128 x 2 (K, V) x 2B = 16MiB) to pinned host memory",
		gemm(64, llama70FFN, llama70Hidden), DeviceToHost, 4096*kvBytesPerToken)
	add("llama3-70b-prefill-ffn-up-kv-reload-h2d-64m",
		"KV-cache reload under a prefill GEMM twice as long: the copy should hide completely, and a copy kernel that takes SMs is the way to lose it.",
		srcLlama70+", shapes from one GPU serving with a CPU-offloaded KV cache: a 4096-token prefill chunk's FFN up projection (4096x28672x8192) next to the reload of one layer's KV cache for a resumed 16384-token sequence (16384 x 8 KV heads x 128 x 2 (K, V) x 2B = 64MiB)",
		gemm(4096, llama70FFN, llama70Hidden), HostToDevice, 16384*kvBytesPerToken)
	add("llama3-70b-adam-stream-optimizer-swap-16m",
		"Optimizer offload beside an optimizer step: the host copies and the memory-bound AdamW kernel share HBM, and the swap's two directions share PCIe.",
		srcLlama70+", shapes from one GPU with ZeRO-Offload-style optimizer offload: a fused AdamW step over 64Mi parameters of FP32 state on the GPU (weights, gradients and two moments: 1GiB) next to the next slice's 8Mi bf16 gradients going to the host and its updated bf16 weights coming back (16MiB each way)",
		ComputeOp{Kind: Stream, Bytes: 64 * mib * 16}, HostSwap, 8*mib*bf16)
	add("llama3-70b-qkv-wgrad-optimizer-swap-48m",
		"Gradients out and parameters in while a weight-gradient GEMM runs: balanced, and both copy directions at once test whether PCIe's duplex holds.",
		srcLlama70+", shapes from one GPU with ZeRO-Offload-style optimizer offload (8192 tokens): the weight gradient of the fused QKV projection (8192x10240x8192, K = tokens) next to 24Mi bf16 gradients going to the host and 24Mi updated bf16 parameters coming back (48MiB each way)",
		gemm(llama70Hidden, llama70QKV, 8192), HostSwap, 24*mib*bf16)
	add("llama3-70b-ffn-down-weight-stream-h2d-448m",
		"Weight streaming from host memory: the next layer's down-projection weight arrives while this layer's down projection runs, balanced on paper.",
		srcLlama70+", shapes from one GPU with CPU-offloaded weights (12288 tokens): the FFN down projection (12288x8192x28672) next to the upload of the next layer's down-projection weight (8192 x 28672 x 2B = 448MiB)",
		gemm(12288, llama70Hidden, llama70FFN), HostToDevice, llama70Hidden*llama70FFN*bf16)
	add("mixtral-8x22b-decode-expert-fetch-h2d-192m",
		"An offloaded expert fetched on demand while another expert decodes: PCIe sets the pace, and the tiny GEMM should never wait for the copy's SMs.",
		srcMixtral+", shapes from one GPU serving with CPU-offloaded experts: one resident expert's gate projection for 256 routed decode tokens (256x16384x6144) next to the upload of a missing expert's down-projection weight (6144 x 16384 x 2B = 192MiB)",
		gemm(256, mixtralFFN, mixtralHidden), HostToDevice, mixtralHidden*mixtralFFN*bf16)
	return out
}
