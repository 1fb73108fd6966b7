package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/c3lab/c3lab/backends/sim"
	"github.com/c3lab/c3lab/backends/sim/calib"
)

// listFlag is a flag that may be given several times, each value (or
// comma-separated values) appended.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(s string) error {
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			*l = append(*l, v)
		}
	}
	return nil
}

// evalProgress prints calibrate's progress on s's error stream with an
// ETA: on a terminal one line rewritten in place, elsewhere a line every
// 100 evaluations.
func evalProgress(s stdio, started time.Time) func(done, total int, what string) {
	return func(done, total int, what string) {
		line := fmt.Sprintf("calibrate %d/%d loss evaluations  %s", done, total, what)
		if el := time.Since(started); done > 0 && total > done {
			eta := time.Duration(float64(el) / float64(done) * float64(total-done))
			line += fmt.Sprintf("  ETA %s", eta.Round(time.Second))
		}
		if s.terminal {
			fmt.Fprintf(s.errOut, "\r\033[K%s", line)
		} else if done%100 == 0 {
			fmt.Fprintln(s.errOut, line)
		}
	}
}

func runCalibrate(ctx context.Context, args []string, s stdio) error {
	fs := newFlags("calibrate", "calibrate --from SWEEP.json [MORE.json ...] --out PROFILE.yaml [--holdout 0.3] [--seed N]\n"+
		"                       [--starts N] [--evals N] [--ref REF.json] [--base h200|FILE] [--force] [--json]\n\n"+
		"Fits the simulator's profile to measured sweeps: the scenarios are split\n"+
		"(--holdout of them held out, drawn from --seed), stage 1 fits the isolated\n"+
		"times in closed form, stage 2 the interference constants by Nelder-Mead\n"+
		"from --starts starts inside each constant's physical range, on the fit set\n"+
		"only. The profile file records the split; c3lab validate scores it.", s)
	var from, refs listFlag
	fs.Var(&from, "from", "a sweep file (c3lab sweep) to fit on; more may follow as arguments or further --from")
	fs.Var(&refs, "ref", "a reference-ops file (c3lab-ref.json) whose isolated GEMMs join stage 1's GEMM efficiency")
	holdout := fs.Float64("holdout", calib.DefaultHoldout, "the share of scenarios held out of the fit, in [0, 1)")
	seed := fs.Uint64("seed", 1, "the seed of the split and of stage 2's random starts")
	starts := fs.Int("starts", calib.DefaultStarts, "Nelder-Mead starts of stage 2 (the first from the base profile's values)")
	evals := fs.Int("evals", calib.DefaultEvals, "the most loss evaluations per start (each replays the fit set, ~0.1 s)")
	base := fs.String("base", "h200", "the profile to start from: a built-in name or a profile file")
	out := fs.String("out", "", "write the fitted profile to this YAML file (required)")
	force := fs.Bool("force", false, "overwrite --out if it exists")
	asJSON := fs.Bool("json", false, "print the fit as JSON on stdout; no progress on stderr")
	pos, err := parseWithArgs(fs, args)
	if err != nil {
		return err
	}
	from = append(from, pos...)
	switch {
	case len(from) == 0:
		return badInput("calibrate needs sweeps to fit on: --from SWEEP.json [MORE.json ...]")
	case *out == "":
		return badInput("calibrate needs --out PROFILE.yaml, where the fitted profile goes")
	case math.IsNaN(*holdout) || *holdout < 0 || *holdout >= 1:
		return badInput("--holdout is %v; want a share in [0, 1) (0.3 holds 30 %% of the scenarios out)", *holdout)
	case *starts < 1 || *starts > 1000:
		return badInput("--starts is %d; allowed 1..1000", *starts)
	case *evals < 1 || *evals > 100000:
		return badInput("--evals is %d; allowed 1..100000", *evals)
	}
	if dup, ok := repeated(from); ok {
		return badInput("sweep %s is given twice; give each once", dup)
	}
	dest := output{path: *out, force: *force, flag: "--out", forceFlag: "--force", what: "the profile"}
	if err := checkOutputs(dest); err != nil {
		return err
	}
	basePF, err := loadSimProfile(*base)
	if err != nil {
		return err
	}
	if basePF.Base == "" {
		if _, ok := sim.Profiles()[basePF.Profile.Name]; ok {
			basePF.Base = basePF.Profile.Name
		}
	}
	runs, err := calib.LoadRuns(from)
	if err != nil {
		return badInput("%v", err)
	}
	opt := calib.Options{Holdout: *holdout, Seed: *seed, Starts: *starts, Evals: *evals, Sweeps: from}
	for _, r := range refs {
		g, err := calib.LoadRefGEMMs(r)
		if err != nil {
			return badInput("--ref: %v", err)
		}
		opt.Refs = append(opt.Refs, g...)
	}
	started := time.Now()
	if !*asJSON {
		opt.Progress = evalProgress(s, started)
	}
	res, err := calib.Calibrate(ctx, basePF, runs, opt)
	if !*asJSON && s.terminal {
		fmt.Fprintln(s.errOut)
	}
	if err != nil {
		return err
	}
	header := fmt.Sprintf("c3lab simulator profile, fitted by c3lab calibrate on %d runs of %d scenarios (%d held out, seed %d).\n"+
		"Units: seconds, bytes, bytes/s, FLOP/s. c3lab validate --profile FILE --against SWEEPS scores it.",
		res.FitRuns, len(res.Split.Fit), len(res.Split.HeldOut), *seed)
	if err := dest.write(func(w io.Writer) error { return sim.WriteProfileFile(w, res.File, header) }); err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(s.out)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Profile     string           `json:"profile"`
			Runs        int              `json:"runs"`
			FitRuns     int              `json:"fit_runs"`
			FitSet      []string         `json:"fit_set"`
			HeldOut     []string         `json:"held_out"`
			StartLoss   float64          `json:"start_loss"`
			Loss        float64          `json:"loss"`
			Evaluations int              `json:"evaluations"`
			Seconds     float64          `json:"seconds"`
			Constants   []calib.Constant `json:"constants"`
			// HeldOut is the fitted profile's error on the held-out runs.
			HeldOutError *sim.HeldOutError `json:"held_out_error,omitempty"`
		}{*out, len(runs), res.FitRuns, res.Split.Fit, res.Split.HeldOut, res.StartLoss, res.Loss, res.Evaluations,
			math.Round(time.Since(started).Seconds()*10) / 10, res.Constants, res.File.Fit.HeldOutError})
	}
	return writeCalibration(s.out, res, len(runs), *out, time.Since(started))
}

