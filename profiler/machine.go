package profiler

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler/telemetry"
	"github.com/c3lab/c3lab/scenarios"
)

// Machine is what Measure reads of the GPUs beside the backend's timings
// (Options.Machine): their state around every run, for drift, and every
// Options.DuringInterval while a run runs, for the clocks under load (a
// GPU at its power limit is back at its top clock within milliseconds
// after a run, so the readings around it cannot see the cap); and the
// engines' use clipped to the runs, for the utilization of the timed
// window. telemetry.Monitor implements it over NVML; without NVML (the
// simulator, no driver) there is none, and nothing is recorded or claimed.
type Machine interface {
	// State reads every GPU's state now.
	State() []telemetry.GPUState
	// Use returns each device's metrics averaged over the windows only.
	Use(windows []telemetry.Window) []telemetry.Use
}

// Drift is the machine state of a measurement: every GPU's state at the
// start and end of each run of each round, and the isolated and
// concurrent parts compared. Flagged is set, with the numbers in Reasons,
// when the parts differ beyond the thresholds (DefaultDriftThresholds): the
// isolated and concurrent times were then not taken on the same machine.
// For a GPU also read during both parts' runs, the SM clock and the power
// cap are left to the clock line (ClockNote), since a settled load keeps
// them between runs: they describe the load, not a change of the machine.
// The readings during the runs (DriftRun.During) are summed up per mode in
// During and said by ClockNote, not flagged as drift: they are what the
// load did to the clock within the runs.
type Drift struct {
	Runs []DriftRun `json:"runs"`
	GPUs []GPUDrift `json:"gpus"`
	// During is every GPU's state during the runs of each mode
	// (ModeClocks, set by Check); empty without readings during the runs.
	During []ModeClock `json:"during,omitempty"`
	// DuringIntervalNs is how often the machine was read during the runs
	// (Options.DuringInterval); 0 when it was not.
	DuringIntervalNs int64 `json:"during_interval_ns,omitempty"`
	// Thresholds are the limits the parts were compared against.
	Thresholds DriftThresholds `json:"thresholds"`
	Flagged    bool            `json:"flagged"`
	Reasons    []string        `json:"reasons,omitempty"`
}

// DriftRun is the state of every GPU at the start and end of one run, and
// summed up over the readings during it.
type DriftRun struct {
	Round int           `json:"round"`
	Mode  backends.Mode `json:"mode"`
	// SerialDefault marks the serial default's isolated runs.
	SerialDefault bool                 `json:"serial_default,omitempty"`
	Start         []telemetry.GPUState `json:"start"`
	End           []telemetry.GPUState `json:"end"`
	// During sums each GPU's readings taken while the run ran, one per
	// device read at the start; nil when none were taken (older results,
	// Options.DuringInterval negative).
	During []DuringState `json:"during,omitempty"`
}

// PartState is one GPU's state over one part (isolated or concurrent):
// means over its readings, the hottest reading, and every throttle reason
// seen but idle.
type PartState struct {
	Readings    int     `json:"readings"`
	SMClockMHz  float64 `json:"sm_clock_mhz"`
	MemClockMHz float64 `json:"mem_clock_mhz"`
	PowerW      float64 `json:"power_w"`
	TempC       float64 `json:"temp_c"`
	MaxTempC    float64 `json:"max_temp_c"`
	Throttle    uint64  `json:"throttle"`
}

// GPUDrift compares one GPU's isolated and concurrent parts.
type GPUDrift struct {
	Device     int       `json:"device"`
	Isolated   PartState `json:"isolated"`
	Concurrent PartState `json:"concurrent"`
}

// DriftThresholds say how far the isolated and concurrent parts may differ
// before a result is flagged. A throttle reason (other than idle) seen in
// one part and not the other always flags.
type DriftThresholds struct {
	// SMClockPct and MemClockPct bound the difference of the mean clocks,
	// in percent of the isolated part's.
	SMClockPct  float64 `json:"sm_clock_pct"`
	MemClockPct float64 `json:"mem_clock_pct"`
	// TempC bounds the difference of the mean temperatures.
	TempC float64 `json:"temp_c"`
}

