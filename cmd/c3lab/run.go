package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
)

func runRun(ctx context.Context, args []string, s stdio) error {
	fs := newFlags("run", "run [--scenario NAME|FILE] [--backend auto|sim] [strategy flags] [--reps N] [--precision P [--time-cap D]] [--json]", s)
	var ef experimentFlags
	ef.backend.ctx = ctx // under a launcher: one process per GPU
	ef.register(fs, "a built-in scenario name (c3lab scenarios lists them) or a YAML file; default: the first built-in", true)
	reps := fs.Int("reps", 0, "timed repetitions per run; 0 = the scenario's own (default 20)")
	var pf precisionFlags
	pf.register(fs, "2%", timeCap{abs: time.Minute}, "(the lab's default: T_c3 within ±2%, at most a minute)")
	timeline := fs.Bool("timeline", false, "with --json, include the spans and telemetry samples of one concurrent repetition")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkReps(*reps); err != nil {
		return err
	}
	opt, err := pf.options(profiler.Options{Reps: *reps})
	if err != nil {
		return err
	}
	if *timeline && !*asJSON {
		return noEffect("timeline", "without --json (it adds the timeline to the JSON); add --json or drop --timeline")
	}
	if err := ef.record.check(); err != nil {
		return err
	}
	b, sc, st, err := ef.open(s.errOut, *asJSON)
	if err != nil {
		return err
	}
	defer b.Close()
	rec, err := ef.record.open(b, sc.GPUs)
	if err != nil {
		return err
	}
	rec.Scenario(sc)
	rec.Strategy(st)
	machine, closeMachine := openNodeTelemetry(b, rec)
	opt.Machine = machine
	r, err := profiler.Measure(ctx, b, sc, st, opt)
	closeMachine()
	if err != nil {
		rec.Error(err.Error())
		closeRecorder(rec, s.errOut)
		return fmt.Errorf("measuring %s: %w", sc.Name, err)
	}
	rec.Result(r)
	if err := closeRecorder(rec, s.errOut); err != nil {
		return err
	}
	warnDrift(s.errOut, r)
	if *asJSON {
		if !*timeline {
			r.Timeline, r.Samples = nil, nil
		}
		return writeJSON(s.out, r)
	}
	writeReport(s.out, r)
	return nil
}

// fieldErrors joins strategy problems, naming flags rather than YAML keys.
func fieldErrors(errs []scenarios.FieldError) string {
	flagNames := strings.NewReplacer(
		"comm_priority", "--comm-priority", "comm_sms", "--comm-sms", "compute_sms", "--compute-sms",
		"comm_ctas", "--comm-ctas", "gemm_sm_target", "--gemm-sm-target", "comm_engine", "--comm-engine",
		"copy_engines", "--copy-engines", "chunk_bytes", "--chunk", "launch", "--launch",
	)
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = flagNames.Replace(e.Msg)
	}
	return strings.Join(msgs, "; ")
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
