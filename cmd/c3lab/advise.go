package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/c3lab/c3lab/backends/sim"
	"github.com/c3lab/c3lab/heuristics"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/report"
	"github.com/c3lab/c3lab/profiler/sweepfile"
)

// adviseReport is `c3lab advise --json`.
type adviseReport struct {
	Scenario string             `json:"scenario"`
	Advice   heuristics.Advice  `json:"advice"`
	Trials   []heuristics.Trial `json:"trials,omitempty"`
	Best     string             `json:"best,omitempty"`
}

func runAdvise(ctx context.Context, args []string, s stdio) error {
	fs := newFlags("advise", "advise [--scenario NAME|FILE] [--backend auto|cuda|sim] [--model PROFILE] [--top K] [--measured SWEEP]\n"+
		"                    [--tune [--reps N] [--precision P [--time-cap D]]] [--json]\n"+
		"       c3lab advise --evaluate SWEEP [MORE ...] [--folds K] [--seed N] [--starts N] [--evals N] [--ref REF.json] [--json]\n\n"+
		"Ranks every sensible strategy of the scenario by the U the calibrated simulator\n"+
		"predicts (--model: the device's profile) and advises the top one; the rules of\n"+
		"thumb explain it. --evaluate scores that advice against the measured best of\n"+
		"each scenario of the sweeps, out of sample (K folds by scenario, each advised by\n"+
		"a profile calibrated on the other folds).", s)
	var be backendFlag
	be.register(fs)
	scenarioArg := fs.String("scenario", "", "a built-in scenario name or a YAML file; default: the first built-in")
	modelArg := fs.String("model", "", "the simulator profile that ranks the candidates (with --evaluate, the one each fold's calibration starts from): a built-in name or a profile file; default --sim-profile, else the calibrated H200 (h200-fit; with --evaluate, its hand-set base h200, as calibrate starts from)")
	top := fs.Int("top", heuristics.DefaultTopK, "how many ranked candidates to keep (and --tune to measure)")
	var measured, evaluate, refs listFlag
	fs.Var(&measured, "measured", "a sweep file whose measurements of the scenario the reasons quote; may repeat; default the committed sweeps of the device")
	tune := fs.Bool("tune", false, "measure the top candidates and report the best")
	reps := fs.Int("reps", 0, "with --tune, timed repetitions per run; 0 = the scenario's own")
	var pf precisionFlags
	pf.register(fs, "U:2%", timeCap{abs: 30 * time.Second}, "per candidate (tune's default: U within ±2%, at most 30s per candidate)")
	fs.Var(&evaluate, "evaluate", "score the advice against these sweeps' measured bests (more sweeps may follow as arguments)")
	folds := fs.Int("folds", 4, "with --evaluate, the folds of the split by scenario (2..20)")
	seed := fs.Uint64("seed", 1, "with --evaluate, the seed of the folds and of calibration's random starts")
	starts := fs.Int("starts", 2, "with --evaluate, calibration's Nelder-Mead starts per fold")
	evals := fs.Int("evals", 60, "with --evaluate, calibration's loss evaluations per start")
	fs.Var(&refs, "ref", "with --evaluate, a reference-ops file (c3lab-ref.json) for calibration's stage 1")
	asJSON := fs.Bool("json", false, "print the advice (or the evaluation) as JSON")
	pos, err := parseWithArgs(fs, args)
	if err != nil {
		return err
	}
	set := setFlags(fs)
	if len(evaluate) > 0 || (len(pos) > 0 && set["evaluate"]) {
		evaluate = append(evaluate, pos...)
		for _, name := range []string{"scenario", "tune", "reps", "precision", "time-cap", "measured", "top", "backend", "sim-gpus", "sim-profile"} {
			if set[name] {
				return noEffect(name, "with --evaluate (it advises on every scenario of the sweeps with profiles it calibrates); drop --"+name)
			}
		}
		return runEvaluate(ctx, s, evalArgs{sweeps: evaluate, refs: refs, base: *modelArg, folds: *folds, seed: *seed, starts: *starts, evals: *evals, json: *asJSON})
	}
	if len(pos) > 0 {
		return badInput("unexpected argument %q; advise takes flags only (sweeps go after --evaluate)", pos[0])
	}
	for _, name := range []string{"folds", "seed", "starts", "evals", "ref"} {
		if set[name] {
			return noEffect(name, "without --evaluate; add --evaluate SWEEP or drop --"+name)
		}
	}
	if err := checkReps(*reps); err != nil {
		return err
	}
	if *top < 1 || *top > 50 {
		return badInput("--top is %d; allowed 1..50", *top)
	}
	for _, name := range []string{"reps", "precision", "time-cap"} {
		if set[name] && !*tune {
			return noEffect(name, "without --tune (advise measures nothing without it); add --tune or drop --"+name)
		}
	}
	opt, err := pf.options(profiler.Options{Reps: *reps})
	if err != nil {
		return err
	}
	index := heuristics.Measurements{}
	for _, path := range measured {
		f, err := sweepfile.Load(path)
		if err != nil {
			return badInput("--measured: %v", err)
		}
		index.Add(path, f)
	}
	model, err := adviceModel(*modelArg, be)
	if err != nil {
		return err
	}
	b, err := be.openTelling(s.errOut, *asJSON)
	if err != nil {
		return err
	}
	defer b.Close()
	sc, err := resolveScenario(*scenarioArg, b.Capabilities().Limits)
	if err != nil {
		return err
	}
	noteRenamed(s.errOut, *scenarioArg)
	if len(measured) == 0 {
		if index, err = heuristics.CommittedMeasurements(b.Capabilities().Limits.Device); err != nil {
			return err
		}
	}
	advice, err := heuristics.AdviseModel(ctx, model, sc, b.Capabilities(), heuristics.AdviseOptions{TopK: *top, Measured: index})
	if err != nil {
		return err
	}
	rep := adviseReport{Scenario: sc.Name, Advice: advice}
	best := -1
	if *tune {
		rep.Trials, best, err = heuristics.Tune(ctx, b, sc, rep.Advice.Candidates, opt)
		if err != nil {
			return err
		}
		if best >= 0 {
			rep.Best = rep.Trials[best].Name
		}
	}
	if *asJSON {
		return writeJSON(s.out, rep)
	}
	fmt.Fprintf(s.out, "scenario  %s (%s + %s)\nadvice    %s", sc.Name, sc.Compute, sc.Comm, rep.Advice.Strategy)
	if rep.Advice.Advised != "" {
		fmt.Fprintf(s.out, "  (%s)", rep.Advice.Advised)
	}
	fmt.Fprintln(s.out)
	for _, r := range rep.Advice.Reasons {
		fmt.Fprintf(s.out, "  - %s\n", r)
	}
	if len(rep.Advice.Predictions) > 0 {
		fmt.Fprintf(s.out, "\npredicted by %s:\n", rep.Advice.Model)
		writePredictions(s.out, rep.Advice.Predictions)
	}
	if *tune {
		fmt.Fprintf(s.out, "\nmeasured on %s:\n", b.Name())
		writeTrials(s.out, rep.Trials, best)
	}
	return nil
}

