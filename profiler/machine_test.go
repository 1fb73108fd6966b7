package profiler

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler/telemetry"
	"github.com/c3lab/c3lab/scenarios"
)

// fakeMachine returns scripted states: read i (two per run, start and end)
// gets state(i); Use records the windows it is asked for.
type fakeMachine struct {
	reads   int
	state   func(read int) []telemetry.GPUState
	windows [][]telemetry.Window
}

func (m *fakeMachine) State() []telemetry.GPUState {
	s := m.state(m.reads)
	m.reads++
	return s
}

func (m *fakeMachine) Use(ws []telemetry.Window) []telemetry.Use {
	m.windows = append(m.windows, ws)
	if len(ws) == 0 {
		return nil
	}
	return []telemetry.Use{{Device: 0, Metric: backends.MetricSMUtil, Value: 0.9, Covered: 1}}
}

func gpuState(dev int, sm, temp float64, thr uint64) telemetry.GPUState {
	return telemetry.GPUState{Device: dev, SMClockMHz: sm, MemClockMHz: 3201, PowerW: 400, TempC: temp, Throttle: thr}
}

func TestDriftCheck(t *testing.T) {
	th := DefaultDriftThresholds()
	run := func(mode backends.Mode, s ...telemetry.GPUState) DriftRun {
		return DriftRun{Mode: mode, Start: s, End: s}
	}
	tests := []struct {
		name string
		iso  telemetry.GPUState
		con  telemetry.GPUState
		want []string // substrings of the reasons; none: not flagged
	}{
		{"same", gpuState(0, 1980, 40, 0), gpuState(0, 1980, 40, 0), nil},
		{"clock within 2 %", gpuState(0, 1980, 40, 0), gpuState(0, 1950, 40, 0), nil},
		{"clock down 3 %", gpuState(0, 1980, 40, 0), gpuState(0, 1920, 40, 0), []string{"SM clock 1980 MHz isolated vs 1920 MHz concurrent (-3.0 %"}},
		{"clock up 5 %", gpuState(0, 1800, 40, 0), gpuState(0, 1890, 40, 0), []string{"(+5.0 %"}},
		{"temperature 5 C", gpuState(0, 1980, 40, 0), gpuState(0, 1980, 45, 0), nil},
		{"temperature 6 C", gpuState(0, 1980, 40, 0), gpuState(0, 1980, 46, 0), []string{"temperature 40 C isolated vs 46 C concurrent (+6 C"}},
		{"new throttle", gpuState(0, 1980, 40, 0), gpuState(0, 1980, 40, 4|32), []string{"concurrent runs only: sw-power-cap, sw-thermal"}},
		{"throttle only isolated", gpuState(0, 1980, 40, 64), gpuState(0, 1980, 40, 0), []string{"isolated runs only: hw-thermal"}},
		{"idle is no throttle", gpuState(0, 1980, 40, 1), gpuState(0, 1980, 40, 0), nil},
		{"same throttle both", gpuState(0, 1980, 40, 4), gpuState(0, 1980, 40, 4), nil},
		{"several", gpuState(0, 1980, 40, 0), gpuState(0, 1700, 50, 0), []string{"SM clock", "temperature"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &Drift{Runs: []DriftRun{run(backends.ModeCompute, tt.iso), run(backends.ModeComm, tt.iso), run(backends.ModeConcurrent, tt.con)}}
			d.Check(th)
			if d.Flagged != (len(tt.want) > 0) {
				t.Fatalf("flagged %v, reasons %q", d.Flagged, d.Reasons)
			}
			all := strings.Join(d.Reasons, "\n")
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Errorf("reasons %q lack %q", d.Reasons, w)
				}
			}
			if len(tt.want) > 0 && len(d.Reasons) != len(tt.want) {
				t.Errorf("reasons %q, want %d", d.Reasons, len(tt.want))
			}
			w := d.Warning()
			if d.Flagged != (w != "") || strings.Contains(w, "\n") {
				t.Errorf("warning %q", w)
			}
		})
	}
}

