package cuda

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// TestGPUGEMMLaunches runs, once each, the GEMMs listed in the file that
// C3LAB_GEMM_SHAPES names (one "M N K dtype sm_target" per line), each as
// the cuda backend plans it, and writes a marker line to standard error
// before each one. It checks only that every plan runs: run under Nsight Compute,
// the markers tell which kernels cuBLASLt launched for which shape, so the
// simulator's launch table (grid, CTA size, persistent or in waves) comes
// from the algorithm c3lab really runs:
//
//	ncu --section LaunchStats --csv --page raw ./cuda.test \
//	    -test.run TestGPUGEMMLaunches 2>&1 | tee launches.txt
//
// backends/cuda/gpu-suite.sh (step gemm-launches) does this and turns the
// output into a table.
func TestGPUGEMMLaunches(t *testing.T) {
	// Without a list it runs three shapes of the suite (compute-bound,
	// skinny, split-K candidate), so it still checks that they run.
	shapes := []gemmShape{{m: 8192, n: 8192, k: 8192, dtype: scenarios.BF16}, {m: 16384, n: 1280, k: 8192, dtype: scenarios.BF16}, {m: 64, n: 28672, k: 8192, dtype: scenarios.BF16}}
	if path := os.Getenv("C3LAB_GEMM_SHAPES"); path != "" {
		var err error
		if shapes, err = readGEMMShapes(path); err != nil {
			t.Fatal(err)
		}
	}
	b := openGPU(t)
	ctx := context.Background()
	for i, sh := range shapes {
		sc := scenarios.Scenario{
			Name: "gemm-launch", GPUs: 1,
			Compute: scenarios.ComputeOp{Kind: scenarios.GEMM, M: sh.m, N: sh.n, K: sh.k, DType: sh.dtype},
			Comm:    scenarios.CommOp{Collective: scenarios.HostToDevice, Bytes: 64 << 10},
		}
		fmt.Fprintf(os.Stderr, "C3LAB-SHAPE %d %d %d %d %s %d\n", i, sh.m, sh.n, sh.k, sh.dtype, sh.smTarget)
		ex := backends.Experiment{Scenario: sc, Strategy: scenarios.Strategy{GEMMSMTarget: sh.smTarget}, Mode: backends.ModeCompute, Reps: 1}
		if _, err := b.Run(ctx, ex, nil); err != nil {
			t.Errorf("%dx%dx%d %s (sm target %d): %v", sh.m, sh.n, sh.k, sh.dtype, sh.smTarget, err)
		}
	}
	fmt.Fprintln(os.Stderr, "C3LAB-SHAPE-END")
}

type gemmShape struct {
	m, n, k, smTarget int
	dtype             scenarios.DType
}

func readGEMMShapes(path string) ([]gemmShape, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading the GEMM shapes: %w", err)
	}
	defer f.Close()
	var out []gemmShape
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		fs := strings.Fields(sc.Text())
		if len(fs) == 0 || strings.HasPrefix(fs[0], "#") {
			continue
		}
		if len(fs) != 5 {
			return nil, fmt.Errorf("%s:%d: want \"M N K dtype sm_target\", got %q", path, line, sc.Text())
		}
		var v [4]int
		for j, s := range []string{fs[0], fs[1], fs[2], fs[4]} {
			if v[j], err = strconv.Atoi(s); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", path, line, err)
			}
		}
		out = append(out, gemmShape{m: v[0], n: v[1], k: v[2], smTarget: v[3], dtype: scenarios.DType(fs[3])})
	}
	return out, sc.Err()
}