// adviceModel is the simulator that ranks the advice's candidates: the
// profile --model names, else --sim-profile's, else the calibrated H200.
func adviceModel(arg string, be backendFlag) (heuristics.Model, error) {
	if arg == "" {
		arg = be.simProfile
	}
	pf, err := loadSimProfile(arg)
	if err != nil {
		return nil, err
	}
	label := "the built-in " + pf.Profile.Name + " profile"
	switch _, builtin := sim.Profiles()[arg]; {
	case arg == "" || (arg == sim.FittedH200Name && pf.Fit != nil):
		label = "the calibrated " + pf.Profile.Name + " profile (" + sim.FittedH200Name + ")"
	case !builtin:
		label = "the profile " + filepath.Base(arg)
	}
	return heuristics.BackendModel{Backend: sim.NewFromFile(pf), Label: label}, nil
}

// writePredictions prints the ranked candidates, the advice first.
func writePredictions(w io.Writer, preds []heuristics.Prediction) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CANDIDATE\tSTRATEGY\tT_C3\tU\t")
	for i, p := range preds {
		mark := ""
		if i == 0 {
			mark = "<- advice"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", p.Name, p.Strategy, report.Duration(p.TC3), report.Uplift(p.Uplift), mark)
	}
	tw.Flush()
}

// writeTrials prints the tuner's trials as a table, marking the best (by
// U, the speedup over the serial default; % ideal is each trial's own)
// and the trials its interval does not tell apart from it, then the best
// as measured again in fresh rounds.
func writeTrials(w io.Writer, trials []heuristics.Trial, best int) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CANDIDATE\tSTRATEGY\tT_C3\tU\t% IDEAL\t")
	for i, t := range trials {
		frac, mark := "n/a", ""
		if t.Fraction != nil {
			frac = report.PercentValue(*t.Fraction)
			if t.FWithinNoise {
				frac += " " + report.WithinNoise
			}
		}
		if t.Err != "" {
			frac = "failed: " + t.Err
		}
		switch {
		case i == best && t.Fallback != "":
			mark = "<- answer (the measured best was slower again)"
		case i == best && t.Tied:
			mark = "<- best, tied"
		case i == best:
			mark = "<- best"
		case t.Tied:
			mark = "<- tied with the best"
		}
		up := report.UpliftCI(t.Uplift, t.UpliftCI)
		if t.Err != "" {
			up = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", t.Name, t.Strategy, report.DurationCI(t.TC3, t.TC3CI), up, frac, mark)
	}
	tw.Flush()
	if best < 0 {
		return
	}
	for _, b := range trials {
		re := b.Remeasured
		switch {
		case re == nil:
			continue
		case re.Err != "":
			fmt.Fprintf(w, "\n%s measured again: failed: %s\n", b.Name, re.Err)
			continue
		}
		fmt.Fprintf(w, "\n%s measured again in fresh rounds: T_c3 %s, U %s (selected at T_c3 %s, U %s)\n", b.Name,
			report.DurationCI(re.TC3, re.TC3CI), report.UpliftCI(re.Uplift, re.UpliftCI), report.Duration(b.TC3), report.Uplift(b.Uplift))
	}
	if f := trials[best].Fallback; f != "" {
		fmt.Fprintf(w, "answer: %s, the default: %s\n", trials[best].Name, f)
	}
}
