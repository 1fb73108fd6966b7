package sim

import (
	"math"
	"testing"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// c3lab's copy kernel queued behind a GEMM runs under the GEMM's
// shared-memory carveout: its host reads slow to
// HostCopyInheritedCTABandwidth per CTA. A cap of 8 CTAs then takes the
// inherited rate's time after the GEMM; 16 CTAs still fill PCIe; launched
// first, before the GEMM, or moving d2h, the copy keeps its isolated
// speed. Without the constant its 8 CTAs, packed 3 to an SM on the SMs
// the GEMM leaves (HostCopyCTAsPerSM), still read at one CTA's bandwidth
// per SM; with neither, nothing changes.
func TestCopyKernelBehindGEMMRunsUnderItsCarveout(t *testing.T) {
	const bytes = 128 << 20
	after := func(p Profile, coll scenarios.Collective, st scenarios.Strategy) (tail, alone float64) {
		t.Helper()
		// A GEMM whose tiles fill whole rounds (3300 tiles of 192x192, 25
		// x 132), so that a copy behind it starts at its end.
		sc := scenarios.Scenario{Name: "carveout", GPUs: 1,
			Compute: scenarios.ComputeOp{Kind: scenarios.GEMM, M: 4096, N: 28672, K: 8192, DType: scenarios.BF16},
			Comm:    scenarios.CommOp{Collective: coll, Bytes: bytes}}
		b := New(p)
		run := func(m backends.Mode) backends.Rep {
			o, err := b.Simulate(backends.Experiment{Scenario: sc, Strategy: st, Mode: m, Reps: 1})
			if err != nil {
				t.Fatal(err)
			}
			return o.Rep
		}
		c3 := run(backends.ModeConcurrent)
		if st.Launch == scenarios.CommFirst {
			return float64(c3.Comm) / 1e9, float64(run(backends.ModeComm).Comm) / 1e9
		}
		return float64(c3.Wall-c3.Compute) / 1e9, float64(run(backends.ModeComm).Comm) / 1e9
	}
	p := H200()
	off := H200()
	off.HostCopyInheritedCTABandwidth = 0
	none := off
	none.HostCopyCTAsPerSM = 1
	inherited := float64(bytes) / (8 * p.HostCopyInheritedCTABandwidth)
	packed := float64(bytes) / (3 * p.HostCopyCTABandwidth) // 8 CTAs on 3 SMs
	for _, c := range []struct {
		name string
		p    Profile
		coll scenarios.Collective
		st   scenarios.Strategy
		slow bool    // takes the inherited rate's time, else its isolated time
		want float64 // else this time, when set
	}{
		{"h2d, 8 CTAs behind the GEMM", p, scenarios.HostToDevice, scenarios.Strategy{CommCTAs: 8}, true, 0},
		{"h2d, 16 CTAs behind the GEMM", p, scenarios.HostToDevice, scenarios.Strategy{CommCTAs: 16}, false, 0},
		{"h2d, 8 CTAs launched first", p, scenarios.HostToDevice, scenarios.Strategy{CommCTAs: 8, Launch: scenarios.CommFirst, CommPriority: -5}, false, 0},
		{"d2h, 8 CTAs behind the GEMM", p, scenarios.DeviceToHost, scenarios.Strategy{CommCTAs: 8}, false, 0},
		{"h2d, 8 CTAs, no inherited rate", off, scenarios.HostToDevice, scenarios.Strategy{CommCTAs: 8}, false, packed},
		{"h2d, 8 CTAs, no inherited rate, one CTA to an SM", none, scenarios.HostToDevice, scenarios.Strategy{CommCTAs: 8}, false, 0},
	} {
		tail, alone := after(c.p, c.coll, c.st)
		want := alone
		if c.slow {
			want = inherited
		}
		if c.want > 0 {
			want = c.want
		}
		if math.Abs(tail/want-1) > 0.03 {
			t.Errorf("%s: the copy took %.0f µs after the GEMM's end (alone %.0f µs); want %.0f µs", c.name, tail*1e6, alone*1e6, want*1e6)
		}
	}

	// The why panel puts the slow copy down to its CTAs, not to PCIe.
	sc := scenarios.Scenario{Name: "carveout", GPUs: 1,
		Compute: scenarios.ComputeOp{Kind: scenarios.GEMM, M: 4096, N: 4096, K: 4096, DType: scenarios.BF16},
		Comm:    scenarios.CommOp{Collective: scenarios.HostToDevice, Bytes: bytes}}
	o, err := New(p).Simulate(backends.Experiment{Scenario: sc, Strategy: scenarios.Strategy{CommCTAs: 8}, Mode: backends.ModeConcurrent, Reps: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range o.Explain {
		if e.Op == backends.OpComm && (len(e.Bounds) == 0 || e.Bounds[0].Resource != backends.ResCTA) {
			t.Errorf("the copy behind the GEMM is explained by %v; want its CTAs (%s) first", e.Bounds, backends.ResCTA)
		}
	}
}
