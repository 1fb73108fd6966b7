package replay

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/recordings"
	"github.com/c3lab/c3lab/scenarios"
)

// The H200 lab sample's telemetry, markers and measurement windows, as
// the session recorded them.
func TestSessionOfTheH200LabSample(t *testing.T) {
	b, err := Open(filepath.Join("..", "..", "recordings", "samples", "h200x2-lab.c3rec"))
	if err != nil {
		t.Fatal(err)
	}
	samples := 0
	for _, bt := range b.Telemetry() {
		samples += len(bt.Samples)
	}
	ms := b.Measurements()
	if samples != 10224 || len(b.Notes()) != 3 || len(ms) != 82 || len(b.Results()) != 82 {
		t.Fatalf("%d samples, %d notes, %d measurements; want 10224, 3, 82", samples, len(b.Notes()), len(ms))
	}
	notes := func(m Measurement) string {
		var s []string
		for _, n := range m.Notes {
			s = append(s, n.Text)
		}
		return fmt.Sprint(s)
	}
	if got := notes(ms[1]); got != "[key o: launch order: comm-first key p: comm priority: -5 (highest)]" {
		t.Errorf("notes before the second result: %s", got)
	}
	if got := notes(ms[2]); got != "[key d: comm engine: dma (copy engines, no SMs)]" {
		t.Errorf("notes before the third result: %s", got)
	}
	for i, m := range ms {
		if m.From > m.At || (i > 0 && m.From < ms[i-1].At) {
			t.Fatalf("measurement %d: from %v to %v, the one before at %v", i, m.From, m.At, ms[i-1].At)
		}
		// Knob changes start the first three; live mode the rest.
		if want := i >= 3; m.BackToBack != want {
			t.Errorf("measurement %d: back to back %v", i, m.BackToBack)
		}
		during := b.TelemetryDuring(m.From, m.At)
		if i == 0 && len(during) < 13*2*10 {
			t.Errorf("measurement 0 (%v..%v): %d samples, want those of the ~3.7 s it took", m.From, m.At, len(during))
		}
		for _, s := range during {
			if s.Time < 0 || s.Time > int64(m.At-m.From) {
				t.Fatalf("measurement %d: a sample at %d ns, outside its %v", i, s.Time, m.At-m.From)
			}
		}
	}
}

// TelemetryDuring places each sample at its batch's recording time, less
// how much older it is than the batch's newest sample, and keeps those in
// the window, counted from its start.
func TestTelemetryDuring(t *testing.T) {
	batch := func(at time.Duration, sampler ...int64) recordings.Event {
		var s []backends.Sample
		for _, x := range sampler {
			s = append(s, backends.Sample{Rep: -1, Metric: backends.MetricSMUtil, Time: x, Value: float64(x)})
		}
		return recordings.Event{Kind: recordings.KindSamples, Time: at, Samples: s}
	}
	sc := scenarios.Scenario{Name: "x", GPUs: 2}
	st := scenarios.Strategy{}
	res := profiler.Result{Scenario: sc}
	rec := &recordings.Recording{Events: []recordings.Event{
		{Kind: recordings.KindScenario, Time: 0, Scenario: &sc},
		{Kind: recordings.KindStrategy, Time: 0, Strategy: &st},
		batch(100*time.Millisecond, 5e6),        // sampler clock 5 ms = recording 100 ms
		batch(250*time.Millisecond, 1e8, 1.5e8), // 200 ms and 250 ms
		{Kind: recordings.KindResult, Time: 260 * time.Millisecond, Result: &res},
		batch(400*time.Millisecond, 2.5e8, 3e8), // 350 ms and 400 ms
	}}
	b := New(rec)
	for _, tc := range []struct {
		from, to time.Duration
		want     string // sampler times (values) and their times in the window
	}{
		{0, 260 * time.Millisecond, "[5e+06@100ms 1e+08@200ms 1.5e+08@250ms]"},
		{150 * time.Millisecond, 260 * time.Millisecond, "[1e+08@50ms 1.5e+08@100ms]"},
		{210 * time.Millisecond, 360 * time.Millisecond, "[1.5e+08@40ms 2.5e+08@140ms]"},
		{410 * time.Millisecond, time.Second, "[]"},
	} {
		var got []string
		for _, s := range b.TelemetryDuring(tc.from, tc.to) {
			got = append(got, fmt.Sprintf("%g@%v", s.Value, time.Duration(s.Time)))
		}
		if fmt.Sprint(got) != tc.want {
			t.Errorf("%v..%v: %v, want %s", tc.from, tc.to, got, tc.want)
		}
	}
	if m := b.Measurements(); len(m) != 1 || m[0].From != 0 || m[0].At != 260*time.Millisecond || m[0].BackToBack {
		t.Errorf("measurements %+v", m)
	}
}
