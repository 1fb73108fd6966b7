package calib

import (
	"fmt"
	"math"
	"testing"

	"github.com/c3lab/c3lab/backends/sim"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
)

// ctaCapRuns makes the CTA-capped runs a device whose collective CTAs
// drive bw(CTAs) would give: the GEMM (1 ms) first, then the capped
// collective alone after the setup.
func ctaCapRuns(p sim.Profile, coll scenarios.Collective, caps []int, bw func(ctas int) float64) []Run {
	var runs []Run
	for _, mib := range []int64{96, 224, 288} {
		sc := scenarios.Scenario{Name: fmt.Sprintf("%s-%dm", coll, mib), GPUs: 2,
			Compute: scenarios.ComputeOp{Kind: scenarios.GEMM, M: 4096, N: 4096, K: 4096, DType: scenarios.BF16},
			Comm:    scenarios.CommOp{Collective: coll, Bytes: scenarios.ByteSize(mib << 20)}}
		for _, n := range caps {
			tail := p.CommSetup[coll] + sc.Comm.LinkBytes(2)/(float64(n)*bw(n))
			runs = append(runs, Run{Scenario: sc.Name, Strategy: fmt.Sprintf("ctas-%d", n), Scen: sc,
				Strat: scenarios.Strategy{CommCTAs: n},
				Real:  profiler.Result{TComp: profiler.Stat{N: 1, Median: 1e6}, TC3: profiler.Stat{N: 1, Median: 1e6 + tail*1e9}}})
		}
	}
	return runs
}

// Stage 1 recovers how a collective CTA's bandwidth falls with the CTA
// count, and each collective's bandwidth at the reference count, from
// runs at two caps; from runs at one cap it keeps the exponent it was
// given and says so.
func TestStage1FitsCTAScaling(t *testing.T) {
	p := sim.H200()
	const scaling = 0.2
	truth := map[scenarios.Collective]float64{scenarios.AllGather: 12e9, scenarios.AllToAll: 9e9}
	var runs []Run
	for coll, bw := range truth {
		runs = append(runs, ctaCapRuns(p, coll, []int{8, 16}, func(n int) float64 {
			return bw * math.Pow(float64(n)/sim.CommCTARef, -scaling)
		})...)
	}
	got, _, err := Stage1(p, runs, nil, sim.H200Provenance())
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got.CommCTAScaling-scaling) > 0.006 {
		t.Errorf("CommCTAScaling fitted %.3f; want %.3f", got.CommCTAScaling, scaling)
	}
	for coll, bw := range truth {
		if b := got.CTALinkBandwidth[coll]; math.Abs(b/bw-1) > 0.01 {
			t.Errorf("%s: CTALinkBandwidth fitted %.4g; want %.4g", coll, b, bw)
		}
	}

	base := sim.H200()
	base.CommCTAScaling = 0.1
	one := ctaCapRuns(p, scenarios.AllGather, []int{8}, func(int) float64 { return 12e9 })
	got, fits, err := Stage1(base, one, nil, sim.H200Provenance())
	if err != nil {
		t.Fatal(err)
	}
	if got.CommCTAScaling != 0.1 {
		t.Errorf("from one cap CommCTAScaling became %v; want the 0.1 it was given", got.CommCTAScaling)
	}
	// At 8 CTAs the runs' 12 GB/s per CTA is 12 x (8/16)^0.1 at the reference.
	if want := 12e9 * math.Pow(0.5, 0.1); math.Abs(got.CTALinkBandwidth[scenarios.AllGather]/want-1) > 0.01 {
		t.Errorf("from one cap CTALinkBandwidth fitted %.4g; want %.4g", got.CTALinkBandwidth[scenarios.AllGather], want)
	}
	for _, f := range fits {
		if f.Field == "CommCTAScaling" && f.Note == "" {
			t.Error("the exponent kept from one cap is not reported as kept")
		}
	}
}
