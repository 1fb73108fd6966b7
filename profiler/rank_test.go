package profiler

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// ranked is a result of U u (0: none) and T_c3 c3 (ns), with intervals
// of half-width hu and h3 when those are above 0.
func ranked(u, hu, c3, h3 float64) Result {
	r := Result{TC3: Stat{N: 20, Median: c3}, Uplift: u}
	if hu > 0 || h3 > 0 {
		r.CI = &Intervals{U: noInterval(), TC3: noInterval()}
		if hu > 0 {
			r.CI.U = Interval{u - hu, u + hu}
		}
		if h3 > 0 {
			r.CI.TC3 = Interval{c3 - h3, c3 + h3}
		}
	}
	return r
}

func TestCompare(t *testing.T) {
	none := Result{}
	for _, tc := range []struct {
		name string
		a, b Result
		want Order
	}{
		{"U apart", ranked(1.30, 0.02, 900, 0), ranked(1.20, 0.02, 1000, 0), Better},
		{"U apart, other way", ranked(1.20, 0.02, 1000, 0), ranked(1.30, 0.02, 900, 0), Worse},
		{"U overlaps", ranked(1.25, 0.04, 900, 0), ranked(1.20, 0.04, 1000, 0), NotToldApart},
		{"U overlaps the other's value", ranked(1.25, 0.06, 900, 0), ranked(1.20, 0, 1000, 0), NotToldApart},
		{"no intervals (deterministic)", ranked(1.25, 0, 900, 0), ranked(1.20, 0, 1000, 0), Better},
		{"no intervals, equal", ranked(1.25, 0, 900, 0), ranked(1.25, 0, 900, 0), NotToldApart},
		{"by T_c3 without U, apart", ranked(0, 0, 900, 10), ranked(0, 0, 1000, 10), Better},
		{"by T_c3 without U, overlapping", ranked(0, 0, 990, 20), ranked(0, 0, 1000, 20), NotToldApart},
		{"by T_c3 without U, longer", ranked(0, 0, 1000, 10), ranked(0, 0, 900, 10), Worse},
		{"one without a concurrent run", ranked(1.2, 0, 900, 0), none, Better},
		{"neither has a concurrent run", none, none, NotToldApart},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Compare(tc.a, tc.b); got != tc.want {
				t.Errorf("Compare %v, want %v", got, tc.want)
			}
			if got := Outranks(tc.a, tc.b); got != (tc.want == Better) {
				t.Errorf("Outranks %v with Compare %v", got, tc.want)
			}
			// Symmetry: b against a is the opposite.
			back := map[Order]Order{Better: Worse, Worse: Better, NotToldApart: NotToldApart}[tc.want]
			if got := Compare(tc.b, tc.a); got != back {
				t.Errorf("Compare(b, a) %v, want %v", got, back)
			}
		})
	}
}

