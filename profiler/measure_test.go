package profiler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// fakeBackend returns scripted times and records the calls it gets.
type fakeBackend struct {
	caps  backends.Capabilities
	calls []backends.Experiment
	fail  backends.Mode
	short bool // return one repetition fewer than asked
	flat  bool // every repetition takes the same time
}

func (f *fakeBackend) Name() string                        { return "fake" }
func (f *fakeBackend) Devices() []backends.DeviceInfo      { return []backends.DeviceInfo{{Name: "fake"}} }
func (f *fakeBackend) Capabilities() backends.Capabilities { return f.caps }
func (f *fakeBackend) Close() error                        { return nil }

func (f *fakeBackend) Run(_ context.Context, ex backends.Experiment, sink backends.EventSink) (backends.RunResult, error) {
	f.calls = append(f.calls, ex)
	if ex.Mode == f.fail {
		return backends.RunResult{}, errors.New("device lost")
	}
	n := ex.Reps
	if f.short {
		n--
	}
	res := backends.RunResult{Mode: ex.Mode}
	for i := range n {
		var r backends.Rep
		switch ex.Mode {
		case backends.ModeCompute:
			r = backends.Rep{Wall: 1000 + int64(i), Compute: 1000 + int64(i)}
			if f.flat {
				r = backends.Rep{Wall: 1000, Compute: 1000}
			}
		case backends.ModeComm:
			r = backends.Rep{Wall: 800, Comm: 800}
		case backends.ModeConcurrent:
			r = backends.Rep{Wall: 1200, Compute: 1100, Comm: 1200}
		}
		res.Reps = append(res.Reps, r)
		if sink != nil {
			sink.Spans([]backends.Span{{Rep: i, Op: backends.OpCompute, Track: "compute", Start: 0, End: 1100}})
			sink.Samples([]backends.Sample{{Rep: i, Metric: backends.MetricSMUtil, Value: 1}})
		}
	}
	return res, nil
}

func limits() scenarios.Limits {
	return scenarios.Limits{Device: "fake", SMs: 132, SMStep: 8, MaxGPUs: 8, CopyEngines: 3, HighestPriority: -5}
}

func scenario() scenarios.Scenario {
	return scenarios.Scenario{
		Name: "s", GPUs: 2,
		Compute: scenarios.ComputeOp{Kind: scenarios.GEMM, M: 1024, N: 1024, K: 1024, DType: scenarios.BF16},
		Comm:    scenarios.CommOp{Collective: scenarios.AllGather, Bytes: 1 << 20},
	}
}

func TestMeasureProtocol(t *testing.T) {
	fb := &fakeBackend{caps: backends.Capabilities{Limits: limits()}.With(scenarios.CapPriority, scenarios.CapSMPartition)}
	st := scenarios.Strategy{CommPriority: -5, CommSMs: 16}
	r, err := Measure(context.Background(), fb, scenario(), st, Options{Reps: 10, Warmup: 2, Rounds: 3})
	if err != nil {
		t.Fatal(err)
	}
	// 3 rounds x 3 modes, interleaved: compute, comm, concurrent, compute, ...
	// (4+3+3 reps; the fake's compute times restart at 1000 each call: median 1001)
	if len(fb.calls) != 9 {
		t.Fatalf("%d backend calls, want 9", len(fb.calls))
	}
	total := map[backends.Mode]int{}
	for i, c := range fb.calls {
		want := []backends.Mode{backends.ModeCompute, backends.ModeComm, backends.ModeConcurrent}[i%3]
		if c.Mode != want {
			t.Errorf("call %d mode %s, want %s", i, c.Mode, want)
		}
		if (i < 3) != (c.Warmup == 2) {
			t.Errorf("call %d warm-up %d: only the first round warms up", i, c.Warmup)
		}
		total[c.Mode] += c.Reps
		isolated := c.Mode != backends.ModeConcurrent
		if isolated && (c.Strategy.CommPriority != 0 || c.Strategy.CommSMs != 0) {
			t.Errorf("isolated %s run got sharing knobs %s", c.Mode, c.Strategy)
		}
		if !isolated && c.Strategy.CommSMs != 16 {
			t.Errorf("concurrent run lost the strategy: %s", c.Strategy)
		}
	}
	for m, n := range total {
		if n != 10 {
			t.Errorf("%s: %d reps in total, want 10", m, n)
		}
	}
	if r.TComp.Median != 1001 || r.TComm.Median != 800 || r.TC3.Median != 1200 {
		t.Errorf("medians %v %v %v", r.TComp.Median, r.TComm.Median, r.TC3.Median)
	}
	if f, ok := r.Fraction(); !ok || !near(f, (1801.0/1200-1)/(1801.0/1001-1)) {
		t.Errorf("fraction %v %v", f, ok)
	}
	if !near(r.CompSlowdown, 1100.0/1001) || !near(r.CommSlowdown, 1.5) {
		t.Errorf("slowdowns %v %v", r.CompSlowdown, r.CommSlowdown)
	}
	if len(r.Timeline) != 1 || len(r.Samples) != 1 {
		t.Errorf("kept %d spans and %d samples, want those of one repetition", len(r.Timeline), len(r.Samples))
	}
}

