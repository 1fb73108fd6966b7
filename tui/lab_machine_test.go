package tui

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/report"
	nvtel "github.com/c3lab/c3lab/profiler/telemetry"
	"github.com/c3lab/c3lab/scenarios"
)

// fakeMachine is a machine record: every GPU at fixed clocks, and each
// device's SMs busy 40 % plus 10 % per device index during any window.
type fakeMachine struct {
	mu     sync.Mutex
	states int
	uses   int
}

func (f *fakeMachine) State() []nvtel.GPUState {
	f.mu.Lock()
	f.states++
	f.mu.Unlock()
	return []nvtel.GPUState{{Device: 0, SMClockMHz: 1980, MemClockMHz: 2619, PowerW: 500, TempC: 50}, {Device: 1, SMClockMHz: 1980, MemClockMHz: 2619, PowerW: 500, TempC: 50}}
}

func (f *fakeMachine) Use(w []nvtel.Window) []nvtel.Use {
	f.mu.Lock()
	f.uses++
	f.mu.Unlock()
	if len(w) == 0 {
		return nil
	}
	return []nvtel.Use{
		{Device: 0, Metric: backends.MetricSMUtil, Value: 0.4, Covered: 1},
		{Device: 1, Metric: backends.MetricSMUtil, Value: 0.5, Covered: 1},
	}
}

func (f *fakeMachine) counts() (states, uses int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.states, f.uses
}

// TestLabOptions checks what the lab asks of the profiler: the machine
// record always, the default precision (T_c3 within 2 %) under the cap
// given, except in live mode (a baseline), which repeats at once.
func TestLabOptions(t *testing.T) {
	m := &fakeMachine{}
	base := &profiler.Baseline{}
	for _, tc := range []struct {
		name      string
		base      *profiler.Baseline
		capT      time.Duration
		wantPrec  string
		wantCap   time.Duration
		wantNoMac bool
	}{
		{"measure", nil, labTimeCap, "2% T_c3", 20 * time.Second, false},
		{"grid cell", nil, gridTimeCap, "2% T_c3", 5 * time.Second, false},
		{"live", base, labTimeCap, "off", 0, false},
	} {
		opt := labOptions(m, tc.base, tc.capT)
		if got := opt.Precision.String(); got != tc.wantPrec {
			t.Errorf("%s: precision %q, want %q", tc.name, got, tc.wantPrec)
		}
		if opt.TimeCap != tc.wantCap {
			t.Errorf("%s: time cap %v, want %v", tc.name, opt.TimeCap, tc.wantCap)
		}
		if opt.Machine != profiler.Machine(m) || opt.Baseline != tc.base {
			t.Errorf("%s: machine or baseline not passed on: %+v", tc.name, opt)
		}
	}
}

// TestMeasureWithMachine checks the lab's measurement and a sweep-grid
// cell read the machine record (Config.Machine) and measure at the lab's
// precision: the result carries the drift check, the timed-window use and
// the precision outcome; without a machine, neither record is claimed.
func TestMeasureWithMachine(t *testing.T) {
	sc := testSuite()[0]
	for _, tc := range []struct {
		name    string
		machine bool
		run     func(m profiler.Machine) profiler.Result
	}{
		{"measure", true, func(m profiler.Machine) profiler.Result {
			return measureCmd(t.Context(), &runGate{}, newFake(), m, 0, sc, scenarios.Strategy{}, 1, nil)().(resultMsg).result
		}},
		{"measure without machine", false, func(m profiler.Machine) profiler.Result {
			return measureCmd(t.Context(), &runGate{}, newFake(), nil, 0, sc, scenarios.Strategy{}, 1, nil)().(resultMsg).result
		}},
		{"grid cell", true, func(m profiler.Machine) profiler.Result {
			g := newGrid(t.Context(), sc, h200Caps())
			return g.measureNext(&runGate{}, newFake(), m)().(gridMsg).r
		}},
	} {
		fm := &fakeMachine{}
		var m profiler.Machine
		if tc.machine {
			m = fm
		}
		r := tc.run(m)
		if r.Precision == nil || r.Precision.Target != "2% T_c3" {
			t.Errorf("%s: precision %+v, want the lab's 2%% T_c3", tc.name, r.Precision)
		}
		states, uses := fm.counts()
		if !tc.machine {
			if states+uses > 0 || r.Drift != nil || (r.TimedUse != nil && r.TimedUse.NVML != nil) {
				t.Errorf("%s: a machine record without a machine: %+v %+v", tc.name, r.Drift, r.TimedUse)
			}
			continue
		}
		if states == 0 || uses == 0 || r.Drift == nil {
			t.Errorf("%s: machine read %d states, %d uses; drift %+v", tc.name, states, uses, r.Drift)
		}
		if got := timedUse(&r, 1)[backends.MetricSMUtil]; got != 0.5 {
			t.Errorf("%s: GPU 1's timed SM use %v, want 0.5", tc.name, got)
		}
	}
}

