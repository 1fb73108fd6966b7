package profiler

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler/telemetry"
)

// DefaultDuringInterval is how often Measure reads the machine while a run
// runs (Options.DuringInterval). The readings around a run cannot see what
// a GPU does under load: on an H200 a large GEMM runs at its 700 W power
// limit at 1560-1680 MHz (sw-power-cap), and within milliseconds after the
// run the GPU is back at 1980 MHz, which is all the readings at a run's
// start and end then see (backends/cuda/NOTES.md, "A large GEMM on the
// whole H200 is held by its power limit").
const DefaultDuringInterval = 2 * time.Millisecond

// DuringState is one GPU's state read every DuringInterval while one run
// ran, summed up over the readings of the GPU under load: their number,
// the means over those that have a field (Missing names a field none of
// them had), the lowest SM clock, the hottest reading, and every clock
// event (throttle) reason seen but idle. A reading with NVML's idle reason
// (the GPU idle: the backend's set-up, the gaps between repetitions) says
// nothing of the clock under load and is only counted, in Idle. Readings 0
// and Idle 0: the run ended before the first reading.
type DuringState struct {
	Device   int `json:"device"`
	Readings int `json:"readings"`
	// Idle is the number of readings of the GPU idle, left out of the rest.
	Idle          int     `json:"idle,omitempty"`
	SMClockMHz    float64 `json:"sm_clock_mhz"`
	MinSMClockMHz float64 `json:"min_sm_clock_mhz"`
	MemClockMHz   float64 `json:"mem_clock_mhz"`
	PowerW        float64 `json:"power_w"`
	TempC         float64 `json:"temp_c"`
	MaxTempC      float64 `json:"max_temp_c"`
	Throttle      uint64  `json:"throttle"`
	// Missing names the fields (as telemetry.GPUState.Missing does) that
	// no reading had; empty when there were no readings.
	Missing []string `json:"missing,omitempty"`
}

// ModeClock is one GPU's state during the runs of one mode (Drift.During):
// every run's DuringState of that device summed up, weighted by readings.
// The serial default's isolated runs are kept apart (SerialDefault): they
// run another strategy than the figures' own isolated runs.
type ModeClock struct {
	Mode          backends.Mode `json:"mode"`
	SerialDefault bool          `json:"serial_default,omitempty"`
	// Runs is the number of runs of that mode with a during record of
	// the device (some may have 0 readings: shorter than the interval).
	Runs int `json:"runs"`
	DuringState
}

// AddDuring adds the readings a DuringState sums up, as if each had been
// added: a field is weighted by the run's readings, a missing field is
// left out. The lowest SM clock and the hottest reading carry over.
func (s *StateSum) AddDuring(d DuringState) {
	if d.Readings <= 0 {
		return
	}
	n := float64(d.Readings)
	has := func(f string) bool { return !slices.Contains(d.Missing, f) }
	s.readings += d.Readings
	if has("sm_clock") {
		s.addMinSM(d.MinSMClockMHz)
		s.sm += d.SMClockMHz * n
		s.n[0] += d.Readings
	}
	if has("mem_clock") {
		s.mem += d.MemClockMHz * n
		s.n[1] += d.Readings
	}
	if has("power") {
		s.pow += d.PowerW * n
		s.n[2] += d.Readings
	}
	if has("temp") {
		s.temp += d.TempC * n
		s.maxT = math.Max(s.maxT, d.MaxTempC)
		s.n[3] += d.Readings
	}
	s.thr |= d.Throttle &^ ignoredThrottle
}

// During is the sum as device dev's DuringState: a field never read is 0
// and named in Missing (when there were readings at all).
func (s StateSum) During(dev int) DuringState {
	sm, mem, pow, temp := s.Means()
	d := DuringState{Device: dev, Readings: s.readings, SMClockMHz: zeroNaN(sm), MinSMClockMHz: zeroNaN(s.MinSMClock()),
		MemClockMHz: zeroNaN(mem), PowerW: zeroNaN(pow), TempC: zeroNaN(temp), MaxTempC: s.maxT, Throttle: s.thr}
	if s.readings > 0 {
		for i, f := range [...]string{"sm_clock", "mem_clock", "power", "temp"} {
			if s.n[i] == 0 {
				d.Missing = append(d.Missing, f)
			}
		}
	}
	return d
}

