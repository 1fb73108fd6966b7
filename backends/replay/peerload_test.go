package replay

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/backends/sim"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/recordings"
	"github.com/c3lab/c3lab/scenarios"
)

// A replay has comm_engine p2p-load exactly when its recording ran it:
// it plays the recorded run back, and a recording without it refuses it,
// naming the knob.
func TestReplayPeerLoad(t *testing.T) {
	b := sim.New(sim.H200())
	sc := scenarios.Scenario{Name: "gemm-rs", GPUs: 2, Compute: scenarios.ComputeOp{Kind: scenarios.GEMM, M: 8192, N: 8192, K: 8192, DType: scenarios.BF16},
		Comm: scenarios.CommOp{Collective: scenarios.ReduceScatter, Bytes: 64 << 20}}
	p2p := scenarios.Strategy{CommEngine: scenarios.EngineP2PLoad, Launch: scenarios.CommFirst, CommSMs: 16}
	open := func(sts ...scenarios.Strategy) (*Backend, []profiler.Result) {
		path := filepath.Join(t.TempDir(), "p2p.c3rec")
		rec, err := recordings.Create(path, recordings.Header{Version: "test", Backend: b.Name(), Devices: recordings.DevicesFromInfo(b.Devices()[:2])}, recordings.Options{})
		if err != nil {
			t.Fatal(err)
		}
		rec.Scenario(sc)
		var rs []profiler.Result
		for _, st := range sts {
			r, err := profiler.Measure(context.Background(), b, sc, st, profiler.Options{Reps: 2})
			if err != nil {
				t.Fatal(err)
			}
			rec.Result(r)
			rs = append(rs, r)
		}
		if err := rec.Close(); err != nil {
			t.Fatal(err)
		}
		rb, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		return rb, rs
	}
	rb, rs := open(scenarios.Strategy{}, p2p)
	if !rb.Capabilities().Has(scenarios.CapPeerLoad) {
		t.Error("a recording of a p2p-load run: the replay lacks the capability")
	}
	got, err := profiler.Measure(context.Background(), rb, sc, p2p, profiler.Options{Reps: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got.TC3.Median != rs[1].TC3.Median {
		t.Errorf("replayed T_c3 %.0f ns, recorded %.0f ns", got.TC3.Median, rs[1].TC3.Median)
	}
	plain, _ := open(scenarios.Strategy{})
	if plain.Capabilities().Has(scenarios.CapPeerLoad) {
		t.Error("a recording without p2p-load: the replay claims it")
	}
	bare := scenarios.Strategy{CommEngine: scenarios.EngineP2PLoad}
	if _, err := profiler.Measure(context.Background(), plain, sc, bare, profiler.Options{Reps: 2}); err == nil || !strings.Contains(err.Error(), string(scenarios.CapPeerLoad)) {
		t.Errorf("p2p-load on a replay that never ran it: %v", err)
	}
}
