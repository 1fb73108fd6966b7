package cuda

import (
	"testing"
	"time"
)

// TestSettleCapability: the backend asks measurements to settle for its
// Options.Settle (Open makes 0 DefaultSettle on a real GPU), never with
// one process per GPU, where a time-bound loop could run a different
// number of collectives on each rank, and never when turned off.
func TestSettleCapability(t *testing.T) {
	cases := []struct {
		name string
		opts Options
		want time.Duration
	}{
		{"set", Options{Settle: 200 * time.Millisecond}, 200 * time.Millisecond},
		{"unset outside Open (fakes)", Options{}, 0},
		{"off", Options{Settle: -1}, 0},
		{"one process per GPU", Options{Settle: 200 * time.Millisecond, Process: &Process{}}, 0},
	}
	for _, tc := range cases {
		if got := (&Backend{opts: tc.opts}).settle(); got != tc.want {
			t.Errorf("%s: settle %v, want %v", tc.name, got, tc.want)
		}
	}
	b := fakeBackend(t, newFakeGPU(2), Options{Settle: 150 * time.Millisecond})
	if got := b.Capabilities().Settle; got != 150*time.Millisecond {
		t.Errorf("Capabilities().Settle is %v, want the option's 150ms", got)
	}
}
