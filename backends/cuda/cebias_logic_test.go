package cuda

import (
	"context"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
)

// recordingBackend notes every experiment it runs.
type recordingBackend struct {
	backends.Backend
	mu  sync.Mutex
	got []ceStep
}

func (r *recordingBackend) Run(ctx context.Context, ex backends.Experiment, sink backends.EventSink) (backends.RunResult, error) {
	r.mu.Lock()
	r.got = append(r.got, ceStep{Mode: ex.Mode, St: ex.Strategy})
	r.mu.Unlock()
	return r.Backend.Run(ctx, ex, sink)
}

// The probe's "alone" and "c3" are what profiler.Measure runs: one round
// of Measure on the copy engines makes exactly the c3lab block's runs, in
// its order.
func TestCEC3labBlockIsMeasuresRound(t *testing.T) {
	f := newFakeGPU(2)
	rec := &recordingBackend{Backend: fakeBackend(t, f, Options{GateStallNanos: int64(time.Minute)})}
	st := scenarios.Strategy{CommEngine: scenarios.EngineDMA}
	sc := smallGEMM(scenarios.AllGather)
	if _, err := profiler.Measure(context.Background(), rec, sc, st, profiler.Options{Reps: 2, Rounds: 1, Warmup: -1}); err != nil {
		t.Fatal(err)
	}
	want := ceC3labBlock(st)
	if len(rec.got) != len(want) {
		t.Fatalf("Measure made %d runs in a round, the probe's c3lab block %d: %+v", len(rec.got), len(want), rec.got)
	}
	for i, w := range want {
		if g := rec.got[i]; g.Mode != w.Mode || g.St != w.St {
			t.Errorf("run %d: Measure made %s %s, the probe %s %s (%s)", i, g.Mode, g.St, w.Mode, w.St, w.Cond)
		}
	}
}

// Every round runs each condition once, keeps the c3lab block whole and
// in order, and rotates the blocks so no condition always comes first.
func TestCERoundSchedule(t *testing.T) {
	st := scenarios.Strategy{CommEngine: scenarios.EngineDMA}
	firsts := map[ceCond]bool{}
	for r := range 8 {
		var conds []ceCond
		for _, blk := range ceRound(st, r) {
			for _, s := range blk {
				conds = append(conds, s.Cond)
			}
		}
		seen := map[ceCond]int{}
		for _, c := range conds {
			seen[c]++
		}
		for _, c := range []ceCond{ceAlone, ceC3, ceBusy, cePrimed, ceUngated, ceC3Ungated, ceComputeAlone, ceDefCompute, ceDefComm} {
			if seen[c] != 1 {
				t.Errorf("round %d runs %s %d times: %v", r, c, seen[c], conds)
			}
		}
		joined := strings.Join(func() []string {
			var s []string
			for _, c := range conds {
				s = append(s, string(c))
			}
			return s
		}(), ",")
		if !strings.Contains(joined, "compute-alone,alone,default-compute-alone,default-comm-alone,c3") {
			t.Errorf("round %d breaks Measure's round: %s", r, joined)
		}
		if !strings.Contains(joined, "alone-ungated,c3-ungated") {
			t.Errorf("round %d splits the ungated pair: %s", r, joined)
		}
		firsts[conds[0]] = true
	}
	if len(firsts) != 4 {
		t.Errorf("rounds start with %v; want each of the four blocks first in turn", firsts)
	}
}

func TestMedianCI(t *testing.T) {
	seq := func(n int) []float64 {
		var v []float64
		for i := n; i >= 1; i-- {
			v = append(v, float64(i))
		}
		return v
	}
	for _, tc := range []struct {
		name        string
		xs          []float64
		med, lo, hi float64
	}{
		{"12 values: 3rd and 10th", seq(12), 6.5, 3, 10},
		{"6 values: 1st and 6th", seq(6), 3.5, 1, 6},
		{"20 values: 6th and 15th", seq(20), 10.5, 6, 15},
		{"3 values: the range", []float64{2, 9, 4}, 4, 2, 9},
		{"NaNs dropped", []float64{math.NaN(), 1, 3, math.NaN()}, 2, 1, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			med, lo, hi := medianCI(tc.xs)
			if med != tc.med || lo != tc.lo || hi != tc.hi {
				t.Errorf("median %v [%v, %v], want %v [%v, %v]", med, lo, hi, tc.med, tc.lo, tc.hi)
			}
		})
	}
	if m, _, _ := medianCI(nil); !math.IsNaN(m) {
		t.Errorf("no values: median %v, want NaN", m)
	}
}

