package compare

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/telemetry"
)

// GPUState is one GPU's state over one side's concurrent runs: the means
// of NVML's readings during the runs, or at each run's start and end
// (Machine.During says which; NaN: never read), and every throttle reason
// seen but idle.
type GPUState struct {
	Device   int
	Readings int
	// SMClockMHz and MemClockMHz are the mean clocks, PowerW the mean
	// board power, TempC the mean temperature.
	SMClockMHz, MemClockMHz, PowerW, TempC float64
	Throttle                               uint64
}

// Machine compares the GPUs' state in the concurrent runs of the two
// sides: of one pair, or of all pairs with a record on both sides (the
// summary's). Flagged is set, with short reasons ("SM clock -2.4 %",
// "sw-power-cap in new only"), when the states differ beyond the
// thresholds: the change of T_c3 then came with a change of the machine.
type Machine struct {
	Old, New []GPUState
	Flagged  bool
	Reasons  []string
	// During says the states are the readings taken during the concurrent
	// runs (profiler.Drift.DuringStates), which both sides had; otherwise
	// they are those at each run's start and end, which cannot see a GPU
	// held at its power limit under load.
	During bool
}

// MachineSummary is the machine over the whole comparison.
type MachineSummary struct {
	// Machine is both sides' state over the concurrent runs of every pair
	// with a record on both sides, compared.
	Machine
	// Thresholds are the limits the states were compared against.
	Thresholds profiler.DriftThresholds
	// Pairs is the number of pairs with a machine record on both sides;
	// FlaggedPairs how many of them ran on a changed machine.
	Pairs, FlaggedPairs int
	// DuringPairs is how many of Pairs were compared by the readings
	// during their runs; the summary is when all were (Machine.During),
	// by the readings at the runs' start and end otherwise.
	DuringPairs int
	// Significant is the number of significant changes of T_c3 (faster
	// or slower) among Pairs; SignificantFlagged how many of them came
	// with a changed machine.
	Significant, SignificantFlagged int
	// SignificantUnrecorded is the number of significant changes of pairs
	// without a record on both sides: Significant and it add up to the
	// report's faster and slower pairs.
	SignificantUnrecorded int
	// OneSided is the number of pairs with a record on one side only.
	OneSided int
}

// sums are one side's per-GPU state sums.
type sums []profiler.DeviceSum

// concurrentSums are a result's sums over its concurrent runs, of the
// readings at each run's start and end; nil without a drift record (the
// simulator, older files) or without readings.
func concurrentSums(r profiler.Result) sums {
	return sums(r.Drift.ModeStates(backends.ModeConcurrent))
}

// duringSums are a result's sums over its concurrent runs, of the readings
// during them; nil without such readings (results made before they were
// taken, a measurement with them turned off).
func duringSums(r profiler.Result) sums {
	return sums(r.Drift.DuringStates(backends.ModeConcurrent))
}

// sideSums are one side's sums of a pair: those at the runs' start and
// end, and those during the runs.
type sideSums struct{ around, during sums }

func sidesOf(r profiler.Result) sideSums {
	return sideSums{concurrentSums(r), duringSums(r)}
}

// compareSides compares one pair's sides under th: by the readings during
// the runs when both sides have them, else by those at the runs' start
// and end; nil (and oneSided when one side has a record) without a
// record on both sides.
func compareSides(o, n sideSums, th profiler.DriftThresholds) (m *Machine, oneSided bool) {
	switch {
	case len(o.during) > 0 && len(n.during) > 0:
		c := compareMachine(o.during, n.during, th)
		c.During = true
		return &c, false
	case len(o.around) > 0 && len(n.around) > 0:
		c := compareMachine(o.around, n.around, th)
		return &c, false
	}
	return nil, len(o.around) > 0 || len(n.around) > 0 || len(o.during) > 0 || len(n.during) > 0
}

// merge adds o's readings device by device.
func (s sums) merge(o sums) sums {
	for _, d := range o {
		i := slices.IndexFunc(s, func(x profiler.DeviceSum) bool { return x.Device == d.Device })
		if i < 0 {
			s = append(s, d)
			continue
		}
		s[i].Sum.Merge(d.Sum)
	}
	slices.SortFunc(s, func(a, b profiler.DeviceSum) int { return a.Device - b.Device })
	return s
}

func (s sums) states() []GPUState {
	out := make([]GPUState, 0, len(s))
	for _, d := range s {
		g := GPUState{Device: d.Device, Readings: d.Sum.Readings(), Throttle: d.Sum.Throttle()}
		g.SMClockMHz, g.MemClockMHz, g.PowerW, g.TempC = d.Sum.Means()
		out = append(out, g)
	}
	return out
}

