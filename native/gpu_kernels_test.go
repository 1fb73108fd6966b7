package native

import (
	"errors"
	"strings"
	"testing"
)

// Every kernel file compiles with the node's NVRTC for Hopper, and each
// kernel c3lab launches is in it. The reductions (reduce.cu) are compiled
// only when a reduction first runs, which needs two GPUs; this checks them
// wherever NVRTC is installed, one GPU or none.
func TestGPUKernelsCompile(t *testing.T) {
	srcs := map[string]string{}
	for file, kernels := range map[string][]string{
		"stream.cu": {StreamKernel, CopyKernel, StampKernel, SpinKernel},
		"reduce.cu": {ReduceKernel, ReducePipeKernel, ReduceLoadKernel},
	} {
		src, err := KernelSource(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range kernels {
			if !strings.Contains(src, k+"(") {
				t.Errorf("%s lacks the kernel %s", file, k)
			}
		}
		srcs[file] = src
	}
	r, err := OpenNVRTC()
	if err != nil {
		var missing *MissingLibraryError
		if errors.As(err, &missing) {
			t.Skipf("no NVRTC on this machine: %v", err)
		}
		t.Fatalf("NVRTC is installed but did not open: %v", err)
	}
	for file, src := range srcs {
		cubin, err := r.CompileCUBIN(src, file, "sm_90")
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		t.Logf("%s: %d bytes of sm_90 cubin", file, len(cubin))
	}
}
