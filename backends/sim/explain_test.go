package sim

import (
	"fmt"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// bounds returns the concurrent run's bounds of the op's jobs whose label
// starts with prefix.
func concurrentBounds(t *testing.T, sc scenarios.Scenario, st scenarios.Strategy, prefix string) []backends.Bound {
	t.Helper()
	r := measure(t, sc, st)
	var out []backends.Bound
	for _, e := range r.Explain[backends.ModeConcurrent] {
		if strings.HasPrefix(e.Label, prefix) {
			out = append(out, e.Bounds...)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no explanation of %q under %s", prefix, st)
	}
	return out
}

// TestCTADetailCountsResidentCTAs checks that the per-CTA bound names the
// CTAs that can be resident at once: in a comm partition of n SMs, at most
// n of NCCL's CTAs (one per SM), not all of them.
func TestCTADetailCountsResidentCTAs(t *testing.T) {
	p := H200()
	ctas := p.CommCTAs[scenarios.AllGather]
	for _, tc := range []struct {
		name     string
		st       scenarios.Strategy
		resident int
	}{
		{"8-SM partition", scenarios.Strategy{Launch: scenarios.CommFirst, CommSMs: 8}, min(8, ctas)},
		{"16-SM partition", scenarios.Strategy{Launch: scenarios.CommFirst, CommSMs: 16}, min(16, ctas)},
		{"CTA cap of 8", scenarios.Strategy{Launch: scenarios.CommFirst, CommCTAs: 8}, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var detail string
			for _, b := range concurrentBounds(t, gemmAG(), tc.st, "nccl") {
				if b.Resource == backends.ResCTA {
					detail = b.Detail
				}
			}
			if detail == "" {
				t.Fatal("the collective was never bounded by its CTAs")
			}
			total := ctas
			if tc.st.CommCTAs > 0 {
				total = tc.st.CommCTAs
			}
			want := fmt.Sprintf("%d CTAs, each", tc.resident)
			if tc.resident < total {
				want = fmt.Sprintf("%d of its %d CTAs at a time", tc.resident, total)
			}
			if !strings.Contains(detail, want) {
				t.Errorf("detail %q, want it to say %q", detail, want)
			}
		})
	}
}

// TestDependencyWaitIsNotLaunch checks that a copy-engine reduction's wait
// for the step before it (the add for its copies, an all-reduce's second
// copies for the add) is its own resource, not launch overhead.
func TestDependencyWaitIsNotLaunch(t *testing.T) {
	dma := scenarios.Strategy{CommEngine: scenarios.EngineDMA, Launch: scenarios.CommFirst, CommPriority: -5}
	for _, coll := range []scenarios.Collective{scenarios.ReduceScatter, scenarios.AllReduce} {
		t.Run(string(coll), func(t *testing.T) {
			sc := gemmAG()
			sc.Comm = scenarios.CommOp{Collective: coll, Bytes: 256 << 20}
			r := measure(t, sc, dma)
			var dep, launch int64
			for _, e := range r.Explain[backends.ModeConcurrent] {
				if e.Op != backends.OpComm {
					continue
				}
				for _, b := range e.Bounds {
					switch b.Resource {
					case backends.ResDependency:
						dep += b.Nanos
						if b.Detail == "" || strings.Contains(b.Detail, "launch") {
							t.Errorf("%s: dependency detail %q", e.Label, b.Detail)
						}
					case backends.ResLaunch:
						launch += b.Nanos
						if strings.Contains(b.Detail, "waits for") {
							t.Errorf("%s: a wait for another step is called launch: %q", e.Label, b.Detail)
						}
					}
				}
			}
			// The add waits for every copy: at least the copies' time.
			if float64(dep) < r.TComm.Median/4 {
				t.Errorf("dependency wait %d ns in a %0.f ns collective; the add waits for its copies", dep, r.TComm.Median)
			}
		})
	}
}

// TestStreamOpHasNoTensorWork checks that a stream op, alone, shows no
// tensor-core activity in the telemetry: its bytes are not FLOPs.
func TestStreamOpHasNoTensorWork(t *testing.T) {
	o, err := New(H200()).Simulate(backends.Experiment{Scenario: streamAG(), Mode: backends.ModeCompute, Reps: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range o.Samples {
		if s.Metric == backends.MetricTensorUtil && s.Value != 0 {
			t.Fatalf("tensor utilization %g at %d ns while only a stream op runs", s.Value, s.Time)
		}
	}
}
