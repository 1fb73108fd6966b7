package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/c3lab/c3lab/backends/sim"
	"github.com/c3lab/c3lab/backends/sim/calib"
)

func runValidate(ctx context.Context, args []string, s stdio) error {
	fs := newFlags("validate", "validate --profile h200|FILE --against SWEEP.json [MORE.json ...] [--split PROFILE.yaml] [--worst N] [--json [--runs]] [--ratchet FIGURES.json]\n\n"+
		"Replays every swept scenario and strategy on the simulator with the profile\n"+
		"and prints the error table: T_comp, T_comm, T_c3 (relative) and F (% of\n"+
		"ideal, points), median / p90 / max, overall and per collective, class,\n"+
		"strategy and stream kind, the profile's fit set and held-out scenarios apart,\n"+
		"then whether the simulator's best strategy is within 3 % of the measured best.\n"+
		"--ratchet fails (exit 1) when a figure is worse than the committed ones.", s)
	var against listFlag
	fs.Var(&against, "against", "a sweep file (c3lab sweep) to score against; more may follow as arguments or further --against; default the sweeps the calibration (--split, else --profile) was fitted on")
	profile := fs.String("profile", "h200", "the profile: a built-in name or a profile file (c3lab calibrate writes one)")
	asJSON := fs.Bool("json", false, "print the figures as JSON (what --ratchet reads)")
	ratchet := fs.String("ratchet", "", "the committed figures (validate --json); exit 1 when a figure got worse than those")
	worst := fs.Int("worst", 0, "also list the N runs of each set (fit set, held out) the simulator gets most wrong by T_c3, with their measured and simulated times")
	perRun := fs.Bool("runs", false, "with --json, also write every run's errors (what the tables sum up)")
	split := fs.String("split", "", "take the fit set and held-out scenarios from this profile file's fit record instead of --profile's (to score a built-in profile on a calibration's split)")
	record := fs.Bool("record", false, "write the held-out figures into --profile's file (its fit record's held_out_error, which the lab shows beside simulated figures), scored on the sweeps it was fitted on; after a model change")
	pos, err := parseWithArgs(fs, args)
	if err != nil {
		return err
	}
	against = append(against, pos...)
	pf, err := loadSimProfile(*profile)
	if err != nil {
		return err
	}
	var recordTo output
	if *record {
		switch {
		case pf.Label() != *profile || *profile == sim.FittedH200Name:
			return badInput("--record writes into a profile file; --profile %s is built in (its file is backends/sim/profiles/h200-fit.yaml)", *profile)
		case pf.Fit == nil:
			return badInput("--record needs a calibrated profile: %s records no fit (c3lab calibrate writes one)", *profile)
		case len(against) > 0 || *split != "":
			return badInput("--record scores the profile on the sweeps and split it was fitted on; drop --against and --split")
		}
		recordTo = output{path: *profile, force: true, flag: "--profile", forceFlag: "--record", what: "the profile"}
		if err := recordTo.check(); err != nil {
			return err
		}
	}
	fit := pf.Fit
	if *split != "" {
		sp, err := sim.LoadProfileFile(*split)
		if err != nil {
			return badInput("--split: %v", err)
		}
		if sp.Fit == nil {
			return badInput("--split: %s records no fit set (c3lab calibrate writes one)", *split)
		}
		fit = sp.Fit
	}
	if len(against) == 0 && fit != nil {
		// A calibration names the sweeps it was fitted on.
		against = fit.Sweeps
	}
	if len(against) == 0 {
		return badInput("validate needs sweeps to score against: --against SWEEP.json [MORE.json ...]")
	}
	if dup, ok := repeated(against); ok {
		return badInput("sweep %s is given twice; give each once", dup)
	}
	var committed calib.Report
	if *ratchet != "" {
		if committed, err = calib.ReadReport(*ratchet); err != nil {
			return badInput("--ratchet: %v", err)
		}
	}
	runs, err := calib.LoadRuns(against)
	if err != nil {
		return badInput("%v", err)
	}
	rep, err := calib.Validate(ctx, pf.Profile, fit, runs)
	if err != nil {
		return err
	}
	rep.Profile, rep.Sweeps = *profile, against
	rep.SetWorst(*worst)
	if *record {
		if err := recordHeldOut(recordTo, pf, rep); err != nil {
			return err
		}
	}
	if *asJSON {
		err = calib.WriteJSON(s.out, rep, *perRun)
	} else {
		err = calib.WriteTable(s.out, rep)
	}
	if err != nil || *ratchet == "" {
		return err
	}
	bad := calib.Ratchet(rep, committed)
	if len(bad) == 0 {
		if !*asJSON {
			fmt.Fprintf(s.out, "\nratchet: no figure worse than %s\n", *ratchet)
		}
		return nil
	}
	for _, b := range bad {
		fmt.Fprintln(s.errOut, "c3lab validate: worse:", b)
	}
	return fmt.Errorf("fidelity got worse than %s on %d figure(s); improve the model, or if meant, commit the new figures (c3lab validate ... --json > %s)",
		*ratchet, len(bad), strings.TrimSpace(*ratchet))
}

// recordHeldOut writes pf back to its file with the report's held-out
// figures in its fit record, keeping the file's header comment.
func recordHeldOut(dest output, pf sim.ProfileFile, rep calib.Report) error {
	h := calib.HeldOutError(rep)
	if h == nil {
		return badInput("%s holds no scenario out, so there are no held-out figures to record", dest.path)
	}
	data, err := os.ReadFile(dest.path)
	if err != nil {
		return fmt.Errorf("reading the profile again: %w", err)
	}
	var header []string
	for _, l := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(l, "#") {
			break
		}
		header = append(header, strings.TrimSpace(strings.TrimPrefix(l, "#")))
	}
	fit := *pf.Fit
	fit.HeldOutError = h
	pf.Fit = &fit
	return dest.write(func(w io.Writer) error { return sim.WriteProfileFile(w, pf, strings.Join(header, "\n")) })
}
