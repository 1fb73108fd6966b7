package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/c3lab/c3lab/heuristics"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/report"
)

// adviseReport is `c3lab advise --json`.
type adviseReport struct {
	Scenario string             `json:"scenario"`
	Advice   heuristics.Advice  `json:"advice"`
	Trials   []heuristics.Trial `json:"trials,omitempty"`
	Best     string             `json:"best,omitempty"`
}

func runAdvise(ctx context.Context, args []string, s stdio) error {
	fs := newFlags("advise", "advise [--scenario NAME|FILE] [--backend auto|cuda|sim] [--tune [--reps N] [--precision P [--time-cap D]]] [--json]", s)
	var be backendFlag
	be.register(fs)
	scenarioArg := fs.String("scenario", "", "a built-in scenario name or a YAML file; default: the first built-in")
	tune := fs.Bool("tune", false, "measure the advice against the other candidate strategies and report the best")
	reps := fs.Int("reps", 0, "with --tune, timed repetitions per run; 0 = the scenario's own")
	var pf precisionFlags
	pf.register(fs, "U:2%", 30*time.Second, "per candidate (tune's default: U within ±2%, at most 30s per candidate)")
	asJSON := fs.Bool("json", false, "print the advice as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkReps(*reps); err != nil {
		return err
	}
	for _, name := range []string{"reps", "precision", "time-cap"} {
		if setFlags(fs)[name] && !*tune {
			return noEffect(name, "without --tune (advise measures nothing without it); add --tune or drop --"+name)
		}
	}
	opt, err := pf.options(profiler.Options{Reps: *reps})
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
	rep := adviseReport{Scenario: sc.Name, Advice: heuristics.Advise(sc, b.Capabilities())}
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
	fmt.Fprintf(s.out, "scenario  %s (%s + %s)\nadvice    %s\n", sc.Name, sc.Compute, sc.Comm, rep.Advice.Strategy)
	for _, r := range rep.Advice.Reasons {
		fmt.Fprintf(s.out, "  - %s\n", r)
	}
	if *tune {
		fmt.Fprintf(s.out, "\nmeasured on %s:\n", b.Name())
		writeTrials(s.out, rep.Trials, best)
	}
	return nil
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
	if re := trials[best].Remeasured; re != nil {
		b := trials[best]
		if re.Err != "" {
			fmt.Fprintf(w, "\n%s measured again: failed: %s\n", b.Name, re.Err)
			return
		}
		fmt.Fprintf(w, "\n%s measured again in fresh rounds: T_c3 %s, U %s (selected at T_c3 %s, U %s)\n", b.Name,
			report.DurationCI(re.TC3, re.TC3CI), report.UpliftCI(re.Uplift, re.UpliftCI), report.Duration(b.TC3), report.Uplift(b.Uplift))
	}
}
