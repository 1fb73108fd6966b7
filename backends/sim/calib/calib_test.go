package calib

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/backends/sim"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/sweepfile"
	"github.com/c3lab/c3lab/scenarios"
)

// The committed reduction sweep: 12 scenarios under 8 strategies on two
// H200s, small enough to calibrate on in a test.
const reductionSweep = "../../cuda/results/2026-11-30-h200x2-session3/sweep-reductions-run3.json"

func mustRuns(t *testing.T, paths ...string) []Run {
	t.Helper()
	runs, err := LoadRuns(paths)
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

// The split is by scenario, covers every scenario once, holds out about
// the share asked in each group, and depends on the seed only.
func TestSplitScenarios(t *testing.T) {
	runs := mustRuns(t, "../../cuda/results/2026-11-30-h200x2-gated/sweep.json", "../../cuda/results/2026-12-01-h200x1/sweep-host.json")
	all := Scenarios(runs)
	a := SplitScenarios(runs, 0.3, 1)
	if got := len(a.Fit) + len(a.HeldOut); got != len(all) {
		t.Fatalf("%d + %d scenarios in the split, %d in the runs", len(a.Fit), len(a.HeldOut), len(all))
	}
	for _, s := range a.HeldOut {
		if slices.Contains(a.Fit, s) {
			t.Errorf("%s is both fitted and held out", s)
		}
	}
	// Per communication kind, 30 % of its scenarios, rounded.
	held := a.HeldOutSet()
	total, out := map[scenarios.Collective]int{}, map[scenarios.Collective]int{}
	for _, r := range runs {
		if r.Strategy == "baseline" {
			total[r.Scen.Comm.Collective]++
			if held[r.Scenario] {
				out[r.Scen.Comm.Collective]++
			}
		}
	}
	if len(total) < 5 {
		t.Fatalf("the sweeps have %d communication kinds; the test wants the four collectives and host copies", len(total))
	}
	for c, n := range total {
		if want := int(math.Round(0.3 * float64(n))); out[c] != want {
			t.Errorf("%d of %d %s scenarios held out, want %d", out[c], n, c, want)
		}
	}
	if b := SplitScenarios(runs, 0.3, 1); !slices.Equal(a.HeldOut, b.HeldOut) {
		t.Errorf("the same seed drew %v, then %v", a.HeldOut, b.HeldOut)
	}
	if c := SplitScenarios(runs, 0.3, 2); slices.Equal(a.HeldOut, c.HeldOut) {
		t.Errorf("seeds 1 and 2 drew the same held-out set %v", a.HeldOut)
	}
	if z := SplitScenarios(runs, 0, 1); len(z.HeldOut) != 0 {
		t.Errorf("holdout 0 held out %v", z.HeldOut)
	}
}

// fixture writes a sweep whose measured times are the simulator's own
// made wrong by known amounts: run i's T_c3 error is c3Err[i], its
// T_comp error compErr[i], its F error fErr[i] points. It returns the
// path.
func fixture(t *testing.T, dir, name string, cases []fixtureRun) string {
	t.Helper()
	b := sim.New(sim.H200())
	f := sweepfile.File{Backend: "cuda"}
	seen := map[string]bool{}
	for _, c := range cases {
		if !seen[c.strategy] {
			seen[c.strategy] = true
			f.Grid = append(f.Grid, profiler.NamedStrategy{Name: c.strategy, Strategy: c.st})
		}
		sc, err := scenarios.Find(c.scenario)
		if err != nil {
			t.Fatal(err)
		}
		r, err := profiler.Measure(context.Background(), b, sc, c.st, profiler.Options{Reps: 1})
		if err != nil {
			t.Fatal(err)
		}
		// The measured value is simulated / (1 + error), so that
		// simulated / measured - 1 is the error.
		r.TC3.Median /= 1 + c.c3Err
		r.TComp.Median /= 1 + c.compErr
		if fr, ok := r.Fraction(); ok {
			v := fr - c.fErr/100
			r.FractionOfIdeal = &v
		}
		f.Results = append(f.Results, profiler.SweepEntry{Scenario: c.scenario, Strategy: c.strategy, Result: &r})
	}
	path := filepath.Join(dir, name)
	var buf bytes.Buffer
	if err := sweepfile.Write(&buf, f); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

type fixtureRun struct {
	scenario, strategy string
	st                 scenarios.Strategy
	c3Err, compErr     float64
	fErr               float64
}

const (
	agScenario = "llama3-70b-tp-qkv-ag-224m-2gpu"
	rsScenario = "llama3-70b-tp-o-proj-rs-224m-2gpu"
)

var (
	stBase = scenarios.Strategy{}
	stPrio = scenarios.Strategy{Launch: scenarios.CommFirst, CommPriority: -5}
)

// validate's numbers on a fixture of known errors: the medians, 90th
// percentiles and maxima per set and group, and the ranking check.
func TestValidateKnownErrors(t *testing.T) {
	dir := t.TempDir()
	path := fixture(t, dir, "fixture.json", []fixtureRun{
		// The all-gather (fitted): errors +2 %, -4 % in T_c3.
		{agScenario, "baseline", stBase, 0.02, 0.01, 3},
		{agScenario, "comm-first+prio", stPrio, -0.04, 0.01, -5},
		// The reduce-scatter (held out): +10 %, +1 %; its simulated best
		// is made to look 10 % slower measured than the other.
		{rsScenario, "baseline", stBase, 0.10, 0, 1},
		{rsScenario, "comm-first+prio", stPrio, 0.01, 0, 2},
	})
	runs := mustRuns(t, path)
	fit := &sim.FitRecord{FitSet: []string{agScenario}, HeldOut: []string{rsScenario}}
	rep, err := Validate(context.Background(), sim.H200(), fit, runs)
	if err != nil {
		t.Fatal(err)
	}
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %.6g, want %.6g", what, got, want)
		}
	}
	in, ok := rep.Find("all", "all", SetInSample)
	if !ok {
		t.Fatal("no in-sample row")
	}
	near("in-sample T_c3 median", in.C3.Median, 0.03)
	near("in-sample T_c3 p90", in.C3.P90, 0.04)
	near("in-sample T_c3 max", in.C3.Max, 0.04)
	near("in-sample T_comp median", in.Comp.Median, 0.01)
	near("in-sample F median", in.F.Median, 4)
	near("in-sample F max", in.F.Max, 5)
	ho, _ := rep.Find("all", "all", SetHeldOut)
	near("held-out T_c3 median", ho.C3.Median, 0.055)
	near("held-out T_c3 max", ho.C3.Max, 0.10)
	near("held-out T_comp max", ho.Comp.Max, 0)
	if ho.C3.N != 2 || in.C3.N != 2 {
		t.Errorf("runs per set: %d in sample, %d held out; want 2 and 2", in.C3.N, ho.C3.N)
	}
	if g, ok := rep.Find("collective", "reduce-scatter", SetHeldOut); !ok || g.C3.N != 2 {
		t.Errorf("the reduce-scatter row: %+v", g)
	}
	if _, ok := rep.Find("collective", "reduce-scatter", SetInSample); ok {
		t.Error("the held-out reduce-scatter shows in sample")
	}
	if g, ok := rep.Find("strategy", "baseline", SetHeldOut); !ok || math.Abs(g.C3.Median-0.10) > 1e-9 {
		t.Errorf("the held-out baseline row: %+v", g)
	}
	// Ranking: the simulator's T_c3 of both strategies are what they are;
	// the measured ones are those over (1 + error). Work out the truth.
	for _, k := range rep.Ranking {
		var es []RunError
		for _, e := range rep.Errors {
			if e.Set == k.Set {
				es = append(es, e)
			}
		}
		simBest := slices.MinFunc(es, func(a, b RunError) int { return cmp.Compare(a.SimC3, b.SimC3) })
		realBest := slices.MinFunc(es, func(a, b RunError) int { return cmp.Compare(a.RealC3, b.RealC3) })
		want := 0
		if simBest.RealC3/realBest.RealC3-1 <= RankingTolerance {
			want = 1
		}
		if k.Cases != 1 || k.Within != want {
			t.Errorf("%s ranking: %d of %d within, want %d of 1", k.Set, k.Within, k.Cases, want)
		}
	}
	var table bytes.Buffer
	if err := WriteTable(&table, rep); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"in-sample", "held-out", "  3.0 /  4.0 /   4.0", "ranking"} {
		if !strings.Contains(table.String(), w) {
			t.Errorf("the table does not show %q:\n%s", w, table.String())
		}
	}
}