// modeOrder orders ModeClocks: compute, comm, concurrent, then the serial
// default's.
func modeOrder(m backends.Mode, def bool) int {
	i := slices.Index([]backends.Mode{backends.ModeCompute, backends.ModeComm, backends.ModeConcurrent}, m)
	if i < 0 {
		i = 3
	}
	if def {
		i += 4
	}
	return i
}

// ModeClocks sums every GPU's readings during the runs (DriftRun.During)
// by device and mode, the serial default's isolated runs apart; in order
// of device, then compute, comm, concurrent, the serial default's compute
// and comm. nil when no run has a during record (results made before
// readings were taken during the runs, or with Options.DuringInterval
// negative). Check stores it in During.
func (d *Drift) ModeClocks() []ModeClock {
	if d == nil {
		return nil
	}
	type key struct {
		dev  int
		mode backends.Mode
		def  bool
	}
	sums := map[key]*StateSum{}
	runs, idle := map[key]int{}, map[key]int{}
	var keys []key
	for _, run := range d.Runs {
		for _, ds := range run.During {
			k := key{ds.Device, run.Mode, run.SerialDefault}
			s := sums[k]
			if s == nil {
				s = &StateSum{}
				sums[k] = s
				keys = append(keys, k)
			}
			s.AddDuring(ds)
			runs[k]++
			idle[k] += ds.Idle
		}
	}
	slices.SortFunc(keys, func(a, b key) int {
		if a.dev != b.dev {
			return a.dev - b.dev
		}
		return modeOrder(a.mode, a.def) - modeOrder(b.mode, b.def)
	})
	var out []ModeClock
	for _, k := range keys {
		mc := ModeClock{Mode: k.mode, SerialDefault: k.def, Runs: runs[k], DuringState: sums[k].During(k.dev)}
		mc.Idle = idle[k]
		out = append(out, mc)
	}
	return out
}

// DuringStates sums every GPU's readings during the runs of one mode (the
// serial default's isolated runs included), by device, in order of
// device: ModeStates over the readings during the runs instead of those
// at their start and end. nil for a nil Drift, a mode without runs, or
// runs without readings during them.
func (d *Drift) DuringStates(mode backends.Mode) []DeviceSum {
	if d == nil {
		return nil
	}
	var out deviceSums
	for _, run := range d.Runs {
		if run.Mode != mode {
			continue
		}
		for _, ds := range run.During {
			if ds.Readings > 0 {
				out.of(ds.Device).AddDuring(ds)
			}
		}
	}
	return out.sorted()
}

// clockLine is what one GPU's clocks during the runs say: its modes (mode
// names with the mean SM clock and the reasons), whether a cap was hit,
// and whether the modes' clocks differ beyond the threshold.
type clockLine struct {
	dev           int
	modes         []string
	capped, apart bool
}

// clockLines are the GPUs with something to say about their clocks during
// the runs (clockLine), in order of device.
func (d *Drift) clockLines() []clockLine {
	if d == nil {
		return nil
	}
	clocks := d.During
	if clocks == nil {
		clocks = d.ModeClocks()
	}
	th := d.Thresholds.SMClockPct
	if th <= 0 {
		th = DefaultDriftThresholds().SMClockPct
	}
	var devs []int
	for _, c := range clocks {
		if !slices.Contains(devs, c.Device) {
			devs = append(devs, c.Device)
		}
	}
	slices.Sort(devs)
	names := []struct {
		mode backends.Mode
		name string
	}{{backends.ModeCompute, "compute alone"}, {backends.ModeComm, "comm alone"}, {backends.ModeConcurrent, "concurrent"}}
	var out []clockLine
	for _, dev := range devs {
		l := clockLine{dev: dev}
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, n := range names {
			// The figures' own runs of that mode; the serial default's
			// when the strategy's isolated runs are the serial default.
			c, ok := pickClock(clocks, dev, n.mode, false)
			if !ok {
				c, ok = pickClock(clocks, dev, n.mode, true)
			}
			if !ok {
				continue
			}
			text := n.name + " " + fmt.Sprintf("%.0f MHz", c.SMClockMHz)
			if thr := c.Throttle &^ ignoredThrottle; thr != 0 {
				l.capped = true
				text += " (" + telemetry.ThrottleNames(thr) + ")"
			}
			l.modes = append(l.modes, text)
			lo, hi = math.Min(lo, c.SMClockMHz), math.Max(hi, c.SMClockMHz)
		}
		l.apart = len(l.modes) > 1 && lo > 0 && (hi-lo)/lo*100 > th
		if l.capped || l.apart {
			out = append(out, l)
		}
	}
	return out
}