// DefaultDriftThresholds: 2 % of SM or memory clock, 5 C.
func DefaultDriftThresholds() DriftThresholds {
	return DriftThresholds{SMClockPct: 2, MemClockPct: 2, TempC: 5}
}

// ignoredThrottle are reasons that say nothing about speed under load: an
// idle GPU between runs.
const ignoredThrottle = uint64(1) // nvml.ClocksEventReasonGpuIdle

// powerCap is NVML's software power cap reason
// (nvml.ClocksEventReasonSwPowerCap): the load's, not the machine's.
const powerCap = uint64(4)

// Warning is the drift in one line for the CLI ("" when not flagged).
func (d *Drift) Warning() string {
	if d == nil || !d.Flagged {
		return ""
	}
	return "warning: the machine drifted between the isolated and concurrent runs: " + strings.Join(d.Reasons, "; ")
}

// StateSum sums one GPU's state readings (telemetry.GPUState), field by
// field, for their means: the readings of one part of a measurement, of one
// mode's runs, or of many results'. Fields NVML could not read are left
// out of their mean; throttle reasons are kept but idle. Its zero value is
// empty.
type StateSum struct {
	n                        [4]int // readings of SM clock, memory clock, power, temperature
	sm, mem, pow, temp, maxT float64
	minSM                    float64 // the lowest SM clock read; valid when n[0] > 0
	thr                      uint64
	readings                 int
}

// Add adds one reading.
func (s *StateSum) Add(st telemetry.GPUState) {
	s.readings++
	if !slices.Contains(st.Missing, "sm_clock") {
		s.addMinSM(st.SMClockMHz)
		s.sm += st.SMClockMHz
		s.n[0]++
	}
	if !slices.Contains(st.Missing, "mem_clock") {
		s.mem += st.MemClockMHz
		s.n[1]++
	}
	if !slices.Contains(st.Missing, "power") {
		s.pow += st.PowerW
		s.n[2]++
	}
	if !slices.Contains(st.Missing, "temp") {
		s.temp += st.TempC
		s.maxT = math.Max(s.maxT, st.TempC)
		s.n[3]++
	}
	s.thr |= st.Throttle &^ ignoredThrottle
}

// addMinSM lowers the lowest SM clock to v; call it before counting v.
func (s *StateSum) addMinSM(v float64) {
	if s.n[0] == 0 || v < s.minSM {
		s.minSM = v
	}
}

// Merge adds every reading of o.
func (s *StateSum) Merge(o StateSum) {
	if o.n[0] > 0 {
		s.addMinSM(o.minSM)
	}
	for i := range s.n {
		s.n[i] += o.n[i]
	}
	s.sm, s.mem, s.pow, s.temp = s.sm+o.sm, s.mem+o.mem, s.pow+o.pow, s.temp+o.temp
	s.maxT = math.Max(s.maxT, o.maxT)
	s.thr |= o.thr
	s.readings += o.readings
}

// Readings is the number of readings added.
func (s StateSum) Readings() int { return s.readings }

// Means are the mean SM clock, memory clock (MHz), power (W) and
// temperature (C) over the readings that have them; NaN for a field never
// read.
func (s StateSum) Means() (smMHz, memMHz, powerW, tempC float64) {
	mean := func(v float64, n int) float64 {
		if n == 0 {
			return math.NaN()
		}
		return v / float64(n)
	}
	return mean(s.sm, s.n[0]), mean(s.mem, s.n[1]), mean(s.pow, s.n[2]), mean(s.temp, s.n[3])
}

// Throttle is every throttle reason seen in the readings but idle.
func (s StateSum) Throttle() uint64 { return s.thr }

// MinSMClock is the lowest SM clock read (MHz); NaN when none was read.
func (s StateSum) MinSMClock() float64 {
	if s.n[0] == 0 {
		return math.NaN()
	}
	return s.minSM
}

