package recordings

import (
	"bytes"
	"math"
	"testing"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
)

// graphScenario is a format-2 scenario: a TP all-gather feeding the GEMM
// that consumes it, decomposed in 4, next to a stream of small GEMMs.
func graphScenario() scenarios.Scenario {
	sc := scenarios.Scenario{Name: "tp-ag-gemm", GPUs: 2, Reps: 5, Streams: []scenarios.StreamSpec{
		{Name: "tp", Ops: []scenarios.StreamOp{{Name: "ag", Kind: scenarios.OpKind(scenarios.AllGather), Bytes: 1 << 20}}},
		{Name: "compute", Ops: []scenarios.StreamOp{
			{Name: "small", Kind: scenarios.OpKind(scenarios.GEMM), M: 256, N: 256, K: 256, DType: scenarios.BF16, Count: 3},
			{Name: "qkv", Kind: scenarios.OpKind(scenarios.GEMM), M: 2048, N: 64, K: 512, DType: scenarios.BF16, After: []string{"ag"}, Decompose: 4},
		}},
	}}
	sc.Compute, sc.Comm = sc.Streams[1].Ops[0].AsCompute(), sc.Streams[0].Ops[0].AsComm()
	return sc
}

// graphEvents is what a session on a graph records (format 2): the
// scenario with its streams, a result with per-op repetitions, per-op
// figures, the serial default's repetitions and U, and spans that name
// their graph op and instance.
func graphEvents() []Event {
	sc := graphScenario()
	st := scenarios.Strategy{CommEngine: scenarios.EngineDMA}
	stat := func(m float64) profiler.Stat { return profiler.Stat{N: 2, Median: m, Min: m, Max: m, P10: m, P90: m} }
	res := profiler.Result{
		Scenario: sc, Strategy: st, Backend: "sim",
		TComp: stat(9000), TComm: stat(2000), TC3: stat(8000), TCompInC3: stat(9900), TCommInC3: stat(2400),
		TSerial: 11000, TIdeal: 7500, SerialDefault: 13000, Uplift: 13000.0 / 8000,
		IdealSpeedup: 11000.0 / 7500, RealizedSpeedup: 11000.0 / 8000,
		Ops: []profiler.OpResult{
			{Name: "ag", Role: scenarios.RoleComm, Label: "ag: all-gather 256KiB x4", Count: 4, TAlone: stat(2000), TInC3: stat(2400), Slowdown: 1.2},
			{Name: "small", Role: scenarios.RoleCompute, Label: "small: gemm 256x256x256 bf16 x3", Count: 3, TAlone: stat(3000), TInC3: stat(3300), Slowdown: 1.1},
			{Name: "qkv", Role: scenarios.RoleCompute, Label: "qkv: gemm 512x64x512 bf16 x4", Count: 4, TAlone: stat(6000), TInC3: stat(6600), Slowdown: 1.1},
		},
		Reps: map[backends.Mode][]backends.Rep{
			backends.ModeCompute:    {{Wall: 9100, Compute: 9050, Ops: []int64{0, 3000, 6000}}},
			backends.ModeComm:       {{Wall: 2000, Comm: 2000, Ops: []int64{2000, 0, 0}}},
			backends.ModeConcurrent: {{Wall: 8000, Compute: 9900, Comm: 2400, Ops: []int64{2400, 3300, 6600}}},
		},
		DefaultReps: map[backends.Mode][]backends.Rep{
			backends.ModeCompute: {{Wall: 9000, Compute: 9000, Ops: []int64{0, 3000, 6000}}},
			backends.ModeComm:    {{Wall: 4000, Comm: 4000, Ops: []int64{4000, 0, 0}}},
		},
	}
	var spans []backends.Span
	for i := range 4 {
		spans = append(spans,
			backends.Span{Rep: 0, Op: backends.OpComm, GraphOp: "ag", Instance: i, Name: "copy gpu0->gpu1", Track: "ce0", Kind: "copy", Start: int64(500 * i), End: int64(500*i + 480)},
			backends.Span{Rep: 0, Op: backends.OpCompute, GraphOp: "qkv", Instance: i, Name: "gemm 512x64x512 bf16", Track: "compute", Kind: "kernel", Start: int64(500*i + 500), End: int64(500*i + 900)})
	}
	res.Timeline = spans
	return []Event{
		{Kind: KindScenario, Scenario: &sc},
		{Kind: KindStrategy, Strategy: &st},
		{Kind: KindResult, Result: &res},
		{Kind: KindSpans, Spans: spans},
	}
}

// A format-2 session reads back as it was recorded: streams, per-op
// repetitions and figures, the serial default, spans per instance.
func TestGraphSessionRoundTrip(t *testing.T) {
	in := graphEvents()
	for _, single := range []bool{true, false} {
		data := smallRecording(t, in, single)
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		rec, err := readAll(r)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Header.Schema != SchemaVersion || SchemaVersion != 2 {
			t.Errorf("schema %d (package %d), want 2", rec.Header.Schema, SchemaVersion)
		}
		if len(rec.Events) != len(in) {
			t.Fatalf("%d events read, %d recorded", len(rec.Events), len(in))
		}
		for i := range in {
			if !sameEvent(rec.Events[i], in[i]) {
				t.Errorf("event %d (%s) read back as\n%+v\nrecorded\n%+v", i, in[i].Kind, rec.Events[i], in[i])
			}
		}
	}
}

// A version-1 recording (a committed one, made on H200s before graphs)
// still reads, and each result gets the figures it lacks from what it
// holds: the pair's ops from Compute and Comm, T_serial, T_ideal, and U
// (= S_real) where its isolated runs are the serial default's.
func TestVersion1RecordingReads(t *testing.T) {
	rec, err := ReadAll("testdata/v1-strategies.c3rec")
	if err != nil {
		t.Fatal(err)
	}
	if rec.Header.Schema != 1 || rec.Damage != nil || !rec.Complete {
		t.Fatalf("schema %d, damage %v, complete %v: want an intact version-1 file", rec.Header.Schema, rec.Damage, rec.Complete)
	}
	n, def := 0, 0
	for _, ev := range rec.Events {
		r := ev.Result
		if r == nil {
			continue
		}
		n++
		if r.TSerial != r.TComp.Median+r.TComm.Median || r.TIdeal != math.Max(r.TComp.Median, r.TComm.Median) {
			t.Errorf("%s · %s: T_serial %v, T_ideal %v from T_comp %v, T_comm %v", r.Scenario.Name, r.Strategy, r.TSerial, r.TIdeal, r.TComp.Median, r.TComm.Median)
		}
		if len(r.Ops) != 2 || r.Ops[0].TAlone.Median != r.TComp.Median || r.Ops[1].TAlone.Median != r.TComm.Median || r.Ops[1].TInC3.Median != r.TCommInC3.Median {
			t.Errorf("%s · %s: ops %+v", r.Scenario.Name, r.Strategy, r.Ops)
		}
		if profiler.IsSerialDefault(r.Scenario, r.Strategy) {
			def++
			if math.Abs(r.Uplift-r.RealizedSpeedup) > 1e-12 {
				t.Errorf("%s · %s: U %v, S_real %v: the same under the serial default", r.Scenario.Name, r.Strategy, r.Uplift, r.RealizedSpeedup)
			}
		}
	}
	if n == 0 || def == 0 {
		t.Errorf("%d results, %d under the serial default", n, def)
	}
}
