package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/c3lab/c3lab/backends/sim"
	"github.com/c3lab/c3lab/backends/sim/calib"
	"github.com/c3lab/c3lab/heuristics"
	"github.com/c3lab/c3lab/profiler/report"
	"github.com/c3lab/c3lab/profiler/sweepfile"
)

// evalArgs are `c3lab advise --evaluate`'s settings.
type evalArgs struct {
	sweeps, refs         []string
	base                 string
	folds, starts, evals int
	seed                 uint64
	json                 bool
}

// evalReport is `c3lab advise --evaluate --json`.
type evalReport struct {
	Sweeps []string `json:"sweeps"`
	Base   string   `json:"base_profile"`
	Starts int      `json:"starts"`
	Evals  int      `json:"evals"`
	heuristics.Evaluation
}

// runEvaluate scores the model-ranked advice against the sweeps' measured
// bests, K-fold by scenario: each fold is advised on by a profile
// calibrated (backends/sim/calib) on the other folds' runs only.
func runEvaluate(ctx context.Context, s stdio, a evalArgs) error {
	switch {
	case a.folds < 2 || a.folds > 20:
		return badInput("--folds is %d; allowed 2..20", a.folds)
	case a.starts < 1 || a.starts > 1000:
		return badInput("--starts is %d; allowed 1..1000", a.starts)
	case a.evals < 1 || a.evals > 100000:
		return badInput("--evals is %d; allowed 1..100000", a.evals)
	}
	if dup, ok := repeated(a.sweeps); ok {
		return badInput("sweep %s is given twice; give each once", dup)
	}
	// Each fold's calibration starts from the hand-set base profile, as
	// c3lab calibrate does, unless --model names one: the calibrated one
	// was fitted on the folds that are held out here.
	baseArg := a.base
	if baseArg == "" {
		baseArg = sim.H200().Name
	}
	base, err := loadSimProfile(baseArg)
	if err != nil {
		return err
	}
	if base.Base == "" {
		if _, ok := sim.Profiles()[base.Profile.Name]; ok {
			base.Base = base.Profile.Name
		}
	}
	index := heuristics.Measurements{}
	for _, path := range a.sweeps {
		f, err := sweepfile.Load(path)
		if err != nil {
			return badInput("--evaluate: %v", err)
		}
		index.Add(path, f)
	}
	runs, err := calib.LoadRuns(a.sweeps)
	if err != nil {
		return badInput("--evaluate: %v", err)
	}
	var refs []calib.RefGEMM
	for _, r := range a.refs {
		g, err := calib.LoadRefGEMMs(r)
		if err != nil {
			return badInput("--ref: %v", err)
		}
		refs = append(refs, g...)
	}
	cases := heuristics.Cases(index)
	if len(cases) == 0 {
		return badInput("--evaluate: no measured scenario in the sweeps")
	}
	started := time.Now()
	progress := foldProgress(s, a.json, started)
	fit := func(ctx context.Context, fold int, train []string) (heuristics.Model, error) {
		trainRuns := calib.Only(runs, train)
		if len(trainRuns) == 0 {
			return nil, fmt.Errorf("no run to fit on")
		}
		opt := calib.Options{Holdout: 0, Seed: a.seed, Starts: a.starts, Evals: a.evals, Refs: refs, Sweeps: a.sweeps}
		opt.Progress = func(done, total int, what string) {
			progress(float64(fold)+float64(done)/float64(max(total, 1)), a.folds, fmt.Sprintf("fold %d of %d: %s", fold+1, a.folds, what))
		}
		res, err := calib.Calibrate(ctx, base, trainRuns, opt)
		if err != nil {
			return nil, fmt.Errorf("calibrating on %d scenarios: %w", len(train), err)
		}
		return heuristics.BackendModel{Backend: sim.New(res.File.Profile), Label: fmt.Sprintf("the profile fitted without fold %d", fold+1)}, nil
	}
	ev, err := heuristics.Evaluate(ctx, cases, heuristics.EvalOptions{Folds: a.folds, Seed: a.seed, Fit: fit})
	if !a.json && s.terminal {
		fmt.Fprint(s.errOut, "\r\033[K")
	}
	if err != nil {
		return err
	}
	if a.json {
		baseName := a.base
		if baseName == "" {
			baseName = base.Profile.Name
		}
		return writeJSON(s.out, evalReport{Sweeps: a.sweeps, Base: baseName, Starts: a.starts, Evals: a.evals, Evaluation: ev})
	}
	return writeEvaluation(s.out, ev, time.Since(started))
}