// State is the sum as a PartState: a field never read is 0.
func (s StateSum) State() PartState {
	sm, mem, pow, temp := s.Means()
	return PartState{Readings: slices.Max(s.n[:]), SMClockMHz: zeroNaN(sm), MemClockMHz: zeroNaN(mem),
		PowerW: zeroNaN(pow), TempC: zeroNaN(temp), MaxTempC: s.maxT, Throttle: s.thr}
}

// ModeStates sums every GPU's readings at the start and end of the runs of
// one mode (the serial default's isolated runs included), by device, in
// order of device; nil for a nil Drift or a mode without runs.
func (d *Drift) ModeStates(mode backends.Mode) []DeviceSum {
	if d == nil {
		return nil
	}
	var out deviceSums
	for _, run := range d.Runs {
		if run.Mode != mode {
			continue
		}
		for _, st := range slices.Concat(run.Start, run.End) {
			out.of(st.Device).Add(st)
		}
	}
	return out.sorted()
}

// deviceSums collects one StateSum per device.
type deviceSums []DeviceSum

// of is device dev's sum, added when it is not there yet.
func (s *deviceSums) of(dev int) *StateSum {
	i := slices.IndexFunc(*s, func(x DeviceSum) bool { return x.Device == dev })
	if i < 0 {
		*s = append(*s, DeviceSum{Device: dev})
		i = len(*s) - 1
	}
	return &(*s)[i].Sum
}

// sorted returns the sums in order of device.
func (s deviceSums) sorted() []DeviceSum {
	slices.SortFunc(s, func(a, b DeviceSum) int { return a.Device - b.Device })
	return s
}

// DeviceSum is one GPU's StateSum.
type DeviceSum struct {
	Device int
	Sum    StateSum
}

// Check compares the parts of every GPU under th and sets GPUs, Flagged
// and Reasons, from the readings at the runs' start and end; it also sets
// During (ModeClocks), which flags nothing.
func (d *Drift) Check(th DriftThresholds) {
	d.Thresholds, d.GPUs, d.Reasons, d.Flagged = th, nil, nil, false
	d.During = d.ModeClocks()
	parts := map[int]*[2]StateSum{}
	var devs []int
	for _, run := range d.Runs {
		p := 0
		if run.Mode == backends.ModeConcurrent {
			p = 1
		}
		for _, st := range slices.Concat(run.Start, run.End) {
			a := parts[st.Device]
			if a == nil {
				a = &[2]StateSum{}
				parts[st.Device] = a
				devs = append(devs, st.Device)
			}
			a[p].Add(st)
		}
	}
	slices.Sort(devs)
	// A GPU read during both parts' runs (d.During, just summed) has its
	// clocks under load in the clock line (ClockNote): its readings around the runs compare the
	// machine, not the load, so the SM clock and the power cap, which a
	// settled load holds between runs, are left to that line.
	under := map[int][2]bool{}
	for _, mc := range d.During {
		if mc.Readings > 0 && !slices.Contains(mc.Missing, "sm_clock") {
			u := under[mc.Device]
			if mc.Mode == backends.ModeConcurrent {
				u[1] = true
			} else {
				u[0] = true
			}
			under[mc.Device] = u
		}
	}
	for _, dev := range devs {
		a := parts[dev]
		g := GPUDrift{Device: dev, Isolated: a[0].State(), Concurrent: a[1].State()}
		loadRead := under[dev] == [2]bool{true, true}
		d.GPUs = append(d.GPUs, g)
		if a[0].n == [4]int{} || a[1].n == [4]int{} {
			continue // one part was not run (or not read): nothing to compare
		}
		iso, con := g.Isolated, g.Concurrent
		clock := func(what string, i, c float64, ni, nc int, limit float64) {
			if ni == 0 || nc == 0 || i <= 0 {
				return
			}
			if pct := (c - i) / i * 100; math.Abs(pct) > limit {
				d.Reasons = append(d.Reasons, fmt.Sprintf("GPU %d %s %.0f MHz isolated vs %.0f MHz concurrent (%+.1f %%, limit %g %%)", dev, what, i, c, pct, limit))
			}
		}
		if !loadRead {
			clock("SM clock", iso.SMClockMHz, con.SMClockMHz, a[0].n[0], a[1].n[0], th.SMClockPct)
		} else {
			iso.Throttle &^= powerCap
			con.Throttle &^= powerCap
		}
		clock("memory clock", iso.MemClockMHz, con.MemClockMHz, a[0].n[1], a[1].n[1], th.MemClockPct)
		if a[0].n[3] > 0 && a[1].n[3] > 0 && math.Abs(con.TempC-iso.TempC) > th.TempC {
			d.Reasons = append(d.Reasons, fmt.Sprintf("GPU %d temperature %.0f C isolated vs %.0f C concurrent (%+.0f C, limit %g C)", dev, iso.TempC, con.TempC, con.TempC-iso.TempC, th.TempC))
		}
		if n := con.Throttle &^ iso.Throttle; n != 0 {
			d.Reasons = append(d.Reasons, fmt.Sprintf("GPU %d throttled in the concurrent runs only: %s", dev, telemetry.ThrottleNames(n)))
		}
		if n := iso.Throttle &^ con.Throttle; n != 0 {
			d.Reasons = append(d.Reasons, fmt.Sprintf("GPU %d throttled in the isolated runs only: %s", dev, telemetry.ThrottleNames(n)))
		}
	}
	d.Flagged = len(d.Reasons) > 0
}