// A scenario's simulated best that is measured far from the best is a
// ranking miss; one within 3 % is not.
func TestRankingMiss(t *testing.T) {
	errs := []RunError{
		{Scenario: "a", Strategy: "x", Set: SetHeldOut, SimC3: 1, RealC3: 1.10},
		{Scenario: "a", Strategy: "y", Set: SetHeldOut, SimC3: 2, RealC3: 1.00},
		{Scenario: "b", Strategy: "x", Set: SetHeldOut, SimC3: 1, RealC3: 1.02},
		{Scenario: "b", Strategy: "y", Set: SetHeldOut, SimC3: 2, RealC3: 1.00},
		{Scenario: "c", Strategy: "x", Set: SetHeldOut, SimC3: 1, RealC3: 1.00},
	}
	r := rankings(errs)
	if len(r) != 1 || r[0].Cases != 2 || r[0].Within != 1 || len(r[0].Misses) != 1 || r[0].Misses[0].Scenario != "a" ||
		math.Abs(r[0].Misses[0].Loss-0.10) > 1e-12 {
		t.Errorf("rankings = %+v", r)
	}
}

// The ratchet holds a profile to the committed figures: the same profile
// passes, a worse one fails with one line per worse figure, a better one
// passes.
func TestRatchet(t *testing.T) {
	runs := mustRuns(t, reductionSweep)
	split := SplitScenarios(runs, 0.3, 1)
	fit := &sim.FitRecord{FitSet: split.Fit, HeldOut: split.HeldOut}
	ctx := context.Background()
	good, err := Validate(ctx, sim.H200(), fit, runs)
	if err != nil {
		t.Fatal(err)
	}
	// Through JSON, as CI reads the committed file.
	var buf bytes.Buffer
	if err := WriteJSON(&buf, good, false); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "fidelity.json")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	committed, err := ReadReport(path)
	if err != nil {
		t.Fatal(err)
	}
	if bad := Ratchet(good, committed); len(bad) != 0 {
		t.Errorf("the same profile fails the ratchet: %v", bad)
	}
	worse := sim.CloneProfile(sim.H200())
	worse.GEMMEfficiency[scenarios.BF16] *= 0.8
	worse.HBMContention = 0.45
	now, err := Validate(ctx, worse, fit, runs)
	if err != nil {
		t.Fatal(err)
	}
	bad := Ratchet(now, committed)
	if len(bad) == 0 {
		t.Fatal("a profile with a 20 % slower GEMM passes the ratchet")
	}
	for _, b := range bad {
		if strings.Contains(b, "\n") || !strings.Contains(b, "got worse") {
			t.Errorf("ratchet line %q", b)
		}
	}
	if !slices.ContainsFunc(bad, func(s string) bool { return strings.Contains(s, "T_c3 median error got worse") }) {
		t.Errorf("a slower GEMM does not worsen the T_c3 median: %v", bad)
	}
	// Committed figures all worse than now: the profile passes.
	loose := committed
	loose.Groups = slices.Clone(committed.Groups)
	for i := range loose.Groups {
		g := &loose.Groups[i]
		for _, s := range []*Stat{&g.Comp, &g.Comm, &g.C3, &g.F} {
			s.Median, s.P90 = 2*s.Median+0.01, 2*s.P90+0.01
		}
	}
	loose.Ranking = nil
	if b := Ratchet(good, loose); len(b) != 0 {
		t.Errorf("a profile better than the committed figures fails the ratchet: %v", b)
	}
	// A set missing now fails.
	if b := Ratchet(Report{}, committed); len(b) == 0 {
		t.Error("a report without the committed sets passes the ratchet")
	}
}

