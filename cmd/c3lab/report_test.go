package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/report"
	"github.com/c3lab/c3lab/scenarios"
)

// TestReportRoundsLikeTheLab checks that the run report prints times,
// speedups, slowdowns, percentages and rates as the lab does, through
// profiler/report: three significant digits, two decimals for ratios, no
// blank before a percent sign.
func TestReportRoundsLikeTheLab(t *testing.T) {
	r := profiler.Result{Scenario: scenarios.Builtin()[0], Backend: "sim", Deterministic: true}
	r.TComp = profiler.Summarize([]int64{1_234_567})
	r.TComm = profiler.Summarize([]int64{987_654})
	r.TC3 = profiler.Summarize([]int64{1_500_000})
	r.TCompInC3, r.TCommInC3 = r.TComp, profiler.Summarize([]int64{1_456_789})
	r.Derive(4.8e12)
	frac, ok := r.Fraction()
	if !ok || r.Bound == nil || r.Bound.FractionOfBound == nil {
		t.Fatalf("the result has no fraction of ideal or of bound: %+v", r)
	}
	var out bytes.Buffer
	writeReport(&out, r)
	for _, tc := range []struct{ what, want string }{
		{"T_comp", report.Duration(r.TComp.Median)},
		{"T_comm", report.Duration(r.TComm.Median)},
		{"comm in c3", report.Duration(r.TCommInC3.Median)},
		{"ideal speedup", "ideal speedup      " + report.Ratio(r.IdealSpeedup)},
		{"realized speedup", "realized speedup   " + report.Ratio(r.RealizedSpeedup)},
		{"fraction of ideal", "fraction of ideal  " + report.Percent(frac)},
		{"fraction of bound", "fraction of bound  " + report.Percent(*r.Bound.FractionOfBound)},
		{"slowdowns", "compute " + report.Ratio(r.CompSlowdown) + ", comm " + report.Ratio(r.CommSlowdown)},
		{"busbw", "busbw " + report.Bandwidth(r.BusBW)},
		{"TFLOP/s", "compute alone      " + report.TFLOPs(r.AchievedTFLOPs)},
	} {
		if !strings.Contains(out.String(), tc.want) {
			t.Errorf("%s: the report does not say %q:\n%s", tc.what, tc.want, out.String())
		}
	}
}

// TestReportBoundReason checks that the run report gives the true reason
// for a missing fraction of bound.
func TestReportBoundReason(t *testing.T) {
	sc := scenarios.Scenario{Name: "pair", GPUs: 2,
		Compute: scenarios.ComputeOp{Kind: scenarios.Stream, Bytes: 1 << 30},
		Comm:    scenarios.CommOp{Collective: scenarios.AllGather, Bytes: 1 << 30}}
	stat := func(ns int64) profiler.Stat { return profiler.Summarize([]int64{ns}) }
	hc, hm := profiler.HBMBytes(sc)
	const bw = 4e12
	tHBM := int64((hc + hm) / bw * 1e9)
	for _, tc := range []struct {
		name             string
		tComp, tComm, c3 int64
		bw               float64
		want             string
	}{
		{"no bandwidth", 600_000, 700_000, 900_000, 0, "bound              n/a (no HBM bandwidth known)"},
		{"bound of 1x", tHBM / 2, tHBM / 2, tHBM, bw, "fraction of bound  undefined (the bound is 1x: moving both ops' HBM bytes"},
		{"bound below 1x", tHBM / 4, tHBM / 4, tHBM / 2, bw, "fraction of bound  undefined (the bound is below 1x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := profiler.Result{Scenario: sc, TComp: stat(tc.tComp), TComm: stat(tc.tComm), TC3: stat(tc.c3),
				TCompInC3: stat(tc.tComp), TCommInC3: stat(tc.tComm)}
			r.Derive(tc.bw)
			var out bytes.Buffer
			writeReport(&out, r)
			if !strings.Contains(out.String(), tc.want) {
				t.Errorf("the report does not say %q:\n%s", tc.want, out.String())
			}
		})
	}
}