// writeCalibration prints the fit for people: the split, the loss, and
// each fitted constant with its range, interval and flags.
func writeCalibration(w io.Writer, res calib.Result, runs int, out string, took time.Duration) error {
	fmt.Fprintf(w, "fitted on %d of %d runs: %d scenarios, %d held out; %d loss evaluations in %s\n",
		res.FitRuns, runs, len(res.Split.Fit), len(res.Split.HeldOut), res.Evaluations, took.Round(time.Second))
	fmt.Fprintf(w, "stage 2 loss on the fit set: %.4f at the start, %.4f fitted\n", res.StartLoss, res.Loss)
	if h := res.File.Fit.HeldOutError; h != nil {
		fmt.Fprintf(w, "held out (%d runs of %d scenarios): T_c3 off by %.1f %% at the median, %.1f %% at p90; F by %.1f and %.1f points\n"+
			"  (kept in the profile: the lab shows it beside the simulator's figures; c3lab validate gives the table)\n",
			h.Runs, h.Scenarios, 100*h.All.TC3Median, 100*h.All.TC3P90, h.All.FMedian, h.All.FP90)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "constant\tstage\tvalue\tstart\trange\tidentified within\tpoints\tflags")
	poor := 0
	for _, c := range res.Constants {
		rng := "-"
		if len(c.Range) == 2 {
			rng = fmt.Sprintf("%.4g..%.4g", c.Range[0], c.Range[1])
		}
		var flags []string
		if c.AtBound != "" {
			flags = append(flags, "at "+c.AtBound+" bound")
		}
		if c.Poor {
			flags = append(flags, "POORLY IDENTIFIED")
			poor++
		}
		if c.Note != "" {
			flags = append(flags, c.Note)
		}
		start := "-" // the base profile has no such entry
		if c.Start != nil {
			start = fmt.Sprintf("%.4g", *c.Start)
		}
		fmt.Fprintf(tw, "%s\t%d\t%.4g\t%s\t%s\t%.4g..%.4g\t%d\t%s\n", c.Name(), c.Stage, c.Value, start, rng, c.Low, c.High, c.Points, strings.Join(flags, "; "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nstage 1 intervals: +- one standard error of a line fit, or the quartiles of the per-run values;\n"+
		"stage 2: the values, others held, over which the loss rises by at most %.0f %%.\n", 100*calib.DefaultLossRise)
	fmt.Fprintf(w, "%d of %d constants poorly identified. Wrote %s.\n", poor, len(res.Constants), out)
	return nil
}
