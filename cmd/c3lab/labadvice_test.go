package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/backends/sim"
	"github.com/c3lab/c3lab/scenarios"
)

// The lab's advisor builds its model on its first call, not when the
// screen opens: a profile that cannot be read fails every call with one
// line, and a good one ranks the scenario it is asked about.
func TestLabAdvisorBuildsItsModelOnFirstUse(t *testing.T) {
	caps := sim.New(sim.H200()).Capabilities()
	sc := scenarios.Builtin()[0]
	missing := filepath.Join(t.TempDir(), "missing.yaml")
	bad := labAdvisor(backendFlag{simProfile: missing}, caps)
	for range 2 {
		if _, err := bad(context.Background(), sc); err == nil || !strings.Contains(err.Error(), "no model") {
			t.Errorf("advisor on a missing profile: error %v; want one saying there is no model", err)
		}
	}
	adv, err := labAdvisor(backendFlag{}, caps)(context.Background(), sc)
	if err != nil {
		t.Fatalf("advisor on the calibrated profile: %v", err)
	}
	if len(adv.Predictions) == 0 {
		t.Errorf("advisor on the calibrated profile ranked no candidate for %s", sc.Name)
	}
}

// BenchmarkLabAdvisorSetup times what opening the lab spends on its
// advisor, before any advice is asked for.
func BenchmarkLabAdvisorSetup(b *testing.B) {
	caps := sim.New(sim.H200()).Capabilities()
	for b.Loop() {
		_ = labAdvisor(backendFlag{}, caps)
	}
}