// statusFixtures are results whose status lines warn: the machine drifted,
// the time cap stopped the measurement before the lab's precision, both;
// and one that reached it, which does not warn.
func statusFixtures() []struct {
	name string
	r    profiler.Result
} {
	half := func(v float64) *float64 { return &v }
	drift := &profiler.Drift{Flagged: true, Reasons: []string{"GPU 0 SM clock 1980 MHz isolated, 1755 MHz concurrent (-11.4%)"}}
	capped := &profiler.PrecisionOutcome{Target: "2% T_c3", Stop: profiler.StopTimeCap, HalfWidth: half(0.031), Rounds: 40, Elapsed: 20 * time.Second}
	reached := &profiler.PrecisionOutcome{Target: "2% T_c3", Reached: true, Stop: profiler.StopReached, HalfWidth: half(0.014), Rounds: 7, Elapsed: 3 * time.Second}
	base := ciResult(scenarios.Strategy{})
	with := func(d *profiler.Drift, p *profiler.PrecisionOutcome) profiler.Result {
		r := base
		r.Drift, r.Precision = d, p
		return r
	}
	return []struct {
		name string
		r    profiler.Result
	}{
		{"drift", with(drift, reached)},
		{"capped", with(nil, capped)},
		{"drift_capped", with(drift, capped)},
		{"reached", with(&profiler.Drift{}, reached)},
		{"clock_capped", with(clockDrift(1560, 4), reached)}, // sw-power-cap
		{"clock_apart", with(clockDrift(1800, 0), reached)},
	}
}

// clockDrift is a machine record without drift (1980 MHz around every run)
// whose GPU ran its compute alone at sm MHz with the clock event reasons
// thr, its comm alone at 1975 and the concurrent runs at 1605 MHz.
func clockDrift(sm float64, thr uint64) *profiler.Drift {
	around := []nvtel.GPUState{{SMClockMHz: 1980, MemClockMHz: 3201, TempC: 40}}
	during := func(sm float64, thr uint64) []profiler.DuringState {
		return []profiler.DuringState{{Readings: 50, SMClockMHz: sm, MinSMClockMHz: sm, MemClockMHz: 3201, PowerW: 690, TempC: 55, MaxTempC: 56, Throttle: thr}}
	}
	d := &profiler.Drift{Runs: []profiler.DriftRun{
		{Mode: backends.ModeCompute, Start: around, End: around, During: during(sm, thr)},
		{Mode: backends.ModeComm, Start: around, End: around, During: during(1975, 0)},
		{Mode: backends.ModeConcurrent, Start: around, End: around, During: during(1605, 0)},
	}}
	d.Check(profiler.DefaultDriftThresholds())
	return d
}

// TestResultStatus checks the status line of a new result: a drift flag
// is one warning, first; a measurement the cap stopped before the lab's
// precision says so before the figures, as profiler/report says it; a
// reached precision and an unflagged drift add nothing.
func TestResultStatus(t *testing.T) {
	fx := statusFixtures()
	capNote := report.PrecisionNote(*fx[1].r.Precision)
	for i, tc := range []struct {
		kind        statusKind
		prefix, has string
		notHas      []string
		withKnob    bool
	}{
		{statusWarn, "machine drifted between isolated and concurrent runs: GPU 0 SM clock", " · ag-gemm-balanced · baseline: 17.0% ± 1.2 of ideal", []string{"precision"}, false},
		{statusWarn, capNote + " · ag-gemm-balanced · baseline: ", "17.0% ± 1.2 of ideal", []string{"drifted"}, false},
		{statusWarn, "machine drifted", " (-11.4%) · " + capNote + " · ag-gemm-balanced", nil, false},
		{statusInfo, "ag-gemm-balanced · baseline: ", "(1.15x realized, 1.89x ideal)", []string{"drifted", "precision"}, false},
		{statusWarn, "machine drifted", "prio cannot matter here · measured: 17.0% ± 1.2 of ideal", nil, true},
	} {
		f := fx[min(i, len(fx)-1)]
		knob := ""
		if tc.withKnob {
			f = fx[0]
			knob = "prio cannot matter here"
		}
		s := resultStatus(f.r, knob)
		if s.kind != tc.kind || !strings.HasPrefix(s.text, tc.prefix) || !strings.Contains(s.text, tc.has) {
			t.Errorf("%s (%d): status %d %q, want %d starting %q holding %q", f.name, i, s.kind, s.text, tc.kind, tc.prefix, tc.has)
		}
		for _, bad := range tc.notHas {
			if strings.Contains(s.text, bad) {
				t.Errorf("%s (%d): status %q says %q", f.name, i, s.text, bad)
			}
		}
	}
	// The clocks during the runs: a cap warns, clocks apart inform; both
	// before the figures, neither called drift.
	for _, tc := range []struct {
		name string
		kind statusKind
	}{{"clock_capped", statusWarn}, {"clock_apart", statusInfo}} {
		i := slices.IndexFunc(fx, func(f struct {
			name string
			r    profiler.Result
		}) bool {
			return f.name == tc.name
		})
		note := fx[i].r.Drift.ClockNote()
		s := resultStatus(fx[i].r, "")
		if note == "" || s.kind != tc.kind || !strings.HasPrefix(s.text, note+" · ag-gemm-balanced · baseline: ") || strings.Contains(s.text, "drift") {
			t.Errorf("%s: status %d %q, want %d starting with %q", tc.name, s.kind, s.text, tc.kind, note)
		}
	}
	if !strings.Contains(capNote, "not reached") || !strings.Contains(capNote, "time cap") {
		t.Errorf("cap note %q", capNote)
	}
}

