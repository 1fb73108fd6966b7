// Package backendtest checks a backend against a knob table: every
// setting of every knob (each knob's examples) is either applied, so that
// the backend does something else than without it, or refused with an
// error that names the knob. Each backend's tests call it with a way to
// observe what the backend did (a simulated timeline, a fake GPU's calls,
// a replayed result).
package backendtest

import (
	"strings"
	"testing"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// Observe runs scenario sc under strategy st on the backend, through the
// profiler's refusal of a knob the backend lacks, and returns what the
// backend did in a form that differs whenever it did something else (its
// timeline, a fake GPU's call log), or the error that refused the run.
type Observe func(sc scenarios.Scenario, st scenarios.Strategy) (string, error)

// Outcome is what a backend did with one knob setting: Err is the refusal,
// else the setting was applied.
type Outcome struct {
	Knob    scenarios.Knob
	Example string
	Err     error
}

// Applied reports whether the backend applied the setting.
func (o Outcome) Applied() bool { return o.Err == nil }

// WalkKnobs tries every example of every knob of ks on a backend of
// capabilities caps, on each of scs, and returns what the backend did
// with each. It fails t where a backend neither applied nor refused a
// setting: a run that observes the same as the knob's base strategy on
// every scenario (the knob silently ignored), a refusal that does not
// name the knob, or a setting that needs what the backend says it cannot
// do and was not refused.
func WalkKnobs(t testing.TB, ks scenarios.Knobs, caps backends.Capabilities, scs []scenarios.Scenario, observe Observe) []Outcome {
	t.Helper()
	var out []Outcome
	for _, k := range ks {
		if len(k.Examples) == 0 {
			t.Errorf("knob %s has no example to walk", k.Key)
		}
		for i, ex := range k.Examples {
			// The base is observed before the example is set: a knob whose
			// setting lives outside Strategy (a test's) keeps it.
			var base []string
			for _, sc := range scs {
				o, err := observe(sc, k.Base)
				if err != nil {
					t.Fatalf("%s: the base strategy of knob %s (%s) fails: %v", sc.Name, k.Key, k.Base, err)
				}
				// A change proves something only if the same run observes
				// the same.
				if again, _ := observe(sc, k.Base); again != o {
					t.Fatalf("%s: two runs under %s observe differently; the walk needs observations that repeat", sc.Name, k.Base)
				}
				base = append(base, o)
			}
			st, err := k.Example(i)
			if err != nil {
				t.Fatalf("knob %s example %q: %v", k.Key, ex, err)
			}
			need := ""
			for _, n := range ks.Needs(st) {
				if n.Knob.Key == k.Key {
					need = string(n.Cap)
				}
			}
			res := Outcome{Knob: k, Example: ex}
			changed := false
			for j, sc := range scs {
				o, err := observe(sc, st)
				if err != nil {
					res.Err = err
					break
				}
				changed = changed || o != base[j]
			}
			shown := k.Show(st.Normalize())
			switch {
			case res.Err != nil && !strings.Contains(res.Err.Error(), k.Key) && (shown == "" || !strings.Contains(res.Err.Error(), shown)):
				t.Errorf("%s %s was refused without naming the knob: %v", k.Key, ex, res.Err)
			case res.Err == nil && !caps.Has(scenarios.Capability(need)):
				t.Errorf("%s %s ran, and the backend says it cannot %s", k.Key, ex, need)
			case res.Err == nil && !changed:
				t.Errorf("%s %s ran and changed nothing on %d scenarios: the knob is silently ignored", k.Key, ex, len(scs))
			}
			out = append(out, res)
		}
	}
	return out
}

// KnobScenarios are a GEMM and a stream op next to an all-gather on 2
// GPUs, then a format-2 scenario whose all-gather feeds the GEMM that
// consumes it (a tensor-parallel layer's input), which the decompose knob
// splits: on the simulator every knob changes one of them (a stream
// priority needs SMs that free up, which a persistent GEMM never does), so
// they are what WalkKnobs walks on the simulator and on recordings of it.
func KnobScenarios() []scenarios.Scenario {
	gemm := scenarios.ComputeOp{Kind: scenarios.GEMM, M: 8192, N: 2048, K: 8192, DType: scenarios.BF16}
	ag := scenarios.CommOp{Collective: scenarios.AllGather, Bytes: 64 << 20}
	tp := scenarios.StreamOp{Name: "gemm", Kind: scenarios.OpKind(scenarios.GEMM), M: gemm.M, N: gemm.N, K: gemm.K, DType: gemm.DType, After: []string{"ag"}}
	return []scenarios.Scenario{
		{Name: "gemm-ag", GPUs: 2, Compute: scenarios.ComputeOp{Kind: scenarios.GEMM, M: 8192, N: 8192, K: 8192, DType: scenarios.BF16},
			Comm: scenarios.CommOp{Collective: scenarios.AllGather, Bytes: 64 << 20}},
		{Name: "stream-ag", GPUs: 2, Compute: scenarios.ComputeOp{Kind: scenarios.Stream, Bytes: 1 << 30},
			Comm: scenarios.CommOp{Collective: scenarios.AllGather, Bytes: 64 << 20}},
		{Name: "ag-gemm", GPUs: 2, Compute: gemm, Comm: ag, Streams: []scenarios.StreamSpec{
			{Name: "comm", Ops: []scenarios.StreamOp{scenarios.CommStreamOp("ag", ag)}},
			{Name: "compute", Ops: []scenarios.StreamOp{tp}},
		}},
	}
}