func zeroNaN(v float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return v
}

// TimedUse is what the engines did during the timed repetitions only,
// beside the wall-clock NVML view (which also sees the gaps between runs,
// the host's set-up and the warm-up).
type TimedUse struct {
	// NVML holds, per mode, each device's NVML/GPM metrics clipped to that
	// mode's runs (the first round's, which hold the warm-up, left out
	// when later rounds exist); empty without NVML.
	NVML map[backends.Mode][]telemetry.Use `json:"nvml,omitempty"`
	// Tracks is c3lab's own view, from the spans of one concurrent
	// repetition (Result.Timeline): each stream or engine's busy time.
	Tracks []TrackUse `json:"tracks,omitempty"`
	// SMsHeld is, per device and holder (backends.MetricSMsCompute,
	// MetricSMsComm), the mean number of SMs held over that repetition,
	// where the backend reports it (the simulator does).
	SMsHeld []SMsHeld `json:"sms_held,omitempty"`
}

// TrackUse is one track's busy time in one repetition: the union of its
// spans, and that as a share of the repetition's wall time.
type TrackUse struct {
	Device int     `json:"device"`
	Track  string  `json:"track"`
	Kind   string  `json:"kind"`
	BusyNs int64   `json:"busy_ns"`
	Busy   float64 `json:"busy"`
}

// SMsHeld is the time-weighted mean of a step series of SMs held.
type SMsHeld struct {
	Device int     `json:"device"`
	Metric string  `json:"metric"`
	Mean   float64 `json:"mean"`
}

// TrackUses returns each track's busy time in the spans (one repetition),
// as a share of wall (ns); sorted by device, track.
func TrackUses(spans []backends.Span, wall int64) []TrackUse {
	type key struct {
		dev   int
		track string
	}
	byKey := map[key][]backends.Span{}
	for _, s := range spans {
		if s.End > s.Start {
			k := key{s.Device, s.Track}
			byKey[k] = append(byKey[k], s)
		}
	}
	var out []TrackUse
	for k, ss := range byKey {
		slices.SortFunc(ss, func(a, b backends.Span) int { return int(a.Start - b.Start) })
		var busy, end int64
		start := ss[0].Start
		end = start
		for _, s := range ss {
			if s.Start > end {
				busy += end - start
				start = s.Start
			}
			end = max(end, s.End)
		}
		busy += end - start
		tu := TrackUse{Device: k.dev, Track: k.track, Kind: ss[0].Kind, BusyNs: busy}
		if wall > 0 {
			tu.Busy = min(1, float64(busy)/float64(wall))
		}
		out = append(out, tu)
	}
	slices.SortFunc(out, func(a, b TrackUse) int {
		if a.Device != b.Device {
			return a.Device - b.Device
		}
		return strings.Compare(a.Track, b.Track)
	})
	return out
}