// Calibrate is reproducible: the same runs and seed give the same file,
// byte for byte; its values stay inside their ranges and the file reads
// back; the fit set and held-out set are the split's.
func TestCalibrateReproducible(t *testing.T) {
	runs := mustRuns(t, reductionSweep)
	opt := Options{Holdout: 0.3, Seed: 5, Starts: 2, Evals: 6, Sweeps: []string{"r.json"}}
	base := sim.ProfileFile{Base: "h200", Profile: sim.H200()}
	var files [2][]byte
	var res Result
	for i := range files {
		var err error
		res, err = Calibrate(context.Background(), base, runs, opt)
		if err != nil {
			t.Fatal(err)
		}
		files[i] = sim.MarshalProfileFile(res.File, "test")
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Fatalf("two calibrations of the same data and seed differ:\n%s\n---\n%s", files[0], files[1])
	}
	pf, err := sim.ReadProfileFile(files[0])
	if err != nil {
		t.Fatalf("the calibrated profile does not read back: %v", err)
	}
	if !slices.Equal(pf.Fit.HeldOut, res.Split.HeldOut) || len(pf.Fit.HeldOut) == 0 || pf.Fit.Seed != 5 {
		t.Errorf("fit record %+v, split %+v", pf.Fit, res.Split)
	}
	if res.Loss > res.StartLoss+1e-12 {
		t.Errorf("stage 2 made the loss worse: %v -> %v", res.StartLoss, res.Loss)
	}
	// The file carries the fitted profile's score on the held-out runs,
	// as validate gives it.
	held, err := Validate(context.Background(), pf.Profile, pf.Fit, runs)
	if err != nil {
		t.Fatal(err)
	}
	if want := HeldOutError(held); want == nil || !reflect.DeepEqual(pf.Fit.HeldOutError, want) {
		t.Errorf("the file's held-out error %+v, validate scores %+v", pf.Fit.HeldOutError, want)
	}
	stage2 := 0
	for _, c := range res.Constants {
		if len(c.Range) == 2 && (c.Value < c.Range[0] || c.Value > c.Range[1]) {
			t.Errorf("%s = %v, out of %v", c.Name(), c.Value, c.Range)
		}
		if c.Stage == sim.StageInterference {
			stage2++
			if c.Low > c.Value || c.High < c.Value {
				t.Errorf("%s = %v outside its interval %v..%v", c.Name(), c.Value, c.Low, c.High)
			}
		}
	}
	if stage2 == 0 {
		t.Error("no stage-2 constant reported")
	}
	if id := pf.Provenance["HBMContention"].Fit; id == nil || id.LossRise != DefaultLossRise {
		t.Errorf("HBMContention's identification in the file: %+v", id)
	}
	// Another seed draws another split.
	opt.Seed = 6
	other, err := Calibrate(context.Background(), base, runs, opt)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(other.Split.HeldOut, res.Split.HeldOut) {
		t.Errorf("seeds 5 and 6 held out the same %v", res.Split.HeldOut)
	}
}