// TestBestPerScenarioTies checks that strategies whose intervals overlap
// the leader's are reported as tied with it, and that only untied firsts
// count as wins.
func TestBestPerScenarioTies(t *testing.T) {
	entry := func(sc, st string, r Result) SweepEntry { return SweepEntry{Scenario: sc, Strategy: st, Result: &r} }
	entries := []SweepEntry{
		entry("a", "x", ranked(1.30, 0.05, 900, 0)),
		entry("a", "y", ranked(1.27, 0.05, 920, 0)), // overlaps x
		entry("a", "z", ranked(1.10, 0.02, 1000, 0)),
		entry("b", "x", ranked(1.10, 0.01, 900, 0)),
		entry("b", "y", ranked(1.40, 0.01, 700, 0)), // apart: a clear win
		entry("b", "z", ranked(1.20, 0.01, 800, 0)),
	}
	bests := BestPerScenario(entries)
	if len(bests) != 2 {
		t.Fatalf("bests %+v", bests)
	}
	if b := bests[0]; b.Strategy != "x" || len(b.Tied) != 1 || b.Tied[0] != "y" || b.UpliftCI == nil || b.UpliftCI.Lo != 1.25 {
		t.Errorf("scenario a: %+v, want x tied with y", b)
	}
	if b := bests[1]; b.Strategy != "y" || len(b.Tied) != 0 {
		t.Errorf("scenario b: %+v, want y alone", b)
	}
	grid := []NamedStrategy{{Name: "x"}, {Name: "y"}, {Name: "z"}}
	sum := SummarizeSweep(entries, grid)
	for i, want := range []struct{ wins, tied int }{{0, 1}, {1, 1}, {0, 0}} {
		if sum[i].Wins != want.wins || sum[i].Tied != want.tied {
			t.Errorf("%s: %d wins, %d tied; want %d and %d", sum[i].Strategy, sum[i].Wins, sum[i].Tied, want.wins, want.tied)
		}
	}
	// x's mean U: the geometric mean of 1.30 and 1.10, with an interval
	// (every U has one) that holds it.
	x := sum[0]
	if x.MeanUplift == nil || math.Abs(*x.MeanUplift-math.Sqrt(1.30*1.10)) > 1e-9 || x.MeanUpliftCI == nil || !x.MeanUpliftCI.Contains(*x.MeanUplift) {
		t.Errorf("x: mean U %v in %+v", x.MeanUplift, x.MeanUpliftCI)
	}
	entries[0].Result.CI = nil
	if s := SummarizeSweep(entries, grid); s[0].MeanUpliftCI != nil {
		t.Errorf("a mean U with an interval although one U has none: %+v", s[0].MeanUpliftCI)
	}
}

// TestRemeasureBests checks that each scenario's best is measured again
// in fresh rounds, and that the figure the summary reports is the new
// one: on a backend whose numbers vary, not the selected maximum.
func TestRemeasureBests(t *testing.T) {
	caps := backends.Capabilities{Limits: limits()}.With(scenarios.CapPriority, scenarios.CapSMPartition, scenarios.CapCommCTACap)
	fb := &driftBackend{fakeBackend: fakeBackend{caps: caps}, rng: rand.New(rand.NewPCG(2, 2)), noise: 0.02, perRound: 3}
	grid, err := ParseGrid([]string{"baseline", "comm-sms-32", "ctas-8"}, limits())
	if err != nil {
		t.Fatal(err)
	}
	suite := []scenarios.Scenario{scenario()}
	entries, err := Sweep(context.Background(), fb, suite, grid, Options{Reps: 20}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	bests := BestPerScenario(entries)
	if len(bests) != 1 {
		t.Fatalf("bests %+v", bests)
	}
	// The three strategies are the same to this backend: the best is
	// tied with the others.
	if len(bests[0].Tied) != 2 {
		t.Errorf("the same strategy three times: tied with %v", bests[0].Tied)
	}
	calls := fb.calls
	if err := RemeasureBests(context.Background(), fb, suite, grid, bests, Options{Reps: 20}); err != nil {
		t.Fatal(err)
	}
	re := bests[0].Remeasured
	if re == nil || re.Err != "" || re.TC3 <= 0 || re.TC3CI == nil {
		t.Fatalf("remeasured %+v", re)
	}
	if fb.calls-calls != 3*DefaultRounds {
		t.Errorf("%d backend calls to measure one best again, want %d (a full measurement)", fb.calls-calls, 3*DefaultRounds)
	}
	if re.TC3 == bests[0].TC3 {
		t.Errorf("the re-measured T_c3 is the selected one (%v): not measured again", re.TC3)
	}
	// A best the suite does not hold says so.
	bad := []ScenarioBest{{Scenario: "gone", Strategy: "baseline"}}
	if err := RemeasureBests(context.Background(), fb, suite, grid, bad, Options{}); err != nil || bad[0].Remeasured == nil || bad[0].Remeasured.Err == "" {
		t.Errorf("a best of no scenario of the suite: %+v, %v", bad[0].Remeasured, err)
	}
}