// SMsHeldOf returns the time-weighted means over [0, wall) of the step
// series of SMs held (backends.MetricSMsCompute, MetricSMsComm) in samples.
func SMsHeldOf(samples []backends.Sample, wall int64) []SMsHeld {
	if wall <= 0 {
		return nil
	}
	type key struct {
		dev    int
		metric string
	}
	series := map[key][]backends.Sample{}
	for _, s := range samples {
		if s.Metric == backends.MetricSMsCompute || s.Metric == backends.MetricSMsComm {
			k := key{s.Device, s.Metric}
			series[k] = append(series[k], s)
		}
	}
	var out []SMsHeld
	for k, ss := range series {
		slices.SortStableFunc(ss, func(a, b backends.Sample) int { return int(a.Time - b.Time) })
		var sum float64
		for i, s := range ss {
			from := max(s.Time, 0)
			to := wall
			if i+1 < len(ss) {
				to = min(ss[i+1].Time, wall)
			}
			if to > from {
				sum += s.Value * float64(to-from)
			}
		}
		out = append(out, SMsHeld{Device: k.dev, Metric: k.metric, Mean: sum / float64(wall)})
	}
	slices.SortFunc(out, func(a, b SMsHeld) int {
		if a.Device != b.Device {
			return a.Device - b.Device
		}
		return strings.Compare(a.Metric, b.Metric)
	})
	return out
}

// machineWatch wraps a backend to read the machine around every run and
// during it (Options.Machine): Measure calls watchMachine before its
// rounds and finish on the result.
type machineWatch struct {
	backends.Backend
	m   Machine
	now func() time.Time
	// every is the interval of the readings during a run (<= 0: none);
	// after waits for the next one (time.After; tests replace it).
	every time.Duration
	after func(time.Duration) <-chan time.Time
	// lastRun is how long the last run of each (mode, strategy) took.
	lastRun map[watchKey]time.Duration
	// serialDefault says the next run is one of the serial default's
	// isolated runs, which Measure makes beside the strategy's own when
	// the strategy is not the serial default (Measure sets it per run: a
	// strategy that is the serial default has its own isolated runs,
	// which are not those).
	serialDefault bool
	// seen counts the runs of each (mode, strategy): the round of a run.
	seen    map[watchKey]int
	runs    []DriftRun
	windows map[backends.Mode][][]telemetry.Window // per mode, per round
}

type watchKey struct {
	mode backends.Mode
	st   scenarios.Strategy
}

// watchMachine returns b wrapped so that every run reads the machine's
// state before and after it, and every interval during it (0:
// DefaultDuringInterval, negative: never), and the watch; without a
// machine, b and nil. after waits for a reading during a run (nil:
// time.After).
func watchMachine(b backends.Backend, m Machine, interval time.Duration, after func(time.Duration) <-chan time.Time) (backends.Backend, *machineWatch) {
	if m == nil {
		return b, nil
	}
	if interval == 0 {
		interval = DefaultDuringInterval
	}
	if after == nil {
		after = time.After
	}
	w := &machineWatch{Backend: b, m: m, now: time.Now, every: interval, after: after, lastRun: map[watchKey]time.Duration{},
		seen: map[watchKey]int{}, windows: map[backends.Mode][][]telemetry.Window{}}
	return w, w
}

