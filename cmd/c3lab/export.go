package main

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/c3lab/c3lab/backends/replay"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/export"
)

// exportOutput is an export target and the writer of its format.
type exportOutput struct {
	output
	write func(io.Writer, export.Trace) error
}

func runExport(ctx context.Context, args []string, s stdio) error {
	fs := newFlags("export", "export [--scenario NAME|FILE] [--backend auto|cuda|sim] [strategy flags] | --from RECORDING [--index N]; [--pprof F] [--perfetto F] [--chrome F] [--force]", s)
	var ef experimentFlags
	ef.register(fs, "a built-in scenario name or a YAML file; default: the first built-in", false)
	reps := fs.Int("reps", 0, "timed repetitions per run; 0 = the scenario's own")
	pprofPath := fs.String("pprof", "", "write GPU time per op as a pprof profile (go tool pprof, Perfetto)")
	perfettoPath := fs.String("perfetto", "", "write the timeline and telemetry as a native Perfetto trace (.pftrace)")
	chromePath := fs.String("chrome", "", "write the timeline and telemetry as Chrome trace JSON")
	force := fs.Bool("force", false, "overwrite output files that exist")
	from := fs.String("from", "", "export a recorded measurement from this recording instead of measuring (its timeline, and the telemetry recorded while it ran as counters)")
	index := fs.Int("index", -1, "with --from, which recorded measurement (c3lab replay --text numbers them); default the last")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkReps(*reps); err != nil {
		return err
	}
	set := setFlags(fs)
	if *from != "" {
		// A recorded measurement is exported as it was recorded: the flags
		// that say what to measure, and how, would be ignored.
		for _, name := range append([]string{"scenario", "backend", "reps"}, ef.strategy.given()...) {
			if set[name] {
				return noEffect(name, "with --from (the recorded measurement is exported as it was); drop it, or measure anew without --from")
			}
		}
	} else if set["index"] {
		return noEffect("index", "without --from (it picks a recorded measurement); add --from RECORDING or drop --index")
	}
	if set["index"] && *index < 0 {
		return badInput("--index is %d; want 0 or more (leave it out for the last measurement)", *index)
	}
	var outputs []exportOutput
	for _, o := range []exportOutput{
		{output{path: *pprofPath, flag: "--pprof"}, export.WritePprof},
		{output{path: *perfettoPath, flag: "--perfetto"}, export.WritePerfetto},
		{output{path: *chromePath, flag: "--chrome"}, export.WriteChrome},
	} {
		if o.path != "" {
			o.force, o.forceFlag, o.what = *force, "--force", "the trace"
			outputs = append(outputs, o)
		}
	}
	if len(outputs) == 0 {
		return badInput("nothing to export: give --pprof, --perfetto or --chrome")
	}
	var files []output
	for _, o := range outputs {
		files = append(files, o.output)
	}
	if err := checkOutputs(files...); err != nil {
		return err
	}
	var tr export.Trace
	if *from != "" {
		rb, err := replay.Open(*from)
		if err != nil {
			return usageError{fmt.Errorf("reading %s: %w", *from, err)}
		}
		for _, d := range rb.Recording().Damages {
			fmt.Fprintln(s.errOut, damageLine(*from, d))
		}
		ms := rb.Measurements()
		if len(ms) == 0 {
			return fmt.Errorf("%s holds no measurement to export", *from)
		}
		i := *index
		if i < 0 {
			i = len(ms) - 1
		}
		if i >= len(ms) {
			return badInput("--index %d: %s holds %d measurements (0..%d)", i, *from, len(ms), len(ms)-1)
		}
		tr = recordedTrace(rb, ms[i])
	} else {
		b, sc, st, err := ef.open(s.errOut, false)
		if err != nil {
			return err
		}
		defer b.Close()
		r, err := profiler.Measure(ctx, b, sc, st, profiler.Options{Reps: *reps})
		if err != nil {
			return fmt.Errorf("measuring %s: %w", sc.Name, err)
		}
		tr = export.FromResult(r)
	}
	// Every output is written even when one fails (each failure saved
	// elsewhere, and said); the last failure is the command's error.
	var failed []error
	for _, o := range outputs {
		write := o.write
		if err := o.output.write(func(w io.Writer) error { return write(w, tr) }); err != nil {
			failed = append(failed, err)
			continue
		}
		fmt.Fprintf(s.out, "wrote %s\n", o.path)
	}
	if len(failed) == 0 {
		return nil
	}
	for _, err := range failed[:len(failed)-1] {
		fmt.Fprintf(s.errOut, "c3lab export: %v\n", err)
	}
	return failed[len(failed)-1]
}

// recordedTrace is the trace of a recorded measurement: its timeline and
// its own telemetry, plus the telemetry recorded beside it while it ran (a
// GPU node's NVML samples, timed from when it was asked for), in the
// units the recording gives.
func recordedTrace(rb *replay.Backend, m replay.Measurement) export.Trace {
	r := m.Result
	r.Samples = append(slices.Clone(r.Samples), rb.TelemetryDuring(m.From, m.At)...)
	tr := export.FromResult(r)
	tr.Units = rb.Recording().Header.Telemetry
	return tr
}
