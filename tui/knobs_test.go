package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/heuristics"
	nvtel "github.com/c3lab/c3lab/profiler/telemetry"
	"github.com/c3lab/c3lab/scenarios"
	"github.com/c3lab/c3lab/scenarios/knobtest"
)

func TestTurn(t *testing.T) {
	caps := h200Caps()
	ag, rs := scenarios.AllGather, scenarios.ReduceScatter
	for _, tc := range []struct {
		name string
		k    knob
		from scenarios.Strategy
		coll scenarios.Collective
		want string // the new Strategy.String(), or the error's words
		err  bool
	}{
		{"launch on", knobLaunch, scenarios.Strategy{}, ag, "comm-first", false},
		{"launch off", knobLaunch, scenarios.Strategy{Launch: scenarios.CommFirst}, ag, "baseline", false},
		{"prio on", knobPriority, scenarios.Strategy{}, ag, "prio=-5", false},
		{"prio off", knobPriority, scenarios.Strategy{CommPriority: -5}, ag, "baseline", false},
		{"sms up", knobSMsUp, scenarios.Strategy{}, ag, "comm_sms=8", false},
		{"sms down to none", knobSMsDown, scenarios.Strategy{CommSMs: 8}, ag, "baseline", false},
		{"sms below zero", knobSMsDown, scenarios.Strategy{}, ag, "already 0", true},
		{"sms at max", knobSMsUp, scenarios.Strategy{CommSMs: 124}, ag, "the most", true},
		{"ctas 0->8", knobCTAs, scenarios.Strategy{}, ag, "ctas=8", false},
		{"ctas 16->32", knobCTAs, scenarios.Strategy{CommCTAs: 16}, ag, "ctas=32", false},
		{"ctas 32->0", knobCTAs, scenarios.Strategy{CommCTAs: 32}, ag, "baseline", false},
		{"ctas odd->next", knobCTAs, scenarios.Strategy{CommCTAs: 12}, ag, "ctas=16", false},
		{"dma on", knobDMA, scenarios.Strategy{}, ag, "dma", false},
		{"dma off clears ces", knobDMA, scenarios.Strategy{CommEngine: scenarios.EngineDMA, CopyEngines: 2}, ag, "baseline", false},
		{"dma refused for rs", knobDMA, scenarios.Strategy{}, rs, "needs a reduction", true},
		{"ces without dma", knobCEs, scenarios.Strategy{}, ag, "press d first", true},
		{"ces all->1", knobCEs, scenarios.Strategy{CommEngine: scenarios.EngineDMA}, ag, "dma ces=1", false},
		{"ces 2->all", knobCEs, scenarios.Strategy{CommEngine: scenarios.EngineDMA, CopyEngines: 2}, ag, "dma", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, note, err := turn(tc.k, tc.from, tc.coll, caps, "fake")
			if tc.err {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err %v, want one saying %q", err, tc.want)
				}
				if got != tc.from.Normalize() {
					t.Errorf("a refused knob changed the strategy to %s", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != tc.want || note == "" {
				t.Errorf("got %q (note %q), want %q", got.String(), note, tc.want)
			}
			lim := caps.Limits
			if errs := scenarios.ValidateStrategy(got, lim); len(errs) > 0 {
				t.Errorf("turned into an invalid strategy: %v", errs)
			}
		})
	}
}

func TestTurnWithoutCapabilities(t *testing.T) {
	bare := backends0Caps()
	for _, k := range []knob{knobPriority, knobSMsDown, knobSMsUp, knobCTAs, knobDMA, knobCEs} {
		if _, _, err := turn(k, scenarios.Strategy{}, scenarios.AllGather, bare, "replay"); err == nil || !strings.Contains(err.Error(), "replay") {
			t.Errorf("knob %s: err %v, want one naming the backend", k, err)
		}
	}
	if _, _, err := turn(knobLaunch, scenarios.Strategy{}, scenarios.AllGather, bare, "replay"); err != nil {
		t.Errorf("launch order needs no capability: %v", err)
	}
}

func TestFitStrategy(t *testing.T) {
	st, note := fitStrategy(scenarios.Strategy{CommEngine: scenarios.EngineDMA, CopyEngines: 2}, scenarios.AllReduce, h200Caps(), "fake")
	if st.CommEngine != scenarios.EngineSM || st.CopyEngines != 0 || note == "" {
		t.Errorf("got %s, note %q", st, note)
	}
	// NCCL's copy-engine path is for collectives: a host copy gets the SMs.
	if st, note := fitStrategy(scenarios.Strategy{CommEngine: scenarios.EngineNCCLCE}, scenarios.HostToDevice, h200Caps(), "fake"); st.CommEngine != scenarios.EngineSM || !strings.Contains(note, "nccl-ce off") {
		t.Errorf("nccl-ce onto an h2d: %s, %q", st, note)
	}
	st, note = fitStrategy(scenarios.Strategy{CommEngine: scenarios.EngineDMA}, scenarios.AllToAll, h200Caps(), "fake")
	if st.CommEngine != scenarios.EngineDMA || note != "" {
		t.Errorf("an all-to-all lost dma: %s %q", st, note)
	}
}

// d cycles the comm engine through what the backend has for the
// collective: p2p-load only for a reduction on a backend with peer loads.
func TestTurnCommEngineCycle(t *testing.T) {
	p2p := h200Caps().With(scenarios.CapPeerLoad)
	red := p2p
	red.DMAReductions = true
	rs, ag := scenarios.ReduceScatter, scenarios.AllGather
	for _, tc := range []struct {
		name string
		coll scenarios.Collective
		caps backends.Capabilities
		want []string // Strategy.String after each press, from baseline
	}{
		{"reduction, dma reductions and peer loads", rs, red, []string{"dma", "p2p-load", "baseline", "dma"}},
		{"reduction, peer loads only", scenarios.AllReduce, p2p, []string{"p2p-load", "baseline", "p2p-load"}},
		{"pure copy", ag, red, []string{"dma", "baseline", "dma"}},
		{"reduction without peer loads", rs, red.Without(scenarios.CapPeerLoad), []string{"dma", "baseline"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := scenarios.Strategy{}
			for i, want := range tc.want {
				got, note, err := turn(knobDMA, st, tc.coll, tc.caps, "fake")
				if err != nil {
					t.Fatalf("press %d: %v", i+1, err)
				}
				if got.String() != want || note == "" {
					t.Fatalf("press %d: %q (note %q), want %q", i+1, got.String(), note, want)
				}
				st = got
			}
		})
	}
	if _, _, err := turn(knobDMA, scenarios.Strategy{}, rs, h200Caps(), "fake"); err == nil || !strings.Contains(err.Error(), "needs a reduction") {
		t.Errorf("a reduction on a backend with neither: %v", err)
	}
	st, note := fitStrategy(scenarios.Strategy{CommEngine: scenarios.EngineP2PLoad}, ag, p2p, "fake")
	if st.CommEngine != scenarios.EngineSM || !strings.Contains(note, "p2p-load off") {
		t.Errorf("p2p-load onto an all-gather: %s, %q", st, note)
	}
	st, note = fitStrategy(scenarios.Strategy{CommEngine: scenarios.EngineP2PLoad}, rs, h200Caps(), "fake")
	if st.CommEngine != scenarios.EngineSM || !strings.Contains(note, "p2p-load off") {
		t.Errorf("p2p-load on a backend without it: %s, %q", st, note)
	}
	if st, note := fitStrategy(scenarios.Strategy{CommEngine: scenarios.EngineP2PLoad}, rs, p2p, "fake"); st.CommEngine != scenarios.EngineP2PLoad || note != "" {
		t.Errorf("a reduce-scatter lost p2p-load: %s %q", st, note)
	}
}

// The a key applies the heuristics' advice and measures it.
func TestAdviceKey(t *testing.T) {
	m := New(Config{Backend: newFake(), Suite: testSuite(), Start: "ag-gemm-balanced"})
	m.cancel()
	m.running = false // no measurement in flight: the key starts one
	want := heuristics.Advise(m.suite[m.active], m.caps).Strategy
	if m.strategy == want {
		t.Fatal("the fixture already runs the advised strategy")
	}
	nm, cmd := m.Update(tea.KeyPressMsg{Code: 'a', Text: "a"})
	m = nm.(Model)
	if m.strategy != want || cmd == nil || !strings.Contains(m.status.text, "applied the advice") {
		t.Errorf("after a: strategy %s (want %s), cmd %v, status %q", m.strategy, want, cmd != nil, m.status.text)
	}
}

// Live NVML batches fill the utilization panel when the result carries no
// telemetry of its own (the cuda backend), and leave it alone otherwise.
func TestLiveTelemetry(t *testing.T) {
	m := New(Config{Backend: newFake(), Suite: testSuite(), Start: "ag-gemm-balanced"})
	m.cancel()
	m.running = false
	r := fixtureResult(m.suite[0], scenarios.Strategy{})
	r.Samples = nil
	m.setResult(r)
	nm, _ := m.Update(tea.WindowSizeMsg{Width: 160, Height: 50})
	m = nm.(Model)
	for i := range 3 {
		b := nvtel.Batch{Samples: []backends.Sample{
			{Device: 0, Metric: backends.MetricSMUtil, Time: int64(i) * 100e6, Value: 0.9},
			{Device: 0, Metric: backends.MetricLinkTXUtil, Time: int64(i) * 100e6, Value: 0.5},
		}}
		nm, _ = m.Update(liveMsg{b})
		m = nm.(Model)
	}
	if !m.tel().live {
		t.Fatal("live telemetry did not reach the panel")
	}
	if v, ok := m.tel().avg(backends.MetricSMUtil); !ok || v < 0.89 || v > 0.91 {
		t.Errorf("live sm_util average %v %v, want 0.9", v, ok)
	}
	screen := ansi.Strip(m.View().Content)
	if !strings.Contains(screen, "live NVML") {
		t.Error("the utilization panel does not say its numbers are live NVML telemetry")
	}
	// A result with its own telemetry keeps it.
	m.setResult(fixtureResult(m.suite[0], scenarios.Strategy{}))
	if m.tel().live {
		t.Error("live telemetry replaced a result's own")
	}
}

// A knob added to a copy of the table reaches the lab: its key is a knob
// key, the help lists it with its key, what it does and, where the
// backend lacks it, n/a, and pressing it says the backend cannot.
func TestDummyKnobReachesTheLab(t *testing.T) {
	ks, depth := knobtest.Table()
	*depth = 2
	caps := h200Caps()
	k, ok := keyKnob(ks, DefaultKeyMap(), tea.KeyPressMsg{Code: 'x', Text: knobtest.KeyName})
	if !ok || k != knobtest.Action {
		t.Fatalf("the dummy's key turns %q (%v), want %q", k, ok, knobtest.Action)
	}
	if k, ok := keyKnob(scenarios.StrategyKnobs(), DefaultKeyMap(), tea.KeyPressMsg{Code: 'x', Text: knobtest.KeyName}); ok {
		t.Errorf("the stock table turns %q on x", k)
	}
	rows := knobRows(ks, DefaultKeyMap(), scenarios.Strategy{}, caps, "sim")
	last := rows[len(rows)-1]
	if last.b.Help().Key != knobtest.KeyName || last.desc != "dummy pipeline depth" || last.ok || last.state != "n/a on sim" {
		t.Errorf("the dummy's help row: key %q, %q, %q, ok %v", last.b.Help().Key, last.desc, last.state, last.ok)
	}
	if len(rows) != len(knobRows(scenarios.StrategyKnobs(), DefaultKeyMap(), scenarios.Strategy{}, caps, "sim"))+1 {
		t.Errorf("%d knob rows with the dummy", len(rows))
	}
	groups := []helpGroup{{"strategy knobs", rows}}
	shown := ansi.Strip(strings.Join(helpOverlayLines(DefaultStyles(true), groups, 100, 40), "\n"))
	if !strings.Contains(shown, "dummy pipeline depth") || !strings.Contains(shown, "n/a on sim") {
		t.Errorf("the help overlay lacks the dummy:\n%s", shown)
	}
	// A backend that can: the row shows its setting.
	can := caps.With(knobtest.Need)
	rows = knobRows(ks, DefaultKeyMap(), scenarios.Strategy{}, can, "sim")
	if last := rows[len(rows)-1]; !last.ok || last.state != "2 stages" {
		t.Errorf("on a backend that has it the dummy's row is %q, ok %v", last.state, last.ok)
	}

	_, _, err := turnWith(ks, knobtest.Action, scenarios.Strategy{}, scenarios.AllGather, caps, "sim")
	if err == nil || err.Error() != "x: the sim backend cannot "+string(knobtest.Need) {
		t.Errorf("pressing the dummy's key: %v", err)
	}
	_, _, err = turnWith(ks, knobtest.Action, scenarios.Strategy{}, scenarios.AllGather, can, "sim")
	if err == nil || !strings.Contains(err.Error(), "--"+knobtest.Flag) {
		t.Errorf("a knob with no key behaviour in the lab: %v", err)
	}
}

// Every key of the knob table is bound by default to the key the table
// names, under its action, so the table's key and help reach the lab's
// key file and its short help.
func TestKnobKeysAreTheKeyMapDefaults(t *testing.T) {
	km := DefaultKeyMap()
	bindings := km.bindingsByAction()
	turns := turners()
	for _, kk := range knobKeys(scenarios.StrategyKnobs()) {
		b, ok := bindings[kk.key.Action]
		if !ok {
			t.Errorf("knob key %s (%s) is not in the key map", kk.key.Action, kk.knob.Key)
			continue
		}
		if b.Keys()[0] != kk.key.Key {
			t.Errorf("action %s: default key %q, the knob table says %q", kk.key.Action, b.Keys()[0], kk.key.Key)
		}
		if _, ok := turns[knob(kk.key.Action)]; !ok {
			t.Errorf("action %s turns nothing in the lab", kk.key.Action)
		}
	}
}

// The SM keys step by the device's partition step, and the help says so;
// where the step is unknown the help does not make one up.
func TestSMKeysFollowTheDevicesStep(t *testing.T) {
	caps := h200Caps()
	caps.Limits.SMs, caps.Limits.SMStep = 108, 4
	st, _, err := turn(knobSMsUp, scenarios.Strategy{}, scenarios.AllGather, caps, "fake")
	if err != nil || st.CommSMs != 4 {
		t.Errorf("] on a 4-SM step: %s, %v", st, err)
	}
	for _, tc := range []struct {
		step int
		want string
	}{{4, "comm SM partition +4 SMs"}, {8, "comm SM partition +8 SMs"}, {0, "comm SM partition +a step"}} {
		caps.Limits.SMStep = tc.step
		found := false
		for _, r := range knobRows(scenarios.StrategyKnobs(), DefaultKeyMap(), scenarios.Strategy{}, caps, "fake") {
			found = found || r.desc == tc.want
		}
		if !found {
			t.Errorf("step %d: no help row %q", tc.step, tc.want)
		}
	}
}
