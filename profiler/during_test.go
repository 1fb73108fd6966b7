package profiler

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler/telemetry"
	"github.com/c3lab/c3lab/scenarios"
)

const (
	swPowerCap = 4  // nvml.ClocksEventReasonSwPowerCap
	swThermal  = 32 // nvml.ClocksEventReasonSwThermalSlowdown
)

// loadMachine is a GPU whose clock depends on the load: while a run is in
// progress (its mode set by loadBackend) it reads the clocks of that mode,
// between runs 1980 MHz at idle. Every reading during a run is announced
// on read, so that the backend can wait for it.
type loadMachine struct {
	devs    int
	running atomic.Value // backends.Mode; "" between runs
	reads   atomic.Int64
	read    chan struct{}
	// idleEvery makes every idleEvery-th reading during a run find the
	// GPU idle (between repetitions) at 1980 MHz.
	idleEvery int
	loaded    atomic.Int64
	// clock is the SM clock and reasons of a mode under load.
	clock map[backends.Mode]struct {
		sm  float64
		thr uint64
	}
}

func newLoadMachine(devs int) *loadMachine {
	m := &loadMachine{devs: devs, read: make(chan struct{})}
	m.running.Store(backends.Mode(""))
	m.clock = map[backends.Mode]struct {
		sm  float64
		thr uint64
	}{
		backends.ModeCompute:    {1560, swPowerCap},
		backends.ModeComm:       {1975, 0},
		backends.ModeConcurrent: {1605, swPowerCap},
	}
	return m
}

func (m *loadMachine) State() []telemetry.GPUState {
	m.reads.Add(1)
	mode := m.running.Load().(backends.Mode)
	var out []telemetry.GPUState
	for d := range m.devs {
		st := telemetry.GPUState{Device: d, SMClockMHz: 1980, MemClockMHz: 3201, PowerW: 80, TempC: 40, Throttle: 1}
		if c, ok := m.clock[mode]; ok && (m.idleEvery == 0 || (m.loaded.Load()+1)%int64(m.idleEvery) != 0) {
			st.SMClockMHz, st.PowerW, st.TempC, st.Throttle = c.sm, 690, 55, c.thr
		}
		out = append(out, st)
	}
	if mode != "" {
		m.loaded.Add(1)
		m.read <- struct{}{}
	}
	return out
}

func (m *loadMachine) Use([]telemetry.Window) []telemetry.Use { return nil }

// loadBackend runs fakeBackend's repetitions under load: it marks the run
// in progress on the machine, ticks the readings during it itself (ticks
// of each mode, through the watch's after), waits for each, and ends the
// load before it returns. fail makes the run of that mode fail after its
// ticks; cancel makes it cancel its context and wait for the cancel.
type loadBackend struct {
	fakeBackend
	m      *loadMachine
	tick   chan time.Time
	ticks  map[backends.Mode]int
	fail   backends.Mode
	cancel context.CancelFunc
}

func (b *loadBackend) after(time.Duration) <-chan time.Time { return b.tick }

func (b *loadBackend) Run(ctx context.Context, ex backends.Experiment, sink backends.EventSink) (backends.RunResult, error) {
	b.m.running.Store(ex.Mode)
	defer b.m.running.Store(backends.Mode(""))
	for range b.ticks[ex.Mode] {
		b.tick <- time.Now()
		<-b.m.read
	}
	if ex.Mode == b.fail {
		if b.cancel != nil {
			b.cancel()
			<-ctx.Done()
			return backends.RunResult{}, ctx.Err()
		}
		return backends.RunResult{}, errors.New("device lost")
	}
	return b.fakeBackend.Run(ctx, ex, sink)
}

func newLoadBackend(m *loadMachine, ticks map[backends.Mode]int) *loadBackend {
	return &loadBackend{fakeBackend: fakeBackend{caps: backends.Capabilities{Limits: limits()}}, m: m, tick: make(chan time.Time), ticks: ticks}
}

