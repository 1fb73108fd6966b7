package sim

import (
	"math"
	"slices"
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

// Only a GEMM kernel that takes the largest carveout (more shared memory a
// CTA than HostCopyInheritedAbove) slows the copy kernel behind it: on one
// H200 an 8-CTA h2d copy behind nine such GEMMs took 1.44-1.54x its time
// alone, behind the two nvjet 320x128_64x3 ones (189,660 B a CTA, the
// 196 KiB carveout) 1.03-1.05x (results/2026-12-04-h200x1-s25, call 4). A
// launch whose shared memory is not known counts as the largest, and a
// profile without the threshold slows behind every GEMM. A swap slows as
// a whole: its 8 CTAs move both directions at the inherited rate.
func TestCopyKernelSlowsOnlyBehindTheLargestCarveout(t *testing.T) {
	const bytes = 128 << 20
	gemm := scenarios.ComputeOp{Kind: scenarios.GEMM, M: 4096, N: 28672, K: 8192, DType: scenarios.BF16}
	withShared := func(p Profile, shared int) Profile {
		t.Helper()
		p.GEMMLaunches = slices.Clone(p.GEMMLaunches)
		i := slices.IndexFunc(p.GEMMLaunches, func(l GEMMLaunch) bool { return l.matches(gemm, p.SMs) })
		if i < 0 {
			t.Fatalf("the launch table has no %s", gemm)
		}
		p.GEMMLaunches[i].SharedBytes = shared
		return p
	}
	// behind is how long the copy runs after the GEMM's end, with 8 CTAs
	// queued behind it; alone, its time alone.
	behind := func(p Profile, coll scenarios.Collective) (tail, alone float64) {
		t.Helper()
		sc := scenarios.Scenario{Name: "carveout", GPUs: 1, Compute: gemm,
			Comm: scenarios.CommOp{Collective: coll, Bytes: bytes}}
		b := New(p)
		var reps [2]backends.Rep
		for i, m := range []backends.Mode{backends.ModeConcurrent, backends.ModeComm} {
			o, err := b.Simulate(backends.Experiment{Scenario: sc, Strategy: scenarios.Strategy{CommCTAs: 8}, Mode: m, Reps: 1})
			if err != nil {
				t.Fatal(err)
			}
			reps[i] = o.Rep
		}
		return float64(reps[0].Wall-reps[0].Compute) / 1e9, float64(reps[1].Comm) / 1e9
	}
	h200 := H200()
	noThreshold := H200()
	noThreshold.HostCopyInheritedAbove = 0
	inherited := func(b float64) float64 { return b / (8 * h200.HostCopyInheritedCTABandwidth) }
	for _, c := range []struct {
		name   string
		p      Profile
		coll   scenarios.Collective
		shared int
		slow   bool
	}{
		{"h2d behind a 214,212 B kernel (228 KiB carveout)", h200, scenarios.HostToDevice, 214212, true},
		{"h2d behind a 189,660 B kernel (196 KiB carveout)", h200, scenarios.HostToDevice, 189660, false},
		{"h2d behind a kernel of unknown shared memory", h200, scenarios.HostToDevice, 0, true},
		{"h2d behind a 189,660 B kernel, no threshold", noThreshold, scenarios.HostToDevice, 189660, true},
		{"swap behind a 214,212 B kernel", h200, scenarios.HostSwap, 214212, true},
		{"swap behind a 189,660 B kernel", h200, scenarios.HostSwap, 189660, false},
		{"d2h behind a 214,212 B kernel", h200, scenarios.DeviceToHost, 214212, false},
	} {
		tail, alone := behind(withShared(c.p, c.shared), c.coll)
		moved := float64(bytes)
		if c.coll == scenarios.HostSwap {
			moved *= 2
		}
		switch {
		case c.slow && math.Abs(tail/inherited(moved)-1) > 0.05:
			t.Errorf("%s: the copy took %.0f µs after the GEMM; want the inherited rate's %.0f µs", c.name, tail*1e6, inherited(moved)*1e6)
		case !c.slow && tail > 1.15*alone:
			t.Errorf("%s: the copy took %.0f µs after the GEMM, %.2fx its %.0f µs alone; want about its time alone", c.name, tail*1e6, tail/alone, alone*1e6)
		}
	}
}