// compareMachine compares the old and new sums under th.
func compareMachine(old, new sums, th profiler.DriftThresholds) Machine {
	m := Machine{Old: old.states(), New: new.states()}
	var devs []int
	for _, g := range slices.Concat(m.Old, m.New) {
		if !slices.Contains(devs, g.Device) {
			devs = append(devs, g.Device)
		}
	}
	slices.Sort(devs)
	for _, dev := range devs {
		prefix := ""
		if len(devs) > 1 {
			prefix = fmt.Sprintf("GPU %d ", dev)
		}
		o, okO := stateOf(m.Old, dev)
		n, okN := stateOf(m.New, dev)
		switch {
		case !okO:
			m.Reasons = append(m.Reasons, fmt.Sprintf("GPU %d in new only", dev))
			continue
		case !okN:
			m.Reasons = append(m.Reasons, fmt.Sprintf("GPU %d in old only", dev))
			continue
		}
		for _, r := range diffStates(o, n, th) {
			m.Reasons = append(m.Reasons, prefix+r)
		}
	}
	m.Flagged = len(m.Reasons) > 0
	return m
}

func stateOf(gs []GPUState, dev int) (GPUState, bool) {
	i := slices.IndexFunc(gs, func(g GPUState) bool { return g.Device == dev })
	if i < 0 {
		return GPUState{}, false
	}
	return gs[i], true
}

// diffStates are the ways one GPU's state moved from o to n beyond th:
// a clock by more than its percentage of the old, the temperature by more
// than its degrees, a throttle reason seen on one side only. A field read
// on one side only is not compared.
func diffStates(o, n GPUState, th profiler.DriftThresholds) []string {
	var out []string
	known := func(a, b float64) bool { return !math.IsNaN(a) && !math.IsNaN(b) }
	clock := func(what string, a, b, limit float64) {
		if !known(a, b) || a <= 0 {
			return
		}
		if pct := (b - a) / a * 100; math.Abs(pct) > limit {
			out = append(out, what+" "+signed(pct, 1)+" %")
		}
	}
	clock("SM clock", o.SMClockMHz, n.SMClockMHz, th.SMClockPct)
	clock("memory clock", o.MemClockMHz, n.MemClockMHz, th.MemClockPct)
	if known(o.TempC, n.TempC) && math.Abs(n.TempC-o.TempC) > th.TempC {
		out = append(out, "temperature "+signed(n.TempC-o.TempC, 0)+" C")
	}
	if x := n.Throttle &^ o.Throttle; x != 0 {
		out = append(out, telemetry.ThrottleNames(x)+" in new only")
	}
	if x := o.Throttle &^ n.Throttle; x != 0 {
		out = append(out, telemetry.ThrottleNames(x)+" in old only")
	}
	return out
}

// summarizeMachine sums the machine up over the pairs, or nil when no
// pair has a record on both sides (then nothing about the machine is
// claimed). olds and news are the pairs' sums, empty where a side has
// none. The readings during the runs are summed when every pair with a
// record on both sides was compared by them, those at the runs' start and
// end otherwise (which every such pair has).
func summarizeMachine(ps []Pair, olds, news []sideSums, oneSided int, th profiler.DriftThresholds) *MachineSummary {
	s := &MachineSummary{Thresholds: th, OneSided: oneSided}
	for _, p := range ps {
		if p.Machine != nil {
			s.Pairs++
			if p.Machine.During {
				s.DuringPairs++
			}
		}
	}
	during := s.Pairs > 0 && s.DuringPairs == s.Pairs
	s.Pairs = 0
	var o, n sums
	for i, p := range ps {
		sig := p.Verdict == Faster || p.Verdict == Slower
		if p.Machine == nil {
			if sig {
				s.SignificantUnrecorded++
			}
			continue
		}
		s.Pairs++
		if during {
			o, n = o.merge(olds[i].during), n.merge(news[i].during)
		} else {
			o, n = o.merge(olds[i].around), n.merge(news[i].around)
		}
		if p.Machine.Flagged {
			s.FlaggedPairs++
		}
		if sig {
			s.Significant++
			if p.Machine.Flagged {
				s.SignificantFlagged++
			}
		}
	}
	if s.Pairs == 0 {
		if oneSided == 0 {
			return nil
		}
		return s
	}
	s.Machine = compareMachine(o, n, th)
	s.Machine.During = during
	return s
}

// reasonLine is the reasons in one line.
func (m Machine) reasonLine() string { return strings.Join(m.Reasons, ", ") }
