package tui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/heuristics"
	"github.com/c3lab/c3lab/scenarios"
)

// knob names a strategy change a key asks for: the key file's action of
// one of the knob table's keys (scenarios.KnobKey).
type knob string

// The knobs a key of c3lab's knob table turns.
const (
	knobLaunch   knob = "launch"
	knobPriority knob = "priority"
	knobSMsDown  knob = "sms_down"
	knobSMsUp    knob = "sms_up"
	knobCTAs     knob = "ctas"
	knobDMA      knob = "dma"
	knobCEs      knob = "copy_engines"
	knobChunks   knob = "decompose"
)

// decomposeSteps is the cycle of the decompose key: the scenario's own
// decomposition, 2, 4 and 8 chunks, then every pair whole.
func decomposeSteps() []int { return []int{0, 2, 4, 8, 1} }

// ctaSteps is the cycle of the comm CTA cap key (0 is the library default).
func ctaSteps() [4]int { return [4]int{0, 8, 16, 32} }

// knobKey is one key of a knob table, with its knob.
type knobKey struct {
	knob scenarios.Knob
	key  scenarios.KnobKey
}

// knobKeys lists every key of a knob table, in table order: the lab's
// knob keys and the help's knob rows.
func knobKeys(ks scenarios.Knobs) []knobKey {
	var out []knobKey
	for _, k := range ks {
		for _, kk := range k.Keys {
			out = append(out, knobKey{k, kk})
		}
	}
	return out
}

// usable reports whether a backend of capabilities c can turn the key's
// knob on, and the device leaves it something to turn.
func (k knobKey) usable(c backends.Capabilities) bool {
	return c.Has(k.key.Needs) && (k.key.Usable == nil || k.key.Usable(c.Limits))
}

// binding is the key's binding in km, or its default key when km has no
// binding for its action (a knob added after the key map).
func (k knobKey) binding(km KeyMap) key.Binding {
	if b, ok := km.bindingsByAction()[k.key.Action]; ok {
		return *b
	}
	return key.NewBinding(key.WithKeys(k.key.Key), key.WithHelp(k.key.Key, k.key.Action))
}

// keyKnob maps a key press to the knob key of table ks it matches in the
// key map km.
func keyKnob(ks scenarios.Knobs, km KeyMap, msg tea.KeyPressMsg) (knob, bool) {
	for _, kk := range knobKeys(ks) {
		if key.Matches(msg, kk.binding(km)) {
			return knob(kk.key.Action), true
		}
	}
	return "", false
}

// turning is what a turner needs: the strategy, the scenario on screen
// and its collective, the backend (its capabilities, its name and its
// device's) and lacks, the error saying the backend cannot do what the key
// needs (nil when it can).
type turning struct {
	st           scenarios.Strategy
	sc           scenarios.Scenario
	coll         scenarios.Collective
	c            backends.Capabilities
	backend, dev string
	lacks        error
}

