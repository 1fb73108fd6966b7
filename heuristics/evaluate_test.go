package heuristics

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/backends/sim"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
)

// fakeModel predicts each candidate's U from a table keyed by scenario
// and strategy name; it records which scenarios it was fitted on.
type fakeModel struct {
	u     map[string]map[string]float64
	train []string
}

func (m fakeModel) Name() string { return "the fake model" }

func (m fakeModel) Predict(_ context.Context, sc scenarios.Scenario, cands []profiler.NamedStrategy) ([]Prediction, error) {
	var out []Prediction
	for _, c := range cands {
		u, ok := m.u[sc.Name][c.Name]
		p := Prediction{Name: c.Name, Strategy: c.Strategy}
		if !ok {
			p.Err = "unknown"
		} else {
			p.Uplift, p.TC3 = u, 1000/u
		}
		out = append(out, p)
	}
	return out, nil
}

// run is a measured result of one strategy: T_c3 tc3 (ns) with an
// interval of ±half, against a serial default of 1000 ns.
func run(sc scenarios.Scenario, name string, st scenarios.Strategy, tc3, half float64) Measurement {
	r := profiler.Result{Scenario: sc, Strategy: st, TC3: profiler.Stat{N: 10, Median: tc3}, SerialDefault: 1000, Uplift: 1000 / tc3,
		Class: profiler.GEMMLong, TSerial: 1000}
	r.CI = &profiler.Intervals{TC3: profiler.Interval{Lo: tc3 - half, Hi: tc3 + half}, U: profiler.Interval{Lo: 1000 / (tc3 + half), Hi: 1000 / (tc3 - half)}}
	return Measurement{Scenario: sc.Name, Strategy: name, Source: "fixture.json", Result: r}
}

// fixture is four scenarios, each with three measured strategies whose
// best is known: "fast" (T_c3 800), then "mid" (900, or 820 on d), then
// "baseline" (1000); the intervals are ±5 ns.
func fixture() (Measurements, map[string]map[string]float64) {
	m := Measurements{}
	truth := map[string]map[string]float64{}
	for i, name := range []string{"a", "b", "c", "d"} {
		coll := []scenarios.Collective{scenarios.AllGather, scenarios.AllReduce}[i%2]
		sc := scenarios.Scenario{Name: name, GPUs: 2, Compute: scenarios.ComputeOp{Kind: scenarios.GEMM, M: 4096, N: 4096, K: 4096, DType: scenarios.BF16},
			Comm: scenarios.CommOp{Collective: coll, Bytes: 64 << 20}}
		mid := 900.0
		if name == "d" {
			mid = 820
		}
		for _, r := range []Measurement{
			run(sc, "baseline", scenarios.Strategy{}, 1000, 5),
			run(sc, "mid", scenarios.Strategy{CommSMs: 16}, mid, 5),
			run(sc, "fast", scenarios.Strategy{CommSMs: 32}, 800, 5),
		} {
			m[name] = append(m[name], r)
			if truth[name] == nil {
				truth[name] = map[string]float64{}
			}
			truth[name][r.Strategy] = r.Result.Uplift
		}
	}
	return m, truth
}

func fitWith(u map[string]map[string]float64, seen *[][]string) Fitter {
	return func(_ context.Context, _ int, train []string) (Model, error) {
		*seen = append(*seen, slices.Clone(train))
		return fakeModel{u: u, train: train}, nil
	}
}

// A model that ranks like the measurements scores zero regret; one that
// ranks backwards is caught, with the regret computed by hand: it advises
// the baseline (1000 ns) against the best's 800 ns, 25 % regret and 25
// points of U (1.25x - 1.00x), on every case; within 3 % on none.
func TestEvaluateScoresRightAndWrongModels(t *testing.T) {
	m, truth := fixture()
	cases := Cases(m)
	if len(cases) != 4 {
		t.Fatalf("%d cases, want 4", len(cases))
	}
	var seen [][]string
	ev, err := Evaluate(context.Background(), cases, EvalOptions{Folds: 2, Seed: 1, Fit: fitWith(truth, &seen)})
	if err != nil {
		t.Fatal(err)
	}
	if ev.All.Cases != 4 || ev.All.Within != 1 || ev.All.MedianRegret != 0 || ev.All.MaxRegret != 0 || ev.All.Best != 4 || ev.All.Slower != 0 {
		t.Errorf("right model: %+v", ev.All)
	}
	backwards := map[string]map[string]float64{}
	for sc, us := range truth {
		backwards[sc] = map[string]float64{}
		for st, u := range us {
			backwards[sc][st] = 1 / u
		}
	}
	ev, err = Evaluate(context.Background(), cases, EvalOptions{Folds: 2, Seed: 1, Fit: fitWith(backwards, &seen)})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range ev.Cases {
		if c.Advised != "baseline" || c.Best != "fast" || math.Abs(c.Regret-0.25) > 1e-12 || math.Abs(c.RegretU-25) > 1e-9 || c.Within || c.SlowerThanDefault {
			t.Errorf("backwards model on %s: %+v", c.Scenario, c)
		}
	}
	if ev.All.Within != 0 || math.Abs(ev.All.MedianRegret-0.25) > 1e-12 {
		t.Errorf("backwards model's summary: %+v", ev.All)
	}
}