// TestReportComputeThroughput checks that the run report gives a stream
// op's isolated throughput in GB/s and a GEMM's in TFLOP/s.
func TestReportComputeThroughput(t *testing.T) {
	comm := scenarios.CommOp{Collective: scenarios.AllGather, Bytes: 64 << 20}
	for _, tc := range []struct {
		op        scenarios.ComputeOp
		want, not string
	}{
		{scenarios.ComputeOp{Kind: scenarios.GEMM, M: 4096, N: 4096, K: 4096, DType: scenarios.BF16}, "TFLOP/s", "GB/s of HBM"},
		// 2 GiB moved in 1 ms: 2147 GB/s.
		{scenarios.ComputeOp{Kind: scenarios.Stream, Bytes: 1 << 30}, "compute alone      2147 GB/s of HBM traffic", "TFLOP/s"},
	} {
		r := profiler.Result{Scenario: scenarios.Scenario{Name: "x", GPUs: 2, Compute: tc.op, Comm: comm},
			TComp: profiler.Summarize([]int64{1_000_000}), TComm: profiler.Summarize([]int64{500_000})}
		r.Derive(0)
		var out bytes.Buffer
		writeReport(&out, r)
		if !strings.Contains(out.String(), tc.want) || strings.Contains(out.String(), tc.not) {
			t.Errorf("%s: want %q and no %q in\n%s", tc.op, tc.want, tc.not, out.String())
		}
	}
}

// TestReportDeterministic checks that the run report shows a spread and a
// run count only where runs can differ: on a deterministic backend it
// says the times are exact instead.
func TestReportDeterministic(t *testing.T) {
	for _, deterministic := range []bool{false, true} {
		r := profiler.Result{Scenario: scenarios.Builtin()[0], Backend: "sim", Deterministic: deterministic}
		for _, s := range []*profiler.Stat{&r.TComp, &r.TComm, &r.TC3, &r.TCompInC3, &r.TCommInC3} {
			*s = profiler.Summarize([]int64{500_000, 500_000, 500_000})
		}
		r.Derive(0)
		var out bytes.Buffer
		writeReport(&out, r)
		text := out.String()
		var header string
		for _, l := range strings.Split(text, "\n") {
			if strings.HasPrefix(l, "time") {
				header = l
			}
		}
		spread := strings.Contains(header, "p10 .. p90") || strings.Contains(header, "runs")
		if spread == deterministic {
			t.Errorf("deterministic %v: spread shown %v:\n%s", deterministic, spread, text)
		}
		if deterministic && !strings.Contains(text, "deterministic") {
			t.Errorf("a deterministic result does not say so:\n%s", text)
		}
	}
}

// TestOldScenarioNames checks that a name the suite had before it stopped
// naming GPU counts still runs the scenario, under its new name, and that
// the command says so.
func TestOldScenarioNames(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--backend", "sim", "--reps", "1", "--scenario", "llama3-70b-tp8-qkv-ag-224m"},
		{"scenarios", "show", "llama3-70b-tp8-qkv-ag-224m"},
	} {
		code, out, errOut := call(t, args...)
		if code != 0 || !strings.Contains(out, "llama3-70b-tp-qkv-ag-224m") ||
			!strings.Contains(errOut, "scenario llama3-70b-tp8-qkv-ag-224m is now called llama3-70b-tp-qkv-ag-224m") {
			t.Errorf("%v: exit %d\nstdout %s\nstderr %s", args, code, out, errOut)
		}
	}
}

