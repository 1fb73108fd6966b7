package scenarios

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// resultsDir holds the committed GPU results the rates come from.
const resultsDir = "../backends/cuda/results"

// TestMeasuredRatesMatchResults recomputes every rate in h200GEMMs and
// h200Transfers from the committed result files, so the table cannot drift
// from what was measured.
func TestMeasuredRatesMatchResults(t *testing.T) {
	sweeps := []string{
		"2026-11-30-h200x2-gated/sweep.json", "2026-11-30-h200x2-gated/sweep-dma.json", "2026-11-30-h200x2-gated/sweep-reductions.json",
		"2026-11-30-h200x2-session3/sweep-copies.json", "2026-11-30-h200x2-session3/sweep-copies-one-copy.json",
		"2026-11-30-h200x2-session3/sweep-reductions.json", "2026-11-30-h200x2-session3/sweep-reductions-run2.json", "2026-11-30-h200x2-session3/sweep-reductions-run3.json",
		"2026-12-01-h200x1/sweep-host.json", "2026-12-01-h200x1/sweep-host-run1.json", "2026-12-01-h200x1-i14/sweep-host.json",
	}
	type med struct {
		Median float64 `json:"median_ns"`
	}
	gemms := map[ComputeOp][]float64{}
	points := map[string]map[ByteSize][]float64{}
	addPoint := func(kind string, b ByteSize, ns float64) {
		if points[kind] == nil {
			points[kind] = map[ByteSize][]float64{}
		}
		points[kind][b] = append(points[kind][b], ns)
	}
	for _, f := range sweeps {
		var sw struct {
			Results []struct {
				Strategy string `json:"strategy"`
				Result   *struct {
					Scenario Scenario `json:"scenario"`
					TComp    med      `json:"t_comp"`
					TComm    med      `json:"t_comm"`
				} `json:"result"`
			} `json:"results"`
		}
		readJSON(t, f, &sw)
		for _, e := range sw.Results {
			if e.Result == nil || e.Strategy != "baseline" {
				continue
			}
			sc := e.Result.Scenario
			if sc.Compute.Kind == GEMM {
				gemms[sc.Compute] = append(gemms[sc.Compute], e.Result.TComp.Median)
			} else {
				addPoint(string(sc.Compute.Kind), sc.Compute.Bytes, e.Result.TComp.Median)
			}
			addPoint(string(sc.Comm.Collective), sc.Comm.Bytes, e.Result.TComm.Median)
		}
	}
	for _, f := range []string{"2026-11-30-h200x2-session3/ce-sizes.json", "2026-11-30-h200x2-session3/ce-sizes-run2.json"} {
		var cs struct {
			Sizes []struct {
				Collective string             `json:"collective"`
				Bytes      ByteSize           `json:"bytes_per_rank"`
				Median     map[string]float64 `json:"median_us"`
			} `json:"sizes"`
		}
		readJSON(t, f, &cs)
		for _, s := range cs.Sizes {
			addPoint(s.Collective, s.Bytes, s.Median["sm"]*1e3)
		}
	}
	var ref struct {
		Comparison []struct {
			Op string  `json:"op"`
			C3 float64 `json:"c3lab_median_ns"`
		} `json:"comparison"`
	}
	readJSON(t, "2026-11-30-h200x2/reference-ops.json", &ref)
	for _, c := range ref.Comparison {
		var op ComputeOp
		op.Kind = GEMM
		if n, _ := fmtSscanf(c.Op, &op); n == 4 {
			gemms[op] = append(gemms[op], c.C3)
		}
	}

	near := func(got, want float64) bool { return math.Abs(got-want) <= 0.05+1e-9 }
	if len(h200GEMMs()) != len(gemms) {
		t.Errorf("%d GEMM shapes in the table, %d in the results", len(h200GEMMs()), len(gemms))
	}
	for _, g := range h200GEMMs() {
		if want := median(gemms[g.op()]) / 1e3; !near(g.us, want) {
			t.Errorf("%s: table %.1f us, results %.2f us", g.op(), g.us, want)
		}
	}
	n := 0
	for _, p := range h200Transfers() {
		n++
		if want := median(points[p.kind][p.bytes]) / 1e3; !near(p.us, want) {
			t.Errorf("%s %s: table %.1f us, results %.2f us", p.kind, p.bytes, p.us, want)
		}
	}
	total := 0
	for _, m := range points {
		total += len(m)
	}
	if n != total {
		t.Errorf("%d transfer sizes in the table, %d in the results", n, total)
	}
}

// fmtSscanf reads "gemm MxNxK dtype" into op.
func fmtSscanf(s string, op *ComputeOp) (int, error) {
	var dt string
	n, err := fmt.Sscanf(s, "gemm %dx%dx%d %s", &op.M, &op.N, &op.K, &dt)
	op.DType = DType(dt)
	return n, err
}

func readJSON(t *testing.T, rel string, v any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(resultsDir, rel))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
}

