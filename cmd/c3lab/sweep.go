package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/c3lab/c3lab/backends/cuda"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/doctor"
	"github.com/c3lab/c3lab/profiler/report"
	"github.com/c3lab/c3lab/profiler/sweepfile"
	"github.com/c3lab/c3lab/recordings/outfile"
	"github.com/c3lab/c3lab/scenarios"
)

// sweepProgress prints a sweep's progress on s's error stream: on a
// terminal one line rewritten in place, elsewhere a line every ten runs and
// one at the end.
func sweepProgress(s stdio) profiler.Progress {
	return func(done, total int, current string, eta time.Duration) {
		line := fmt.Sprintf("sweep %d/%d", done, total)
		if current != "" {
			line += "  " + current
		}
		if eta > 0 {
			line += fmt.Sprintf("  ETA %s", eta.Round(time.Second))
		}
		if s.terminal {
			fmt.Fprintf(s.errOut, "\r\033[K%s", line)
			if done == total {
				fmt.Fprintln(s.errOut)
			}
		} else if done == total || done%10 == 0 {
			fmt.Fprintln(s.errOut, line)
		}
	}
}

func runSweep(ctx context.Context, args []string, s stdio) error {
	fs := newFlags("sweep", "sweep [--backend auto|cuda|sim] [--suite default] [--scenarios A,B|FILE.yaml] [--collectives C,D] [--gpus N] [--strategies X,Y] [--reps N] [--passes N] [--precision P [--time-cap D]] [--out FILE.json [--force]] [--record FILE] [--json]", s)
	var be backendFlag
	be.ctx = ctx // under a launcher: one process per GPU
	var rf recordFlags
	be.register(fs)
	rf.register(fs)
	suite := fs.String("suite", "default", "the scenario suite: default (the built-in suite)")
	only := fs.String("scenarios", "", "comma-separated scenarios to run instead of the whole suite: built-in names or YAML files")
	colls := fs.String("collectives", "", "keep only scenarios of these collectives or host copies (comma-separated: all-gather, reduce-scatter, all-reduce, all-to-all, h2d, d2h, swap)")
	gpus := fs.Int("gpus", 0, "run every scenario on this many GPUs (2..8), each GPU with the scenario's per-rank message (so an all-gather or reduce-scatter sends it to more peers); 0 keeps each scenario's own")
	strategies := fs.String("strategies", "", "comma-separated strategies: "+strategyNames())
	reps := fs.Int("reps", 0, "timed repetitions per run; 0 = each scenario's own")
	passes := fs.Int("passes", 0, fmt.Sprintf("split every measurement into this many passes over the whole sweep, so that its interval holds what changes between runs of the sweep (1..%d); 0 = %d on the GPUs, 1 on the simulator", maxPasses, profiler.DefaultPasses))
	var pf precisionFlags
	pf.register(fs, "2pt", timeCap{factor: 2}, "per entry (the sweep's default: F within ±2 points, each entry taking at most twice its fixed rounds' time)")
	out := fs.String("out", "", "write the results to this JSON file; default c3lab-sweep-YYYYMMDD-HHMMSS.json in the working directory")
	force := fs.Bool("force", false, "overwrite --out if it exists")
	asJSON := fs.Bool("json", false, "print the summary as JSON on stdout; no progress on stderr")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *suite != "default" {
		return badInput("unknown suite %q; allowed default", *suite)
	}
	if err := checkReps(*reps); err != nil {
		return err
	}
	if *passes < 0 || *passes > maxPasses {
		return badInput("--passes is %d; allowed 1..%d (0: %d on the GPUs, 1 on the simulator)", *passes, maxPasses, profiler.DefaultPasses)
	}
	opt, err := pf.options(profiler.Options{Reps: *reps, Passes: *passes})
	if err != nil {
		return err
	}
	if *force && *out == "" {
		return noEffect("force", "without --out (a sweep without --out writes a new file); add --out FILE or drop --force")
	}
	if err := rf.checkFlags(); err != nil {
		return err
	}
	// Where the results go is checked before anything runs; without --out
	// they go to a new file here, named like the lab's recordings.
	started := time.Now()
	dest := output{path: *out, force: *force, flag: "--out", forceFlag: "--force", what: "the results"}
	if dest.path == "" {
		dest.path = outfile.Unused("c3lab-sweep-" + started.Format("20060102-150405") + ".json")
	}
	if err := checkOutputs(dest, rf.output()); err != nil {
		return err
	}
	names := splitList(*strategies)
	if dup, ok := repeated(names); ok {
		return badInput("--strategies names %q twice; list each strategy once", dup)
	}
	if err := profiler.CheckGridNames(names); err != nil {
		return usageError{err}
	}
	keep := map[scenarios.Collective]bool{}
	for _, k := range splitList(*colls) {
		c := scenarios.Collective(k)
		if !slices.Contains(scenarios.CommKinds, c) {
			return badInput("unknown collective %q in --collectives; allowed all-gather, reduce-scatter, all-reduce, all-to-all, or the host copies h2d, d2h, swap", k)
		}
		keep[c] = true
	}
	if *gpus != 0 && (*gpus < 2 || *gpus > 8) {
		return badInput("--gpus is %d; allowed 2..8 (0 keeps each scenario's own)", *gpus)
	}
	b, err := be.openTelling(s.errOut, *asJSON)
	if err != nil {
		return err
	}
	defer b.Close()
	lim := b.Capabilities().Limits
	if opt.Passes == 0 && !b.Capabilities().Deterministic {
		opt.Passes = profiler.DefaultPasses
	}
	grid, err := profiler.ParseGrid(names, lim)
	if err != nil {
		return usageError{err}
	}
	asked := splitList(*only)
	list, err := sweepScenarios(asked, lim)
	if err != nil {
		return err
	}
	for _, n := range asked {
		noteRenamed(s.errOut, n)
	}
	skipped := ""
	if len(asked) == 0 {
		// The whole suite: what this backend can run, and one line on
		// what it cannot (a one-GPU node runs the host copies only).
		if list, skipped = runnableSuite(b); skipped != "" && !*asJSON {
			fmt.Fprintln(s.errOut, "c3lab:", skipped)
		}
	}
	if len(keep) > 0 {
		list = slices.DeleteFunc(list, func(sc scenarios.Scenario) bool { return !keep[sc.Comm.Collective] })
		if len(list) == 0 {
			return badInput("no scenario of the suite (or of --scenarios) runs %s", *colls)
		}
	}
	if *gpus != 0 {
		for i := range list {
			list[i] = scenarios.OnGPUs(list[i], *gpus)
		}
	}
	if err := checkFits(list, lim); err != nil {
		return err
	}
	var progress profiler.Progress
	if !*asJSON {
		progress = sweepProgress(s)
	}
	most := 0
	for _, sc := range list {
		most = max(most, sc.GPUs)
	}
	rec, err := rf.open(b, most)
	if err != nil {
		return err
	}
	machine, closeMachine := openNodeTelemetry(b, rec)
	opt.Machine = machine
	entries, runErr := profiler.Sweep(ctx, b, list, grid, opt, progress, func(e profiler.SweepEntry) {
		if e.Result != nil {
			warnDrift(s.errOut, *e.Result)
			rec.Scenario(e.Result.Scenario)
			rec.Strategy(e.Result.Strategy)
			rec.Result(*e.Result)
		} else {
			rec.Error(e.Scenario + " · " + e.Strategy + ": " + e.Err)
		}
	})
	bests := profiler.BestPerScenario(entries)
	if runErr == nil {
		// Each best again, in fresh rounds: the figure to report, free
		// of the bias of picking the highest of single measurements.
		if !*asJSON && len(bests) > 0 {
			fmt.Fprintf(s.errOut, "c3lab: measuring each scenario's best strategy again, in fresh rounds (%d)\n", len(bests))
		}
		runErr = profiler.RemeasureBests(ctx, b, list, grid, bests, opt)
	}
	closeMachine()
	if err := closeRecorder(rec, s.errOut); err != nil {
		return err
	}
	f := sweepfile.File{
		C3lab: currentVersion(), Date: time.Now().UTC().Format(time.RFC3339),
		Backend: b.Name(), Devices: b.Devices(), Reps: *reps, Passes: max(opt.Passes, 1), Grid: grid,
		Summary: profiler.SummarizeSweep(entries, grid), Best: bests, Results: entries, Skipped: skipped,
	}
	f.Host, _ = os.Hostname()
	if b.Capabilities().LocalGPUs {
		r, n := cuda.Probe(), doctor.ProbeNVML(nvml.New())
		f.CUDA, f.NVML = &r, &n
	}
	if runErr != nil {
		f.Incomplete = runErr.Error()
	}
	// Should the write fail now, the results are saved elsewhere and
	// writeErr says where; the summary is printed either way.
	writeErr := dest.write(func(w io.Writer) error { return sweepfile.Write(w, f) })
	if *asJSON {
		if err := writeJSON(s.out, f.Summary); err != nil {
			return err
		}
	} else {
		writeSummary(s, f)
		writeSweepHeatmap(s, f)
	}
	if writeErr == nil && (!*asJSON || *out == "") {
		fmt.Fprintf(s.errOut, "c3lab: wrote the results to %s\n", dest.path)
	}
	if runErr != nil {
		if writeErr != nil {
			fmt.Fprintf(s.errOut, "c3lab sweep: %v\n", writeErr)
		}
		return fmt.Errorf("sweep stopped after %d of %d runs: %w", len(entries), len(list)*len(grid), runErr)
	}
	return writeErr
}