// Stage 1's line fit recovers a known setup and bandwidth.
func TestFitLine(t *testing.T) {
	var pts []point
	for _, x := range []float64{1e6, 1e7, 1e8, 3e8} {
		pts = append(pts, point{x: x, t: 20e-6 + x/300e9})
	}
	a, bw, seA, seBW := fitLine(pts)
	if math.Abs(a-20e-6) > 1e-12 || math.Abs(bw/300e9-1) > 1e-9 || seA > 1e-12 || seBW > 1 {
		t.Errorf("fitLine = %v, %v (se %v, %v); want 20e-6, 300e9, ~0", a, bw, seA, seBW)
	}
}

// Stage 1's line fit with a known part and a cost per extra stream
// recovers both fixed costs and the bandwidth, and says when the points
// cannot separate them.
func TestFitStreamLine(t *testing.T) {
	var pts []point
	for _, x := range []float64{1e6, 1e7, 1e8, 3e8} {
		for _, k := range []float64{0, 2} {
			pts = append(pts, point{x: x, t: 6e-6 + 20e-6 + k*9e-6 + x/300e9, fixed: 6e-6, k: k})
		}
	}
	a, c, bw, seA, seC, _, ok := fitStreamLine(pts)
	if !ok || math.Abs(a-20e-6) > 1e-12 || math.Abs(c-9e-6) > 1e-12 || math.Abs(bw/300e9-1) > 1e-9 || seA > 1e-12 || seC > 1e-12 {
		t.Errorf("fitStreamLine = %v, %v, %v, ok %v; want 20e-6, 9e-6, 300e9", a, c, bw, ok)
	}
	same := slices.DeleteFunc(slices.Clone(pts), func(p point) bool { return p.k > 0 })
	if _, _, _, _, _, _, ok := fitStreamLine(same); ok {
		t.Error("every point on one stream, yet the stream cost was fitted")
	}
	if _, _, _, _, _, _, ok := fitStreamLine(pts[:3]); ok {
		t.Error("three points fitted three constants")
	}
}

