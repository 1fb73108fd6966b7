package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/c3lab/c3lab/profiler/kineto"
	"github.com/c3lab/c3lab/profiler/report"
	"github.com/c3lab/c3lab/recordings"
	"github.com/c3lab/c3lab/scenarios"
)

// windowFlag is --window FROM..TO: times from the trace's first GPU
// activity ("2ms..5ms", "1.5ms..", "..800us").
type windowFlag struct {
	set      bool
	from, to int64
}

func (w *windowFlag) String() string {
	if !w.set {
		return ""
	}
	return fmt.Sprintf("%v..%v", time.Duration(w.from), time.Duration(w.to))
}

func (w *windowFlag) Set(s string) error {
	a, b, ok := strings.Cut(s, "..")
	if !ok {
		return fmt.Errorf("want FROM..TO such as 2ms..5ms (either side may be empty), not %q", s)
	}
	parse := func(v string) (int64, error) {
		v = strings.TrimSpace(strings.ReplaceAll(v, "µ", "u"))
		if v == "" {
			return 0, nil
		}
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return 0, fmt.Errorf("want a time such as 2ms or 850us, not %q", v)
		}
		return int64(d), nil
	}
	var err error
	if w.from, err = parse(a); err != nil {
		return err
	}
	if w.to, err = parse(b); err != nil {
		return err
	}
	if w.to != 0 && w.to <= w.from {
		return fmt.Errorf("the window %q ends before it starts", s)
	}
	w.set = true
	return nil
}

func runImport(ctx context.Context, args []string, s stdio) error {
	fs := newFlags("import", "import TRACE... [--step N | --window FROM..TO] [--json]\n"+
		"                    [--scenario OUT.yaml [--name NAME] [--rank R] [--force]]\n\n"+
		"TRACE is a PyTorch profiler (Kineto) trace, JSON or gzip JSON, one per rank\n"+
		"(torch.profiler's export_chrome_trace or tensorboard_trace_handler). Per rank:\n"+
		"the overlap of communication with compute (and Holistic Trace Analysis's\n"+
		"figure), the exposed communication, T_serial, T_ideal, the realized speedup\n"+
		"and the fraction of ideal as c3lab defines them, and each kind of op's time\n"+
		"alone and beside the other role. --scenario writes the step as a c3lab\n"+
		"scenario (streams of ops) to run, advise on and compare.", s)
	step := fs.String("step", "", "analyse one step, ProfilerStep#N (give N); default the whole trace")
	var window windowFlag
	fs.Var(&window, "window", "analyse a time window from the first GPU activity: FROM..TO such as 2ms..5ms")
	asJSON := fs.Bool("json", false, "print the reports as JSON")
	scenarioOut := fs.String("scenario", "", "write the selection of one rank as a scenario YAML file")
	name := fs.String("name", "", "with --scenario, the scenario's name; default from the trace file")
	rank := fs.Int("rank", -1, "with --scenario, the rank whose trace it is written from; default the first trace")
	force := fs.Bool("force", false, "with --scenario, overwrite the file if it exists")
	var rf recordFlags
	fs.StringVar(&rf.path, "record", "", "write the step as a recording of its scenario measured on the trace: c3lab replay (--lab) shows its timeline, c3lab compare pairs it with c3lab's runs")
	fs.BoolVar(&rf.overwrite, "record-overwrite", false, "let --record replace an existing file")
	files, err := parseWithArgs(fs, args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return badInput("import needs at least one trace file (c3lab import --help)")
	}
	set := setFlags(fs)
	if *step != "" && window.set {
		return badInput("--step and --window both pick what to analyse; give one")
	}
	if *scenarioOut == "" && rf.path == "" {
		for _, f := range []string{"name", "rank"} {
			if set[f] {
				return noEffect(f, "without --scenario or --record (it is about the scenario written); add one or drop it")
			}
		}
	}
	if *scenarioOut == "" && set["force"] {
		return noEffect("force", "without --scenario (it lets the scenario file be replaced); add --scenario OUT.yaml or drop it")
	}
	if err := rf.checkFlags(); err != nil {
		return err
	}
	out := output{path: *scenarioOut, force: *force, flag: "--scenario", forceFlag: "--force", what: "the scenario"}
	if err := checkOutputs(out, rf.output()); err != nil {
		return err
	}
	sel := kineto.Select{Step: *step, From: window.from, To: window.to}
	var reps []*kineto.Report
	for _, f := range files {
		var progress kineto.Progress
		done := func() {}
		if st, err := os.Stat(f); err == nil && st.Size() >= importProgressFrom && s.terminal && !*asJSON {
			progress, done = importProgress(s, f, time.Now)
		}
		t, err := kineto.ReadFileProgress(f, progress)
		done()
		if err != nil {
			var ke *kineto.Error
			if errors.As(err, &ke) {
				return badInput("%v", err)
			}
			return err
		}
		r, err := kineto.Analyze(t, sel)
		if err != nil {
			return badInput("%v", err)
		}
		reps = append(reps, r)
	}
	if *scenarioOut != "" || rf.path != "" {
		src := reps[0]
		if *rank >= 0 {
			src = nil
			for _, r := range reps {
				if r.Rank == *rank {
					src = r
					break
				}
			}
			if src == nil {
				return badInput("--rank %d: no trace given is of rank %d", *rank, *rank)
			}
		}
		im, err := src.Import(kineto.ScenarioOptions{Name: *name})
		if err != nil {
			return badInput("%v", err)
		}
		if *scenarioOut != "" {
			if err := writeImportedScenario(src, im, out, s, *asJSON); err != nil {
				return err
			}
		}
		if rf.path != "" {
			if err := recordImported(ctx, src, im, &rf, s, *asJSON); err != nil {
				return err
			}
		}
	}
	if *asJSON {
		return kineto.WriteJSON(s.out, reps)
	}
	return kineto.WriteText(s.out, reps, kineto.DefaultWidth)
}

