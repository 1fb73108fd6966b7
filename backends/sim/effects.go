package sim

import (
	"fmt"
	"math"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

var _ backends.EffectChecker = (*Backend)(nil)

// effectTolerance is the relative change of a time below which the model
// counts two strategies as the same (float rounding, not an effect).
const effectTolerance = 1e-4

// NoEffect implements backends.EffectChecker by the model. It simulates sc
// under both strategies in the three modes the profiler measures (the
// isolated ones under each strategy's Isolated part). When no time moves it
// says the change cannot change the run, and why; when only the
// collective's times stay (a knob of the collective that its bottleneck
// makes moot, while the compute op feels a different load) it says the
// change cannot speed up the collective, and why. A scenario or strategy
// the simulator refuses gets "" (the measurement will say what is wrong).
func (b *Backend) NoEffect(sc scenarios.Scenario, from, to scenarios.Strategy) string {
	from, to = from.Normalize(), to.Normalize()
	if from == to {
		return ""
	}
	for _, st := range []scenarios.Strategy{from, to} {
		if err := scenarios.Validate(withStrategy(sc, st), b.p.Limits()); err != nil {
			return ""
		}
	}
	sameAll, sameComm := true, true
	var c3, compFrom, compTo int64
	for _, mode := range []backends.Mode{backends.ModeCompute, backends.ModeComm, backends.ModeConcurrent} {
		f, t := from, to
		if mode != backends.ModeConcurrent {
			f, t = from.Isolated(), to.Isolated()
		}
		a, err := b.Simulate(backends.Experiment{Scenario: sc, Strategy: f, Mode: mode, Reps: 1})
		if err != nil {
			return ""
		}
		c, err := b.Simulate(backends.Experiment{Scenario: sc, Strategy: t, Mode: mode, Reps: 1})
		if err != nil {
			return ""
		}
		sameComm = sameComm && sameTime(a.Rep.Comm, c.Rep.Comm)
		sameAll = sameAll && sameComm && sameTime(a.Rep.Wall, c.Rep.Wall) && sameTime(a.Rep.Compute, c.Rep.Compute)
		c3, compFrom, compTo = c.Rep.Wall, a.Rep.Compute, c.Rep.Compute
	}
	why := b.commMoot(sc, from, to)
	switch {
	case sameAll && why != "":
		return why + ": this change cannot change the run (the simulator's model)"
	case sameAll:
		return fmt.Sprintf("in the simulator's model %s and %s give this scenario the same times (T_c3 %s either way)", from, to, fmtNs(c3))
	case sameComm && why != "":
		move := fmt.Sprintf("%+.1f%%", 100*(float64(compTo)/float64(max(compFrom, 1))-1))
		if d := math.Abs(float64(compTo-compFrom)) / float64(max(compFrom, 1)); d < 0.0005 {
			move = "by less than 0.1%" // never a "-0.0%"
		}
		return fmt.Sprintf("%s: this change cannot speed up the %s; the compute op's time next to it moves %s, only through the HBM traffic the two share (the simulator's model)",
			why, sc.Comm.Collective, move)
	}
	return ""
}

// sameTime reports whether two times (ns) differ by no more than rounding.
func sameTime(a, b int64) bool {
	d := math.Abs(float64(a - b))
	return d <= 1 || d <= effectTolerance*math.Max(float64(a), float64(b))
}

// commMoot says, in the model's terms, why a change of the collective's
// copy engines or CTA cap cannot change how fast it moves its data, or ""
// when the model has no such reason.
func (b *Backend) commMoot(sc scenarios.Scenario, from, to scenarios.Strategy) string {
	p := b.p
	coll := sc.Comm.Collective
	if to.CommEngine == scenarios.EngineDMA && from.CommEngine == scenarios.EngineDMA && from.CopyEngines != to.CopyEngines && to.CommSMs == 0 && from.CommSMs == 0 {
		peers := max(sc.GPUs-1, 1)
		phase := sc.Comm.LinkBytes(sc.GPUs)
		if coll == scenarios.AllReduce {
			phase /= 2 // a reduce-scatter, then an all-gather
		}
		transfer := phase / float64(peers)
		inUse := func(st scenarios.Strategy) int {
			n := p.CopyEngines
			if st.CopyEngines > 0 {
				n = st.CopyEngines
			}
			chunks := 1
			switch {
			case st.ChunkBytes > 0:
				chunks = int(math.Ceil(transfer / float64(st.ChunkBytes)))
			case transfer >= copySplitMinBytes:
				chunks = ceilDiv(n, peers)
			}
			return min(n, peers*chunks)
		}
		a, c := inUse(from), inUse(to)
		if a == c && to.ChunkBytes == 0 && transfer < copySplitMinBytes {
			ride := "they ride"
			if peers == 1 {
				ride = "it rides"
			}
			return fmt.Sprintf("each rank sends %s of %s, under the %d MiB from which c3lab splits a transfer over engines, so %s %s whatever the count",
				plural(peers, "transfer"), fmtMiB(transfer), copySplitMinBytes>>20, ride, plural(a, "engine"))
		}
		link := p.LinkBandwidth * p.LinkEfficiencyCE
		if few := min(a, c); float64(few)*p.CopyEngineBandwidth >= link {
			who := "one copy engine moves"
			if few > 1 {
				who = fmt.Sprintf("%d copy engines move", few)
			}
			return fmt.Sprintf("%s %.0f GB/s, more than the %.0f GB/s of copies NVLink carries (%.0f GB/s at %.0f%%)",
				who, float64(few)*p.CopyEngineBandwidth/1e9, link/1e9, p.LinkBandwidth/1e9, 100*p.LinkEfficiencyCE)
		}
	}
	if to.CommEngine == scenarios.EngineSM && from.CommEngine == scenarios.EngineSM && from.CommCTAs != to.CommCTAs {
		def := p.CommCTAs[coll]
		eff := func(n int) int {
			if n > 0 {
				return n
			}
			return def
		}
		if eff(from.CommCTAs) == eff(to.CommCTAs) {
			return fmt.Sprintf("NCCL already runs %s %s on %d CTAs, so a cap of %d leaves it as it is", article(coll), coll, def, max(from.CommCTAs, to.CommCTAs))
		}
	}
	return ""
}

// article is "an" before a collective whose name starts with a vowel.
func article(c scenarios.Collective) string {
	if c == scenarios.ReduceScatter {
		return "a"
	}
	return "an"
}

// plural is "1 transfer" or "3 transfers".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// fmtMiB formats bytes in MiB with one decimal.
func fmtMiB(b float64) string { return fmt.Sprintf("%.1f MiB", b/(1<<20)) }

// fmtNs formats nanoseconds in µs or ms with three significant digits.
func fmtNs(ns int64) string {
	if ns >= 1e6 {
		return fmt.Sprintf("%.3g ms", float64(ns)/1e6)
	}
	return fmt.Sprintf("%.3g µs", float64(ns)/1e3)
}