// writeSummary prints the sweep's summary: per strategy its uplift U over
// the serial default (geometric mean, ± half its 95 % interval where every
// U has one) and the scenarios where it ranked first alone (wins) or
// together with strategies its interval does not tell apart (tied), by
// which strategies compare, then its own fraction of ideal and of the
// bound; then each scenario's best, as selected and as measured again.
func writeSummary(s stdio, f sweepfile.File) {
	fmt.Fprintf(s.out, "%-18s %14s %5s %5s %8s %8s  %s\n", "strategy", "U", "wins", "tied", "% ideal", "% bound", "by class (gemm-long / balanced / comm-long), runs")
	for _, x := range f.Summary {
		up := report.NA
		if x.MeanUplift != nil {
			up = report.UpliftCI(*x.MeanUplift, x.MeanUpliftCI)
		}
		mean := "   n/a"
		if x.MeanFraction != nil {
			mean = fmt.Sprintf("%6s", report.PercentValue(*x.MeanFraction))
		}
		cls := func(c profiler.Class) string {
			if v, ok := x.ByClass[c]; ok {
				return report.PercentValue(v)
			}
			return "-"
		}
		failed := ""
		if x.Failed > 0 {
			failed = fmt.Sprintf(", %d failed", x.Failed)
		}
		bound := "     n/a"
		if x.MeanFractionOfBound != nil {
			bound = fmt.Sprintf("%8s", report.PercentValue(*x.MeanFractionOfBound))
		}
		fmt.Fprintf(s.out, "%-18s %14s %5d %5d %8s %s  %s / %s / %s, %d runs%s\n", x.Strategy, up, x.Wins, x.Tied, mean, bound, cls(profiler.GEMMLong), cls(profiler.Balanced), cls(profiler.CommLong), x.N, failed)
	}
	writeBests(s.out, f.Best)
}

