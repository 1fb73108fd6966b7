package profiler

import (
	"testing"

	"github.com/c3lab/c3lab/scenarios"
)

func TestBound(t *testing.T) {
	stream := scenarios.Scenario{GPUs: 2,
		Compute: scenarios.ComputeOp{Kind: scenarios.Stream, Bytes: 1 << 30},
		Comm:    scenarios.CommOp{Collective: scenarios.AllGather, Bytes: 1 << 30}}
	gemm := scenarios.Scenario{GPUs: 2,
		Compute: scenarios.ComputeOp{Kind: scenarios.GEMM, M: 8192, N: 8192, K: 8192, DType: scenarios.BF16},
		Comm:    scenarios.CommOp{Collective: scenarios.AllGather, Bytes: 256 << 20}}
	hc, hm := HBMBytes(stream)
	if hc != 2<<30 || hm != 2<<30 {
		t.Fatalf("stream + all-gather HBM bytes %v / %v, want 2 GiB each", hc, hm)
	}
	if hc, _ := HBMBytes(gemm); hc != 3*8192*8192*2 {
		t.Errorf("GEMM HBM bytes %v, want A + B + C = 384 MiB", hc)
	}
	for _, tc := range []struct {
		name             string
		sc               scenarios.Scenario
		tComp, tComm, c3 float64
		bw               float64
		by               string
		tBound, fraction float64
	}{
		// 4 GiB through 4 TB/s take 1.07 ms: more than either op alone.
		{"memory-bound pair is held by HBM", stream, 540e3, 700e3, 1200e3, 4e12, "hbm", float64(4<<30) / 4e12 * 1e9, 0},
		// A compute-bound GEMM moves little: the longer op is the bound.
		{"compute-bound pair is held by the longer op", gemm, 1300e3, 1100e3, 1300e3, 4e12, "longer op", 1300e3, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sReal := RealizedSpeedup(tc.tComp, tc.tComm, tc.c3)
			b, ok := ComputeBound(tc.sc, tc.tComp, tc.tComm, sReal, tc.bw)
			if !ok {
				t.Fatal("no bound")
			}
			if b.By != tc.by || !near(b.TBound, tc.tBound) {
				t.Errorf("bound %v by %s, want %v by %s", b.TBound, b.By, tc.tBound, tc.by)
			}
			if tc.by == "longer op" && (b.FractionOfBound == nil || !near(*b.FractionOfBound, tc.fraction)) {
				t.Errorf("fraction of bound %v, want %v", b.FractionOfBound, tc.fraction)
			}
			if tc.by == "hbm" {
				fIdeal, _ := FractionOfIdeal(sReal, IdealSpeedup(tc.tComp, tc.tComm))
				if b.FractionOfBound == nil || *b.FractionOfBound <= fIdeal {
					t.Errorf("against the HBM bound the run should score higher than against the ideal: %v vs %v", b.FractionOfBound, fIdeal)
				}
			}
		})
	}
	if _, ok := ComputeBound(gemm, 1, 1, 1, 0); ok {
		t.Error("a bound without HBM bandwidth")
	}
}

// TestBoundGap checks that a result missing its fraction of bound says
// the true reason: the bandwidth being unknown is only one of them.
func TestBoundGap(t *testing.T) {
	sc := scenarios.Scenario{GPUs: 2,
		Compute: scenarios.ComputeOp{Kind: scenarios.Stream, Bytes: 1 << 30},
		Comm:    scenarios.CommOp{Collective: scenarios.AllGather, Bytes: 1 << 30}}
	// The pair moves 4 GiB through HBM: 1.07 ms at 4 TB/s.
	tHBM := float64(4<<30) / 4e12 * 1e9
	stat := func(ns float64) Stat { return Summarize([]int64{int64(ns)}) }
	for _, tc := range []struct {
		name             string
		tComp, tComm, c3 float64
		concurrent       bool
		bw               float64
		want             BoundGap
	}{
		{"bound known", 600e3, 700e3, 900e3, true, 4e12, BoundDefined},
		{"no HBM bandwidth", 600e3, 700e3, 900e3, true, 0, GapNoHBMBandwidth},
		{"no concurrent run", 600e3, 700e3, 0, false, 4e12, GapNoConcurrentRun},
		{"an op took no time", 0, 700e3, 700e3, true, 4e12, GapNoIsolatedTime},
		// Both ops in series take exactly the HBM time: the bound is 1x.
		{"bound of 1x", tHBM / 2, tHBM / 2, tHBM, true, 4e12, GapNoSpeedup},
		// The ops in series beat the HBM time at the bandwidth given.
		{"bound below 1x", tHBM / 4, tHBM / 4, tHBM / 2, true, 4e12, GapBelowOne},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Result{Scenario: sc, TComp: stat(tc.tComp), TComm: stat(tc.tComm)}
			if tc.concurrent {
				r.TC3 = stat(tc.c3)
			}
			r.Derive(tc.bw)
			got := r.BoundGap()
			if got != tc.want {
				t.Fatalf("gap %v, want %v", got, tc.want)
			}
			if (got == BoundDefined) != (r.Bound != nil && r.Bound.FractionOfBound != nil) {
				t.Errorf("gap %v but bound %+v", got, r.Bound)
			}
			if got != BoundDefined && got.String() == "" {
				t.Errorf("gap %d has no words", got)
			}
			if got == GapNoSpeedup || got == GapBelowOne {
				if r.Bound == nil || r.Bound.Note == "" {
					t.Errorf("bound %+v carries no note for JSON readers", r.Bound)
				}
			}
		})
	}
}

// A graph's bound: no shorter than T_ideal, nor than the HBM bytes of
// every instance of every op over the bandwidth. Four stream ops of 1 GB
// (2 GB of traffic each) next to an all-gather: 8 GB + the collective's
// traffic at 4 TB/s outlasts T_ideal, so HBM sets it.
func TestGraphBound(t *testing.T) {
	sc := graphOf(
		scenarios.StreamSpec{Name: "compute", Ops: []scenarios.StreamOp{{Name: "s", Kind: scenarios.OpKind(scenarios.Stream), Bytes: 1 << 30, Count: 4}}},
		scenarios.StreamSpec{Name: "comm", Ops: []scenarios.StreamOp{gather("ag", 64<<20)}},
	)
	g, err := sc.Graph(scenarios.Strategy{})
	if err != nil {
		t.Fatal(err)
	}
	hc, hm := GraphHBMBytes(g)
	if hc != 4*2*(1<<30) || hm != 2*sc.Comm.LinkBytes(2) {
		t.Fatalf("HBM bytes %v + %v", hc, hm)
	}
	tHBM := (hc + hm) / 4e12 * 1e9
	for _, tc := range []struct {
		name  string
		ideal float64
		by    string
	}{{"hbm", tHBM / 2, "hbm"}, {"ideal", tHBM * 2, "ideal"}} {
		t.Run(tc.name, func(t *testing.T) {
			b, ok := ComputeGraphBound(g, 3*tc.ideal, tc.ideal, 1.2, 4e12)
			want := max(tc.ideal, tHBM)
			if !ok || b.By != tc.by || b.TBound != want || b.SBound != 3*tc.ideal/want {
				t.Errorf("bound %+v, want %v by %s", b, want, tc.by)
			}
		})
	}
}
