package tui

import (
	"fmt"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/heuristics"
	"github.com/c3lab/c3lab/scenarios"
)

// knob names a strategy change a key asks for.
type knob int

// The knobs a key can turn.
const (
	knobLaunch knob = iota
	knobPriority
	knobSMsDown
	knobSMsUp
	knobCTAs
	knobDMA
	knobCEs
)

// ctaSteps is the cycle of the comm CTA cap key (0 is the library default).
func ctaSteps() [4]int { return [4]int{0, 8, 16, 32} }

// turn applies one knob to st for collective coll on a backend with caps c.
// It returns the new strategy and a one-line note saying what changed, or
// an error saying why the knob cannot move (the backend lacks it, or it is
// at a limit); st is then returned unchanged.
func turn(k knob, st scenarios.Strategy, coll scenarios.Collective, c backends.Capabilities, backend string) (scenarios.Strategy, string, error) {
	st = st.Normalize()
	lim := c.Limits
	dev := lim.Device
	if dev == "" {
		dev = "this device"
	}
	switch k {
	case knobLaunch:
		if st.Launch == scenarios.CommFirst {
			st.Launch = scenarios.ComputeFirst
		} else {
			st.Launch = scenarios.CommFirst
		}
		return st, "launch order: " + string(st.Launch), nil

	case knobPriority:
		if !c.Priority {
			return st, "", fmt.Errorf("p: the %s backend cannot set stream priorities", backend)
		}
		if lim.HighestPriority >= 0 {
			return st, "", fmt.Errorf("p: %s has a single stream priority", dev)
		}
		if st.CommPriority != 0 {
			st.CommPriority = 0
			return st, "comm priority: 0 (same as compute)", nil
		}
		st.CommPriority = lim.HighestPriority
		return st, fmt.Sprintf("comm priority: %d (highest)", st.CommPriority), nil

	case knobSMsDown, knobSMsUp:
		if !c.SMPartition {
			return st, "", fmt.Errorf("[ ]: the %s backend cannot partition SMs", backend)
		}
		step := lim.SMStep
		if step <= 0 {
			step = 8
		}
		hi := lim.SMs - step
		if hi < step {
			return st, "", fmt.Errorf("[ ]: %s has too few SMs (%d) to partition", dev, lim.SMs)
		}
		if k == knobSMsDown {
			if st.CommSMs <= 0 {
				return st, "", fmt.Errorf("[: comm SMs already 0 (no partition)")
			}
			st.CommSMs = max(st.CommSMs-step, 0)
		} else {
			if st.CommSMs >= hi {
				return st, "", fmt.Errorf("]: comm SMs already %d, the most %s allows (%d SMs, compute keeps %d)", st.CommSMs, dev, lim.SMs, step)
			}
			st.CommSMs = min(st.CommSMs+step, hi)
		}
		if st.CommSMs == 0 {
			return st, "comm SMs: no partition", nil
		}
		return st, fmt.Sprintf("comm SMs: %d of %d (compute gets the other %d)", st.CommSMs, lim.SMs, lim.SMs-st.CommSMs), nil

	case knobCTAs:
		if !c.CommCTACap {
			return st, "", fmt.Errorf("c: the %s backend cannot cap the collective's CTAs", backend)
		}
		next := 0
		for _, v := range ctaSteps() {
			if v > st.CommCTAs {
				next = v
				break
			}
		}
		st.CommCTAs = next
		if next == 0 {
			return st, "comm CTAs: library default", nil
		}
		return st, fmt.Sprintf("comm CTAs: at most %d", next), nil

	case knobDMA:
		if st.CommEngine == scenarios.EngineDMA {
			st.CommEngine, st.CopyEngines, st.ChunkBytes = scenarios.EngineSM, 0, 0
			return st, "comm engine: sm (kernels on the SMs)", nil
		}
		if !c.DMA {
			return st, "", fmt.Errorf("d: the %s backend cannot run collectives on copy engines", backend)
		}
		if !coll.IsPureCopy() && !c.DMAReductions {
			return st, "", fmt.Errorf("d: a %s needs a reduction, and the %s backend has no DMA reductions", coll, backend)
		}
		st.CommEngine = scenarios.EngineDMA
		return st, "comm engine: dma (copy engines, no SMs)", nil

	case knobCEs:
		if !c.DMA {
			return st, "", fmt.Errorf("e: the %s backend cannot run collectives on copy engines", backend)
		}
		if st.CommEngine != scenarios.EngineDMA {
			return st, "", fmt.Errorf("e: copy engines apply only with DMA offload; press d first")
		}
		n := lim.CopyEngines
		if n <= 1 {
			return st, "", fmt.Errorf("e: %s has %d copy engine(s), nothing to choose", dev, n)
		}
		st.CopyEngines++
		if st.CopyEngines >= n {
			st.CopyEngines = 0
			return st, fmt.Sprintf("copy engines: all %d", n), nil
		}
		return st, fmt.Sprintf("copy engines: %d of %d", st.CopyEngines, n), nil
	}
	return st, "", fmt.Errorf("unknown knob %d", k)
}

// fitStrategy adapts st to a newly picked scenario: DMA is switched off for
// a reducing collective the backend cannot run on copy engines. The note
// says what changed ("" when nothing did).
func fitStrategy(st scenarios.Strategy, coll scenarios.Collective, c backends.Capabilities, backend string) (scenarios.Strategy, string) {
	st = st.Normalize()
	if st.CommEngine == scenarios.EngineNCCLCE && (!coll.NCCLCopyEngineCovers() || !c.NCCLCopyEngine) {
		st.CommEngine = scenarios.EngineSM
		return st, fmt.Sprintf("nccl-ce off: NCCL's copy-engine path covers all-gather and all-to-all on backends that have it, not a %s on %s", coll, backend)
	}
	if st.CommEngine == scenarios.EngineDMA && !coll.IsPureCopy() && !c.DMAReductions {
		st.CommEngine, st.CopyEngines, st.ChunkBytes = scenarios.EngineSM, 0, 0
		return st, fmt.Sprintf("dma off: a %s needs a reduction, and the %s backend has no DMA reductions", coll, backend)
	}
	return st, ""
}

// cannotMatter says why changing the strategy from `from` to `to` cannot
// change the active scenario on this backend: first the rules that hold on
// any GPU (heuristics.KnobEffect), then the backend's own model when it has
// one (backends.EffectChecker); "" when the change may matter.
func (m *Model) cannotMatter(from, to scenarios.Strategy) string {
	if m.backend == nil || len(m.suite) == 0 {
		return ""
	}
	sc := m.suite[m.active]
	if n := heuristics.KnobEffect(sc, from, to, m.caps); n != "" {
		return n
	}
	if ec, ok := m.backend.(backends.EffectChecker); ok {
		return ec.NoEffect(sc, from, to)
	}
	return ""
}