// noSampler fails when anything still waits for a reading tick after the
// measurement returned, or reads the machine.
func noSampler(t *testing.T, b *loadBackend) {
	t.Helper()
	reads := b.m.reads.Load()
	select {
	case b.tick <- time.Now():
		t.Error("a sampler still waits for readings after the measurement returned")
	case <-time.After(30 * time.Millisecond):
	}
	if n := b.m.reads.Load(); n != reads {
		t.Errorf("the machine was read %d times after the measurement returned", n-reads)
	}
}

func TestMeasureReadsDuringRuns(t *testing.T) {
	sc := scenario()
	sc.Reps = 4
	m := newLoadMachine(2)
	ticks := map[backends.Mode]int{backends.ModeCompute: 2, backends.ModeComm: 3, backends.ModeConcurrent: 1}
	b := newLoadBackend(m, ticks)
	b.caps = b.caps.With(scenarios.CapDMA) // the serial default's isolated runs too
	r, err := Measure(context.Background(), b, sc, scenarios.Strategy{CommEngine: scenarios.EngineDMA}, Options{Rounds: 2, Machine: m, DuringInterval: time.Millisecond, duringAfter: b.after})
	if err != nil {
		t.Fatal(err)
	}
	noSampler(t, b)
	d := r.Drift
	if d == nil || len(d.Runs) != len(b.calls) {
		t.Fatalf("drift %+v for %d runs", d, len(b.calls))
	}
	if d.DuringIntervalNs != time.Millisecond.Nanoseconds() {
		t.Errorf("interval %d ns", d.DuringIntervalNs)
	}
	// Around every run the GPU reads 1980 MHz: no drift.
	for i, run := range d.Runs {
		for _, st := range append(run.Start, run.End...) {
			if st.SMClockMHz != 1980 {
				t.Fatalf("run %d read %v MHz around it", i, st.SMClockMHz)
			}
		}
		if len(run.During) != 2 {
			t.Fatalf("run %d: during %+v, want 2 GPUs", i, run.During)
		}
		c := m.clock[run.Mode]
		for dev, ds := range run.During {
			if ds.Device != dev || ds.Readings != ticks[run.Mode] || ds.SMClockMHz != c.sm || ds.MinSMClockMHz != c.sm ||
				ds.Throttle != c.thr || ds.PowerW != 690 || ds.MaxTempC != 55 || ds.MemClockMHz != 3201 || ds.Missing != nil {
				t.Errorf("run %d (%s) GPU %d during: %+v", i, run.Mode, dev, ds)
			}
		}
	}
	if d.Flagged {
		t.Errorf("the readings around the runs flagged drift: %q", d.Reasons)
	}
	// Per mode, the serial default's runs apart.
	if len(d.During) != 2*5 {
		t.Fatalf("during by mode: %+v", d.During)
	}
	order := []backends.Mode{backends.ModeCompute, backends.ModeComm, backends.ModeConcurrent, backends.ModeCompute, backends.ModeComm}
	for i, mc := range d.During {
		if mc.Device != i/5 || mc.Mode != order[i%5] || mc.SerialDefault != (i%5 >= 3) {
			t.Errorf("during %d: GPU %d %s serial default %v", i, mc.Device, mc.Mode, mc.SerialDefault)
		}
		if mc.Runs != 2 || mc.Readings != 2*ticks[mc.Mode] || mc.SMClockMHz != m.clock[mc.Mode].sm || mc.Throttle != m.clock[mc.Mode].thr {
			t.Errorf("%+v", mc)
		}
	}
	want := "GPU 0 clock during the runs: compute alone 1560 MHz (sw-power-cap), comm alone 1975 MHz, concurrent 1605 MHz (sw-power-cap); " +
		"GPU 1 clock during the runs: compute alone 1560 MHz (sw-power-cap), comm alone 1975 MHz, concurrent 1605 MHz (sw-power-cap); " +
		"part of the C3 difference is the clock"
	if got := d.ClockNote(); got != want {
		t.Errorf("note\n%s\nwant\n%s", got, want)
	}
	if !d.ClockCapped() || d.Warning() != "" {
		t.Errorf("capped %v, warning %q", d.ClockCapped(), d.Warning())
	}
	// The JSON holds the summaries, not the readings.
	js, err := json.Marshal(r)
	if err != nil || !strings.Contains(string(js), `"during":[{"device":0,"readings":2,"sm_clock_mhz":1560,"min_sm_clock_mhz":1560`) ||
		!strings.Contains(string(js), `"during":[{"mode":"compute","runs":2,"device":0,"readings":4,"sm_clock_mhz":1560`) {
		t.Errorf("JSON %v: %s", err, js)
	}
}

