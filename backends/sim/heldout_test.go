package sim

import (
	"strings"
	"testing"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// A simulated run's model error is its collective's held-out T_c3 error
// and its band's F error, each all runs' where too few are alike, and
// says when no held-out run had its GPU count.
func TestModelErrorPicksItsScope(t *testing.T) {
	figs := func(runs int, c3, f float64) ErrorFigures {
		return ErrorFigures{Runs: runs, TC3Median: c3, TC3P90: 2 * c3, FRuns: runs, FMedian: f, FP90: 2 * f}
	}
	h := &HeldOutError{Runs: 60, Scenarios: 6, GPUs: []int{1, 2}, All: figs(60, 0.02, 4),
		ByCollective: map[string]ErrorFigures{"all-gather": figs(30, 0.01, 3), "swap": figs(MinScopeRuns-1, 0.09, 9)},
		ByIdealSpeedup: []SpeedupBandErrors{
			{From: 1, To: 1.2, Figures: figs(20, 0.03, 11)},
			{From: 1.2, To: 1.5, Figures: figs(MinScopeRuns-1, 0.03, 7)},
			{From: 1.5, Figures: figs(30, 0.02, 3)},
		}}
	pair := func(c scenarios.Collective, gpus int) scenarios.Scenario {
		return scenarios.Scenario{Name: "x", GPUs: gpus, Compute: scenarios.ComputeOp{Kind: scenarios.GEMM, M: 8, N: 8, K: 8, DType: scenarios.BF16},
			Comm: scenarios.CommOp{Collective: c, Bytes: 1 << 20}}
	}
	graph := func(kinds ...scenarios.OpKind) scenarios.Scenario {
		sc := scenarios.Scenario{Name: "g", GPUs: 2}
		for _, k := range kinds {
			sc.Streams = append(sc.Streams, scenarios.StreamSpec{Name: string(k), Ops: []scenarios.StreamOp{{Kind: k, Bytes: 1 << 20}}})
		}
		return sc
	}
	for _, tc := range []struct {
		name          string
		sc            scenarios.Scenario
		sIdeal        float64
		scope, fScope string
		c3, f         float64
		unvalidated   string
	}{
		{"its collective, its band", pair(scenarios.AllGather, 2), 1.1, "all-gather", "S_ideal 1.0 to 1.2", 0.01, 11, ""},
		{"the top band has no upper edge", pair(scenarios.AllGather, 2), 7, "all-gather", "S_ideal 1.5 and up", 0.01, 3, ""},
		{"too few of its collective", pair(scenarios.HostSwap, 1), 1.1, backends.ScopeAll, "S_ideal 1.0 to 1.2", 0.02, 11, ""},
		{"a collective none held out", pair(scenarios.AllToAll, 2), 1.6, backends.ScopeAll, "S_ideal 1.5 and up", 0.02, 3, ""},
		{"too few of its band", pair(scenarios.AllGather, 2), 1.3, "all-gather", backends.ScopeAll, 0.01, 4, ""},
		{"undefined ideal speedup", pair(scenarios.AllGather, 2), 1, "all-gather", backends.ScopeAll, 0.01, 4, ""},
		{"eight GPUs", pair(scenarios.AllGather, 8), 1.1, "all-gather", "S_ideal 1.0 to 1.2", 0.01, 11, "no held-out run used 8 GPUs (they used 1, 2)"},
		{"a graph of one collective", graph(scenarios.OpKind(scenarios.AllGather), scenarios.OpKind(scenarios.AllGather)), 1.6, "all-gather", "S_ideal 1.5 and up", 0.01, 3, ""},
		{"a graph of two", graph(scenarios.OpKind(scenarios.AllGather), scenarios.OpKind(scenarios.ReduceScatter)), 1.6, backends.ScopeAll, "S_ideal 1.5 and up", 0.02, 3, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := NewFromFile(ProfileFile{Profile: H200(), Fit: &FitRecord{HeldOutError: h}, label: "test.yaml"})
			me := b.ModelError(tc.sc, tc.sIdeal)
			if me == nil {
				t.Fatal("no model error from a profile with held-out figures")
			}
			want := backends.ModelError{Profile: "test.yaml", Device: H200().Device, Scope: tc.scope, FScope: tc.fScope, Unvalidated: tc.unvalidated}
			got := backends.ModelError{Profile: me.Profile, Device: me.Device, Scope: me.Scope, FScope: me.FScope, Unvalidated: me.Unvalidated}
			if got != want {
				t.Errorf("scopes %+v, want %+v", got, want)
			}
			if me.TC3Median != tc.c3 || me.TC3P90 != 2*tc.c3 || me.FMedian != tc.f || me.FP90 != 2*tc.f {
				t.Errorf("figures T_c3 %v/%v F %v/%v, want %v/%v and %v/%v", me.TC3Median, me.TC3P90, me.FMedian, me.FP90, tc.c3, 2*tc.c3, tc.f, 2*tc.f)
			}
		})
	}
	if me := New(H200()).ModelError(pair(scenarios.AllGather, 2), 1.1); me != nil {
		t.Errorf("a hand-set profile gave a model error: %+v", me)
	}
}

