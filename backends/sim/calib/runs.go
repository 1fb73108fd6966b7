// Package calib fits a simulator profile to measured sweeps and scores a
// profile against them: what `c3lab calibrate` and `c3lab validate` do.
//
// The split is by scenario: a scenario's runs are all in the fit set or
// all held out, drawn from a seed. Calibrate fits in two stages, the
// isolated times in closed form (Stage1) and the interference constants
// by Nelder-Mead from several seeded starts inside each constant's
// physical range (Stage2), then reports how well each constant is
// identified. Validate replays every run on the simulator and tabulates
// the errors, the fit set and the held-out scenarios apart.
package calib

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/c3lab/c3lab/backends/sim"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/sweepfile"
	"github.com/c3lab/c3lab/scenarios"
)

// Run is one measured (scenario, strategy) of a sweep.
type Run struct {
	// Sweep is the index of the sweep file it came from.
	Sweep int
	// Scenario is the scenario's name in the current suite (a sweep that
	// used a former name gets the current one), the key of the split.
	Scenario string
	// Strategy is the grid's name of the strategy ("baseline").
	Strategy string
	// Scen and Strat are what ran.
	Scen  scenarios.Scenario
	Strat scenarios.Strategy
	// Real is the measured result.
	Real profiler.Result
}

// CanonicalName is a scenario's current name: the suite's rename of a
// former name, else the name itself.
func CanonicalName(name string) string {
	if now, ok := scenarios.Renamed(name); ok {
		return now
	}
	return name
}

// LoadRuns reads sweep files and lists their measured runs in file order.
// Entries without a result (a failed run) or without a concurrent time are
// left out.
func LoadRuns(paths []string) ([]Run, error) {
	var runs []Run
	for i, path := range paths {
		f, err := loadSweep(path)
		if err != nil {
			return nil, err
		}
		got := RunsOf(f, i)
		if len(got) == 0 {
			return nil, fmt.Errorf("%s: no measured run in the sweep", path)
		}
		runs = append(runs, got...)
	}
	return runs, nil
}

// loadSweep reads a sweep file's results as written, without the
// intervals sweepfile.Load adds to an older file (a bootstrap per result,
// seconds per file): calibration needs only the medians.
func loadSweep(path string) (sweepfile.File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return sweepfile.File{}, err
	}
	// A sweep may be kept gzipped (name.json.gz), as every sweep reader
	// takes it.
	if data, err = sweepfile.Inflate(data); err != nil {
		return sweepfile.File{}, fmt.Errorf("%s: %w", path, err)
	}
	var head struct {
		Format *int   `json:"format"`
		Tool   string `json:"tool"`
	}
	if err := json.Unmarshal(data, &head); err != nil || head.Tool != sweepfile.Tool {
		return sweepfile.File{}, fmt.Errorf("%s: not a c3lab sweep file", path)
	}
	if head.Format != nil && *head.Format > sweepfile.Version {
		return sweepfile.File{}, fmt.Errorf("%s: written by a newer c3lab (sweep format %d); update c3lab to read it", path, *head.Format)
	}
	var f sweepfile.File
	if err := json.Unmarshal(data, &f); err != nil {
		return sweepfile.File{}, fmt.Errorf("%s: damaged c3lab sweep file: %w", path, err)
	}
	return f, nil
}

// RunsOf lists the measured runs of one sweep, marked with index sweep.
func RunsOf(f sweepfile.File, sweep int) []Run {
	grid := map[string]scenarios.Strategy{}
	for _, g := range f.Grid {
		grid[g.Name] = g.Strategy
	}
	var runs []Run
	for _, e := range f.Results {
		if e.Result == nil || e.Err != "" || e.Result.TC3.N == 0 || e.Result.TC3.Median <= 0 {
			continue
		}
		st, ok := grid[e.Strategy]
		if !ok {
			st = e.Result.Strategy
		}
		runs = append(runs, Run{Sweep: sweep, Scenario: CanonicalName(e.Scenario), Strategy: e.Strategy,
			Scen: e.Result.Scenario, Strat: st, Real: *e.Result})
	}
	return runs
}

// Scenarios lists the runs' scenario names, sorted, each once.
func Scenarios(runs []Run) []string {
	var names []string
	for _, r := range runs {
		names = append(names, r.Scenario)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// Replay runs every run on a simulator of profile p, in parallel over the
// CPUs; results are in the runs' order, so the outcome does not depend on
// the schedule. A run the simulator refuses is an error naming it.
func Replay(ctx context.Context, p sim.Profile, runs []Run) ([]profiler.Result, error) {
	out, errs, err := replayEach(ctx, p, runs)
	if err != nil {
		return nil, err
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// replayEach is Replay with each run's error apart (nil where it ran);
// the error returned is the context's.
func replayEach(ctx context.Context, p sim.Profile, runs []Run) ([]profiler.Result, []error, error) {
	b := sim.New(p)
	out := make([]profiler.Result, len(runs))
	errs := make([]error, len(runs))
	workers := min(runtime.GOMAXPROCS(0), len(runs))
	var wg sync.WaitGroup
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				r := runs[i]
				res, err := profiler.Measure(ctx, b, r.Scen, r.Strat, profiler.Options{Reps: 1})
				if err != nil {
					errs[i] = fmt.Errorf("%s under %s: %w", r.Scenario, r.Strategy, err)
				}
				out[i] = res
			}
		}()
	}
	for i := range runs {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	return out, errs, nil
}

// StreamKind names what a graph scenario's streams carry beside compute:
// its communication kinds, "+dep" when an op waits for another. Empty for
// a one-pair scenario.
func StreamKind(sc scenarios.Scenario) string {
	if !sc.IsGraph() {
		return ""
	}
	var kinds []string
	dep := false
	for _, s := range sc.Streams {
		for _, o := range s.Ops {
			if o.Kind.IsComm() {
				kinds = append(kinds, string(o.Kind))
			}
			dep = dep || len(o.After) > 0
		}
	}
	slices.Sort(kinds)
	kinds = slices.Compact(kinds)
	k := strings.Join(kinds, "+")
	if k == "" {
		k = "compute only"
	}
	if dep {
		k += " +dep"
	}
	return k
}