// A model that advises "mid" scores 12.5 % regret (900/800 - 1) on a, b
// and c and 2.5 % (820/800 - 1) on d, which is within 3 %: median
// 12.5 %, within on one case of four. A model that advises a strategy
// measured slower than the default beyond the interval is flagged; one
// whose pick overlaps the default's interval is not.
func TestEvaluateRegretByHandAndSlowerThanDefault(t *testing.T) {
	m, _ := fixture()
	pickMid := map[string]map[string]float64{}
	for _, sc := range []string{"a", "b", "c", "d"} {
		pickMid[sc] = map[string]float64{"baseline": 1, "mid": 2, "fast": 1.5}
	}
	var seen [][]string
	ev, err := Evaluate(context.Background(), Cases(m), EvalOptions{Folds: 4, Seed: 3, Fit: fitWith(pickMid, &seen)})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"a": 0.125, "b": 0.125, "c": 0.125, "d": 0.025}
	for _, c := range ev.Cases {
		if math.Abs(c.Regret-want[c.Scenario]) > 1e-12 || c.Within != (c.Scenario == "d") {
			t.Errorf("%s: regret %v within %v, want %v", c.Scenario, c.Regret, c.Within, want[c.Scenario])
		}
	}
	if ev.All.Within != 0.25 || math.Abs(ev.All.MedianRegret-0.125) > 1e-12 || math.Abs(ev.All.MeanRegret-0.1) > 1e-12 {
		t.Errorf("summary %+v", ev.All)
	}
	if len(ev.ByComm) != 2 || ev.ByComm[0].Key != "all-gather" || ev.ByComm[0].Cases != 2 {
		t.Errorf("per collective: %+v", ev.ByComm)
	}

	// A slow strategy: 1100 ns against the baseline's 1000 ± 5.
	for _, name := range []string{"a", "b"} {
		sc := m[name][0].Result.Scenario
		half := 5.0
		if name == "b" {
			half = 120 // 980..1220 overlaps the baseline's 995..1005: not told apart
		}
		m[name] = append(m[name], run(sc, "slow", scenarios.Strategy{CommCTAs: 8}, 1000+100, half))
		pickMid[name]["slow"] = 9
	}
	ev, err = Evaluate(context.Background(), Cases(m), EvalOptions{Folds: 2, Seed: 3, Fit: fitWith(pickMid, &seen)})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range ev.Cases {
		if wantSlow := c.Scenario == "a"; c.SlowerThanDefault != wantSlow {
			t.Errorf("%s: slower than default %v, want %v (%+v)", c.Scenario, c.SlowerThanDefault, wantSlow, c)
		}
	}
	if ev.All.Slower != 1 {
		t.Errorf("summary counts %d slower, want 1", ev.All.Slower)
	}
}

