package profiler

import (
	"context"
	"time"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// Change asks a live run to switch scenario or strategy (either may be nil)
// or to measure the isolated baselines again.
type Change struct {
	Scenario        *scenarios.Scenario
	Strategy        *scenarios.Strategy
	RefreshBaseline bool
}

// Iteration is one live measurement. FreshBaseline says whether the
// isolated runs were made in this iteration (first run, a new scenario, a
// new collective implementation, or a refresh) or reused.
type Iteration struct {
	Seq           int
	Result        Result
	Err           error
	FreshBaseline bool
}

// LiveOptions tune a live run.
type LiveOptions struct {
	Options
	// Pause between iterations (0: back to back).
	Pause time.Duration
}

// Live runs a scenario back to back on b until ctx ends, picking up
// changes between iterations, and sends every iteration to out. The
// isolated baselines are measured only when they can have changed, so an
// iteration under a new strategy costs one concurrent run. After a failed
// iteration (a strategy the backend refuses, say) it waits for the next
// change instead of failing again and again.
func Live(ctx context.Context, b backends.Backend, sc scenarios.Scenario, st scenarios.Strategy, opt LiveOptions, changes <-chan Change, out chan<- Iteration) {
	var base *Baseline
	refresh := false
	apply := func(c Change) {
		if c.Scenario != nil {
			sc = *c.Scenario
		}
		if c.Strategy != nil {
			st = *c.Strategy
		}
		refresh = refresh || c.RefreshBaseline
	}
	drain := func() {
		for {
			select {
			case c := <-changes:
				apply(c)
			default:
				return
			}
		}
	}
	// wait blocks for d (forever when d < 0) or until a change or the end.
	wait := func(d time.Duration) bool {
		var timer <-chan time.Time
		if d >= 0 {
			t := time.NewTimer(d)
			defer t.Stop()
			timer = t.C
		}
		select {
		case <-ctx.Done():
			return false
		case c := <-changes:
			apply(c)
		case <-timer:
		}
		return true
	}
	for seq := 0; ; seq++ {
		drain()
		if ctx.Err() != nil {
			return
		}
		o := opt.Options
		fresh := refresh || !base.matches(sc, st)
		if !refresh {
			// Measure takes what still holds: the isolated runs when
			// they match, the serial default whenever the scenario does.
			o.Baseline = base
		}
		r, err := Measure(ctx, b, sc, st, o)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			bl := r.Baseline()
			base, refresh = &bl, false
		}
		select {
		case out <- Iteration{Seq: seq, Result: r, Err: err, FreshBaseline: fresh && err == nil}:
		case <-ctx.Done():
			return
		}
		pause := opt.Pause
		if err != nil {
			pause = -1
		}
		if pause != 0 && !wait(pause) {
			return
		}
	}
}