func TestMeasureRefusesWhatTheBackendCannotDo(t *testing.T) {
	for _, tc := range []struct {
		name string
		st   scenarios.Strategy
		want string
	}{
		// A refusal names the backend, what it cannot do and the knob.
		{"priority", scenarios.Strategy{CommPriority: -1}, "the fake backend cannot set stream priorities, which comm_priority -1 asks for"},
		{"partition", scenarios.Strategy{CommSMs: 8}, "cannot partition SMs, which comm_sms 8 asks for"},
		{"dma", scenarios.Strategy{CommEngine: scenarios.EngineDMA}, "cannot run collectives on copy engines, which comm_engine dma asks for"},
		{"invalid", scenarios.Strategy{CommSMs: 9}, "steps of 8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fb := &fakeBackend{caps: backends.Capabilities{Limits: limits()}}
			_, err := Measure(context.Background(), fb, scenario(), tc.st, Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one mentioning %q", err, tc.want)
			}
			if len(fb.calls) != 0 {
				t.Errorf("backend was called %d times for a refused strategy", len(fb.calls))
			}
		})
	}
}

func TestMeasureReportsBackendFailures(t *testing.T) {
	fb := &fakeBackend{caps: backends.Capabilities{Limits: limits()}, fail: backends.ModeComm}
	if _, err := Measure(context.Background(), fb, scenario(), scenarios.Strategy{}, Options{}); err == nil || !strings.Contains(err.Error(), "comm run of s on fake: device lost") {
		t.Errorf("error %v", err)
	}
	fb = &fakeBackend{caps: backends.Capabilities{Limits: limits()}, short: true}
	if _, err := Measure(context.Background(), fb, scenario(), scenarios.Strategy{}, Options{}); err == nil || !strings.Contains(err.Error(), "repetitions") {
		t.Errorf("error %v", err)
	}
}

// TestMeasureSaysDeterministic checks the deterministic flag: set when the
// backend says identical runs give identical numbers and they did (the
// simulator), clear when the numbers vary, even on a backend that calls
// itself deterministic (a replay of a GPU recording plays its noise back).
func TestMeasureSaysDeterministic(t *testing.T) {
	for _, tc := range []struct {
		name          string
		deterministic bool
		flat          bool
		want          bool
	}{
		{"deterministic backend, no spread", true, true, true},
		{"deterministic backend replaying a spread", true, false, false},
		{"noisy backend", false, false, false},
		{"noisy backend that happened to repeat", false, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &fakeBackend{caps: backends.Capabilities{Limits: limits(), Deterministic: tc.deterministic}, flat: tc.flat}
			r, err := Measure(context.Background(), b, scenario(), scenarios.Strategy{}, Options{Reps: 6})
			if err != nil {
				t.Fatal(err)
			}
			if r.Deterministic != tc.want {
				t.Errorf("deterministic %v, want %v", r.Deterministic, tc.want)
			}
			js, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			if want := fmt.Sprintf(`"deterministic":%v`, tc.want); !strings.Contains(string(js), want) {
				t.Errorf("JSON lacks %s", want)
			}
		})
	}
}
