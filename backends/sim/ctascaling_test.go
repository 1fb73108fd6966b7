package sim

import (
	"math"
	"testing"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// One collective CTA's bandwidth follows CommCTAScaling: CTALinkBandwidth
// at CommCTARef CTAs or without a scaling, more per CTA below the
// reference count and less above it.
func TestCTABandwidth(t *testing.T) {
	p := H200()
	p.CTALinkBandwidth[scenarios.AllGather] = 10e9
	flat := p
	p.CommCTAScaling = 0.2
	for _, c := range []struct {
		name string
		p    Profile
		ctas int
		want float64
	}{
		{"at the reference", p, CommCTARef, 10e9},
		{"half the reference", p, CommCTARef / 2, 10e9 * math.Pow(2, 0.2)},
		{"twice the reference", p, 2 * CommCTARef, 10e9 * math.Pow(2, -0.2)},
		{"no scaling", flat, 8, 10e9},
	} {
		if got := CTABandwidth(c.p, scenarios.AllGather, c.ctas); math.Abs(got/c.want-1) > 1e-12 {
			t.Errorf("%s: CTABandwidth = %.4g; want %.4g", c.name, got, c.want)
		}
	}
}

// In the simulator an all-gather capped at 8 CTAs moves more per CTA
// than one capped at 16 by CommCTAScaling's factor (both well below the
// link), and exactly half as much in all without it.
func TestCommCTAScalingInTheSimulator(t *testing.T) {
	transfer := func(p Profile, ctas int) float64 {
		t.Helper()
		sc := scenarios.Scenario{Name: "ag", GPUs: 2,
			Compute: scenarios.ComputeOp{Kind: scenarios.GEMM, M: 4096, N: 4096, K: 4096, DType: scenarios.BF16},
			Comm:    scenarios.CommOp{Collective: scenarios.AllGather, Bytes: 256 << 20}}
		o, err := New(p).Simulate(backends.Experiment{Scenario: sc, Strategy: scenarios.Strategy{CommCTAs: ctas}, Mode: backends.ModeComm, Reps: 1})
		if err != nil {
			t.Fatal(err)
		}
		return float64(o.Rep.Comm)/1e9 - p.KernelFixedCost - p.CommSetup[scenarios.AllGather]
	}
	flat := H200()
	if r := transfer(flat, 8) / transfer(flat, 16); math.Abs(r-2) > 0.01 {
		t.Errorf("without a scaling 8 CTAs take %.3fx as long as 16; want 2", r)
	}
	scaled := H200()
	scaled.CommCTAScaling = 0.2
	if r, want := transfer(scaled, 8)/transfer(scaled, 16), 2/math.Pow(2, 0.2); math.Abs(r/want-1) > 0.01 {
		t.Errorf("with scaling 0.2 8 CTAs take %.3fx as long as 16; want %.3f", r, want)
	}
}