// A run the simulator cannot replay (here a partition off the 8-SM
// grid) is left out of validate's figures and counted, not fatal.
func TestValidateSkipsWhatItCannotReplay(t *testing.T) {
	path := fixture(t, t.TempDir(), "fixture.json", []fixtureRun{
		{agScenario, "baseline", stBase, 0.02, 0, 0},
		{agScenario, "comm-first+prio", stPrio, 0.04, 0, 0},
	})
	runs := mustRuns(t, path)
	runs[1].Strat.CommSMs = 12
	rep, err := Validate(context.Background(), sim.H200(), nil, runs)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Runs != 1 || rep.Skipped != 1 || len(rep.SkippedWhy) != 1 {
		t.Errorf("runs %d, skipped %d (%v); want 1 and 1", rep.Runs, rep.Skipped, rep.SkippedWhy)
	}
	if g, _ := rep.Find("all", "all", SetAll); g.C3.N != 1 || math.Abs(g.C3.Median-0.02) > 1e-9 {
		t.Errorf("the remaining run: %+v", g)
	}
	if _, err := Replay(context.Background(), sim.H200(), runs); err == nil || !strings.Contains(err.Error(), "comm-first+prio") {
		t.Errorf("Replay, which calibrate uses, does not refuse the run by name: %v", err)
	}
}

// The committed fitted H200 profile reads, its split is the one its seed
// draws from the sweeps it names, and both committed figure files hold:
// what .ci/run checks, in go test too.
func TestCommittedH200Fidelity(t *testing.T) {
	const root = "../../../"
	pf, err := sim.LoadProfileFile(root + "backends/sim/profiles/h200-fit.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if pf.Fit == nil || len(pf.Fit.Sweeps) == 0 {
		t.Fatal("the committed profile records no fit")
	}
	var paths []string
	for _, s := range pf.Fit.Sweeps {
		paths = append(paths, root+s)
	}
	runs := mustRuns(t, paths...)
	split := SplitScenarios(runs, pf.Fit.Holdout, pf.Fit.Seed)
	if !slices.Equal(split.Fit, pf.Fit.FitSet) || !slices.Equal(split.HeldOut, pf.Fit.HeldOut) {
		t.Errorf("the committed split is not the one seed %d draws: held out %v, drawn %v", pf.Fit.Seed, pf.Fit.HeldOut, split.HeldOut)
	}
	for _, c := range []struct {
		profile sim.Profile
		figures string
	}{
		{pf.Profile, "backends/sim/testdata/fidelity-h200-fit.json"},
		{sim.H200(), "backends/sim/testdata/fidelity-h200.json"},
	} {
		committed, err := ReadReport(root + c.figures)
		if err != nil {
			t.Fatal(err)
		}
		now, err := Validate(context.Background(), c.profile, pf.Fit, runs)
		if err != nil {
			t.Fatal(err)
		}
		if bad := Ratchet(now, committed); len(bad) > 0 {
			t.Errorf("fidelity worse than %s:\n%s", c.figures, strings.Join(bad, "\n"))
		}
		if c.profile.Name == pf.Profile.Name && c.figures == "backends/sim/testdata/fidelity-h200-fit.json" {
			// What the lab shows beside the simulator's figures is what
			// the profile scores now.
			switch got := HeldOutError(now); {
			case pf.Fit.HeldOutError == nil || got == nil:
				t.Errorf("held-out error recorded %v, scored %v; run c3lab validate --profile backends/sim/profiles/h200-fit.yaml --record", pf.Fit.HeldOutError != nil, got != nil)
			case !reflect.DeepEqual(got, pf.Fit.HeldOutError):
				t.Errorf("the profile's held_out_error is not what it scores now (all runs: recorded %+v, scored %+v); run c3lab validate --profile backends/sim/profiles/h200-fit.yaml --record",
					pf.Fit.HeldOutError.All, got.All)
			}
		}
	}
}