// graphResult is a measured-looking result of a two-stream graph: an
// all-gather feeding a GEMM, next to a stream of 4 small GEMMs.
func graphResult(t *testing.T) profiler.Result {
	t.Helper()
	sc := scenarios.Scenario{Name: "graph", GPUs: 2, Streams: []scenarios.StreamSpec{
		{Name: "tp", Ops: []scenarios.StreamOp{{Name: "ag", Kind: scenarios.OpKind(scenarios.AllGather), Bytes: 1 << 20}}},
		{Name: "compute", Ops: []scenarios.StreamOp{
			{Name: "small", Kind: scenarios.OpKind(scenarios.GEMM), M: 256, N: 256, K: 256, DType: scenarios.BF16, Count: 4},
			{Name: "qkv", Kind: scenarios.OpKind(scenarios.GEMM), M: 2048, N: 64, K: 512, DType: scenarios.BF16, After: []string{"ag"}},
		}},
	}}
	sc.Compute, sc.Comm = sc.Streams[1].Ops[0].AsCompute(), sc.Streams[0].Ops[0].AsComm()
	g, err := sc.Graph(scenarios.Strategy{})
	if err != nil {
		t.Fatal(err)
	}
	stat := func(ns int64) profiler.Stat { return profiler.Summarize([]int64{ns}) }
	alone := map[string]int64{"ag": 3000, "small": 2000, "qkv": 4000}
	r := profiler.Result{Scenario: sc, Backend: "fake", Deterministic: true, TC3: stat(8000)}
	var comp, comm, compC3, commC3 int64
	for _, o := range g.Ops {
		a := alone[o.Name]
		r.Ops = append(r.Ops, profiler.OpResult{Name: o.Name, Role: o.Role, Label: o.Label(), Count: o.Count, TAlone: stat(a), TInC3: stat(a * 5 / 4), Slowdown: 1.25})
		if o.Role == scenarios.RoleComm {
			comm, commC3 = comm+a, commC3+a*5/4
		} else {
			comp, compC3 = comp+a, compC3+a*5/4
		}
	}
	r.TComp, r.TComm, r.TCompInC3, r.TCommInC3 = stat(comp), stat(comm), stat(compC3), stat(commC3)
	r.Derive(0)
	return r
}

// For a graph the run report gives T_serial, T_ideal (the list schedule:
// ag then qkv, 7 µs, beside the small GEMMs), S_ideal, S_real, F, U, its
// streams, ops and instances, and a per-op table grouped by stream with
// what each op waits for, its time alone, in C3 and slowdown.
func TestReportGraphMetricsAndOps(t *testing.T) {
	r := graphResult(t)
	if r.TSerial != 9000 || r.TIdeal != 7000 || r.Uplift != 9000.0/8000 {
		t.Fatalf("T_serial %v, T_ideal %v, U %v; want 9000, 7000, 1.125", r.TSerial, r.TIdeal, r.Uplift)
	}
	var out bytes.Buffer
	writeReport(&out, r)
	for _, want := range []string{
		"serial time        9.00 µs   T_serial",
		"ideal time         7.00 µs   T_ideal = the graph's list schedule",
		"ideal speedup      1.29x     S_ideal",
		"realized speedup   1.12x     S_real",
		"fraction of ideal  43.7%     F",
		"uplift             1.12x     U = T_serial of the serial default (9.00 µs) /",
		"graph      2 streams, 3 ops, 6 instances on 2 GPUs\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report does not say %q:\n%s", want, out.String())
		}
	}
	// The per-op table: one row per op, in graph order, under its stream.
	table := out.String()[strings.Index(out.String(), "per op"):]
	if end := strings.Index(table, "\n\n"); end >= 0 {
		table = table[:end]
	}
	table = strings.TrimRight(table, "\n")
	want := `per op (times summed over its instances)
op                                 after  alone    in c3    slowdown
stream tp
  ag: all-gather 1MiB                     3.00 µs  3.75 µs  1.25x
stream compute
  small: gemm 256x256x256 bf16 x4         2.00 µs  2.50 µs  1.25x
  qkv: gemm 2048x64x512 bf16       ag     4.00 µs  5.00 µs  1.25x`
	if table != want {
		t.Errorf("per-op table:\n%s\nwant:\n%s", table, want)
	}
	for _, l := range strings.Split(out.String(), "\n") {
		if n := utf8.RuneCountInString(l); n > reportWidth {
			t.Errorf("a line of %d columns, past %d: %q", n, reportWidth, l)
		}
	}
}

