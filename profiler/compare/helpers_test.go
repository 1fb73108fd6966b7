package compare

import (
	"context"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/backends/sim"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/sweepfile"
	"github.com/c3lab/c3lab/scenarios"
)

var update = flag.Bool("update", false, "rewrite the golden files and the fixture sweeps under testdata")

// checkGolden80 checks that every line of got fits 80 columns and that got
// is the golden file (rewritten first with -update); run names the test
// for the hint of how to rewrite it.
func checkGolden80(t *testing.T, got []byte, golden, run string) {
	t.Helper()
	for i, l := range strings.Split(string(got), "\n") {
		if n := utf8.RuneCountInString(l); n > 80 {
			t.Errorf("line %d is %d columns: %q", i+1, n, l)
		}
	}
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test -run %s -update writes it)", err, run)
	}
	if string(got) != string(want) {
		t.Errorf("output differs from %s (go test -run %s -update rewrites it):\n%s", golden, run, got)
	}
}

// noisy is the simulator with measurement noise: every repetition's times
// scaled by 1 + sd·N(0,1), those of round k also by its drift, and the
// concurrent run's by slow (1.05: T_c3 5 % slower).
type noisy struct {
	backends.Backend
	rng   *rand.Rand
	sd    float64
	slow  float64
	round int
	drift []float64
	reps  int
}

func newNoisy(seed uint64, sd, slow float64) *noisy {
	return &noisy{Backend: sim.New(sim.H200()), rng: rand.New(rand.NewPCG(seed, 7)), sd: sd, slow: slow}
}

func (n *noisy) Capabilities() backends.Capabilities {
	c := n.Backend.Capabilities()
	c.Deterministic = n.sd == 0
	return c
}

func (n *noisy) Run(ctx context.Context, ex backends.Experiment, sink backends.EventSink) (backends.RunResult, error) {
	rr, err := n.Backend.Run(ctx, ex, sink)
	if err != nil {
		return rr, err
	}
	f := func(base float64) float64 { return base * (1 + n.sd*n.rng.NormFloat64()) }
	d := 1.0
	if n.sd > 0 {
		d = 1 + n.sd/2*n.rng.NormFloat64() // this run's drift: shared by its repetitions
	}
	for i := range rr.Reps {
		k := d
		if ex.Mode == backends.ModeConcurrent && n.slow > 0 {
			k *= n.slow
		}
		rp := &rr.Reps[i]
		x := f(k)
		rp.Wall = int64(float64(rp.Wall) * x)
		rp.Compute = int64(float64(rp.Compute) * x)
		rp.Comm = int64(float64(rp.Comm) * x)
		for j := range rp.Ops {
			rp.Ops[j] = int64(float64(rp.Ops[j]) * f(k))
		}
	}
	return rr, nil
}

// builtin returns a built-in scenario by name.
func builtin(t testing.TB, name string) scenarios.Scenario {
	t.Helper()
	for _, sc := range scenarios.Builtin() {
		if sc.Name == name {
			return sc
		}
	}
	t.Fatalf("no built-in scenario %s", name)
	return scenarios.Scenario{}
}

// Scenarios and strategies of the fixtures: two pairs and a graph, under
// the serial default, schedule prioritization and the copy engines.
const (
	scPair  = "llama3-70b-tp-qkv-ag-224m-2gpu"
	scPair2 = "mixtral-8x22b-ep-o-proj-a2a-96m-2gpu"
	scGraph = "llama3-8b-fsdp-proj-x16-ag-4m-x64-2gpu"
)

type fixStrategy struct {
	name string
	st   scenarios.Strategy
}

func fixStrategies() []fixStrategy {
	return []fixStrategy{
		{"baseline", scenarios.Strategy{}},
		{"comm-first+prio", scenarios.Strategy{Launch: scenarios.CommFirst, CommPriority: -5}},
		{"dma", scenarios.Strategy{CommEngine: scenarios.EngineDMA}},
	}
}

// withRounds sets the rounds Measure ran each repetition in: reps split
// over rounds as Measure splits them (the first reps%rounds rounds one
// more).
func withRounds(r profiler.Result, rounds int) profiler.Result {
	r.RoundOf = map[backends.Mode][]int{}
	for m, reps := range r.Reps {
		n := len(reps)
		var of []int
		for k := range rounds {
			c := n / rounds
			if k < n%rounds {
				c++
			}
			for range c {
				of = append(of, k)
			}
		}
		r.RoundOf[m] = of
	}
	return r
}

// measure measures sc under st on b, with reps repetitions in 5 rounds.
func measure(t testing.TB, b backends.Backend, sc scenarios.Scenario, st scenarios.Strategy, reps int) profiler.Result {
	t.Helper()
	r, err := profiler.Measure(context.Background(), b, sc, st, profiler.Options{Reps: reps, Rounds: 5})
	if err != nil {
		t.Fatalf("measure %s %s: %v", sc.Name, st, err)
	}
	r.Timeline, r.Samples, r.Explain = nil, nil, nil
	if !r.Deterministic {
		r = withRounds(r, min(5, reps))
	}
	return r
}

// fixture is a sweep of the fixture scenarios and strategies on a noisy
// simulator; slow[i] slows the i-th entry's T_c3 (1 or 0: unchanged).
func fixture(t testing.TB, seed uint64, sd float64, reps int, slow map[int]float64, names ...string) Input {
	t.Helper()
	var in Input
	i := 0
	for _, n := range names {
		sc := builtin(t, n)
		for _, fs := range fixStrategies() {
			b := newNoisy(seed+uint64(i)*7919, sd, slow[i])
			in.Entries = append(in.Entries, Entry{Name: fs.name, Result: measure(t, b, sc, fs.st, reps)})
			i++
		}
	}
	in.Source = Source{Path: "fixture", Kind: KindSweep, Backend: "sim", Results: len(in.Entries)}
	return in
}

// writeSweep writes an input's entries as a sweep file.
func writeSweep(t testing.TB, path string, in Input) {
	t.Helper()
	f := sweepfile.File{Backend: "sim", Date: "2026-12-01T00:00:00Z", Host: "fixture", C3lab: sweepfile.Build{Version: "test", Go: "go1.26", Platform: "linux/amd64"}}
	for _, e := range in.Entries {
		r := e.Result
		f.Results = append(f.Results, profiler.SweepEntry{Scenario: r.Scenario.Name, Strategy: e.Name, Result: &r})
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	fh, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if err := sweepfile.Write(fh, f); err != nil {
		t.Fatal(err)
	}
}
