package cuda

import (
	"context"
	"testing"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

func TestTmpA2A(t *testing.T) {
	for _, bytes := range []scenarios.ByteSize{1536, 3072, 4096, 6144, 12288, 24 << 10, 64 << 10, 96 << 10} {
		for _, fp8 := range []bool{false, true} {
			dt := scenarios.BF16
			if fp8 {
				dt = scenarios.FP8
			}
			sc := scenarios.Scenario{Name: "x", GPUs: 2, Compute: scenarios.ComputeOp{Kind: scenarios.GEMM, M: 16, N: 48, K: 128, DType: dt},
				Comm: scenarios.CommOp{Collective: scenarios.AllToAll, Bytes: bytes}}
			b := fakeBackend(t, newFakeGPU(2), Options{})
			_, err := b.Run(context.Background(), backends.Experiment{Scenario: sc, Strategy: scenarios.Strategy{CommEngine: scenarios.EngineDMA}, Mode: backends.ModeConcurrent, Reps: 1}, &backends.Collector{})
			t.Logf("pair a2a %d %s: %v", bytes, dt, err)
		}
	}
}