// No scenario is scored by a model fitted on it: every fold's model saw
// the other folds' scenarios only, and every scenario is scored once.
func TestEvaluateFoldsNeverScoreTheirTrainingScenarios(t *testing.T) {
	m := Measurements{}
	u := map[string]map[string]float64{}
	for i := range 23 {
		coll := []scenarios.Collective{scenarios.AllGather, scenarios.AllReduce, scenarios.AllToAll}[i%3]
		sc := scenarios.Scenario{Name: fmt.Sprintf("s%02d", i), GPUs: 2, Comm: scenarios.CommOp{Collective: coll, Bytes: 1 << 20}}
		m[sc.Name] = []Measurement{run(sc, "baseline", scenarios.Strategy{}, 1000, 1), run(sc, "fast", scenarios.Strategy{CommSMs: 32}, 900, 1)}
		u[sc.Name] = map[string]float64{"baseline": 1, "fast": 2}
	}
	for _, k := range []int{2, 4, 5} {
		var trained [][]string
		models := map[int][]string{}
		fit := func(_ context.Context, fold int, train []string) (Model, error) {
			trained = append(trained, train)
			models[fold] = train
			return fakeModel{u: u}, nil
		}
		ev, err := Evaluate(context.Background(), Cases(m), EvalOptions{Folds: k, Seed: 7, Fit: fit})
		if err != nil {
			t.Fatal(err)
		}
		if len(ev.Cases) != 23 || len(trained) != k {
			t.Fatalf("k=%d: %d cases scored, %d fits", k, len(ev.Cases), len(trained))
		}
		for _, c := range ev.Cases {
			if slices.Contains(models[c.Fold], c.Scenario) {
				t.Errorf("k=%d: %s scored by a model fitted on it", k, c.Scenario)
			}
			if got := len(models[c.Fold]); got < 23-23/k-1 {
				t.Errorf("k=%d: fold %d trained on only %d scenarios", k, c.Fold, got)
			}
		}
	}
	if _, err := Evaluate(context.Background(), Cases(m), EvalOptions{Folds: 1, Fit: fitWith(u, new([][]string))}); err == nil {
		t.Error("one fold accepted")
	}
}

// The model-ranked advice: on the simulator, every candidate is predicted,
// the advice is the top by U and never predicted slower than the default,
// and each reason that quotes figures quotes this scenario's.
func TestAdviseModelRanksCandidates(t *testing.T) {
	b := sim.New(sim.H200())
	caps := b.Capabilities()
	for _, name := range []string{"llama3-70b-fsdp-ffn-up-ag-224m-2gpu", scenarios.Names()[0]} {
		sc, err := scenarios.Find(name)
		if err != nil {
			t.Fatal(err)
		}
		a, err := AdviseModel(context.Background(), BackendModel{Backend: b}, sc, caps, AdviseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Predictions) < 2 || a.Predictions[0].Name != a.Advised || a.Predictions[0].Strategy != a.Strategy {
			t.Fatalf("%s: advice %+v", name, a)
		}
		// Measure every candidate independently: the advice is the best.
		for _, c := range CandidateSet(sc, caps) {
			r, err := profiler.Measure(context.Background(), b, sc, c.Strategy, profiler.Options{Reps: 1})
			if err != nil {
				continue
			}
			if r.Uplift > a.Predictions[0].Uplift*(1+1e-9) {
				t.Errorf("%s: %s predicted at U %.4f, above the advice's %.4f", name, c.Name, r.Uplift, a.Predictions[0].Uplift)
			}
			if c.Name == "baseline" && a.Predictions[0].TC3 > r.TC3.Median {
				t.Errorf("%s: advice predicted slower than the default", name)
			}
		}
		if !strings.Contains(a.Reasons[0], "predicted by the h200 profile: T_c3") {
			t.Errorf("%s: first reason %q", name, a.Reasons[0])
		}
	}
}

// CandidateSet leaves out what the device cannot do: without copy
// engines no dma strategy, without copy-engine reductions none for a
// reduction, and decomposition only for dependent ops.
func TestCandidateSetFollowsCapabilities(t *testing.T) {
	caps := sim.New(sim.H200()).Capabilities()
	ar := scenarios.Scenario{Name: "x", GPUs: 2, Compute: scenarios.ComputeOp{Kind: scenarios.GEMM, M: 4096, N: 4096, K: 4096, DType: scenarios.BF16},
		Comm: scenarios.CommOp{Collective: scenarios.AllReduce, Bytes: 64 << 20}}
	names := func(cs []profiler.NamedStrategy) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.Name)
		}
		return out
	}
	all := names(CandidateSet(ar, caps))
	for _, want := range []string{"baseline", "comm-first+prio", "comm-sms-32", "ctas-8", "dma-gemm-112-pipe"} {
		if !slices.Contains(all, want) {
			t.Errorf("all-reduce candidates lack %s: %v", want, all)
		}
	}
	if slices.Contains(all, "whole") || slices.Contains(all, "nccl-ce") && !caps.Has(scenarios.CapNCCLCopyEngine) {
		t.Errorf("candidates %v", all)
	}
	noRed := caps
	noRed.DMAReductions = false
	for _, n := range names(CandidateSet(ar, noRed)) {
		if strings.HasPrefix(n, "dma") {
			t.Errorf("without copy-engine reductions: %s", n)
		}
	}
	for _, n := range names(CandidateSet(ar, caps.Without(scenarios.CapDMA, scenarios.CapSMPartition))) {
		if strings.HasPrefix(n, "dma") || strings.HasPrefix(n, "comm-sms") || strings.HasPrefix(n, "p2p-comm-sms") {
			t.Errorf("without copy engines and partitions: %s", n)
		}
	}
	// p2p-load: for a pair's reduction on a device with peer loads only.
	for _, want := range []string{"p2p-load", "p2p-comm-first", "p2p-comm-sms-16", "p2p-comm-sms-32"} {
		if !slices.Contains(all, want) {
			t.Errorf("all-reduce candidates lack %s: %v", want, all)
		}
	}
	ag := ar
	ag.Comm.Collective = scenarios.AllGather
	for _, sc := range []struct {
		what string
		cs   []profiler.NamedStrategy
	}{
		{"an all-gather", CandidateSet(ag, caps)},
		{"a device without peer loads", CandidateSet(ar, caps.Without(scenarios.CapPeerLoad))},
	} {
		for _, n := range names(sc.cs) {
			if strings.HasPrefix(n, "p2p-") {
				t.Errorf("%s has candidate %s", sc.what, n)
			}
		}
	}
}