func TestMeasureDuringOff(t *testing.T) {
	sc := scenario()
	sc.Reps = 4
	m := newLoadMachine(1)
	b := newLoadBackend(m, nil)
	asked := 0
	after := func(d time.Duration) <-chan time.Time { asked++; return b.tick }
	r, err := Measure(context.Background(), b, sc, scenarios.Strategy{}, Options{Rounds: 2, Machine: m, DuringInterval: -1, duringAfter: after})
	if err != nil {
		t.Fatal(err)
	}
	if asked != 0 || r.Drift == nil || r.Drift.During != nil || r.Drift.DuringIntervalNs != 0 || r.Drift.ClockNote() != "" {
		t.Fatalf("asked %d, drift %+v", asked, r.Drift)
	}
	for i, run := range r.Drift.Runs {
		if run.During != nil {
			t.Errorf("run %d read during it: %+v", i, run.During)
		}
	}
	if n := m.reads.Load(); n != int64(2*len(b.calls)) {
		t.Errorf("%d readings for %d runs, want two a run", n, len(b.calls))
	}
	if js, _ := json.Marshal(r.Drift); strings.Contains(string(js), `"during`) {
		t.Errorf("JSON has a during record: %s", js)
	}
}

// TestDuringSamplerStops: a run that fails or is cancelled leaves nothing
// reading the machine.
func TestDuringSamplerStops(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cancel bool
		ticks  int
	}{{"error", false, 1}, {"error before a reading", false, 0}, {"cancelled", true, 2}} {
		t.Run(tc.name, func(t *testing.T) {
			m := newLoadMachine(1)
			b := newLoadBackend(m, map[backends.Mode]int{backends.ModeComm: tc.ticks})
			b.fail = backends.ModeComm
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancel {
				b.cancel = cancel
			}
			_, err := Measure(ctx, b, scenario(), scenarios.Strategy{}, Options{Rounds: 1, Reps: 2, Machine: m, duringAfter: b.after})
			if err == nil || tc.cancel != errors.Is(err, context.Canceled) {
				t.Fatalf("err %v", err)
			}
			noSampler(t, b)
		})
	}
}

// TestDuringPanicStops: a backend that panics still has its sampler
// stopped on the way out.
func TestDuringPanicStops(t *testing.T) {
	m := newLoadMachine(1)
	b := newLoadBackend(m, nil)
	w := &machineWatch{Backend: &panicBackend{}, m: m, now: time.Now, every: time.Millisecond, after: b.after,
		lastRun: map[watchKey]time.Duration{}, seen: map[watchKey]int{}, windows: map[backends.Mode][][]telemetry.Window{}}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("no panic")
			}
		}()
		w.Run(context.Background(), backends.Experiment{Mode: backends.ModeCompute}, nil)
	}()
	noSampler(t, b)
}

type panicBackend struct{ fakeBackend }

func (*panicBackend) Run(context.Context, backends.Experiment, backends.EventSink) (backends.RunResult, error) {
	panic("backend bug")
}