// turners holds what each knob key of the lab does to a strategy. A key
// of the table without one can only say that the backend lacks its knob.
func turners() map[knob]func(t turning) (scenarios.Strategy, string, error) {
	return map[knob]func(t turning) (scenarios.Strategy, string, error){
		knobLaunch: func(t turning) (scenarios.Strategy, string, error) {
			st := t.st
			if st.Launch == scenarios.CommFirst {
				st.Launch = scenarios.ComputeFirst
			} else {
				st.Launch = scenarios.CommFirst
			}
			return st, "launch order: " + string(st.Launch), nil
		},
		knobPriority: func(t turning) (scenarios.Strategy, string, error) {
			st, lim := t.st, t.c.Limits
			if t.lacks != nil {
				return st, "", t.lacks
			}
			if lim.HighestPriority >= 0 {
				return st, "", fmt.Errorf("p: %s has a single stream priority", t.dev)
			}
			if st.CommPriority != 0 {
				st.CommPriority = 0
				return st, "comm priority: 0 (same as compute)", nil
			}
			st.CommPriority = lim.HighestPriority
			return st, fmt.Sprintf("comm priority: %d (highest)", st.CommPriority), nil
		},
		knobSMsDown: func(t turning) (scenarios.Strategy, string, error) { return turnSMs(t, -1) },
		knobSMsUp:   func(t turning) (scenarios.Strategy, string, error) { return turnSMs(t, +1) },
		knobCTAs: func(t turning) (scenarios.Strategy, string, error) {
			st := t.st
			if t.lacks != nil {
				return st, "", t.lacks
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
		},
		// d cycles the comm engine: sm -> dma -> sm, and for a reduction
		// on a backend that loads peer blocks sm -> dma -> p2p-load -> sm
		// (a step the backend lacks is skipped).
		knobDMA: func(t turning) (scenarios.Strategy, string, error) {
			st := t.st
			p2p := t.coll.P2PLoadCovers() && t.c.Has(scenarios.CapPeerLoad) && !t.sc.IsGraph()
			const toP2P = "comm engine: p2p-load (a kernel loads the peers' blocks over NVLink, no staging copy)"
			switch st.CommEngine {
			case scenarios.EngineDMA:
				st.CopyEngines, st.ChunkBytes = 0, 0
				if p2p {
					st.CommEngine = scenarios.EngineP2PLoad
					return st, toP2P, nil
				}
				st.CommEngine = scenarios.EngineSM
				return st, "comm engine: sm (kernels on the SMs)", nil
			case scenarios.EngineP2PLoad:
				st.CommEngine = scenarios.EngineSM
				return st, "comm engine: sm (kernels on the SMs)", nil
			}
			dmaOK := t.lacks == nil && (t.coll.IsPureCopy() || t.c.DMAReductions)
			switch {
			case !dmaOK && p2p:
				st.CommEngine = scenarios.EngineP2PLoad
				return st, toP2P, nil
			case t.lacks != nil:
				return st, "", t.lacks
			case !dmaOK:
				return st, "", fmt.Errorf("d: a %s needs a reduction, and the %s backend has no DMA reductions", t.coll, t.backend)
			}
			st.CommEngine = scenarios.EngineDMA
			return st, "comm engine: dma (copy engines, no SMs)", nil
		},
		knobChunks: turnDecompose,
		knobCEs: func(t turning) (scenarios.Strategy, string, error) {
			st := t.st
			if t.lacks != nil {
				return st, "", t.lacks
			}
			if st.CommEngine != scenarios.EngineDMA {
				return st, "", fmt.Errorf("e: copy engines apply only with DMA offload; press d first")
			}
			n := t.c.Limits.CopyEngines
			if n <= 1 {
				return st, "", fmt.Errorf("e: %s has %d copy engine(s), nothing to choose", t.dev, n)
			}
			st.CopyEngines++
			if st.CopyEngines >= n {
				st.CopyEngines = 0
				return st, fmt.Sprintf("copy engines: all %d", n), nil
			}
			return st, fmt.Sprintf("copy engines: %d of %d", st.CopyEngines, n), nil
		},
	}
}

// turnSMs moves the comm SM partition one step down (dir -1) or up (+1).
func turnSMs(t turning, dir int) (scenarios.Strategy, string, error) {
	st, lim := t.st, t.c.Limits
	if t.lacks != nil {
		return st, "", t.lacks
	}
	step := max(lim.SMStep, 1)
	hi := lim.SMs - step
	if hi < step {
		return st, "", fmt.Errorf("[ ]: %s has too few SMs (%d) to partition", t.dev, lim.SMs)
	}
	if dir < 0 {
		if st.CommSMs <= 0 {
			return st, "", fmt.Errorf("[: comm SMs already 0 (no partition)")
		}
		st.CommSMs = max(st.CommSMs-step, 0)
	} else {
		if st.CommSMs >= hi {
			return st, "", fmt.Errorf("]: comm SMs already %d, the most %s allows (%d SMs, compute keeps %d)", st.CommSMs, t.dev, lim.SMs, step)
		}
		st.CommSMs = min(st.CommSMs+step, hi)
	}
	if st.CommSMs == 0 {
		return st, "comm SMs: no partition", nil
	}
	return st, fmt.Sprintf("comm SMs: %d of %d (compute gets the other %d)", st.CommSMs, lim.SMs, lim.SMs-st.CommSMs), nil
}

// turnDecompose moves the decompose knob to the next step of its cycle
// (decomposeSteps) that the scenario's pairs split into, skipping a chunk
// count that does not divide their shapes. It turns only for a scenario
// written as streams with a decomposable pair (a collective feeding a
// GEMM, or a GEMM feeding a collective).
func turnDecompose(t turning) (scenarios.Strategy, string, error) {
	st := t.st
	if t.lacks != nil {
		return st, "", t.lacks
	}
	if !t.sc.IsGraph() {
		return st, "", fmt.Errorf("D: decomposition splits a dependent pair of a scenario written as streams; %s is one compute op next to one collective", t.sc.Name)
	}
	whole := st
	whole.Decompose = 1
	if _, err := t.sc.Graph(whole); err != nil {
		return st, "", fmt.Errorf("D: %s does not expand into a graph: %s", t.sc.Name, errLine(err))
	}
	two := st
	two.Decompose = 2
	if g, err := t.sc.Graph(two); err == nil && !chunked(g) {
		return st, "", fmt.Errorf("D: %s has no pair to decompose: a GEMM that waits for one whole collective (after: [op]) or a collective that waits for one whole GEMM", t.sc.Name)
	}
	steps := decomposeSteps()
	at := slices.Index(steps, st.Decompose)
	if at < 0 {
		at = len(steps) - 1 // a count off the cycle: start it again
	}
	kn, _ := scenarios.StrategyKnobs().Find("decompose")
	var skipped []string
	for i := 1; i <= len(steps); i++ {
		n := steps[(at+i)%len(steps)]
		try := st
		try.Decompose = n
		if _, err := t.sc.Graph(try); err != nil {
			skipped = append(skipped, strconv.Itoa(n))
			continue
		}
		note := "decompose: " + kn.Setting(try, t.c.Limits)
		if len(skipped) > 0 {
			note += " (" + strings.Join(skipped, ", ") + " chunks do not divide the pairs' shapes)"
		}
		return try, note, nil
	}
	return st, "", fmt.Errorf("D: no chunk count of %v divides the pairs of %s", steps[1:4], t.sc.Name)
}

// chunked reports whether some op of g is cut into chunks.
func chunked(g *scenarios.Graph) bool {
	for _, o := range g.Ops {
		if o.Chunks > 1 {
			return true
		}
	}
	return false
}

// turn applies one knob key of c3lab's knob table to st for collective
// coll on a backend with caps c (named backend, for messages).
func turn(k knob, st scenarios.Strategy, coll scenarios.Collective, c backends.Capabilities, backend string) (scenarios.Strategy, string, error) {
	return turnIn(scenarios.StrategyKnobs(), k, st, pairOf(coll), c, backend)
}

// turnWith applies one knob key of table ks to st for collective coll.
func turnWith(ks scenarios.Knobs, k knob, st scenarios.Strategy, coll scenarios.Collective, c backends.Capabilities, backend string) (scenarios.Strategy, string, error) {
	return turnIn(ks, k, st, pairOf(coll), c, backend)
}

// pairOf is a one-pair scenario with collective coll, for turning knobs
// that look only at the collective.
func pairOf(coll scenarios.Collective) scenarios.Scenario {
	return scenarios.Scenario{Comm: scenarios.CommOp{Collective: coll}}
}

// turnIn applies one knob key of table ks to st for scenario sc. It
// returns the new strategy and a one-line note saying what changed, or an
// error saying why the knob cannot move (the backend cannot do what the
// key needs, the scenario has nothing for it, or the knob is at a limit);
// st is then returned unchanged.
func turnIn(ks scenarios.Knobs, k knob, st scenarios.Strategy, sc scenarios.Scenario, c backends.Capabilities, backend string) (scenarios.Strategy, string, error) {
	coll := sc.Comm.Collective
	st = st.Normalize()
	dev := c.Limits.Device
	if dev == "" {
		dev = "this device"
	}
	for _, kk := range knobKeys(ks) {
		if knob(kk.key.Action) != k {
			continue
		}
		t := turning{st: st, sc: sc, coll: coll, c: c, backend: backend, dev: dev}
		if !c.Has(kk.key.Needs) {
			t.lacks = fmt.Errorf("%s: the %s backend cannot %s", kk.key.Key, backend, kk.key.Needs)
		}
		f, ok := turners()[k]
		switch {
		case ok:
			return f(t)
		case t.lacks != nil:
			return st, "", t.lacks
		}
		return st, "", fmt.Errorf("%s: the lab cannot turn %s yet; set it in the scenario file or with --%s", kk.key.Key, kk.knob.Key, kk.knob.Flag)
	}
	return st, "", fmt.Errorf("unknown knob %q", k)
}

// fitStrategy adapts st to a newly picked scenario: DMA is switched off for
// a reducing collective the backend cannot run on copy engines. The note
// says what changed ("" when nothing did).
func fitStrategy(st scenarios.Strategy, coll scenarios.Collective, c backends.Capabilities, backend string) (scenarios.Strategy, string) {
	st = st.Normalize()
	if st.CommEngine == scenarios.EngineNCCLCE && (!coll.NCCLCopyEngineCovers() || !c.Has(scenarios.CapNCCLCopyEngine)) {
		st.CommEngine = scenarios.EngineSM
		return st, fmt.Sprintf("nccl-ce off: NCCL's copy-engine path covers all-gather and all-to-all on backends that have it, not a %s on %s", coll, backend)
	}
	if st.CommEngine == scenarios.EngineP2PLoad && (!coll.P2PLoadCovers() || !c.Has(scenarios.CapPeerLoad)) {
		st.CommEngine = scenarios.EngineSM
		return st, fmt.Sprintf("p2p-load off: it runs reduce-scatter and all-reduce on backends whose GPUs have peer access, not a %s on %s", coll, backend)
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
