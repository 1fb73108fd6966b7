package profiler

import (
	"context"
	"testing"
	"time"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// TestSettleRunsTheLoadUntimedFirst: before its first timed round,
// Measure repeats the round's runs untimed until the backend's settling
// time has passed on its clock (a fake clock advancing 40 ms per reading
// here), and none of them is timed or recorded; Options.Settle overrides
// the backend's, a negative one and a deterministic backend settle
// nothing, and a clock that does not move ends settling after one pass.
func TestSettleRunsTheLoadUntimedFirst(t *testing.T) {
	cases := []struct {
		name          string
		backendSettle time.Duration
		optSettle     time.Duration
		deterministic bool
		step          time.Duration
		wantPasses    int
	}{
		{"backend's 300 ms", 300 * time.Millisecond, 0, false, 40 * time.Millisecond, 7},
		{"option overrides", 300 * time.Millisecond, 100 * time.Millisecond, false, 40 * time.Millisecond, 2},
		{"option off", 300 * time.Millisecond, -1, false, 40 * time.Millisecond, 0},
		{"backend without", 0, 0, false, 40 * time.Millisecond, 0},
		{"deterministic", 300 * time.Millisecond, 0, true, 40 * time.Millisecond, 0},
		{"clock stands still", 300 * time.Millisecond, 0, false, 0, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			caps := backends.Capabilities{Limits: limits(), Settle: tc.backendSettle, Deterministic: tc.deterministic}.With(scenarios.CapPriority)
			fb := &fakeBackend{caps: caps}
			now := time.Unix(0, 0)
			clock := func() time.Time { now = now.Add(tc.step); return now }
			r, err := Measure(context.Background(), fb, scenario(), scenarios.Strategy{}, Options{Reps: 6, Rounds: 3, Warmup: -1, Settle: tc.optSettle, now: clock})
			if err != nil {
				t.Fatal(err)
			}
			rounds := 3
			if tc.deterministic {
				rounds = 1
			}
			// Every pass and every round runs compute, comm and concurrent.
			if got := len(fb.calls)/3 - rounds; got != tc.wantPasses {
				t.Errorf("%d settling passes (%d runs), want %d", got, len(fb.calls), tc.wantPasses)
			}
			for _, m := range []backends.Mode{backends.ModeCompute, backends.ModeComm, backends.ModeConcurrent} {
				if n := len(r.Reps[m]); n != 6 {
					t.Errorf("%s: %d timed repetitions, want 6: settling must not be timed", m, n)
				}
			}
		})
	}
}
