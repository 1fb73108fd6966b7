package sim

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/backends/backendtest"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
	"github.com/c3lab/c3lab/scenarios/knobtest"
)

// observe measures on the simulator under table ks and returns the
// concurrent run's timeline and explanation.
func observe(b *Backend, ks scenarios.Knobs) backendtest.Observe {
	return func(sc scenarios.Scenario, st scenarios.Strategy) (string, error) {
		r, err := profiler.Measure(context.Background(), b, sc, st, profiler.Options{Reps: 1, Knobs: ks})
		if err != nil {
			return "", err
		}
		out, err := json.Marshal([]any{r.Timeline, r.Explain})
		return string(out), err
	}
}

// The simulator models every knob of the table: each setting changes a
// run.
func TestEveryKnobApplied(t *testing.T) {
	b := New(H200())
	for _, o := range backendtest.WalkKnobs(t, scenarios.StrategyKnobs(), b.Capabilities(), backendtest.KnobScenarios(), observe(b, nil)) {
		if !o.Applied() {
			t.Errorf("%s %s refused: %v", o.Knob.Key, o.Example, o.Err)
		}
	}
}

// A knob added to the table that the model does not apply is refused,
// naming it, before anything runs.
func TestNewKnobRefused(t *testing.T) {
	b := New(H200())
	ks, _ := knobtest.Table()
	out := backendtest.WalkKnobs(t, ks, b.Capabilities(), backendtest.KnobScenarios(), observe(b, ks))
	last := out[len(out)-1]
	if last.Knob.Key != knobtest.Key || last.Applied() ||
		!strings.Contains(last.Err.Error(), "the sim backend cannot "+string(knobtest.Need)+", which "+knobtest.Key+" 3 asks for") {
		t.Errorf("the dummy knob: %+v", last)
	}
	for _, o := range out[:len(out)-1] {
		if !o.Applied() {
			t.Errorf("%s %s refused beside the dummy: %v", o.Knob.Key, o.Example, o.Err)
		}
	}
}

// The simulator reports its profile's device facts, and its H200 profile
// has the bandwidths of the device table the cuda backend reports for an
// H200: one source for both.
func TestDevicesCarryTheProfilesFacts(t *testing.T) {
	p := H200()
	f := backends.H200Facts()
	if p.Device != f.Name || p.HBMBandwidth != f.HBMBandwidth || p.LinkBandwidth != f.LinkBandwidth || p.PCIeLinkBandwidth != f.PCIeLinkBandwidth {
		t.Errorf("the H200 profile and the device table differ: %s %g %g %g, %+v", p.Device, p.HBMBandwidth, p.LinkBandwidth, p.PCIeLinkBandwidth, f)
	}
	p.SMStep, p.HighestPriority, p.HBMBandwidth = 4, -3, 3e12
	for _, d := range New(p).Devices() {
		if d.SMStep != 4 || d.HighestPriority != -3 || d.HBMBandwidth != 3e12 || d.LinkBandwidth != p.LinkBandwidth || d.PCIeLinkBandwidth != p.PCIeLinkBandwidth {
			t.Errorf("device %d: %+v", d.Index, d)
		}
	}
	if c := New(p).Capabilities(); c.Profile != p.Name || c.LocalGPUs {
		t.Errorf("capabilities: profile %q, local GPUs %v", c.Profile, c.LocalGPUs)
	}
}