// The blind one-GPU sets (backends/sim/testdata/blind-h200x1, -b and -c):
// every scenario file of a set was measured, none of them is in the
// committed calibration's fit set or held-out list (a calibration that
// took them in would leave no blind check), and the committed profile
// scores no worse on them than the figures committed with the
// measurements (fidelity-blind-*.json, which name the sweeps). .ci/run
// checks the figures too.
func TestBlindH200x1Fidelity(t *testing.T) {
	const root = "../../../"
	pf, err := sim.LoadProfileFile(root + "backends/sim/profiles/h200-fit.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, set := range []struct{ dir, figures string }{
		{"blind-h200x1", "fidelity-blind-h200x1.json"},
		{"blind-h200x1-b", "fidelity-blind-h200x1-b.json"},
		{"blind-h200x1-c", "fidelity-blind-h200x1-c.json"},
	} {
		t.Run(set.dir, func(t *testing.T) {
			committed, err := ReadReport(root + "backends/sim/testdata/" + set.figures)
			if err != nil {
				t.Fatal(err)
			}
			if len(committed.Sweeps) == 0 {
				t.Fatal("the blind figures name no sweep")
			}
			var paths []string
			for _, s := range committed.Sweeps {
				paths = append(paths, root+s)
			}
			runs := mustRuns(t, paths...)
			measured := map[string]bool{}
			for _, r := range runs {
				measured[r.Scenario] = true
			}
			files, err := filepath.Glob(root + "backends/sim/testdata/" + set.dir + "/*.yaml")
			if err != nil || len(files) == 0 {
				t.Fatalf("no blind scenario files (%v)", err)
			}
			for _, f := range files {
				sc, err := scenarios.Load(f, scenarios.Limits{})
				if err != nil {
					t.Fatal(err)
				}
				if !measured[sc.Name] {
					t.Errorf("blind scenario %s (%s) has no measured run in %v", sc.Name, filepath.Base(f), committed.Sweeps)
				}
				if slices.Contains(pf.Fit.FitSet, sc.Name) || slices.Contains(pf.Fit.HeldOut, sc.Name) {
					t.Errorf("blind scenario %s is part of the committed calibration; it is no longer blind", sc.Name)
				}
			}
			now, err := Validate(context.Background(), pf.Profile, pf.Fit, runs)
			if err != nil {
				t.Fatal(err)
			}
			if g, ok := now.Find("all", "all", SetHeldOut); !ok || g.C3.N != now.Runs {
				t.Errorf("not every blind run is scored as held out: %+v of %d", g.C3, now.Runs)
			}
			if bad := Ratchet(now, committed); len(bad) > 0 {
				t.Errorf("fidelity on the blind set worse than committed:\n%s", strings.Join(bad, "\n"))
			}
		})
	}
}

