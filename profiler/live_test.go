package profiler

import (
	"context"
	"testing"
	"time"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

func TestLiveReusesBaselinesAndFollowsChanges(t *testing.T) {
	fb := &fakeBackend{caps: backends.Capabilities{Limits: limits()}.With(scenarios.CapPriority, scenarios.CapDMA)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	changes := make(chan Change, 4)
	out := make(chan Iteration)
	done := make(chan struct{})
	go func() {
		defer close(done)
		Live(ctx, fb, scenario(), scenarios.Strategy{}, LiveOptions{Options: Options{Reps: 2, Rounds: 1}}, changes, out)
	}()
	fresh, reused := 0, 0
	next := func() Iteration {
		select {
		case it := <-out:
			if it.Err != nil {
				t.Fatalf("iteration %d: %v", it.Seq, it.Err)
			}
			if it.FreshBaseline {
				fresh++
			} else {
				reused++
			}
			return it
		case <-time.After(5 * time.Second):
			t.Fatal("no iteration")
		}
		return Iteration{}
	}
	if it := next(); !it.FreshBaseline || it.Seq != 0 {
		t.Errorf("first iteration %+v: want fresh baselines", it)
	}
	if it := next(); it.FreshBaseline {
		t.Error("second iteration re-measured unchanged baselines")
	}
	// A priority change keeps the baselines; a collective on copy engines
	// changes the isolated comm run, so it re-measures them.
	prio := scenarios.Strategy{CommPriority: -5}
	changes <- Change{Strategy: &prio}
	for it := next(); it.Result.Strategy.CommPriority != -5; it = next() {
	}
	dma := scenarios.Strategy{CommEngine: scenarios.EngineDMA}
	changes <- Change{Strategy: &dma}
	it := next()
	for it.Result.Strategy.CommEngine != scenarios.EngineDMA {
		it = next()
	}
	if !it.FreshBaseline {
		t.Error("switching to copy engines reused the SM collective's baseline")
	}
	changes <- Change{RefreshBaseline: true}
	for it = next(); !it.FreshBaseline; it = next() {
	}
	cancel()
	<-done
	// Every delivered iteration made 3 backend calls with fresh baselines,
	// 1 (the concurrent run) with reused ones; the refresh under copy
	// engines re-measured the serial default too (2 more: the switch to
	// copy engines had taken it from the SM baseline); the one cut short by
	// the cancel may add up to 5 more.
	if got, want := len(fb.calls), 3*fresh+reused+2; got < want || got > want+5 {
		t.Errorf("%d backend calls for %d fresh and %d reused iterations", got, fresh, reused)
	}
}

// A refused strategy gives one failed iteration, then the loop waits.
func TestLiveWaitsAfterAFailure(t *testing.T) {
	fb := &fakeBackend{caps: backends.Capabilities{Limits: limits()}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	changes := make(chan Change)
	out := make(chan Iteration, 8)
	go Live(ctx, fb, scenario(), scenarios.Strategy{CommPriority: -5}, LiveOptions{}, changes, out)
	it := <-out
	if it.Err == nil {
		t.Fatal("a strategy the backend cannot apply ran")
	}
	select {
	case it := <-out:
		t.Fatalf("a second iteration %+v came without a change", it)
	case <-time.After(50 * time.Millisecond):
	}
	ok := scenarios.Strategy{}
	changes <- Change{Strategy: &ok}
	if it := <-out; it.Err != nil {
		t.Errorf("after a valid change: %v", it.Err)
	}
}