// The JSON of a result carries the graph metrics and the per-op figures.
func TestResultJSONCarriesGraphMetrics(t *testing.T) {
	js, err := json.Marshal(graphResult(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"t_serial":9000`, `"t_ideal":7000`, `"t_serial_default":9000`, `"uplift":1.125`, `"ops":[{"name":"ag","role":"comm"`, `"slowdown":1.25`} {
		if !strings.Contains(string(js), want) {
			t.Errorf("the JSON lacks %s:\n%s", want, js)
		}
	}
}

// TestReportShowsIntervals checks that a measured (not deterministic)
// result prints each figure with its interval (F 89.0% ± 1.2, T_c3 ± a
// time, U 1.23x ± 0.01), F past 100 % within its interval as within
// noise, a bimodal time with both modes, and the precision reached; and
// that its JSON carries the same.
func TestReportShowsIntervals(t *testing.T) {
	r := profiler.Result{Scenario: scenarios.Builtin()[0], Backend: "cuda"}
	r.TComp = profiler.Summarize([]int64{3_000_000, 3_010_000, 2_990_000})
	r.TComm = profiler.Summarize([]int64{1_000_000})
	r.TC3 = profiler.Summarize([]int64{3_050_000})
	r.TCompInC3, r.TCommInC3 = r.TComp, r.TComm
	r.Derive(0)
	iv := func(v, h float64) profiler.Interval { return profiler.Interval{Lo: v - h, Hi: v + h} }
	f, _ := r.Fraction()
	r.CI = &profiler.Intervals{Level: 0.95, Resamples: 1000, Rounds: 5,
		TComp: iv(r.TComp.Median, 12_300), TComm: iv(r.TComm.Median, 4_000), TC3: iv(r.TC3.Median, 15_000),
		TSerial: iv(r.TSerial, 13_000), TIdeal: iv(r.TIdeal, 12_300), SIdeal: iv(r.IdealSpeedup, 0.004), SReal: iv(r.RealizedSpeedup, 0.006),
		F: iv(f, 0.012), U: iv(r.Uplift, 0.01), CompSlowdown: iv(r.CompSlowdown, 0.02), CommSlowdown: iv(r.CommSlowdown, 0.03)}
	r.Bimodal = []profiler.Bimodal{{Time: "T_c3", Modes: [2]profiler.Mode{{Median: 2.9e6, Share: 0.6}, {Median: 3.3e6, Share: 0.4}}, D: 3}}
	hw := 0.004
	r.Precision = &profiler.PrecisionOutcome{Target: "2% T_c3", Reached: true, Stop: profiler.StopReached, HalfWidth: &hw, Rounds: 5}
	var out bytes.Buffer
	writeReport(&out, r)
	for _, want := range []string{
		"± (95%)  p10 .. p90",
		"T_c3 (together)  3.05 ms (bimodal)  15.0 µs",
		"fraction of ideal  " + report.Percent(f) + " ± 1.2",
		"uplift             " + report.Ratio(r.Uplift) + " ± 0.01",
		"compute " + report.Ratio(r.CompSlowdown) + " ± 0.02",
		"T_c3 is bimodal: 2.90 ms (60%) and 3.30 ms (40%); its median lies between",
		"precision 2% T_c3: reached (± 0.4%) in 5 rounds",
		"± is half the 95% interval (a bootstrap over 5 interleaved rounds)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report does not say %q:\n%s", want, out.String())
		}
	}
	// F above 100 % inside its interval.
	r.TC3 = profiler.Summarize([]int64{2_950_000})
	r.Derive(0)
	f, _ = r.Fraction()
	r.CI.F = iv(f, 0.1)
	out.Reset()
	writeReport(&out, r)
	if want := "fraction of ideal  " + report.Percent(f) + " ± 10.0 (within noise)"; f <= 1 || !strings.Contains(out.String(), want) {
		t.Errorf("F %v: the report does not say %q:\n%s", f, want, out.String())
	}
	js, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"fraction_within_noise":true`, `"ci":{"level":0.95`, `"bimodal":[{"time":"T_c3"`, `"precision":{"target":"2% T_c3"`} {
		if !strings.Contains(string(js), want) {
			t.Errorf("JSON lacks %s", want)
		}
	}
}