// Run implements backends.Backend: the machine's state, the run with the
// state read during it from another goroutine (stopped and waited for
// before Run returns, whatever the run returns), the state again.
func (w *machineWatch) Run(ctx context.Context, ex backends.Experiment, sink backends.EventSink) (backends.RunResult, error) {
	k := watchKey{ex.Mode, ex.Strategy}
	round := w.seen[k]
	w.seen[k]++
	def := ex.Mode != backends.ModeConcurrent && w.serialDefault
	start, t0 := w.m.State(), w.now()
	devs := make([]int, len(start))
	for i, st := range start {
		devs[i] = st.Device
	}
	stop := w.sampleDuring(w.firstReading(k), devs)
	defer stop() // also when the backend panics
	rr, err := w.Backend.Run(ctx, ex, sink)
	during := stop()
	t1 := w.now()
	end := w.m.State()
	w.lastRun[k] = t1.Sub(t0)
	w.runs = append(w.runs, DriftRun{Round: round, Mode: ex.Mode, SerialDefault: def, Start: start, End: end, During: during})
	if !def {
		ws := w.windows[ex.Mode]
		for len(ws) <= round {
			ws = append(ws, nil)
		}
		ws[round] = append(ws[round], telemetry.Window{Start: t0, End: t1})
		w.windows[ex.Mode] = ws
	}
	return rr, err
}

// finish sets r.Drift and r.TimedUse from what the watch saw; a nil watch
// (no machine) leaves them nil.
func (w *machineWatch) finish(r *Result) {
	if w == nil {
		return
	}
	if len(w.runs) > 0 && len(w.runs[0].Start) > 0 {
		d := &Drift{Runs: w.runs}
		if w.every > 0 {
			d.DuringIntervalNs = w.every.Nanoseconds()
		}
		d.Check(DefaultDriftThresholds())
		r.Drift = d
	}
	tu := &TimedUse{NVML: map[backends.Mode][]telemetry.Use{}}
	for mode, rounds := range w.windows {
		if len(rounds) > 1 {
			rounds = rounds[1:] // the first round holds the warm-up
		}
		if u := w.m.Use(slices.Concat(rounds...)); len(u) > 0 {
			tu.NVML[mode] = u
		}
	}
	var wall int64
	if c3 := r.Reps[backends.ModeConcurrent]; len(c3) > 0 {
		wall = c3[len(c3)-1].Wall
	}
	tu.Tracks = TrackUses(r.Timeline, wall)
	tu.SMsHeld = SMsHeldOf(r.Samples, wall)
	if len(tu.NVML) == 0 {
		tu.NVML = nil
	}
	if tu.NVML != nil || tu.Tracks != nil || tu.SMsHeld != nil {
		r.TimedUse = tu
	}
}

// Clone returns a deep copy of d (nil for nil).
func (d *Drift) Clone() *Drift {
	if d == nil {
		return nil
	}
	c := *d
	c.Runs = slices.Clone(d.Runs)
	for i, r := range c.Runs {
		c.Runs[i].Start, c.Runs[i].End = cloneStates(r.Start), cloneStates(r.End)
		c.Runs[i].During = slices.Clone(r.During)
		for j := range c.Runs[i].During {
			c.Runs[i].During[j].Missing = slices.Clone(r.During[j].Missing)
		}
	}
	c.During = slices.Clone(d.During)
	for i := range c.During {
		c.During[i].Missing = slices.Clone(d.During[i].Missing)
	}
	c.GPUs = slices.Clone(d.GPUs)
	c.Reasons = slices.Clone(d.Reasons)
	return &c
}

func cloneStates(ss []telemetry.GPUState) []telemetry.GPUState {
	out := slices.Clone(ss)
	for i := range out {
		out[i].Missing = slices.Clone(out[i].Missing)
	}
	return out
}

// Clone returns a deep copy of u (nil for nil).
func (u *TimedUse) Clone() *TimedUse {
	if u == nil {
		return nil
	}
	c := *u
	if u.NVML != nil {
		c.NVML = make(map[backends.Mode][]telemetry.Use, len(u.NVML))
		for m, us := range u.NVML {
			c.NVML[m] = slices.Clone(us)
		}
	}
	c.Tracks = slices.Clone(u.Tracks)
	c.SMsHeld = slices.Clone(u.SMsHeld)
	return &c
}