// TestDriftLeavesTheLoadToTheClockLine: with readings during both parts'
// runs, the readings around them no longer flag the SM clock or the power
// cap (the load's, which a settled load keeps between runs), but still
// flag temperature; without them, the same readings flag the clock.
func TestDriftLeavesTheLoadToTheClockLine(t *testing.T) {
	th := DefaultDriftThresholds()
	iso, con := gpuState(0, 1922, 40, 0), gpuState(0, 1882, 40, 4)
	during := func(mhz float64) []DuringState {
		return []DuringState{{Device: 0, Readings: 10, SMClockMHz: mhz, Throttle: 4}}
	}
	runs := func(withDuring bool, conTemp float64) []DriftRun {
		c := con
		c.TempC = conTemp
		rs := []DriftRun{
			{Mode: backends.ModeCompute, Start: []telemetry.GPUState{iso}, End: []telemetry.GPUState{iso}},
			{Mode: backends.ModeComm, Start: []telemetry.GPUState{iso}, End: []telemetry.GPUState{iso}},
			{Mode: backends.ModeConcurrent, Start: []telemetry.GPUState{c}, End: []telemetry.GPUState{c}},
		}
		if withDuring {
			rs[0].During, rs[1].During, rs[2].During = during(1918), during(1933), during(1891)
		}
		return rs
	}
	d := &Drift{Runs: runs(false, 40)}
	d.Check(th)
	if !d.Flagged || !strings.Contains(strings.Join(d.Reasons, ";"), "SM clock") {
		t.Errorf("without readings during the runs: reasons %q, want the SM clock flagged", d.Reasons)
	}
	d = &Drift{Runs: runs(true, 40)}
	d.Check(th)
	if d.Flagged {
		t.Errorf("with readings during the runs: flagged %q; the clock and power cap are the clock line's", d.Reasons)
	}
	if note := d.ClockNote(); !strings.Contains(note, "sw-power-cap") {
		t.Errorf("clock line %q, want the cap", note)
	}
	d = &Drift{Runs: runs(true, 47)}
	d.Check(th)
	if !d.Flagged || !strings.Contains(strings.Join(d.Reasons, ";"), "temperature") || strings.Contains(strings.Join(d.Reasons, ";"), "SM clock") {
		t.Errorf("with readings during the runs and 7 C more: reasons %q, want the temperature only", d.Reasons)
	}
}

func TestDriftMissingAndOnePart(t *testing.T) {
	// A field NVML could not read is no reading: a clock of 0 is not a drop.
	miss := gpuState(0, 0, 40, 0)
	miss.Missing = []string{"sm_clock"}
	d := &Drift{Runs: []DriftRun{
		{Mode: backends.ModeCompute, Start: []telemetry.GPUState{gpuState(0, 1980, 40, 0)}, End: []telemetry.GPUState{gpuState(0, 1980, 40, 0)}},
		{Mode: backends.ModeConcurrent, Start: []telemetry.GPUState{miss}, End: []telemetry.GPUState{gpuState(0, 1980, 40, 0)}},
	}}
	d.Check(DefaultDriftThresholds())
	if d.Flagged || d.GPUs[0].Concurrent.SMClockMHz != 1980 {
		t.Errorf("flagged %v %q; concurrent %+v", d.Flagged, d.Reasons, d.GPUs[0].Concurrent)
	}
	// Isolated runs only (a listing): nothing to compare, nothing claimed.
	d = &Drift{Runs: []DriftRun{{Mode: backends.ModeCompute, Start: []telemetry.GPUState{gpuState(0, 1980, 40, 0)}, End: []telemetry.GPUState{gpuState(0, 1000, 90, 64)}}}}
	d.Check(DefaultDriftThresholds())
	if d.Flagged {
		t.Errorf("one part flagged: %q", d.Reasons)
	}
	var nilDrift *Drift
	if nilDrift.Warning() != "" || nilDrift.Clone() != nil {
		t.Error("a nil drift says something")
	}
}

