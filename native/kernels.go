package native

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
)

//go:embed kernels/*.cu
var kernelSources embed.FS

// Kernel names and launch shapes of c3lab's own kernels.
const (
	// StreamKernel reads and writes 16-byte words; StreamThreads threads
	// per CTA, each handling StreamWordsPerThread words.
	StreamKernel         = "c3_stream"
	StreamThreads        = 256
	StreamWordsPerThread = 8
	// CopyKernel copies up to two segments of 16-byte words on the SMs
	// (stream.cu), CopyThreads threads per CTA, grid-stride: host<->device
	// copies through device-mapped host memory.
	CopyKernel  = "c3_copy"
	CopyThreads = 512
	// CopyTracedKernel is CopyKernel with one more argument, a device
	// pointer to CopyTraceWords 8-byte words per CTA: the SM the CTA ran
	// on and the %globaltimer (ns) as it started and as it finished. For
	// probes of where the block scheduler puts the copy's CTAs.
	CopyTracedKernel = "c3_copy_traced"
	CopyTraceWords   = 3
	// StampKernel writes the GPU's %globaltimer, in ns, to one 8-byte
	// word (stream.cu); launch it as one CTA of one thread.
	StampKernel = "c3_stamp"
	// SpinKernel keeps SMs busy (stream.cu): each CTA spins until a
	// pinned host word reaches a value or a time limit passes; launch it
	// with SpinThreads threads per CTA, one CTA per SM to keep active.
	SpinKernel  = "c3_spin"
	SpinThreads = 32
	// ReduceKernel sums up to ReduceMaxSources bf16 inputs (reduce.cu),
	// ReduceThreads threads per CTA, grid-stride.
	ReduceKernel     = "c3_reduce_bf16"
	ReduceThreads    = 256
	ReduceMaxSources = 8
	// ReducePipeKernel is the pipelined reduction (reduce.cu): it adds a
	// block chunk by chunk as the copy engines land the chunks. Its sync
	// words (uint32) are the status word, ReduceSyncStatusTimeout once a
	// flag timed out; from word ReduceSyncFlags one flag per peer source
	// and chunk; then one done counter per chunk.
	ReducePipeKernel = "c3_reduce_pipe_bf16"
	// ReduceLoadKernel is comm_engine p2p-load's reduction (reduce.cu): the
	// sum of ReduceKernel, launched with the same arguments and threads
	// per CTA, whose sources may live in peer GPUs' memory, loaded over
	// NVLink with more loads in flight per thread.
	ReduceLoadKernel        = "c3_reduce_load_bf16"
	ReduceSyncFlags         = 16
	ReduceSyncStatusTimeout = 1
)

// KernelSource returns the CUDA C source of one of c3lab's kernel files
// ("stream.cu").
func KernelSource(file string) (string, error) {
	b, err := kernelSources.ReadFile("kernels/" + file)
	if err != nil {
		return "", fmt.Errorf("kernel source %s: %w", file, err)
	}
	return string(b), nil
}

// CompileCached compiles a kernel file for arch ("sm_90") with NVRTC, or
// returns the cubin cached under cacheDir from an earlier compile of the
// same source by the same NVRTC. An empty cacheDir disables the cache; a
// cache that cannot be written is skipped silently (the cubin still comes
// back).
func (r *NVRTC) CompileCached(file, arch, cacheDir string) ([]byte, error) {
	src, err := KernelSource(file)
	if err != nil {
		return nil, err
	}
	ma, mi := r.Version()
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%s\x00nvrtc %d.%d", src, arch, ma, mi)))
	key := hex.EncodeToString(sum[:12])
	var path string
	if cacheDir != "" {
		path = filepath.Join(cacheDir, fmt.Sprintf("%s-%s-%s.cubin", file, arch, key))
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
			return b, nil
		}
	}
	cubin, err := r.CompileCUBIN(src, file, arch)
	if err != nil {
		return nil, err
	}
	if path != "" {
		if os.MkdirAll(cacheDir, 0o755) == nil {
			tmp := path + ".tmp"
			if os.WriteFile(tmp, cubin, 0o644) == nil {
				os.Rename(tmp, path)
			}
		}
	}
	return cubin, nil
}
