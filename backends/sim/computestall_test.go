package sim

import (
	"context"
	"math"
	"testing"

	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
)

// An SM collective slows while a compute-bound GEMM (or a stream op) holds
// the SMs beside it (CommComputeStall), in a partition of its own as under
// comm-first:
// by about 1 + the stall x the GEMM's share of the device's SMs, while
// the GEMM runs. Alone, or next to nothing, it is not slowed, and a
// copy-engine collective does not feel it. With the stall at 0 the model
// is the one before it.
func TestCommComputeStallBesideTensorBoundGEMM(t *testing.T) {
	sc := scenarios.Scenario{Name: "ag-beside-gemm", GPUs: 2,
		// 8192x7168x8192 bf16: compute-bound (2600 flop/B), about 2.5x the
		// collective, so the collective runs beside it to its end.
		Compute: scenarios.ComputeOp{Kind: scenarios.GEMM, M: 8192, N: 7168, K: 8192, DType: scenarios.BF16},
		Comm:    scenarios.CommOp{Collective: scenarios.AllGather, Bytes: 112 << 20}}
	fit, err := LoadProfileFile("profiles/h200-fit.yaml")
	if err != nil {
		t.Fatal(err)
	}
	off := fit.Profile
	off.CommComputeStall = 0
	on := off
	on.CommComputeStall = 0.3
	measureOn := func(p Profile, sc scenarios.Scenario, st scenarios.Strategy) profiler.Result {
		t.Helper()
		r, err := profiler.Measure(context.Background(), New(p), sc, st, profiler.Options{Reps: 1})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	measure := func(p Profile, st scenarios.Strategy) profiler.Result {
		t.Helper()
		return measureOn(p, sc, st)
	}
	cases := []struct {
		name string
		st   scenarios.Strategy
		// gemmSMs is how many SMs the GEMM holds beside the collective.
		gemmSMs int
	}{
		{"comm-sms-32", scenarios.Strategy{Launch: scenarios.CommFirst, CommSMs: 32}, 100},
		{"comm-sms-64", scenarios.Strategy{Launch: scenarios.CommFirst, CommSMs: 64}, 68},
		{"comm-first+prio", scenarios.Strategy{Launch: scenarios.CommFirst, CommPriority: -5}, 100},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, b := measure(off, c.st), measure(on, c.st)
			if a.TComm.Median != b.TComm.Median {
				t.Errorf("the collective alone took %.1f µs with the stall, %.1f without; alone nothing runs beside it",
					b.TComm.Median/1e3, a.TComm.Median/1e3)
			}
			// The stall's slowdown of the collective, on top of the rest.
			got := b.TCommInC3.Median / a.TCommInC3.Median
			want := 1 + 0.3*float64(c.gemmSMs)/132
			t.Logf("the collective beside the GEMM: %.3fx without the stall, %.3fx with it (its own %.3fx; full stall %.3fx)",
				a.CommSlowdown, b.CommSlowdown, got, want)
			// Its setup runs before the GEMM's CTAs start and is not
			// slowed, so a little less than the full stall.
			if got < 1+0.8*(want-1) || got > want+1e-9 {
				t.Errorf("the stall slows the collective %.3fx; want about %.3fx (1 + 0.3 x %d/132 SMs)", got, want, c.gemmSMs)
			}
		})
	}
	// A stream op's CTAs count as a GEMM's do: beside a 2 GiB elementwise
	// op on the 100 SMs a 32-SM partition leaves, the collective slows by
	// the stall too (less a little: it then takes less of HBM).
	stream := sc
	stream.Compute = scenarios.ComputeOp{Kind: scenarios.Stream, Bytes: 2 << 30}
	part := scenarios.Strategy{Launch: scenarios.CommFirst, CommSMs: 32}
	ra, err := profiler.Measure(context.Background(), New(off), stream, part, profiler.Options{Reps: 1})
	if err != nil {
		t.Fatal(err)
	}
	rb, err := profiler.Measure(context.Background(), New(on), stream, part, profiler.Options{Reps: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rb.TCommInC3.Median/ra.TCommInC3.Median, 1+0.3*100.0/132; got < 1+0.6*(want-1) || got > want+1e-9 {
		t.Errorf("beside a stream op the stall slows the collective %.3fx; want about %.3fx", got, want)
	}
	// A copy-engine collective has no CTAs to slow.
	dma := scenarios.Strategy{CommEngine: scenarios.EngineDMA}
	if a, b := measure(off, dma), measure(on, dma); a.TC3.Median != b.TC3.Median {
		t.Errorf("a copy-engine all-gather's T_c3 moved from %.1f to %.1f µs with the stall", a.TC3.Median/1e3, b.TC3.Median/1e3)
	}
	// The GEMM first, persistent on every SM, its tiles filling whole
	// rounds (4096x28672x8192: 3300 tiles of 192x192, 25 x 132): the
	// collective runs after it, beside nothing, and the stall changes
	// nothing.
	whole := sc
	whole.Compute = scenarios.ComputeOp{Kind: scenarios.GEMM, M: 4096, N: 28672, K: 8192, DType: scenarios.BF16}
	if a, b := measureOn(off, whole, scenarios.Strategy{}), measureOn(on, whole, scenarios.Strategy{}); math.Abs(a.TC3.Median-b.TC3.Median) > 1 {
		t.Errorf("baseline T_c3 moved from %.1f to %.1f µs with the stall; the collective runs after the GEMM", a.TC3.Median/1e3, b.TC3.Median/1e3)
	}
}