// TestSetWorst checks the worst-runs list: per set, the largest |T_c3|
// error first, ties by scenario and strategy, undefined T_c3 left out, F
// nil where it is undefined, and the list encodes as JSON.
func TestSetWorst(t *testing.T) {
	nan := math.NaN()
	r := Report{Errors: []RunError{
		{Set: SetInSample, Scenario: "a", Strategy: "x", C3: 0.05, F: 3},
		{Set: SetInSample, Scenario: "b", Strategy: "x", C3: -0.20, F: nan},
		{Set: SetInSample, Scenario: "c", Strategy: "x", C3: nan, F: 1},
		{Set: SetHeldOut, Scenario: "d", Strategy: "y", C3: 0.10, F: -7},
		{Set: SetHeldOut, Scenario: "d", Strategy: "x", C3: -0.10, F: 2},
		{Set: SetHeldOut, Scenario: "e", Strategy: "x", C3: 0.01, F: 0},
	}}
	r.SetWorst(2)
	var got []string
	for _, w := range r.Worst {
		f := "nil"
		if w.F != nil {
			f = fmt.Sprint(*w.F)
		}
		got = append(got, fmt.Sprintf("%s %s/%s %.2f %s", w.Set, w.Scenario, w.Strategy, w.C3, f))
	}
	want := []string{
		"in-sample b/x -0.20 nil",
		"in-sample a/x 0.05 3",
		"held-out d/x -0.10 2",
		"held-out d/y 0.10 -7",
	}
	if !slices.Equal(got, want) {
		t.Errorf("worst runs\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, r, false); err != nil {
		t.Errorf("the report with its worst runs does not encode: %v", err)
	}
	if err := WriteTable(&buf, r); err != nil || !strings.Contains(buf.String(), "worst held-out runs") {
		t.Errorf("the table (%v) does not list the worst held-out runs:\n%s", err, buf.String())
	}
	r.SetWorst(0)
	if r.Worst != nil {
		t.Errorf("--worst 0 kept %d runs", len(r.Worst))
	}
}

func TestIdealBand(t *testing.T) {
	for _, c := range []struct {
		s    float64
		want string
	}{
		{math.NaN(), ""},
		{1, ""},
		{0.9, ""},
		{math.Inf(1), ""},
		{1.05, "S_ideal 1.0 to 1.2"},
		{1.2, "S_ideal 1.2 to 1.5"},
		{1.499, "S_ideal 1.2 to 1.5"},
		{1.5, "S_ideal 1.5 and up"},
		{3.2, "S_ideal 1.5 and up"},
	} {
		if got := IdealBand(c.s); got != c.want {
			t.Errorf("IdealBand(%v) = %q, want %q", c.s, got, c.want)
		}
	}
}

// TestRepeatability checks the measurement's own figures: only runs two
// sweeps measured count, every pair of sweeps once, a run measured twice
// in one sweep is not a repeat, and F differences leave undefined F out.
func TestRepeatability(t *testing.T) {
	run := func(sweep int, scen, strat string, c3, f float64) RunError {
		return RunError{Sweep: sweep, Scenario: scen, Strategy: strat, RealC3: c3, RealF: f, C3: 0, F: 0}
	}
	if r := repeatability([]RunError{run(0, "a", "x", 1, 50), run(0, "a", "x", 2, 60), run(1, "b", "x", 1, 50)}); r != nil {
		t.Fatalf("no run measured by two sweeps, got %+v", r)
	}
	r := repeatability([]RunError{
		run(0, "a", "x", 1.00, 50), run(1, "a", "x", 1.02, 46), // 2 %, 4 points
		run(0, "a", "y", 2.00, 10), run(1, "a", "y", 1.90, 11), run(2, "a", "y", 2.10, math.NaN()), // 5 %, 1 point; 5 %; 10.5 %
		run(0, "b", "x", 3.00, 20), // alone
		// The same name and strategy, another workload (a renamed
		// scenario that changed): not a repeat.
		{Sweep: 1, Scenario: "b", Strategy: "x", RealC3: 9, RealF: 90, workload: "other"},
	})
	if r == nil || r.Cells != 2 || r.Pairs != 4 {
		t.Fatalf("got %+v, want 2 cells, 4 pairs", r)
	}
	if r.C3.N != 4 || math.Abs(r.C3.Max-0.10526315789) > 1e-9 || math.Abs(r.C3.Median-0.05) > 1e-9 {
		t.Errorf("T_c3 %+v: want 4 differences, median 5 %%, max 10.5 %%", r.C3)
	}
	if r.F.N != 2 || r.F.Max != 4 || r.F.Median != 2.5 {
		t.Errorf("F %+v: want 2 defined differences (4 and 1 points): median 2.5, max 4", r.F)
	}
	if len(r.ByBand) != 0 {
		t.Errorf("runs without an ideal band give no band figures, got %+v", r.ByBand)
	}

	// By band: each pair counts in the band of its earlier sweep's run,
	// bands in order by name.
	banded := func(sweep int, scen string, band string, c3, f float64) RunError {
		e := run(sweep, scen, "x", c3, f)
		e.IdealBand = band
		return e
	}
	r = repeatability([]RunError{
		banded(0, "wide", "S_ideal 1.5 and up", 1.00, 60), banded(1, "wide", "S_ideal 1.5 and up", 1.01, 61),
		banded(0, "narrow", "S_ideal 1.0 to 1.2", 1.00, 20), banded(1, "narrow", "S_ideal 1.2 to 1.5", 1.01, 30),
		banded(0, "narrow2", "S_ideal 1.0 to 1.2", 1.00, 40), banded(1, "narrow2", "S_ideal 1.0 to 1.2", 0.98, 20),
	})
	if r == nil || len(r.ByBand) != 2 {
		t.Fatalf("got %+v, want figures for two bands", r)
	}
	if b := r.ByBand[0]; b.Band != "S_ideal 1.0 to 1.2" || b.Pairs != 2 || b.F.Median != 15 || b.F.Max != 20 {
		t.Errorf("narrow band %+v: want 2 pairs, |F| 10 and 20 points", b)
	}
	if b := r.ByBand[1]; b.Band != "S_ideal 1.5 and up" || b.Pairs != 1 || b.F.Max != 1 || math.Abs(b.C3.Max-0.01) > 1e-12 {
		t.Errorf("wide band %+v: want 1 pair, |F| 1 point, |T_c3| 1 %%", b)
	}
}

// TestRunErrorJSON checks that an undefined error is written as null
// (JSON has no NaN) and a defined one as its number.
func TestRunErrorJSON(t *testing.T) {
	b, err := json.Marshal(RunError{Scenario: "s", C3: 0.05, F: math.NaN(), RealF: math.NaN(), Comp: math.Inf(1)})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`"f_points":null`, `"real_f":null`, `"t_comp":null`, `"t_c3":0.05`, `"scenario":"s"`} {
		if !strings.Contains(string(b), w) {
			t.Errorf("%s lacks %s", b, w)
		}
	}
}