// The explanation of a p2p-load strategy says what it does, on what CTAs,
// and that its model constant is unmeasured.
func TestExplainPeerLoad(t *testing.T) {
	sc := scenarios.Scenario{Name: "x", GPUs: 2, Compute: scenarios.ComputeOp{Kind: scenarios.GEMM, M: 8192, N: 8192, K: 8192, DType: scenarios.BF16},
		Comm: scenarios.CommOp{Collective: scenarios.ReduceScatter, Bytes: 64 << 20}}
	st := scenarios.Strategy{CommEngine: scenarios.EngineP2PLoad, Launch: scenarios.CommFirst, CommSMs: 16}
	got := strings.Join(explain(sc, sim.New(sim.H200()).Capabilities(), Findings{}, st), "\n")
	for _, want := range []string{"why load the peers' blocks", "no staging copy", "its 16-SM partition", "no GPU run has measured"} {
		if !strings.Contains(got, want) {
			t.Errorf("explanation lacks %q:\n%s", want, got)
		}
	}
}

// capsModel is a fakeModel that says what the device can do, as a
// backend model does.
type capsModel struct {
	fakeModel
	caps backends.Capabilities
}

func (m capsModel) Capabilities() backends.Capabilities { return m.caps }

// The rules of thumb are scored beside the model where the sweep measured
// their strategy: on a, measured at 850 ns against the best's 800, a
// 6.25 % regret; elsewhere not at all.
func TestEvaluateScoresTheRulesWhereMeasured(t *testing.T) {
	m, truth := fixture()
	caps := sim.New(sim.H200()).Capabilities()
	sc := m["a"][0].Result.Scenario
	rules := advise(sc, caps, FindingsFor(caps.Limits.Device)).Strategy
	m["a"] = append(m["a"], run(sc, "rules-pick", rules, 850, 5))
	truth["a"]["rules-pick"] = 1
	fit := func(context.Context, int, []string) (Model, error) { return capsModel{fakeModel{u: truth}, caps}, nil }
	ev, err := Evaluate(context.Background(), Cases(m), EvalOptions{Folds: 2, Seed: 1, Fit: fit})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range ev.Cases {
		switch {
		case c.Scenario == "a" && (c.Rules != "rules-pick" || c.RulesRegret == nil || math.Abs(*c.RulesRegret-0.0625) > 1e-12):
			t.Errorf("a: rules %q regret %v", c.Rules, c.RulesRegret)
		case c.Scenario != "a" && c.RulesRegret != nil:
			t.Errorf("%s: rules scored where unmeasured: %q", c.Scenario, c.Rules)
		}
	}
	if ev.All.RulesCases != 1 || ev.All.RulesWithin != 0 || math.Abs(ev.All.RulesMedianRegret-0.0625) > 1e-12 {
		t.Errorf("summary %+v", ev.All)
	}
}