// writeImportedScenario writes the rank's selection as a scenario, checked
// the way c3lab reads scenario files (it must read back valid).
func writeImportedScenario(r *kineto.Report, im *kineto.Imported, out output, s stdio, quiet bool) error {
	sc, left := im.Scenario, im.Left
	if err := scenarios.Validate(sc, scenarios.Limits{}); err != nil {
		return fmt.Errorf("the scenario written from %s does not validate: %w", r.File, err)
	}
	data, err := scenarios.Marshal(sc)
	if err != nil {
		return fmt.Errorf("writing the scenario: %w", err)
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		data = append(data, '\n')
	}
	if _, err := scenarios.Parse(data, out.path, scenarios.Limits{}); err != nil {
		return fmt.Errorf("the scenario written from %s does not read back: %w", r.File, err)
	}
	if err := out.write(func(w io.Writer) error { _, err := w.Write(data); return err }); err != nil {
		return err
	}
	if !quiet {
		var t int64
		var n int
		for _, c := range left {
			t += c.TotalNs
			n += c.Count
		}
		fmt.Fprintf(s.errOut, "wrote %s (%s, %d streams); left out %d activities (%s) c3lab has no op for; c3lab run --scenario %s\n",
			out.path, sc.Name, len(sc.Streams), n, report.Duration(float64(t)), out.path)
	}
	return nil
}

// recordImported writes the step as a recording: its scenario, measured on
// the trace (kineto.Imported.Result), with the timeline of the step.
func recordImported(ctx context.Context, r *kineto.Report, im *kineto.Imported, rf *recordFlags, s stdio, quiet bool) error {
	res, err := im.Result(ctx)
	if err != nil {
		return fmt.Errorf("measuring the step on the trace: %w", err)
	}
	h := recordings.Header{Version: version, Backend: kineto.BackendName, Devices: recordings.DevicesFromInfo(res.Devices)}
	rec, err := recordings.Create(rf.path, h, recordings.Options{Overwrite: rf.overwrite})
	if err != nil {
		return fmt.Errorf("starting the recording: %w", err)
	}
	rec.Marker(fmt.Sprintf("imported from %s, rank %d, %s; the GPU's idle gaps are taken out of the timeline", r.File, r.Rank, r.Selection))
	rec.Scenario(res.Scenario)
	rec.Strategy(res.Strategy)
	rec.Result(res)
	if err := closeRecorder(rec, s.errOut); err != nil {
		return err
	}
	if !quiet {
		fmt.Fprintf(s.errOut, "recorded %s (%s measured on the trace); c3lab replay %s --lab shows it\n", rf.path, res.Scenario.Name, rf.path)
	}
	return nil
}