// TestDuringShortRun: a run shorter than the interval is read once in its
// middle, judged by the last run of its kind; a run that ends before the
// first reading says so by 0 readings.
func TestDuringShortRun(t *testing.T) {
	m := newLoadMachine(2)
	b := newLoadBackend(m, nil)
	var asked []time.Duration
	var mu sync.Mutex
	after := func(d time.Duration) <-chan time.Time {
		mu.Lock()
		asked = append(asked, d)
		mu.Unlock()
		return b.tick
	}
	bw, w := watchMachine(b, m, 10*time.Millisecond, after)
	clock := time.Unix(0, 0)
	w.now = func() time.Time { clock = clock.Add(3 * time.Millisecond); return clock } // every run takes 3 ms
	ex := backends.Experiment{Scenario: scenario(), Mode: backends.ModeCompute, Reps: 1}
	firstAsked := func() time.Duration {
		// The sampler asks for its first wait before it waits for
		// anything, and Run waits for the sampler to end.
		mu.Lock()
		defer mu.Unlock()
		if len(asked) == 0 {
			return -1
		}
		d := asked[0]
		asked = nil
		return d
	}
	// First run: no run of its kind before, the first reading after the
	// interval; the run ends before it.
	if _, err := bw.Run(context.Background(), ex, nil); err != nil {
		t.Fatal(err)
	}
	if d := firstAsked(); d != 10*time.Millisecond {
		t.Errorf("first reading of the first run after %v", d)
	}
	b.ticks = map[backends.Mode]int{backends.ModeCompute: 1}
	if _, err := bw.Run(context.Background(), ex, nil); err != nil {
		t.Fatal(err)
	}
	if d := firstAsked(); d != 1500*time.Microsecond {
		t.Errorf("first reading of a 3 ms run after %v, want 1.5 ms", d)
	}
	noSampler(t, b)
	if len(w.runs) != 2 {
		t.Fatalf("%d runs", len(w.runs))
	}
	for dev, ds := range w.runs[0].During {
		if ds.Device != dev || ds.Readings != 0 || ds.Missing != nil {
			t.Errorf("unread run, GPU %d: %+v", dev, ds)
		}
	}
	if len(w.runs[0].During) != 2 {
		t.Errorf("unread run: %+v, want a record of 0 readings per GPU", w.runs[0].During)
	}
	if ds := w.runs[1].During; len(ds) != 2 || ds[0].Readings != 1 || ds[0].SMClockMHz != 1560 {
		t.Errorf("short run: %+v", ds)
	}
}