// TestLabStatusGolden renders the warning status lines at 80, 120 and 200
// columns; `go test ./tui -update` regenerates them.
func TestLabStatusGolden(t *testing.T) {
	st := DefaultStyles(true)
	for _, f := range statusFixtures() {
		for _, w := range []int{80, 120, 200} {
			t.Run(fmt.Sprintf("%s_%d", f.name, w), func(t *testing.T) {
				line := statusLine(st, resultStatus(f.r, ""), w, "?")
				if ansiWidth(line) > w {
					t.Errorf("status wider than %d: %q", w, ansi.Strip(line))
				}
				golden.RequireEqual(t, ansi.Strip(line))
			})
		}
	}
}

// timedResult is the fixture result with the engines' use during its
// timed repetitions on two GPUs.
func timedResult() profiler.Result {
	r := fixtureResult(testSuite()[0], scenarios.Strategy{})
	r.TimedUse = &profiler.TimedUse{NVML: map[backends.Mode][]nvtel.Use{
		backends.ModeConcurrent: {
			{Device: 0, Metric: backends.MetricSMUtil, Value: 0.93, Covered: 1},
			{Device: 0, Metric: backends.MetricTensorUtil, Value: 0.71, Covered: 1},
			{Device: 0, Metric: backends.MetricHBMUtil, Value: 0.2, Covered: 1},
			{Device: 0, Metric: backends.MetricLinkTXUtil, Value: 0.64, Covered: 1},
			{Device: 1, Metric: backends.MetricSMUtil, Value: 0.12, Covered: 1},
		},
		backends.ModeCompute: {{Device: 0, Metric: backends.MetricSMUtil, Value: 0.99, Covered: 1}},
	}}
	r.Bound = &profiler.Bound{HBMBandwidth: 4.8e12}
	return r
}

// TestUtilTimed checks the utilization panel shows, beside each
// resource's wall-clock average, its use during the concurrent run's
// timed repetitions on the GPU shown ("timed 93%"), n/a where NVML gave
// none, and nothing of it without a machine record.
func TestUtilTimed(t *testing.T) {
	st := DefaultStyles(true)
	r := timedResult()
	for _, tc := range []struct {
		name   string
		r      profiler.Result
		dev    int
		want   []string
		notHas []string
	}{
		{"GPU 0", r, 0, []string{"timed 93%", "timed 71%", "timed 960 GB/s", "timed 64%", "timed n/a"}, []string{"timed 12%", "timed 99%"}},
		{"GPU 1", r, 1, []string{"timed 12%", "timed n/a"}, []string{"timed 93%"}},
		{"no record", fixtureResult(testSuite()[0], scenarios.Strategy{}), 0, nil, []string{"timed"}},
	} {
		tel := newTelemetry(&tc.r, tc.dev)
		for _, w := range []int{58, 78, 118, 198} {
			lines := utilLinesFor(st, &tc.r, tel, w, 1)
			body := ansi.Strip(strings.Join(lines, "\n"))
			for _, want := range tc.want {
				if !strings.Contains(body, want) {
					t.Errorf("%s w %d: lacks %q:\n%s", tc.name, w, want, body)
				}
			}
			for _, bad := range tc.notHas {
				if strings.Contains(body, bad) {
					t.Errorf("%s w %d: says %q:\n%s", tc.name, w, bad, body)
				}
			}
			for _, l := range lines {
				if ansiWidth(l) > w {
					t.Errorf("%s w %d: line wider than the panel: %q", tc.name, w, ansi.Strip(l))
				}
			}
		}
		title := utilTitle(&tc.r, tel, tc.dev, 2)
		if got := strings.Contains(title, "timed (the repetitions only)"); got != (tc.want != nil) {
			t.Errorf("%s: title %q", tc.name, title)
		}
	}
}

// TestUtilTimedGolden renders the utilization panel with the timed-window
// column at 80, 120 and 200 columns; `go test ./tui -update` regenerates
// them.
func TestUtilTimedGolden(t *testing.T) {
	st := DefaultStyles(true)
	r := timedResult()
	tel := newTelemetry(&r, 0)
	for _, w := range []int{80, 120, 200} {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			lines := utilLinesFor(st, &r, tel, w-2, 1)
			golden.RequireEqual(t, plain(t, box(st, utilTitle(&r, tel, 0, 2), lines, w, len(lines)+2), w))
		})
	}
}
