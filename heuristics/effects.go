package heuristics

import (
	"fmt"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// KnobEffect returns, in one line, why changing the strategy from `from`
// to `to` cannot help scenario sc on any backend with capabilities caps,
// or "" when it may. It claims only what holds on every GPU: a knob that
// does not apply to how the collective runs (a CTA cap on copy engines,
// a stream priority where no kernel competes for an SM), never what only
// a measurement could show; a backend with a model says more
// (backends.EffectChecker).
func KnobEffect(sc scenarios.Scenario, from, to scenarios.Strategy, caps backends.Capabilities) string {
	from, to = from.Normalize(), to.Normalize()
	coll := sc.Comm.Collective
	dma := to.CommEngine == scenarios.EngineDMA
	pure := coll.IsPureCopy()
	switch {
	case to.CommCTAs != from.CommCTAs && to.CommCTAs > 0 && dma && coll.IsHostCopy():
		return fmt.Sprintf("a CTA cap cannot change a dma %s: the copy engines move it, and the cap applies only to c3lab's copy kernel (comm_engine sm)", coll)
	case to.CommCTAs != from.CommCTAs && to.CommCTAs > 0 && dma && pure:
		return fmt.Sprintf("a CTA cap cannot change a dma %s: it moves its data on copy engines and launches no NCCL CTAs", coll)
	case to.CommCTAs != from.CommCTAs && to.CommCTAs > 0 && dma:
		return fmt.Sprintf("a CTA cap cannot change a dma %s: its copies run on copy engines, launching no NCCL CTAs, and c3lab's add kernel sizes its own grid", coll)
	case to.CommPriority != from.CommPriority && to.CommPriority != 0 && dma && pure:
		return fmt.Sprintf("a stream priority cannot change a dma %s: it runs only on copy engines, with no kernel for the priority to put ahead of the compute op's", coll)
	case to.CommPriority != from.CommPriority && to.CommPriority != 0 && to.CommSMs > 0:
		compute := fmt.Sprintf("its %d", to.ComputeSMs)
		if to.ComputeSMs == 0 {
			compute = fmt.Sprintf("the other %d", caps.Limits.SMs-to.CommSMs)
		}
		return fmt.Sprintf("a stream priority cannot matter here: the collective holds its own %d SMs and the compute op %s, so no SM is shared for the priority to arbitrate", to.CommSMs, compute)
	case to.CommSMs != from.CommSMs && to.CommSMs > 0 && dma && pure:
		return fmt.Sprintf("a dma %s runs no kernel, so the %d-SM comm partition stays idle: it only takes %d SMs from the compute op", coll, to.CommSMs, to.CommSMs)
	}
	return ""
}