// The roofline that estimates unmeasured GEMMs reproduces every measured
// shape within 30 % (most within 10 %), with the ceilings near an H200's.
func TestRatesRooflineFitsMeasuredGEMMs(t *testing.T) {
	r := H200Rates()
	if p := r.peak[BF16]; p < 600e12 || p > 990e12 {
		t.Errorf("bf16 ceiling %.0f TFLOP/s, want an H200's achievable 600..990", p/1e12)
	}
	if p := r.peak[FP8]; p < 1.2*r.peak[BF16] {
		t.Errorf("fp8 ceiling %.0f TFLOP/s is not above bf16's", p/1e12)
	}
	if r.hbm < 3e12 || r.hbm > 4.8e12 {
		t.Errorf("HBM ceiling %.2f TB/s, want 3..4.8", r.hbm/1e12)
	}
	if r.fixed <= 0 || r.fixed > 30e-6 {
		t.Errorf("fixed GEMM cost %.1f us, want 0..30", r.fixed*1e6)
	}
	within10 := 0
	for _, g := range h200GEMMs() {
		est := r.roofline(g.op()) + r.fixed
		rel := est/(g.us*1e-6) - 1
		if math.Abs(rel) > 0.30 {
			t.Errorf("%s: roofline %.1f us against %.1f measured (%+.0f %%)", g.op(), est*1e6, g.us, rel*100)
		}
		if math.Abs(rel) <= 0.10 {
			within10++
		}
		if got, _ := r.Measured(g.op()); got != g.us*1e-6 || r.Compute(g.op()) != got {
			t.Errorf("%s: a measured shape must take its measured time", g.op())
		}
	}
	if within10 < len(h200GEMMs())*3/4 {
		t.Errorf("%d of %d shapes within 10 %%, want three quarters", within10, len(h200GEMMs()))
	}
}

// Transfers: exact at measured sizes, between neighbours elsewhere,
// increasing with size, and a latency floor below the smallest size.
func TestRatesTransfers(t *testing.T) {
	r := H200Rates()
	for kind, pts := range r.points {
		for i, p := range pts {
			if got := interpolate(pts, p.bytes); math.Abs(got-p.us*1e-6) > 1e-12 {
				t.Errorf("%s %s: %v, want the measured %v us", kind, p.bytes, got*1e6, p.us)
			}
			if i > 0 {
				mid := (pts[i-1].bytes + p.bytes) / 2
				got := interpolate(pts, mid) * 1e6
				if got < min(pts[i-1].us, p.us) || got > max(pts[i-1].us, p.us) {
					t.Errorf("%s %s: %.1f us is not between its neighbours' %.1f and %.1f", kind, mid, got, pts[i-1].us, p.us)
				}
			}
		}
		prev := 0.0
		for b := ByteSize(1 << 16); b <= 4<<30; b *= 2 {
			got := interpolate(pts, b)
			if got < prev || got <= 0 {
				t.Errorf("%s: %s takes %.1f us, less than half of it (%.1f us)", kind, b, got*1e6, prev*1e6)
			}
			prev = got
		}
	}
	// Below the smallest measured reduce-scatter (96MiB) the time keeps a
	// fixed cost: 16MiB is more than its share of bandwidth.
	rs16 := r.Comm(CommOp{Collective: ReduceScatter, Bytes: 16 * mib}, 2)
	rs96 := r.Comm(CommOp{Collective: ReduceScatter, Bytes: 96 * mib}, 2)
	if rs16 <= rs96/6 || rs16 >= rs96 {
		t.Errorf("reduce-scatter 16MiB %.1f us against 96MiB %.1f us", rs16*1e6, rs96*1e6)
	}
	// On more GPUs a collective that sends more per GPU takes longer.
	ag := CommOp{Collective: AllGather, Bytes: 64 * mib}
	if r.Comm(ag, 8) <= r.Comm(ag, 2) {
		t.Error("an all-gather of 64MiB shards is no slower on 8 GPUs than on 2")
	}
}

func TestBalanceClass(t *testing.T) {
	for _, tc := range []struct {
		comp, comm float64
		want       string
	}{
		{1, 0.5, ClassGEMMLong}, {1, 0.669, ClassGEMMLong}, {1, 0.67, ClassBalanced}, {1, 1, ClassBalanced},
		{1, 1.5, ClassBalanced}, {1, 1.51, ClassCommLong}, {0.1, 3, ClassCommLong},
	} {
		if got := BalanceClass(tc.comp, tc.comm); got != tc.want {
			t.Errorf("BalanceClass(%v, %v) = %s, want %s", tc.comp, tc.comm, got, tc.want)
		}
	}
}

// Estimate of a pair is the paper's case: serial the sum, ideal the max.
func TestRatesEstimatePair(t *testing.T) {
	r := H200Rates()
	sc, err := Find("llama3-70b-tp-qkv-ag-224m-2gpu")
	if err != nil {
		t.Fatal(err)
	}
	serial, ideal, err := r.Estimate(sc, Strategy{})
	tc, tm := r.Compute(sc.Compute), r.Comm(sc.Comm, 2)
	if err != nil || math.Abs(serial-(tc+tm)) > 1e-12 || math.Abs(ideal-max(tc, tm)) > 1e-12 {
		t.Errorf("Estimate = %v, %v, %v; want %v, %v", serial, ideal, err, tc+tm, max(tc, tm))
	}
	bad := sc
	bad.Streams = []StreamSpec{{Name: "x"}}
	if _, _, err := r.Estimate(bad, Strategy{}); err == nil {
		t.Error("Estimate of an invalid graph did not fail")
	}
}