// synthRuns makes 16 rounds of 4 repetitions of each condition around the
// given means (ns), with a deterministic wobble of up to +-100 ns (0.1 %)
// that differs by round, repetition and condition; first adds to
// every run's first repetition.
func synthRuns(means map[ceCond]float64, first map[ceCond]float64) ceRuns {
	c := ceRuns{}
	for r := range 16 {
		for cond, m := range means {
			var reps []int64
			for i := range 4 {
				x := m + float64(((r*13+i*5+len(cond)*3)%11-5)*20)
				if i == 0 {
					x += first[cond]
				}
				reps = append(reps, int64(x))
			}
			c[cond] = append(c[cond], reps)
		}
	}
	return c
}

// Each verdict comes out of timings made for it: alone 1.5 % slower than
// C3 (the bias), and each condition's alone time where its hypothesis puts it.
func TestCEVerdicts(t *testing.T) {
	const c3, slow = 100000, 101500
	base := map[ceCond]float64{ceAlone: slow, ceC3: c3, ceBusy: slow, cePrimed: slow, ceUngated: (c3 + 1500) * slow / c3, ceC3Ungated: c3 + 1500}
	with := func(k ceCond, v float64) map[ceCond]float64 {
		m := map[ceCond]float64{}
		for a, b := range base {
			m[a] = b
		}
		m[k] = v
		return m
	}
	for _, tc := range []struct {
		name  string
		means map[ceCond]float64
		first map[ceCond]float64
		want  [4]string // busy, primed, first-rep, gate
	}{
		{"no hypothesis explains it", base, nil, [4]string{ceNoEffect, ceNoEffect, ceNoEffect, ceNoEffect}},
		{"idle clocks: the busy kernel removes it", with(ceBusy, c3), nil, [4]string{ceRemoves, ceNoEffect, ceNoEffect, ceNoEffect}},
		{"first copy: priming halves it", with(cePrimed, c3+750), nil, [4]string{ceNoEffect, ceNarrows, ceNoEffect, ceNoEffect}},
		{"gate: ungated alone matches ungated C3", with(ceUngated, c3+1500), nil, [4]string{ceNoEffect, ceNoEffect, ceNoEffect, ceRemoves}},
		{"busy kernel slows it", with(ceBusy, slow+1000), nil, [4]string{ceWidens, ceNoEffect, ceNoEffect, ceNoEffect}},
		{"first repetition of each alone run is slow",
			map[ceCond]float64{ceAlone: c3, ceC3: c3, ceBusy: c3, cePrimed: c3, ceUngated: c3 + 1500, ceC3Ungated: c3 + 1500},
			// A round's mean of 4 moves by a quarter of the first's
			// excess (2 %); dropping the first removes it.
			map[ceCond]float64{ceAlone: 8000, ceBusy: 8000, cePrimed: 8000, ceUngated: 8000},
			[4]string{ceNoEffect, ceNoEffect, ceRemoves, ceNoEffect}},
		{"no gap", with(ceAlone, c3), nil, [4]string{ceNoGap, ceNoGap, ceNoGap, ceNoGap}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := synthRuns(tc.means, tc.first).verdicts()
			if len(vs) != 4 {
				t.Fatalf("%d verdicts, want 4", len(vs))
			}
			for i, v := range vs {
				if v.Outcome != tc.want[i] {
					t.Errorf("%s\n  got %q, want %q", v.Line, v.Outcome, tc.want[i])
				}
			}
		})
	}
}

// Primed repetitions make one more copy per copy stream, before the gate,
// and the collective still verifies; without priming nothing changes.
func TestPrimeCopies(t *testing.T) {
	f := newFakeGPU(2)
	b := fakeBackend(t, f, Options{GateStallNanos: int64(time.Minute)})
	sc := smallGEMM(scenarios.AllGather)
	st := scenarios.Strategy{CommEngine: scenarios.EngineDMA}
	count := func() int {
		if _, err := run(t, b, sc, st, backends.ModeComm); err != nil {
			t.Fatal(err)
		}
		before := f.copies
		if _, err := run(t, b, sc, st, backends.ModeComm); err != nil {
			t.Fatal(err)
		}
		return f.copies - before
	}
	plain := count()
	if err := b.setPrimeCopies(true); err != nil {
		t.Fatal(err)
	}
	primed := count()
	if err := b.setPrimeCopies(false); err != nil {
		t.Fatal(err)
	}
	again := count()
	reps := 2 // run's repetitions
	if d := primed - plain; d != reps*2 {
		t.Errorf("priming added %d copies over %d repetitions on 2 GPUs (1 stream each), want %d", d, reps, reps*2)
	}
	if again != plain {
		t.Errorf("%d copies after priming was turned off, %d before", again, plain)
	}
}

// A GPU layer without the busy kernel says so; nothing starts.
func TestKeepBusyNeedsTheKernel(t *testing.T) {
	b := fakeBackend(t, newFakeGPU(1), Options{})
	if _, err := b.keepBusy(1, 4, 1e9); err == nil || !strings.Contains(err.Error(), "no busy kernel") {
		t.Errorf("keepBusy on a layer without the kernel: %v", err)
	}
}
