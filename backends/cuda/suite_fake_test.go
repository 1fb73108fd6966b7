package cuda

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// shrunk is sc at a size the fake GPU, whose GEMMs are plain loops,
// computes in milliseconds, with the same streams, dependencies,
// decompositions and op kinds: every GEMM dimension divided by 128 and
// every byte size by 128^2 (exactly where they divide, so a decomposed
// pair's sizes still match; else rounded up to 8 and to 1 KiB), at most
// 4 instances of an op.
func shrunk(sc scenarios.Scenario) scenarios.Scenario {
	const by = 128
	dim := func(v int) int {
		if v%by == 0 {
			return v / by
		}
		return max(8, (v/by+7)/8*8)
	}
	size := func(b scenarios.ByteSize) scenarios.ByteSize {
		if b%(by*by) == 0 {
			return b / (by * by)
		}
		return max(1024, (b/(by*by)+1023)/1024*1024)
	}
	if sc.Compute.Kind == scenarios.GEMM {
		sc.Compute.M, sc.Compute.N, sc.Compute.K = dim(sc.Compute.M), dim(sc.Compute.N), dim(sc.Compute.K)
	}
	if sc.Compute.Bytes > 0 {
		sc.Compute.Bytes = size(sc.Compute.Bytes)
	}
	if sc.Comm.Bytes > 0 {
		sc.Comm.Bytes = size(sc.Comm.Bytes)
	}
	streams := make([]scenarios.StreamSpec, len(sc.Streams))
	for i, ss := range sc.Streams {
		ss.Ops = append([]scenarios.StreamOp(nil), ss.Ops...)
		for j := range ss.Ops {
			o := &ss.Ops[j]
			if o.M > 0 {
				o.M, o.N, o.K = dim(o.M), dim(o.N), dim(o.K)
			}
			if o.Bytes > 0 {
				o.Bytes = size(o.Bytes)
			}
			o.Count = min(o.Count, 4)
		}
		streams[i] = ss
	}
	if len(streams) > 0 {
		sc.Streams = streams
	}
	return sc
}

// Every built-in scenario, each two-GPU one also on 8 GPUs, and every
// scenario of the blind sets that waits for a GPU, runs on the fake GPU under the strategies the sweeps
// use most, NCCL's copy-engine path (pairs) and decomposition into 4
// (where the scenario allows them), shrunk so the fake's
// arithmetic is quick: the cuda backend's paths for each op kind, stream
// layout and strategy run end to end, with their results verified,
// before a lent node spends time on them.
func TestEveryScenarioRunsOnTheFakeGPU(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every scenario on the fake GPU")
	}
	lim := fakeBackend(t, newFakeGPU(2), Options{}).Capabilities().Limits
	var all []scenarios.Scenario
	for _, name := range scenarios.Names() {
		sc, err := scenarios.Find(name)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, sc)
		if sc.GPUs == 2 {
			// The same scenario on 8 GPUs (Find shards it so): more peers
			// than copy engines, rings past a pair.
			eight, err := scenarios.Find(strings.TrimSuffix(name, "-2gpu") + "-8gpu")
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, eight)
		}
	}
	files, err := filepath.Glob("../sim/testdata/blind-h200x2/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no blind two-GPU pairs (%v)", err)
	}
	for _, f := range files {
		sc, err := scenarios.Load(f, lim)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, sc)
	}
	// eight marks the strategies also run on 8 GPUs: every engine (SMs,
	// c3lab's copy engines, NCCL's), whole and decomposed.
	strategies := []struct {
		st    scenarios.Strategy
		eight bool
	}{
		{scenarios.Strategy{}, true},
		{scenarios.Strategy{Launch: scenarios.CommFirst, CommPriority: lim.HighestPriority}, false},
		{scenarios.Strategy{CommSMs: 16}, false},
		{scenarios.Strategy{CommCTAs: 8}, false},
		{scenarios.Strategy{CommEngine: scenarios.EngineDMA}, true},
		{scenarios.Strategy{CommEngine: scenarios.EngineNCCLCE}, true},
		{scenarios.Strategy{Decompose: 4}, false},
		{scenarios.Strategy{Decompose: 4, CommEngine: scenarios.EngineDMA}, true},
	}
	for _, sc := range all {
		small := shrunk(sc)
		t.Run(sc.Name, func(t *testing.T) {
			t.Parallel() // each with a fake GPU of its own
			b := fakeBackend(t, newFakeGPU(small.GPUs), Options{})
			lim := b.Capabilities().Limits
			if err := scenarios.Validate(small, lim); err != nil {
				t.Fatalf("shrunk: %v", err)
			}
			ran := 0
			for _, s := range strategies {
				if small.GPUs > 2 && !s.eight {
					continue
				}
				st := s.st
				with := small
				with.Strategy = st
				if scenarios.Validate(with, lim) != nil {
					continue // the scenario does not take this strategy
				}
				if st.CommEngine == scenarios.EngineNCCLCE && small.IsGraph() {
					continue // the backend runs NCCL's copy-engine path for pairs only (graphStrategy)
				}
				ran++
				res, err := b.Run(context.Background(), backends.Experiment{Scenario: small, Strategy: st, Mode: backends.ModeConcurrent, Reps: 1}, &backends.Collector{})
				if err != nil {
					t.Errorf("%s: %v", st, err)
					continue
				}
				if len(res.Reps) != 1 || !(res.Reps[0].Wall > 0) {
					t.Errorf("%s: repetitions %+v", st, res.Reps)
				}
			}
			if ran < 2 {
				t.Errorf("ran under %d strategies", ran)
			}
		})
	}
}