// writeBests prints each scenario's best strategy: its U as selected and,
// when it was measured again, as re-measured (the figure to quote: the
// selected one is the highest of single measurements), and the strategies
// it is tied with.
func writeBests(w io.Writer, bests []profiler.ScenarioBest) {
	if len(bests) == 0 {
		return
	}
	fmt.Fprintln(w, "\nbest per scenario: U measured again in fresh rounds (as selected)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, b := range bests {
		fig := func(u float64, uci *profiler.Interval, t float64, tci *profiler.Interval) string {
			if u > 0 {
				return report.UpliftCI(u, uci)
			}
			return "T_c3 " + report.DurationCI(t, tci)
		}
		again := "not measured again"
		if re := b.Remeasured; re != nil && re.Err != "" {
			again = "measuring again failed: " + re.Err
		} else if re != nil {
			again = fig(re.Uplift, re.UpliftCI, re.TC3, re.TC3CI)
		}
		tied := ""
		if len(b.Tied) > 0 {
			tied = "tied with " + strings.Join(b.Tied, ", ")
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t(%s)\t%s\n", b.Scenario, b.Strategy, again, fig(b.Uplift, b.UpliftCI, b.TC3, b.TC3CI), tied)
	}
	tw.Flush()
}

// sweepScenarios resolves --scenarios, built-in names or YAML files as
// run --scenario takes them (the whole suite when none), and refuses a
// scenario named twice: results are kept by scenario name, and running
// one twice would only double the time.
func sweepScenarios(args []string, lim scenarios.Limits) ([]scenarios.Scenario, error) {
	if len(args) == 0 {
		return scenarios.Builtin(), nil
	}
	var list []scenarios.Scenario
	from := map[string]string{} // scenario name -> the argument that gave it
	for _, a := range args {
		sc, err := resolveScenario(a, lim)
		if err != nil {
			return nil, err
		}
		if prev, ok := from[sc.Name]; ok {
			if prev != a {
				return nil, badInput("--scenarios names %s twice (%s and %s); list each scenario once", sc.Name, prev, a)
			}
			return nil, badInput("--scenarios names %s twice; list each scenario once", sc.Name)
		}
		from[sc.Name] = a
		list = append(list, sc)
	}
	return list, nil
}

// repeated returns the first name that occurs twice in names.
func repeated(names []string) (string, bool) {
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			return n, true
		}
		seen[n] = true
	}
	return "", false
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// strategyNames lists the named strategies for the help text: the default
// grid, then the copy-engine ones, then the decompositions.
func strategyNames() string {
	var grid, ce []string
	// The names are the same on every device; only the values follow it.
	for _, n := range profiler.DefaultGrid(scenarios.Limits{}) {
		grid = append(grid, n.Name)
	}
	for _, n := range profiler.CopyEngineGrid(scenarios.Limits{}) {
		ce = append(ce, n.Name)
	}
	var dec []string
	for _, n := range profiler.DecomposeGrid(scenarios.Limits{}) {
		dec = append(dec, n.Name)
	}
	var p2p []string
	for _, n := range profiler.PeerLoadGrid(scenarios.Limits{}) {
		p2p = append(p2p, n.Name)
	}
	return strings.Join(grid, ", ") + " (the default grid), " + strings.Join(ce, ", ") + "; for stream scenarios with dependent pairs " + strings.Join(dec, ", ") +
		"; for reduce-scatter and all-reduce on GPUs with peer access " + strings.Join(p2p, ", ")
}

// maxPasses bounds --passes: each pass prepares every scenario again.
const maxPasses = 10
