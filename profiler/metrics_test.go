package profiler

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/c3lab/c3lab/scenarios"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestSpeedups(t *testing.T) {
	for _, tc := range []struct {
		name              string
		comp, comm, c3    float64
		ideal, real, frac float64
		fracDefined       bool
		class             Class
	}{
		{"perfect overlap of equal ops", 100, 100, 100, 2, 2, 1, true, Balanced},
		{"serial execution", 100, 100, 200, 2, 1, 0, true, Balanced},
		{"half the uplift", 100, 100, 400.0 / 3, 2, 1.5, 0.5, true, Balanced},
		{"concurrency slower than serial", 100, 100, 250, 2, 0.8, -0.2, true, Balanced},
		{"gemm-long", 300, 100, 300, 4.0 / 3, 4.0 / 3, 1, true, GEMMLong},
		{"comm-long", 100, 300, 350, 4.0 / 3, 400.0 / 350, (400.0/350 - 1) / (1.0 / 3), true, CommLong},
		{"ideal is 1: comm takes no time", 100, 0, 100, 1, 1, math.NaN(), false, GEMMLong},
		{"just inside balanced", 114, 100, 150, 214.0 / 114, 214.0 / 150, (214.0/150 - 1) / (214.0/114 - 1), true, Balanced},
		{"just outside balanced", 116, 100, 150, 216.0 / 116, 216.0 / 150, (216.0/150 - 1) / (216.0/116 - 1), true, GEMMLong},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ideal := IdealSpeedup(tc.comp, tc.comm)
			real := RealizedSpeedup(tc.comp, tc.comm, tc.c3)
			if !near(ideal, tc.ideal) {
				t.Errorf("ideal = %v, want %v", ideal, tc.ideal)
			}
			if !near(real, tc.real) {
				t.Errorf("realized = %v, want %v", real, tc.real)
			}
			f, ok := FractionOfIdeal(real, ideal)
			if ok != tc.fracDefined {
				t.Fatalf("fraction defined = %v, want %v", ok, tc.fracDefined)
			}
			if ok && !near(f, tc.frac) {
				t.Errorf("fraction = %v, want %v", f, tc.frac)
			}
			if c := Classify(tc.comp, tc.comm); c != tc.class {
				t.Errorf("class = %s, want %s", c, tc.class)
			}
		})
	}
}

func TestDegenerateTimes(t *testing.T) {
	if !math.IsNaN(IdealSpeedup(0, 0)) {
		t.Error("ideal speedup of two zero times should be NaN")
	}
	if !math.IsNaN(RealizedSpeedup(1, 1, 0)) {
		t.Error("realized speedup with zero concurrent time should be NaN")
	}
	if _, ok := FractionOfIdeal(math.NaN(), 2); ok {
		t.Error("fraction with NaN realized speedup should be undefined")
	}
	if !math.IsNaN(Slowdown(5, 0)) {
		t.Error("slowdown against zero isolated time should be NaN")
	}
	if !math.IsNaN(AlgBW(100, 0)) {
		t.Error("algbw over zero time should be NaN")
	}
}

func TestBusBW(t *testing.T) {
	for _, tc := range []struct {
		coll   scenarios.Collective
		n      int
		factor float64
	}{
		{scenarios.AllGather, 2, 0.5},
		{scenarios.AllGather, 8, 7.0 / 8},
		{scenarios.ReduceScatter, 4, 0.75},
		{scenarios.AllReduce, 2, 1},
		{scenarios.AllReduce, 8, 14.0 / 8},
		{scenarios.AllToAll, 8, 7.0 / 8},
	} {
		if f := BusBWFactor(tc.coll, tc.n); !near(f, tc.factor) {
			t.Errorf("%s n=%d: factor %v, want %v", tc.coll, tc.n, f, tc.factor)
		}
		if bw := BusBW(tc.coll, tc.n, 100e9); !near(bw, 100e9*tc.factor) {
			t.Errorf("%s n=%d: busbw %v", tc.coll, tc.n, bw)
		}
	}
	// nccl-tests: an all-gather of a 256 MiB shard on 2 GPUs has size 512 MiB.
	c := scenarios.CommOp{Collective: scenarios.AllGather, Bytes: 256 << 20}
	if got := AlgBW(c.SizeBytes(2), 1e-3); !near(got, float64(512<<20)/1e-3) {
		t.Errorf("algbw = %v", got)
	}
}

func TestSummarize(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []int64
		want Stat
	}{
		{"empty", nil, Stat{}},
		{"one", []int64{7}, Stat{N: 1, Median: 7, Min: 7, Max: 7, P10: 7, P90: 7}},
		{"odd unsorted", []int64{5, 1, 3}, Stat{N: 3, Median: 3, Min: 1, Max: 5, P10: 1.4, P90: 4.6}},
		{"even", []int64{1, 2, 3, 4}, Stat{N: 4, Median: 2.5, Min: 1, Max: 4, P10: 1.3, P90: 3.7}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Summarize(tc.in)
			if got.N != tc.want.N || !near(got.Median, tc.want.Median) || !near(got.Min, tc.want.Min) ||
				!near(got.Max, tc.want.Max) || !near(got.P10, tc.want.P10) || !near(got.P90, tc.want.P90) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
	if s := (Stat{Median: 100, P10: 90, P90: 120}).Spread(); !near(s, 0.3) {
		t.Errorf("spread = %v, want 0.3", s)
	}
}

// TestComputeThroughput checks that a GEMM's throughput is reported in
// FLOP/s and a stream op's in bytes moved per second: a stream op does
// no tensor work, and counting its bytes as FLOPs made up a TFLOP/s.
func TestComputeThroughput(t *testing.T) {
	stat := func(ns int64) Stat { return Summarize([]int64{ns}) }
	comm := scenarios.CommOp{Collective: scenarios.AllGather, Bytes: 64 << 20}
	gemm := scenarios.ComputeOp{Kind: scenarios.GEMM, M: 4096, N: 4096, K: 4096, DType: scenarios.BF16}
	stream := scenarios.ComputeOp{Kind: scenarios.Stream, Bytes: 1 << 30}
	const tComp = 500_000 // ns
	for _, tc := range []struct {
		name          string
		op            scenarios.ComputeOp
		tflops, bytes float64
	}{
		{"gemm", gemm, gemm.FLOPs() / (tComp / 1e9) / 1e12, 0},
		// A stream op reads its buffer and writes it back.
		{"stream", stream, 0, 2 * float64(stream.Bytes) / (tComp / 1e9)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Result{Scenario: scenarios.Scenario{GPUs: 2, Compute: tc.op, Comm: comm}, TComp: stat(tComp), TComm: stat(400_000)}
			r.Derive(0)
			rel := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }
			if !rel(r.AchievedTFLOPs, tc.tflops) || !rel(r.AchievedBW, tc.bytes) {
				t.Errorf("%.4g TFLOP/s and %.4g B/s, want %.4g and %.4g", r.AchievedTFLOPs, r.AchievedBW, tc.tflops, tc.bytes)
			}
			js, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(js, &m); err != nil {
				t.Fatal(err)
			}
			if (m["achieved_tflops"] != nil) != (tc.tflops > 0) || (m["achieved_bw"] != nil) != (tc.bytes > 0) {
				t.Errorf("JSON achieved_tflops %v, achieved_bw %v", m["achieved_tflops"], m["achieved_bw"])
			}
		})
	}
}