// foldProgress prints the evaluation's progress with an ETA on a
// terminal (one line rewritten in place), nothing elsewhere or with
// --json. at is the folds done, fractional.
func foldProgress(s stdio, quiet bool, started time.Time) func(at float64, folds int, what string) {
	last := time.Time{}
	return func(at float64, folds int, what string) {
		if quiet || !s.terminal || time.Since(last) < 200*time.Millisecond {
			return
		}
		last = time.Now()
		line := fmt.Sprintf("evaluate %3.0f %%  %s", 100*at/float64(folds), what)
		if el := time.Since(started); at > 0.05 {
			eta := time.Duration(float64(el) / at * (float64(folds) - at))
			line += fmt.Sprintf("  ETA %s", eta.Round(time.Second))
		}
		fmt.Fprintf(s.errOut, "\r\033[K%s", line)
	}
}

// writeEvaluation prints one row per case, then the summaries.
func writeEvaluation(w io.Writer, ev heuristics.Evaluation, took time.Duration) error {
	fmt.Fprintf(w, "advice scored against the measured best: %d cases (scenario x sweep) of %d scenarios, %d folds by scenario (seed %d),\n"+
		"each fold advised by a profile calibrated on the other folds only, among the strategies its sweep measured\n\n", len(ev.Cases), ev.Scenarios, ev.Folds, ev.Seed)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tSWEEP\tFOLD\tCLASS\tCOMM\tADVISED\tBEST\tADV T_C3\tBEST T_C3\tREGRET\tU POINTS\tTUNE POS\tNOTE")
	for _, c := range ev.Cases {
		if c.Err != "" {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t-\t-\t-\t-\t-\t-\t-\t%s\n", c.Scenario, shortPath(c.Source), c.Fold+1, c.Class, c.Comm, c.Err)
			continue
		}
		var notes []string
		if !c.Within {
			notes = append(notes, "MISS")
		}
		if c.Tied && c.Advised != c.Best {
			notes = append(notes, "tied")
		}
		if c.SlowerThanDefault {
			notes = append(notes, "SLOWER THAN DEFAULT")
		}
		if c.TopUnmeasured != "" {
			notes = append(notes, "top pick "+c.TopUnmeasured+" unmeasured")
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f %%\t%.1f\t%d\t%s\n", c.Scenario, shortPath(c.Source), c.Fold+1, c.Class, c.Comm,
			c.Advised, c.Best, report.Duration(c.AdvisedTC3), report.Duration(c.BestTC3), 100*c.Regret, c.RegretU, c.TunePosition, joinNotes(notes))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SUMMARY\tCASES\tWITHIN 3 %\tMEDIAN REGRET\tMEAN REGRET\tMAX REGRET\tMEAN U POINTS\tADVISED = BEST\tSLOWER THAN DEFAULT\tTOP PICK UNMEASURED\tTUNE <= 4\tMAX TUNE POS")
	row := func(label string, s heuristics.Summary) {
		fmt.Fprintf(tw, "%s\t%d\t%.1f %%\t%.2f %%\t%.2f %%\t%.1f %%\t%.2f\t%d\t%d\t%d\t%.1f %%\t%d\n", label, s.Cases, 100*s.Within,
			100*s.MedianRegret, 100*s.MeanRegret, 100*s.MaxRegret, s.MeanRegretU, s.Best, s.Slower, s.Unmeasured, 100*s.TuneWithin, s.MaxTunePosition)
	}
	row("all", ev.All)
	for _, s := range ev.ByClass {
		row("class "+s.Key, s)
	}
	for _, s := range ev.ByComm {
		row(s.Key, s)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if ev.All.RulesCases > 0 {
		fmt.Fprintf(w, "\nthe rules of thumb alone (the former advice), on the %d cases whose sweep measured their strategy: %.1f %% within 3 %%, median regret %.2f %%\n",
			ev.All.RulesCases, 100*ev.All.RulesWithin, 100*ev.All.RulesMedianRegret)
	}
	fmt.Fprintf(w, "\ntargets (issue 18): within 3 %% on >= 85 %% of cases, median regret <= 1 %%, never slower than the default beyond the interval;\n"+
		"tune finds the measured best (or one not told apart from it) in at most %d measured candidates on >= 90 %% of cases\n", heuristics.TuneBudget)
	fmt.Fprintf(w, "here: %.1f %% within 3 %%, median regret %.2f %%, %d slower than the default, tune within %d on %.1f %% (%s)\n",
		100*ev.All.Within, 100*ev.All.MedianRegret, ev.All.Slower, heuristics.TuneBudget, 100*ev.All.TuneWithin, took.Round(time.Second))
	fmt.Fprintf(w, "tune's position is over the strategies each sweep measured, in the model's order (the advice first), not over every sensible strategy\n")
	return nil
}

func joinNotes(n []string) string {
	out := ""
	for i, s := range n {
		if i > 0 {
			out += "; "
		}
		out += s
	}
	return out
}

// shortPath is a sweep's path from its folder on.
func shortPath(p string) string {
	return heuristics.ShortSource(p)
}