// A sweep kept gzipped (name.json.gz, as sweep files of a whole suite
// are) gives the same runs as the plain file; a damaged one is refused
// with its name.
func TestLoadRunsReadsGzippedSweeps(t *testing.T) {
	data, err := os.ReadFile(reductionSweep)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(data)
	zw.Close()
	gz := filepath.Join(dir, "sweep.json.gz")
	if err := os.WriteFile(gz, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	plain, zipped := mustRuns(t, reductionSweep), mustRuns(t, gz)
	if !reflect.DeepEqual(plain, zipped) {
		t.Errorf("the gzipped sweep gives %d runs, the plain one %d, or they differ", len(zipped), len(plain))
	}
	cut := filepath.Join(dir, "cut.json.gz")
	os.WriteFile(cut, buf.Bytes()[:buf.Len()/2], 0o644)
	if _, err := LoadRuns([]string{cut}); err == nil || !strings.Contains(err.Error(), "cut.json.gz") {
		t.Errorf("a cut gzip sweep: %v; want an error naming it", err)
	}
}

// HeldOutError sums up the held-out runs only: all of them, per
// collective, per band of ideal speedup, with the GPU counts they used.
func TestHeldOutError(t *testing.T) {
	nan := math.NaN()
	e := func(set, scen, coll, band string, gpus int, c3, f float64) RunError {
		return RunError{Set: set, Scenario: scen, Collective: coll, IdealBand: band, GPUs: gpus, C3: c3, F: f}
	}
	const lo, hi = "S_ideal 1.0 to 1.2", "S_ideal 1.5 and up"
	rep := Report{Errors: []RunError{
		e(SetInSample, "fit", "all-gather", lo, 8, 0.9, 90), // in sample: left out
		e(SetHeldOut, "a", "all-gather", lo, 2, 0.02, 10),
		e(SetHeldOut, "a", "all-gather", lo, 2, -0.04, -30),
		e(SetHeldOut, "b", "h2d", hi, 1, 0.01, nan),
		e(SetHeldOut, "b", "h2d", hi, 1, -0.001, 2),
	}, Ranking: []Ranking{{Set: SetInSample, Cases: 9, Within: 1}, {Set: SetHeldOut, Cases: 4, Within: 3}}}
	h := HeldOutError(rep)
	if h == nil {
		t.Fatal("no held-out error from held-out runs")
	}
	want := &sim.HeldOutError{Runs: 4, Scenarios: 2, GPUs: []int{1, 2},
		All: sim.ErrorFigures{Runs: 4, TC3Median: 0.015, TC3P90: 0.04, FRuns: 3, FMedian: 10, FP90: 30},
		ByCollective: map[string]sim.ErrorFigures{
			"all-gather": {Runs: 2, TC3Median: 0.03, TC3P90: 0.04, FRuns: 2, FMedian: 20, FP90: 30},
			"h2d":        {Runs: 2, TC3Median: 0.0055, TC3P90: 0.01, FRuns: 1, FMedian: 2, FP90: 2},
		},
		ByIdealSpeedup: []sim.SpeedupBandErrors{
			{From: 1, To: 1.2, Figures: sim.ErrorFigures{Runs: 2, TC3Median: 0.03, TC3P90: 0.04, FRuns: 2, FMedian: 20, FP90: 30}},
			{From: 1.5, Figures: sim.ErrorFigures{Runs: 2, TC3Median: 0.0055, TC3P90: 0.01, FRuns: 1, FMedian: 2, FP90: 2}},
		},
		Ranking: &sim.RankingScore{Cases: 4, Within: 3, Tolerance: RankingTolerance},
	}
	if !reflect.DeepEqual(h, want) {
		t.Errorf("held-out error\n%+v\nwant\n%+v", h, want)
	}
	if h := HeldOutError(Report{Errors: rep.Errors[:1]}); h != nil {
		t.Errorf("no held-out run gave %+v", h)
	}
	for _, b := range want.ByIdealSpeedup {
		if IdealBand(b.From+0.01) != b.Name() {
			t.Errorf("band %s is named %q by IdealBand", b.Name(), IdealBand(b.From+0.01))
		}
	}
}