// TestDuringRealTime reads a fake GPU under load with the real clock: the
// readings during a 20 ms run see the cap, those around it do not.
func TestDuringRealTime(t *testing.T) {
	m := newLoadMachine(1)
	drain := make(chan struct{})
	defer close(drain)
	m.read = make(chan struct{}, 1)
	go func() { // take the announcements nobody waits for
		for {
			select {
			case <-m.read:
			case <-drain:
				return
			}
		}
	}()
	b := &sleepBackend{fakeBackend: fakeBackend{caps: backends.Capabilities{Limits: limits()}}, m: m, d: 20 * time.Millisecond}
	sc := scenario()
	sc.Reps = 2
	r, err := Measure(context.Background(), b, sc, scenarios.Strategy{}, Options{Rounds: 1, Machine: m, DuringInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for i, run := range r.Drift.Runs {
		if run.Start[0].SMClockMHz != 1980 || run.End[0].SMClockMHz != 1980 {
			t.Errorf("run %d around: %v, %v MHz", i, run.Start[0].SMClockMHz, run.End[0].SMClockMHz)
		}
		ds := run.During[0]
		c := m.clock[run.Mode]
		if ds.Readings == 0 || ds.MinSMClockMHz != c.sm || ds.Throttle != c.thr || ds.SMClockMHz < c.sm || ds.SMClockMHz > 1980 {
			t.Errorf("run %d (%s) during: %+v", i, run.Mode, ds)
		}
	}
}

// sleepBackend holds the load for d in every run.
type sleepBackend struct {
	fakeBackend
	m *loadMachine
	d time.Duration
}

func (b *sleepBackend) Run(ctx context.Context, ex backends.Experiment, sink backends.EventSink) (backends.RunResult, error) {
	b.m.running.Store(ex.Mode)
	time.Sleep(b.d)
	b.m.running.Store(backends.Mode(""))
	return b.fakeBackend.Run(ctx, ex, sink)
}

func TestStateSumDuring(t *testing.T) {
	readings := []telemetry.GPUState{
		{SMClockMHz: 1600, MemClockMHz: 3201, PowerW: 690, TempC: 50, Throttle: swPowerCap},
		{SMClockMHz: 1500, MemClockMHz: 3201, PowerW: 700, TempC: 58, Throttle: 1},
		{SMClockMHz: 1900, MemClockMHz: 3201, PowerW: 500, TempC: 52},
		{SMClockMHz: 1700, MemClockMHz: 3201, PowerW: 600, TempC: 51, Throttle: swThermal},
		{SMClockMHz: 1980, MemClockMHz: 3201, PowerW: 0, TempC: 49, Missing: []string{"power"}},
	}
	var all StateSum
	for _, st := range readings {
		all.Add(st)
	}
	// The same readings in three runs, each summed up, then added (a
	// field read in some of a run's readings only would be weighted by
	// all of them: NVML misses a field on a device always or never).
	var runs [3]StateSum
	var both StateSum
	for i, st := range readings {
		runs[min(i/2, 2)].Add(st)
	}
	for _, r := range runs {
		both.AddDuring(r.During(0))
	}
	both.AddDuring(DuringState{}) // a run without readings adds nothing
	a, b := runs[0], runs[1]
	for name, s := range map[string]StateSum{"all": all, "by runs": both} {
		sm, mem, pow, temp := s.Means()
		if math.Abs(sm-1736) > 1e-9 || mem != 3201 || math.Abs(pow-622.5) > 1e-9 || math.Abs(temp-52) > 1e-9 ||
			s.MinSMClock() != 1500 || s.Throttle() != swPowerCap|swThermal || s.Readings() != 5 {
			t.Errorf("%s: %v %v %v %v min %v throttle %d readings %d", name, sm, mem, pow, temp, s.MinSMClock(), s.Throttle(), s.Readings())
		}
	}
	if d := both.During(3); d.Device != 3 || d.MaxTempC != 58 || d.Missing != nil || d.Readings != 5 {
		t.Errorf("during %+v", d)
	}
	var m StateSum
	m.Merge(b)
	m.Merge(a)
	if m.MinSMClock() != 1500 {
		t.Errorf("merged min %v", m.MinSMClock())
	}
	var onlyPower StateSum
	onlyPower.Add(telemetry.GPUState{PowerW: 90, Missing: []string{"sm_clock", "mem_clock", "temp"}})
	d := onlyPower.During(0)
	if !reflect.DeepEqual(d.Missing, []string{"sm_clock", "mem_clock", "temp"}) || d.SMClockMHz != 0 || !math.IsNaN(onlyPower.MinSMClock()) {
		t.Errorf("missing fields: %+v", d)
	}
	var back StateSum
	back.AddDuring(d)
	if sm, _, pow, _ := back.Means(); !math.IsNaN(sm) || pow != 90 {
		t.Errorf("a missing field came back as read: SM %v power %v", sm, pow)
	}
	var empty StateSum
	if d := empty.During(1); d.Readings != 0 || d.Missing != nil || d.MinSMClockMHz != 0 {
		t.Errorf("empty: %+v", d)
	}
}

func TestClockNote(t *testing.T) {
	ds := func(dev int, sm float64, thr uint64) DuringState {
		return DuringState{Device: dev, Readings: 10, SMClockMHz: sm, MinSMClockMHz: sm, MemClockMHz: 3201, PowerW: 600, Throttle: thr}
	}
	run := func(mode backends.Mode, def bool, s ...DuringState) DriftRun {
		return DriftRun{Mode: mode, SerialDefault: def, During: s}
	}
	const c, m, x = backends.ModeCompute, backends.ModeComm, backends.ModeConcurrent
	tests := []struct {
		name   string
		runs   []DriftRun
		want   string
		capped bool
	}{
		{"top clock everywhere", []DriftRun{run(c, false, ds(0, 1980, 0)), run(m, false, ds(0, 1975, 0)), run(x, false, ds(0, 1970, 1))}, "", false},
		{"no readings during the runs", []DriftRun{{Mode: c}, {Mode: x}}, "", false},
		{"capped alone", []DriftRun{run(c, false, ds(0, 1560, swPowerCap)), run(m, false, ds(0, 1975, 0)), run(x, false, ds(0, 1605, 0))},
			"GPU 0 clock during the runs: compute alone 1560 MHz (sw-power-cap), comm alone 1975 MHz, concurrent 1605 MHz; part of the C3 difference is the clock", true},
		{"apart without a cap", []DriftRun{run(c, false, ds(0, 1900, 0)), run(x, false, ds(0, 1800, 0))},
			"GPU 0 clock during the runs: compute alone 1900 MHz, concurrent 1800 MHz; part of the C3 difference is the clock", false},
		{"within 2 %", []DriftRun{run(c, false, ds(0, 1900, 0)), run(x, false, ds(0, 1870, 0))}, "", false},
		{"capped alike", []DriftRun{run(c, false, ds(0, 1600, swPowerCap)), run(x, false, ds(0, 1610, swPowerCap|1))},
			"GPU 0 clock during the runs: compute alone 1600 MHz (sw-power-cap), concurrent 1610 MHz (sw-power-cap); the figures hold at that capped clock", true},
		{"only the concurrent run (a reused baseline)", []DriftRun{run(x, false, ds(0, 1700, swThermal))},
			"GPU 0 clock during the runs: concurrent 1700 MHz (sw-thermal); the figures hold at that capped clock", true},
		{"the serial default apart", []DriftRun{run(c, false, ds(0, 1980, 0)), run(c, true, ds(0, 1500, swPowerCap)), run(x, false, ds(0, 1980, 0))}, "", false},
		{"the serial default as the strategy's own", []DriftRun{run(c, true, ds(0, 1560, swPowerCap)), run(x, false, ds(0, 1980, 0))},
			"GPU 0 clock during the runs: compute alone 1560 MHz (sw-power-cap), concurrent 1980 MHz; part of the C3 difference is the clock", true},
		{"one GPU of two", []DriftRun{run(c, false, ds(0, 1980, 0), ds(1, 1600, swPowerCap)), run(x, false, ds(0, 1980, 0), ds(1, 1980, 0))},
			"GPU 1 clock during the runs: compute alone 1600 MHz (sw-power-cap), concurrent 1980 MHz; part of the C3 difference is the clock", true},
		{"a run without readings", []DriftRun{run(c, false, DuringState{Device: 0}), run(x, false, ds(0, 1700, 0))}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &Drift{Runs: tt.runs}
			d.Check(DefaultDriftThresholds())
			if got := d.ClockNote(); got != tt.want {
				t.Errorf("note\n%q\nwant\n%q", got, tt.want)
			}
			if d.ClockCapped() != tt.capped {
				t.Errorf("capped %v", d.ClockCapped())
			}
			if d.Flagged {
				t.Errorf("the clocks during the runs flagged drift: %q", d.Reasons)
			}
			// A decoded result without During (set by Check) says the same.
			d.During = nil
			if got := d.ClockNote(); got != tt.want {
				t.Errorf("without During: %q", got)
			}
		})
	}
	var nilDrift *Drift
	if nilDrift.ClockNote() != "" || nilDrift.ClockCapped() || nilDrift.ModeClocks() != nil || nilDrift.DuringStates(c) != nil {
		t.Error("a nil drift says something")
	}
}

func TestDuringStates(t *testing.T) {
	d := &Drift{Runs: []DriftRun{
		{Mode: backends.ModeConcurrent, During: []DuringState{{Device: 1, Readings: 1, SMClockMHz: 1700, MinSMClockMHz: 1700}, {Device: 0, Readings: 3, SMClockMHz: 1600, MinSMClockMHz: 1500, Throttle: swPowerCap}}},
		{Mode: backends.ModeConcurrent, During: []DuringState{{Device: 1}, {Device: 0, Readings: 1, SMClockMHz: 2000, MinSMClockMHz: 2000}}},
		{Mode: backends.ModeCompute, During: []DuringState{{Device: 0, Readings: 5, SMClockMHz: 1000, MinSMClockMHz: 1000}}},
	}}
	got := d.DuringStates(backends.ModeConcurrent)
	if len(got) != 2 || got[0].Device != 0 || got[1].Device != 1 {
		t.Fatalf("%+v", got)
	}
	if sm, _, _, _ := got[0].Sum.Means(); sm != 1700 || got[0].Sum.MinSMClock() != 1500 || got[0].Sum.Readings() != 4 || got[0].Sum.Throttle() != swPowerCap {
		t.Errorf("GPU 0: SM %v min %v readings %d", sm, got[0].Sum.MinSMClock(), got[0].Sum.Readings())
	}
	if d.DuringStates(backends.ModeComm) != nil {
		t.Error("states of a mode without runs")
	}
}

func TestDuringJSONAndClone(t *testing.T) {
	at := time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)
	d := &Drift{DuringIntervalNs: 2e6, Runs: []DriftRun{
		{Mode: backends.ModeCompute, Start: []telemetry.GPUState{{At: at, SMClockMHz: 1980}}, End: []telemetry.GPUState{{At: at, SMClockMHz: 1980}},
			During: []DuringState{{Readings: 3, SMClockMHz: 1560, MinSMClockMHz: 1545, Throttle: swPowerCap, Missing: []string{"temp"}}}},
		{Mode: backends.ModeConcurrent, Start: []telemetry.GPUState{{At: at, SMClockMHz: 1980}}, End: []telemetry.GPUState{{At: at, SMClockMHz: 1980}},
			During: []DuringState{{Readings: 0}}},
	}}
	d.Check(DefaultDriftThresholds())
	js, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var back Drift
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&back, d) {
		t.Errorf("round trip\n%+v\nwant\n%+v", back, *d)
	}
	c := d.Clone()
	if !reflect.DeepEqual(c, d) {
		t.Fatalf("clone differs")
	}
	c.Runs[0].During[0].Missing[0] = "x"
	c.Runs[0].During[0].SMClockMHz = 1
	c.During[0].Missing[0] = "x"
	c.During[0].Readings = 99
	if d.Runs[0].During[0].Missing[0] != "temp" || d.Runs[0].During[0].SMClockMHz != 1560 || d.During[0].Missing[0] != "temp" || d.During[0].Readings != 3 {
		t.Error("the clone shares the during records")
	}
}