// The tune position, by hand: Tune measures the advised strategy, then
// the others in predicted order, and finds the best at the first that is
// it or not told apart from it. On a the model ranks three slow
// strategies and the baseline first, so fast (the best) comes 6th; on b
// fast is 1st; on c mid then fast, 2nd; on d mid then near (805 ± 10 ns,
// overlapping fast's 795..805, so tied with it), 2nd. Within 4 on three
// cases of four; per collective, all-gather (a, c) one of two,
// all-reduce (b, d) both.
func TestEvaluateTunePositionByHand(t *testing.T) {
	m, _ := fixture()
	sc := func(name string) scenarios.Scenario { return m[name][0].Result.Scenario }
	for i, tc3 := range []float64{950, 960, 970} {
		m["a"] = append(m["a"], run(sc("a"), fmt.Sprintf("x%d", i+1), scenarios.Strategy{CommCTAs: 8 * (i + 1)}, tc3, 5))
	}
	m["d"] = append(m["d"], run(sc("d"), "near", scenarios.Strategy{CommCTAs: 8}, 805, 10))
	u := map[string]map[string]float64{
		"a": {"x1": 9, "x2": 8, "x3": 7, "baseline": 6, "mid": 5, "fast": 4},
		"b": {"fast": 3, "mid": 2, "baseline": 1},
		"c": {"mid": 3, "fast": 2, "baseline": 1},
		"d": {"mid": 4, "near": 3, "fast": 2, "baseline": 1},
	}
	var seen [][]string
	ev, err := Evaluate(context.Background(), Cases(m), EvalOptions{Folds: 2, Seed: 1, Fit: fitWith(u, &seen)})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"a": 6, "b": 1, "c": 2, "d": 2}
	for _, c := range ev.Cases {
		if c.TunePosition != want[c.Scenario] {
			t.Errorf("%s: tune position %d, want %d (advised %s, best %s)", c.Scenario, c.TunePosition, want[c.Scenario], c.Advised, c.Best)
		}
	}
	if ev.All.TuneWithin != 0.75 || ev.All.MaxTunePosition != 6 {
		t.Errorf("summary: within 4 on %v, max %d; want 0.75 and 6", ev.All.TuneWithin, ev.All.MaxTunePosition)
	}
	by := map[string]float64{}
	for _, s := range ev.ByComm {
		by[s.Key] = s.TuneWithin
	}
	if by["all-gather"] != 0.5 || by["all-reduce"] != 1 {
		t.Errorf("per collective: %v, want all-gather 0.5, all-reduce 1", by)
	}
	if len(ev.ByClass) != 1 || ev.ByClass[0].TuneWithin != 0.75 {
		t.Errorf("per class: %+v", ev.ByClass)
	}
}

// errorModel is fakeModel with a model error that scores its ranking.
type errorModel struct {
	fakeModel
	me *backends.ModelError
}

func (m errorModel) ModelError(scenarios.Scenario) *backends.ModelError { return m.me }

// A runner-up nearer than the model's picks are held to is called a close
// call, with the held-out ranking score; a clear lead, or a model without
// a score, is not.
func TestAdviseModelSaysCloseCalls(t *testing.T) {
	caps := sim.New(sim.H200()).Capabilities()
	sc := scenarios.Scenario{Name: "x", GPUs: 2, Compute: scenarios.ComputeOp{Kind: scenarios.GEMM, M: 4096, N: 4096, K: 4096, DType: scenarios.BF16},
		Comm: scenarios.CommOp{Collective: scenarios.AllGather, Bytes: 64 << 20}}
	me := &backends.ModelError{Device: "NVIDIA H200", RankCases: 30, RankWithin: 29, RankTolerance: 0.03}
	for _, tc := range []struct {
		name   string
		second float64 // the runner-up's U; the best's is 1.5
		me     *backends.ModelError
		close  bool
	}{
		{"within 3 %", 1.48, me, true},
		{"a clear lead", 1.3, me, false},
		{"no score", 1.48, nil, false},
		{"a score of no cases", 1.48, &backends.ModelError{RankTolerance: 0.03}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := map[string]map[string]float64{"x": {"dma": 1.5, "comm-first+prio": tc.second, "baseline": 1}}
			a, err := AdviseModel(context.Background(), errorModel{fakeModel{u: u}, tc.me}, sc, caps, AdviseOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if a.Advised != "dma" {
				t.Fatalf("advised %s", a.Advised)
			}
			said := ""
			for _, r := range a.Reasons {
				if strings.HasPrefix(r, "a close call") {
					said = r
				}
			}
			if (said != "") != tc.close {
				t.Errorf("close call said %q, want said %v; reasons:\n%s", said, tc.close, strings.Join(a.Reasons, "\n"))
			}
			if tc.close && !strings.Contains(said, "in 29 of 30") {
				t.Errorf("the close call does not give the ranking score: %q", said)
			}
		})
	}
}