// The built-in calibrated profile carries its held-out figures, and the
// simulator on it reports them under its name.
func TestFittedH200HasHeldOutError(t *testing.T) {
	pf, err := FittedH200()
	if err != nil {
		t.Fatal(err)
	}
	h := pf.Fit.HeldOutError
	if h == nil || h.Runs == 0 || h.All.Runs != h.Runs || len(h.ByCollective) == 0 || len(h.ByIdealSpeedup) == 0 {
		t.Fatalf("the built-in profile's held-out error: %+v", h)
	}
	me := NewFromFile(pf).ModelError(scenarios.Scenario{GPUs: 2, Comm: scenarios.CommOp{Collective: scenarios.ReduceScatter}}, 1.8)
	if me == nil || me.Profile != FittedH200Name || !strings.Contains(me.Device, "H200") || me.Scope != "reduce-scatter" {
		t.Errorf("model error on the built-in profile: %+v", me)
	}
}

// A run with a GEMM the profile has no measurement of says so, with the
// model's error on such GEMMs alone; a run of measured GEMMs, of a stream
// op, or on a profile without GEMM tables does not.
func TestModelErrorNamesAnUnmeasuredGEMM(t *testing.T) {
	pf, err := FittedH200()
	if err != nil {
		t.Fatal(err)
	}
	suite, err := scenarios.Find("llama3-70b-tp-qkv-ag-224m-2gpu")
	if err != nil {
		t.Fatal(err)
	}
	unseen := scenarios.ComputeOp{Kind: scenarios.GEMM, M: 8192, N: 24576, K: 6144, DType: scenarios.BF16}
	withGEMM := suite
	withGEMM.Compute = unseen
	stream := suite
	stream.Compute = scenarios.ComputeOp{Kind: scenarios.Stream, Bytes: 1 << 28}
	graph := scenarios.Scenario{Name: "g", GPUs: 2, Streams: []scenarios.StreamSpec{
		{Name: "compute", Ops: []scenarios.StreamOp{scenarios.ComputeStreamOp("timed", suite.Compute), scenarios.ComputeStreamOp("new", unseen)}},
		{Name: "comm", Ops: []scenarios.StreamOp{scenarios.CommStreamOp("ag", suite.Comm)}},
	}}
	noTable := pf
	noTable.Profile = CloneProfile(pf.Profile)
	noTable.Profile.GEMMWholeTimes, noTable.Profile.GEMMPlacements, noTable.Profile.GEMMLaunches = nil, nil, nil
	for _, tc := range []struct {
		name string
		pf   ProfileFile
		sc   scenarios.Scenario
		want string
	}{
		{"a suite GEMM", pf, suite, ""},
		{"a GEMM no table has", pf, withGEMM, unseen.String()},
		{"a stream op", pf, stream, ""},
		{"a graph with one of each", pf, graph, unseen.String()},
		{"a profile without GEMM tables", noTable, withGEMM, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			me := NewFromFile(tc.pf).ModelError(tc.sc, 1.5)
			if me == nil {
				t.Fatal("no model error from the calibrated profile")
			}
			if me.UnmeasuredGEMM != tc.want {
				t.Errorf("unmeasured GEMM %q, want %q", me.UnmeasuredGEMM, tc.want)
			}
			wantMed, wantP90 := 0.0, 0.0
			if tc.want != "" {
				wantMed, wantP90 = UnmeasuredGEMMMedian, UnmeasuredGEMMP90
			}
			if me.GEMMAloneMedian != wantMed || me.GEMMAloneP90 != wantP90 {
				t.Errorf("alone %v / %v, want %v / %v", me.GEMMAloneMedian, me.GEMMAloneP90, wantMed, wantP90)
			}
		})
	}
}

// The model-error note says that the model had measurements of every
// held-out run's GEMM; so must the built-in profile's held-out scenarios.
func TestHeldOutScenariosHaveMeasuredGEMMs(t *testing.T) {
	pf, err := FittedH200()
	if err != nil {
		t.Fatal(err)
	}
	b := NewFromFile(pf)
	if len(pf.Fit.HeldOut) == 0 {
		t.Fatal("the built-in profile holds no scenario out")
	}
	for _, name := range pf.Fit.HeldOut {
		sc, err := scenarios.Find(name)
		if err != nil {
			t.Fatalf("held-out scenario %s: %v", name, err)
		}
		if c, ok := b.unmeasuredGEMM(sc); ok {
			t.Errorf("held-out scenario %s: the profile has no measurement of its %v", name, c)
		}
	}
}