// TestOldDriftJSON: a result written before the readings during the runs
// decodes without them and says nothing about the clocks during the runs.
func TestOldDriftJSON(t *testing.T) {
	old := `{"scenario":{"name":"s","gpus":1},"backend":"cuda","drift":{"runs":[` +
		`{"round":0,"mode":"compute","start":[{"device":0,"at":"2026-12-01T10:00:00Z","sm_clock_mhz":1980,"mem_clock_mhz":3201,"power_w":120,"temp_c":40,"throttle":0}],` +
		`"end":[{"device":0,"at":"2026-12-01T10:00:01Z","sm_clock_mhz":1980,"mem_clock_mhz":3201,"power_w":130,"temp_c":41,"throttle":4}]}],` +
		`"gpus":[],"thresholds":{"sm_clock_pct":2,"mem_clock_pct":2,"temp_c":5},"flagged":false}}`
	var r Result
	if err := json.Unmarshal([]byte(old), &r); err != nil {
		t.Fatal(err)
	}
	if r.Drift == nil || len(r.Drift.Runs) != 1 || r.Drift.Runs[0].During != nil || r.Drift.During != nil || r.Drift.ModeClocks() != nil {
		t.Fatalf("drift %+v", r.Drift)
	}
	if r.Drift.ClockNote() != "" || r.Drift.DuringStates(backends.ModeCompute) != nil || len(r.Drift.ModeStates(backends.ModeCompute)) != 1 {
		t.Error("an old record says something about the clocks during the runs")
	}
	js, _ := json.Marshal(r.Drift)
	if strings.Contains(string(js), "during") {
		t.Errorf("written again with a during record: %s", js)
	}
}