func TestMeasureRecordsDrift(t *testing.T) {
	sc := scenario()
	sc.Reps = 6
	// Runs go compute, comm, concurrent per round; the concurrent runs
	// find GPU 1 hot and its clock down.
	m := &fakeMachine{state: func(read int) []telemetry.GPUState {
		if (read/2)%3 == 2 {
			return []telemetry.GPUState{gpuState(0, 1980, 40, 0), gpuState(1, 1800, 52, 32)}
		}
		return []telemetry.GPUState{gpuState(0, 1980, 40, 0), gpuState(1, 1980, 41, 0)}
	}}
	fb := &fakeBackend{caps: backends.Capabilities{Limits: limits()}}
	// Read only around the runs: the script counts two readings a run.
	r, err := Measure(context.Background(), fb, sc, scenarios.Strategy{}, Options{Rounds: 3, Machine: m, DuringInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	d := r.Drift
	if d == nil {
		t.Fatal("no drift record")
	}
	if len(d.Runs) != len(fb.calls) || len(d.Runs) != 9 {
		t.Fatalf("%d runs recorded, %d made, want 9", len(d.Runs), len(fb.calls))
	}
	for i, run := range d.Runs {
		if run.Mode != fb.calls[i].Mode || run.Round != i/3 || len(run.Start) != 2 || len(run.End) != 2 {
			t.Errorf("run %d: %+v; made %s in round %d", i, run, fb.calls[i].Mode, i/3)
		}
	}
	if !d.Flagged || len(d.Reasons) != 3 {
		t.Fatalf("flagged %v, reasons %q; want SM clock, temperature and throttle of GPU 1", d.Flagged, d.Reasons)
	}
	for _, reason := range d.Reasons {
		if !strings.HasPrefix(reason, "GPU 1 ") {
			t.Errorf("reason %q is not GPU 1's", reason)
		}
	}
	// The timed use: NVML over the runs of every mode but round 0's. The
	// strategy is the serial default, so its isolated runs are its own,
	// not extra serial-default runs: they count too.
	if r.TimedUse == nil || len(r.TimedUse.NVML[backends.ModeConcurrent]) != 1 ||
		len(r.TimedUse.NVML[backends.ModeCompute]) != 1 || len(r.TimedUse.NVML[backends.ModeComm]) != 1 {
		t.Fatalf("timed use %+v", r.TimedUse)
	}
	for i, run := range d.Runs {
		if run.SerialDefault {
			t.Errorf("run %d (%s) is marked the serial default's; it is the strategy's own", i, run.Mode)
		}
	}
	for _, ws := range m.windows {
		if len(ws) != 2 {
			t.Errorf("asked for %d windows, want 2 (rounds 1 and 2)", len(ws))
		}
		for _, w := range ws {
			if w.End.Before(w.Start) {
				t.Errorf("window %v", w)
			}
		}
	}
	// The spans of the last concurrent repetition: the compute track busy
	// 1100 of 1200 ns.
	if tr := r.TimedUse.Tracks; len(tr) != 1 || tr[0].BusyNs != 1100 || math.Abs(tr[0].Busy-1100.0/1200) > 1e-12 {
		t.Errorf("tracks %+v", tr)
	}
	b, err := json.Marshal(r)
	if err != nil || !strings.Contains(string(b), `"drift":{"runs":`) || !strings.Contains(string(b), `"timed_use":`) {
		t.Errorf("JSON %v lacks drift or timed use", err)
	}
	// Without a machine nothing is recorded or claimed.
	r, err = Measure(context.Background(), &fakeBackend{caps: backends.Capabilities{Limits: limits()}}, sc, scenarios.Strategy{}, Options{Rounds: 3})
	if err != nil || r.Drift != nil || r.TimedUse != nil {
		t.Errorf("without a machine: %v, drift %v, use %v", err, r.Drift, r.TimedUse)
	}
}

func TestMeasureDriftMarksSerialDefault(t *testing.T) {
	sc := scenario()
	sc.Reps = 4
	m := &fakeMachine{state: func(int) []telemetry.GPUState { return []telemetry.GPUState{gpuState(0, 1980, 40, 0)} }}
	fb := &fakeBackend{caps: backends.Capabilities{Limits: limits()}.With(scenarios.CapDMA)}
	r, err := Measure(context.Background(), fb, sc, scenarios.Strategy{CommEngine: scenarios.EngineDMA}, Options{Rounds: 2, Machine: m})
	if err != nil {
		t.Fatal(err)
	}
	def := 0
	for i, run := range r.Drift.Runs {
		want := fb.calls[i].Mode != backends.ModeConcurrent && fb.calls[i].Strategy == SerialDefaultStrategy()
		if run.SerialDefault != want {
			t.Errorf("run %d (%s %+v): serial default %v", i, fb.calls[i].Mode, fb.calls[i].Strategy, run.SerialDefault)
		}
		if run.SerialDefault {
			def++
		}
	}
	if def != 4 || r.Drift.Flagged {
		t.Errorf("%d serial-default runs, want 4; flagged %v", def, r.Drift.Flagged)
	}
}

func TestTrackUses(t *testing.T) {
	spans := []backends.Span{
		{Device: 0, Track: "compute", Kind: "kernel", Start: 0, End: 400},
		{Device: 0, Track: "compute", Kind: "kernel", Start: 300, End: 500}, // overlaps the first
		{Device: 0, Track: "compute", Kind: "kernel", Start: 800, End: 900},
		{Device: 0, Track: "ce0", Kind: "copy", Start: 100, End: 200},
		{Device: 1, Track: "comm", Kind: "kernel", Start: 0, End: 2000}, // past the wall
		{Device: 1, Track: "comm", Kind: "kernel", Start: 50, End: 50},  // empty
	}
	got := TrackUses(spans, 1000)
	want := []TrackUse{
		{Device: 0, Track: "ce0", Kind: "copy", BusyNs: 100, Busy: 0.1},
		{Device: 0, Track: "compute", Kind: "kernel", BusyNs: 600, Busy: 0.6},
		{Device: 1, Track: "comm", Kind: "kernel", BusyNs: 2000, Busy: 1},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("track %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if TrackUses(nil, 1000) != nil {
		t.Error("no spans, some use")
	}
}

func TestSMsHeldOf(t *testing.T) {
	s := []backends.Sample{
		{Device: 0, Metric: backends.MetricSMsCompute, Time: 0, Value: 132},
		{Device: 0, Metric: backends.MetricSMsCompute, Time: 500, Value: 100},
		{Device: 0, Metric: backends.MetricSMsComm, Time: 500, Value: 32},
		{Device: 0, Metric: backends.MetricSMUtil, Time: 0, Value: 1}, // not SMs held
	}
	got := SMsHeldOf(s, 1000)
	if len(got) != 2 || got[0].Metric != backends.MetricSMsComm || got[0].Mean != 16 || got[1].Mean != 116 {
		t.Errorf("got %+v", got)
	}
	if SMsHeldOf(s, 0) != nil {
		t.Error("a zero wall gives means")
	}
}

func TestDriftClone(t *testing.T) {
	d := &Drift{Runs: []DriftRun{{Mode: backends.ModeCompute, Start: []telemetry.GPUState{{Missing: []string{"temp"}}}}}, Reasons: []string{"x"}}
	c := d.Clone()
	c.Runs[0].Start[0].Missing[0] = "y"
	c.Reasons[0] = "y"
	if d.Runs[0].Start[0].Missing[0] != "temp" || d.Reasons[0] != "x" {
		t.Error("the clone shares memory")
	}
	u := &TimedUse{NVML: map[backends.Mode][]telemetry.Use{backends.ModeComm: {{Value: 1}}}}
	cu := u.Clone()
	cu.NVML[backends.ModeComm][0].Value = 2
	if u.NVML[backends.ModeComm][0].Value != 1 {
		t.Error("the timed use clone shares memory")
	}
	_ = time.Now
}

func TestModeStates(t *testing.T) {
	miss := gpuState(1, 0, 0, 1) // idle, clock and temperature unread
	miss.Missing = []string{"sm_clock", "temp"}
	d := &Drift{Runs: []DriftRun{
		{Mode: backends.ModeCompute, Start: []telemetry.GPUState{gpuState(0, 1000, 90, 64)}, End: []telemetry.GPUState{gpuState(0, 1000, 90, 64)}},
		{Mode: backends.ModeConcurrent, Start: []telemetry.GPUState{gpuState(1, 1900, 50, 0), gpuState(0, 1980, 40, 0)}, End: []telemetry.GPUState{miss, gpuState(0, 1960, 44, 4)}},
	}}
	got := d.ModeStates(backends.ModeConcurrent)
	if len(got) != 2 || got[0].Device != 0 || got[1].Device != 1 {
		t.Fatalf("devices %+v", got)
	}
	sm, mem, pow, temp := got[0].Sum.Means()
	if sm != 1970 || mem != 3201 || pow != 400 || temp != 42 || got[0].Sum.Throttle() != 4 || got[0].Sum.Readings() != 2 {
		t.Errorf("GPU 0: %v %v %v %v throttle %d readings %d", sm, mem, pow, temp, got[0].Sum.Throttle(), got[0].Sum.Readings())
	}
	// Unread fields are left out of the means; idle is no throttle.
	sm, _, _, temp = got[1].Sum.Means()
	if sm != 1900 || temp != 50 || got[1].Sum.Throttle() != 0 {
		t.Errorf("GPU 1: SM %v temp %v throttle %d", sm, temp, got[1].Sum.Throttle())
	}
	// Merging is adding the readings.
	var all StateSum
	all.Merge(got[0].Sum)
	all.Merge(got[1].Sum)
	if sm, _, _, _ := all.Means(); math.Abs(sm-(1980+1960+1900)/3.0) > 1e-9 || all.Readings() != 4 || all.Throttle() != 4 {
		t.Errorf("merged: SM %v readings %d throttle %d", sm, all.Readings(), all.Throttle())
	}
	var empty StateSum
	if sm, _, _, _ := empty.Means(); !math.IsNaN(sm) || empty.State().SMClockMHz != 0 {
		t.Errorf("empty: SM %v", sm)
	}
	var nilDrift *Drift
	if nilDrift.ModeStates(backends.ModeConcurrent) != nil || d.ModeStates(backends.ModeComm) != nil {
		t.Error("states of nothing")
	}
}
