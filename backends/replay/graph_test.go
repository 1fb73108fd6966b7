package replay

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/recordings"
	"github.com/c3lab/c3lab/scenarios"
)

// A recorded graph result replays with its per-op repetitions: the
// replayed measurement has the recorded per-op times, T_ideal from the
// graph's list schedule, and U from the recorded serial default's runs
// (the undecomposed graph on NCCL) for a copy-engine strategy.
func TestReplayGraphResult(t *testing.T) {
	sc := scenarios.Scenario{Name: "tp-ag-gemm", GPUs: 2, Streams: []scenarios.StreamSpec{
		{Name: "tp", Ops: []scenarios.StreamOp{{Name: "ag", Kind: scenarios.OpKind(scenarios.AllGather), Bytes: 1 << 20}}},
		{Name: "compute", Ops: []scenarios.StreamOp{
			{Name: "small", Kind: scenarios.OpKind(scenarios.GEMM), M: 256, N: 256, K: 256, DType: scenarios.BF16, Count: 3},
			{Name: "qkv", Kind: scenarios.OpKind(scenarios.GEMM), M: 2048, N: 64, K: 512, DType: scenarios.BF16, After: []string{"ag"}, Decompose: 4},
		}},
	}}
	sc.Compute, sc.Comm = sc.Streams[1].Ops[0].AsCompute(), sc.Streams[0].Ops[0].AsComm()
	st := scenarios.Strategy{CommEngine: scenarios.EngineDMA}
	rec := profiler.Result{
		Scenario: sc, Strategy: st, Backend: "sim",
		Devices: []backends.DeviceInfo{{Index: 0, Name: "gpu", SMs: 132}, {Index: 1, Name: "gpu", SMs: 132}},
		Reps: map[backends.Mode][]backends.Rep{
			backends.ModeCompute:    {{Wall: 9100, Compute: 9050, Ops: []int64{0, 3000, 6000}}},
			backends.ModeComm:       {{Wall: 2000, Comm: 2000, Ops: []int64{2000, 0, 0}}},
			backends.ModeConcurrent: {{Wall: 8000, Compute: 9900, Comm: 2400, Ops: []int64{2400, 3300, 6600}}},
		},
		DefaultReps: map[backends.Mode][]backends.Rep{
			backends.ModeCompute: {{Wall: 8700, Compute: 8600, Ops: []int64{0, 3000, 5600}}},
			backends.ModeComm:    {{Wall: 1800, Comm: 1800, Ops: []int64{1800, 0, 0}}},
		},
	}
	path := filepath.Join(t.TempDir(), "graph.c3rec")
	w, err := recordings.Create(path, recordings.Header{Version: "test", Backend: "sim", Devices: recordings.DevicesFromInfo(rec.Devices)}, recordings.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.Scenario(sc)
	w.Result(rec)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := profiler.Measure(context.Background(), b, sc, st, profiler.Options{Reps: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Reps, rec.Reps) || !reflect.DeepEqual(got.DefaultReps, rec.DefaultReps) {
		t.Errorf("replayed reps %+v, default %+v; recorded %+v, %+v", got.Reps, got.DefaultReps, rec.Reps, rec.DefaultReps)
	}
	// ag in 4 chunks of 500, small 3 x 1000, then qkv in 4 chunks of
	// 1500, chunk i after ag chunk i: 3000 + 4 x 1500.
	if got.TSerial != 11000 || got.TIdeal != 9000 || got.SerialDefault != 10400 || got.Uplift != 10400.0/8000 {
		t.Errorf("T_serial %v, T_ideal %v, serial default %v, U %v; want 11000, 9000, 10400, 1.3", got.TSerial, got.TIdeal, got.SerialDefault, got.Uplift)
	}
	if len(got.Ops) != 3 || got.Ops[2].Name != "qkv" || got.Ops[2].Slowdown != 1.1 || got.Ops[0].TInC3.Median != 2400 {
		t.Errorf("per-op figures %+v", got.Ops)
	}
}