// slowMachine takes d to read the GPUs.
type slowMachine struct {
	*loadMachine
	d time.Duration
}

func (m *slowMachine) State() []telemetry.GPUState {
	time.Sleep(m.d)
	return m.loadMachine.State()
}

// TestDuringReadsAtMostHalfTheTime: a reading that takes longer than the
// interval is followed by a wait at least as long as it took.
func TestDuringReadsAtMostHalfTheTime(t *testing.T) {
	m := &slowMachine{loadMachine: newLoadMachine(1), d: 3 * time.Millisecond}
	b := newLoadBackend(m.loadMachine, map[backends.Mode]int{backends.ModeCompute: 2})
	var mu sync.Mutex
	var asked []time.Duration
	after := func(d time.Duration) <-chan time.Time {
		mu.Lock()
		asked = append(asked, d)
		mu.Unlock()
		return b.tick
	}
	bw, _ := watchMachine(b, m, time.Millisecond, after)
	if _, err := bw.Run(context.Background(), backends.Experiment{Scenario: scenario(), Mode: backends.ModeCompute, Reps: 1}, nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 3 || asked[0] != time.Millisecond || asked[1] < m.d || asked[2] < m.d {
		t.Errorf("waits %v: the first the interval, then at least the %v a reading takes", asked, m.d)
	}
}

// TestDuringLeavesIdleOut: a reading that finds the GPU idle (NVML's idle
// reason: between repetitions, in the backend's set-up) is counted, not
// averaged into the clock under load.
func TestDuringLeavesIdleOut(t *testing.T) {
	m := newLoadMachine(1)
	m.idleEvery = 2
	b := newLoadBackend(m, map[backends.Mode]int{backends.ModeCompute: 5})
	bw, w := watchMachine(b, m, time.Millisecond, b.after)
	for range 2 {
		if _, err := bw.Run(context.Background(), backends.Experiment{Scenario: scenario(), Mode: backends.ModeCompute, Reps: 1}, nil); err != nil {
			t.Fatal(err)
		}
	}
	// Readings 1-5, then 6-10: idle at 2, 4, 6, 8, 10.
	if ds := w.runs[0].During[0]; ds.Readings != 3 || ds.Idle != 2 || ds.SMClockMHz != 1560 || ds.MinSMClockMHz != 1560 || ds.Throttle != swPowerCap {
		t.Errorf("run 0: %+v", ds)
	}
	if ds := w.runs[1].During[0]; ds.Readings != 2 || ds.Idle != 3 || ds.SMClockMHz != 1560 {
		t.Errorf("run 1: %+v", ds)
	}
	d := &Drift{Runs: w.runs}
	d.Check(DefaultDriftThresholds())
	if len(d.During) != 1 || d.During[0].Readings != 5 || d.During[0].Idle != 5 || d.During[0].Runs != 2 || d.During[0].SMClockMHz != 1560 {
		t.Errorf("by mode: %+v", d.During)
	}
}

// TestMergePassesKeepsDuring: a sweep's passes merged keep every run's
// readings during it and the interval, and sum them per mode again.
func TestMergePassesKeepsDuring(t *testing.T) {
	sc := scenario()
	sc.Reps = 3
	var parts []Result
	for range 2 {
		m := newLoadMachine(1)
		b := newLoadBackend(m, map[backends.Mode]int{backends.ModeCompute: 1, backends.ModeComm: 1, backends.ModeConcurrent: 2})
		r, err := Measure(context.Background(), b, sc, scenarios.Strategy{}, Options{Rounds: 3, Machine: m, duringAfter: b.after})
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, r)
	}
	r, err := MergePasses(parts, 0, Precision{})
	if err != nil {
		t.Fatal(err)
	}
	d := r.Drift
	if d == nil || len(d.Runs) != 18 || d.DuringIntervalNs != DefaultDuringInterval.Nanoseconds() || len(d.During) != 3 {
		t.Fatalf("merged drift %+v", d)
	}
	if c := d.During[2]; c.Mode != backends.ModeConcurrent || c.Runs != 6 || c.Readings != 12 || c.SMClockMHz != 1605 {
		t.Errorf("concurrent during %+v", c)
	}
	if d.ClockNote() == "" {
		t.Error("no clock note after merging")
	}
}