// pickClock is device dev's ModeClock of mode (the serial default's when
// def) with an SM clock read during the runs.
func pickClock(clocks []ModeClock, dev int, mode backends.Mode, def bool) (ModeClock, bool) {
	for _, c := range clocks {
		if c.Device == dev && c.Mode == mode && c.SerialDefault == def && c.Readings > 0 && !slices.Contains(c.Missing, "sm_clock") {
			return c, true
		}
	}
	return ModeClock{}, false
}

// ClockNote says in one line ("" when there is nothing to say) what the
// GPUs' clocks were during the runs, when a GPU hit a power, thermal or
// other clock cap (a clock event reason other than idle) or its mean SM
// clock differed between the modes by more than Thresholds.SMClockPct of
// the lowest: "GPU 0 clock during the runs: compute alone 1560 MHz
// (sw-power-cap), comm alone 1975 MHz, concurrent 1605 MHz; part of the
// C3 difference is the clock". It is no drift (Warning): the machine did
// not change between the runs, the load set the clock within them. The
// figures' own isolated runs stand for "alone"; the serial default's only
// where the strategy's isolated runs are the serial default's.
func (d *Drift) ClockNote() string {
	lines := d.clockLines()
	if len(lines) == 0 {
		return ""
	}
	var parts []string
	apart := false
	for _, l := range lines {
		parts = append(parts, fmt.Sprintf("GPU %d clock during the runs: %s", l.dev, strings.Join(l.modes, ", ")))
		apart = apart || l.apart
	}
	tail := "the figures hold at that capped clock"
	if apart {
		tail = "part of the C3 difference is the clock"
	}
	return strings.Join(parts, "; ") + "; " + tail
}

// ClockCapped reports whether a GPU hit a clock cap (a clock event reason
// other than idle) during the runs that ClockNote names.
func (d *Drift) ClockCapped() bool {
	for _, l := range d.clockLines() {
		if l.capped {
			return true
		}
	}
	return false
}

// sampleDuring starts reading the machine from its own goroutine while a
// run runs: the first reading after first, then every w.every from the
// start of the last (but never sooner than the last reading took, so that
// it reads at most half the time). The returned stop ends the goroutine, waits for
// it, and returns each device's readings summed up (devs first, in their
// order, then any other device read), readings 0 for a device never read;
// calling it again returns the same. Without an interval (w.every <= 0)
// nothing is started and stop returns nil.
func (w *machineWatch) sampleDuring(first time.Duration, devs []int) (stop func() []DuringState) {
	if w.every <= 0 {
		return func() []DuringState { return nil }
	}
	quit := make(chan struct{})
	out := make(chan []DuringState, 1)
	go func() {
		devs := slices.Clone(devs)
		sums := make([]StateSum, len(devs))
		idle := make([]int, len(devs))
		defer func() {
			res := make([]DuringState, len(devs))
			for i, dev := range devs {
				res[i] = sums[i].During(dev)
				res[i].Idle = idle[i]
			}
			out <- res
		}()
		wait := first
		for {
			select {
			case <-quit:
				return
			case <-w.after(wait):
			}
			select {
			case <-quit: // the run ended while this reading was due
				return
			default:
			}
			t0 := time.Now()
			for _, st := range w.m.State() {
				i := slices.Index(devs, st.Device)
				if i < 0 {
					devs, sums, idle = append(devs, st.Device), append(sums, StateSum{}), append(idle, 0)
					i = len(devs) - 1
				}
				if st.Throttle&ignoredThrottle != 0 && !slices.Contains(st.Missing, "throttle") {
					idle[i]++
					continue
				}
				sums[i].Add(st)
			}
			// The next reading an interval after this one began, but
			// never sooner than this one took: on many GPUs a reading
			// may take a while, and the sampler must not keep a core of
			// the host busy beside the backend's launches.
			took := time.Since(t0)
			wait = max(w.every-took, took)
		}
	}()
	var res []DuringState
	stopped := false
	return func() []DuringState {
		if !stopped {
			stopped = true
			close(quit)
			res = <-out
		}
		return res
	}
}

// firstReading is how long after a run's start the first reading during
// it is taken: the interval, or half the last run of the same kind when
// that was shorter than two intervals, so that a run shorter than the
// interval is read once in its middle.
func (w *machineWatch) firstReading(k watchKey) time.Duration {
	if d, ok := w.lastRun[k]; ok && d > 0 && d < 2*w.every {
		return d / 2
	}
	return w.every
}
