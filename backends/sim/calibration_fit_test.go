package sim

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/sweepfile"
	"github.com/c3lab/c3lab/scenarios"
)

// TestFitH200 refits the H200 profile to the gated sweeps and prints the
// constants; profile.go holds what it printed. It runs only when
// C3LAB_SIM_FIT=1, since it replays the sweeps a few hundred times (about a
// minute):
//
//	C3LAB_SIM_FIT=1 go test ./backends/sim -run TestFitH200 -v
//
// It fits in two stages.
//
//  1. Isolated times, in closed form or one dimension: each SM collective's
//     setup time and link efficiency are the intercept and slope of a
//     least-squares line through its isolated times against the bytes it
//     sends (relative error); likewise the copy-engine collectives
//     (c3lab's, then NCCL's); then the reduction kernel's bandwidth from
//     the copy-engine reductions' isolated times less their copies; each
//     collective CTA's bandwidth from the CTA-capped runs, where the capped
//     collective runs alone after the GEMM; and
//     the GEMM efficiency per element type is the median of the
//     efficiencies that match each isolated tensor-bound GEMM (the suite's
//     and c3lab-ref.json's).
//  2. Concurrent runs, by coordinate descent over a grid of each
//     interference constant, holding stage 1: the loss is the mean |log
//     error| of T_c3 over every replayed run plus the gap in mean fraction
//     of ideal per strategy (weight 1 for the main strategies, 1/10 for the
//     others), plus a tenth of the mean |log error| of T_c3 of the two GPU
//     test runs whose reduction kernel is confined to 16 SMs.
func TestFitH200(t *testing.T) {
	if os.Getenv("C3LAB_SIM_FIT") != "1" {
		t.Skip("set C3LAB_SIM_FIT=1 to refit the H200 profile")
	}
	sm, dma, red := loadSweep(t, realSweep), copyOnly(t, loadSweep(t, realSweepDMA)), loadSweep(t, realSweepReductions)
	p := H200()

	// Stage 1: isolated times.
	for _, coll := range scenarios.Collectives {
		a, bw := fitLine(isolatedComm(t, sm, "baseline", func(c scenarios.Collective) bool { return c == coll }))
		p.CommSetup[coll], p.LinkEfficiencySM[coll] = a, bw/p.LinkBandwidth
	}
	pure := func(c scenarios.Collective) bool { return c.IsPureCopy() }
	a, bw := fitLine(isolatedComm(t, dma, "dma", pure))
	p.CopySyncOverhead, p.LinkEfficiencyCE = a-p.CopyLaunchOverhead, bw/p.LinkBandwidth
	a, bw = fitLine(isolatedComm(t, dma, "nccl-ce", pure))
	p.NCCLCESetup, p.LinkEfficiencyNCCLCE = a, bw/p.LinkBandwidth
	p.ReductionBandwidth = fitReduction(t, p, red)
	for _, coll := range scenarios.Collectives {
		p.CTALinkBandwidth[coll] = fitCTABandwidth(t, p, sm, coll)
	}
	for _, d := range []scenarios.DType{scenarios.BF16, scenarios.FP16, scenarios.FP8} {
		p.GEMMEfficiency[d] = fitGEMMEfficiency(t, p, sm, d)
	}

	// Stage 2: interference, by coordinate descent from the first
	// session's values (so the result does not depend on profile.go's).
	params := fitParams()
	p.GEMMMemoryStall, p.L2Interference, p.HBMContention, p.CommLatencySensitivity = 0.3, 0.15, 0.06, 0.5
	p.ReductionSMBandwidth, p.LaunchGap, p.RestPartitionGEMMLoss = p.SMHBMBandwidth, 5e-6, 0
	// Measured, not fitted: the pipelined reductions' spans next to a bf16
	// 8192^3 GEMM show 38-41 GB/s per SM (FINDINGS.md section 4).
	p.ContendedSMBandwidth = 40e9
	loss := func(p Profile) float64 { return fitLoss(t, p, sm, dma, red) }
	best := loss(p)
	for pass := range 6 {
		improved := false
		for _, fp := range params {
			keep := fp.get(p)
			for _, v := range fp.grid {
				q := cloneProfile(p)
				fp.set(&q, v)
				if l := loss(q); l < best-1e-9 {
					best, p, improved = l, q, true
				}
			}
			if fp.get(p) != keep {
				t.Logf("pass %d: %s %g -> %g (loss %.4f)", pass+1, fp.name, keep, fp.get(p), best)
			}
		}
		if !improved {
			break
		}
	}
	t.Logf("fitted H200 profile (loss %.4f):\n%s", best, describeFit(p))
	for _, c := range []struct {
		f    sweepfile.File
		keep func(string) bool
	}{
		{sm, func(string) bool { return true }},
		{dma, fitDMA},
		{red, fitRed},
	} {
		rep := summarize(replay(t, p, c.f, c.keep))
		t.Logf("T_comp %.1f%%, T_comm %.1f%%, T_c3 %.1f%% over %d runs; fractions %v", rep.Comp*100, rep.Comm*100, rep.C3*100, rep.Runs, rep.Fraction)
	}
}

// fitDMA and fitRed pick the copy-engine strategies of the copy-engine and
// reduction sweeps (the others repeat the SM sweep's).
func fitDMA(s string) bool { return strings.HasPrefix(s, "dma") || s == "nccl-ce" }
func fitRed(s string) bool { return strings.HasPrefix(s, "dma") }

// point is one isolated measurement: bytes sent per rank and seconds.
type point struct{ x, t float64 }

// isolatedComm lists the isolated collective times of one strategy, one
// point per scenario of the accepted collectives.
func isolatedComm(t *testing.T, f sweepfile.File, strategy string, keep func(scenarios.Collective) bool) []point {
	var pts []point
	for _, e := range f.Results {
		if e.Result == nil || e.Strategy != strategy {
			continue
		}
		sc := recorded(t, e)
		if keep(sc.Comm.Collective) {
			pts = append(pts, point{sc.Comm.LinkBytes(sc.GPUs), e.Result.TComm.Median / 1e9})
		}
	}
	if len(pts) < 2 {
		t.Fatalf("%d isolated %s runs to fit a line through", len(pts), strategy)
	}
	return pts
}

// fitLine fits t = a + x/bw minimizing the sum of squared relative errors,
// and returns the intercept a (seconds) and the bandwidth bw (bytes/s).
func fitLine(pts []point) (a, bw float64) {
	// Minimize sum (a/t + s x/t - 1)^2 over a and s = 1/bw.
	var uu, uv, vv, u1, v1 float64
	for _, p := range pts {
		u, v := 1/p.t, p.x/p.t
		uu, uv, vv, u1, v1 = uu+u*u, uv+u*v, vv+v*v, u1+u, v1+v
	}
	det := uu*vv - uv*uv
	a = (u1*vv - v1*uv) / det
	s := (uu*v1 - uv*u1) / det
	return a, 1 / s
}

// fitReduction fits the reduction kernel's bandwidth to the isolated
// copy-engine reductions: what their times leave after the copy phases,
// against the HBM bytes the kernel moves (least squares on relative error).
func fitReduction(t *testing.T, p Profile, f sweepfile.File) float64 {
	var num, den float64
	for _, e := range f.Results {
		if e.Result == nil || e.Strategy != "dma-prio" {
			continue
		}
		sc := recorded(t, e)
		phase, phases := sc.Comm.LinkBytes(sc.GPUs), 1.0
		if sc.Comm.Collective == scenarios.AllReduce {
			phase, phases = phase/2, 2
		}
		ceBW := p.LinkBandwidth * p.LinkEfficiencyCE
		copies := phases * (p.CopySyncOverhead + p.CopyLaunchOverhead + phase/ceBW)
		n := float64(sc.GPUs)
		y := (n + 1) * phase / (n - 1)
		tt := e.Result.TComm.Median / 1e9
		// Minimize sum ((copies + r y)/t - 1)^2 over r = 1/bandwidth.
		num += y / tt * (1 - copies/tt)
		den += (y / tt) * (y / tt)
	}
	return den / num
}

// fitCTABandwidth derives one collective CTA's link bandwidth from the
// runs under an NCCL CTA cap (ctas-8, ctas-16). There the GEMM launches
// first and holds every SM to its end, so the capped collective runs after
// it, alone: T_c3 = T_comp + setup + bytes / (CTAs x bandwidth). It returns
// the median of the bandwidths that solve this per run.
func fitCTABandwidth(t *testing.T, p Profile, f sweepfile.File, coll scenarios.Collective) float64 {
	caps := map[string]float64{"ctas-8": 8, "ctas-16": 16}
	var bws []float64
	for _, e := range f.Results {
		n, ok := caps[e.Strategy]
		if e.Result == nil || !ok {
			continue
		}
		sc := recorded(t, e)
		if sc.Comm.Collective != coll {
			continue
		}
		alone := (e.Result.TC3.Median-e.Result.TComp.Median)/1e9 - p.CommSetup[coll]
		bws = append(bws, sc.Comm.LinkBytes(sc.GPUs)/(n*alone))
	}
	if len(bws) == 0 {
		t.Fatalf("no CTA-capped %s in the sweep", coll)
	}
	return math.Round(median(bws)/1e8) * 1e8
}

// realRef holds c3lab's isolated reference ops on the same node (GEMMs
// and collectives, 50 repetitions each).
const realRef = "../cuda/results/2026-11-30-h200x2-gated/c3lab-ref.json"

// fitGEMMEfficiency returns the GEMM efficiency of one element type: the
// median, over its isolated tensor-bound GEMMs (the suite's and the
// reference ops'), of the efficiency that would make the simulator match
// each exactly. A tensor-bound GEMM's time is inversely proportional to the
// efficiency, so that is the current efficiency times simulated / measured.
func fitGEMMEfficiency(t *testing.T, p Profile, f sweepfile.File, d scenarios.DType) float64 {
	var gemms []scenarios.ComputeOp
	var real []float64
	for _, e := range f.Results {
		if e.Result == nil || e.Strategy != "baseline" {
			continue
		}
		sc := recorded(t, e)
		gemms, real = append(gemms, sc.Compute), append(real, e.Result.TComp.Median)
	}
	data, err := os.ReadFile(realRef)
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Ops []struct {
			Kind, Label string
			Time        profiler.Stat
		} `json:"ops"`
	}
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	for _, o := range ref.Ops {
		c := scenarios.ComputeOp{Kind: scenarios.GEMM}
		if o.Kind != "gemm" {
			continue
		}
		if _, err := fmt.Sscanf(o.Label, "gemm %dx%dx%d %s", &c.M, &c.N, &c.K, &c.DType); err != nil {
			t.Fatalf("reference op %q: %v", o.Label, err)
		}
		gemms, real = append(gemms, c), append(real, o.Time.Median)
	}
	b := New(p)
	var effs []float64
	for i, c := range gemms {
		if c.Kind != scenarios.GEMM || c.DType != d {
			continue
		}
		sc := scenarios.Scenario{Name: "fit", GPUs: 2, Compute: c, Comm: scenarios.CommOp{Collective: scenarios.AllGather, Bytes: 1 << 20}}
		o, err := b.Simulate(isolatedCompute(sc))
		if err != nil {
			t.Fatal(err)
		}
		// Only GEMMs the tensor cores bound: a memory-bound one says
		// nothing about the efficiency.
		if o.Explain[0].Bounds[0].Resource == backends.ResTensor {
			effs = append(effs, p.gemmEfficiency(d)*float64(o.Rep.Compute)/real[i])
		}
	}
	if len(effs) == 0 {
		return p.gemmEfficiency(d)
	}
	slices.Sort(effs)
	m := effs[len(effs)/2]
	if len(effs)%2 == 0 {
		m = (effs[len(effs)/2-1] + m) / 2
	}
	return math.Round(m*1000) / 1000
}

// fitParam is one interference constant stage 2 searches.
type fitParam struct {
	name string
	get  func(Profile) float64
	set  func(*Profile, float64)
	grid []float64
}

// steps returns lo, lo+step, ..., hi.
func steps(lo, hi, step float64) []float64 {
	var v []float64
	for x := lo; x <= hi+step/2; x += step {
		v = append(v, math.Round(x/step)*step)
	}
	return v
}

func fitParams() []fitParam {
	ps := []fitParam{
		{"GEMMMemoryStall", func(p Profile) float64 { return p.GEMMMemoryStall },
			func(p *Profile, v float64) { p.GEMMMemoryStall = v }, steps(0, 1, 0.05)},
		{"L2Interference", func(p Profile) float64 { return p.L2Interference },
			func(p *Profile, v float64) { p.L2Interference = v }, steps(0, 0.5, 0.025)},
		{"HBMContention", func(p Profile) float64 { return p.HBMContention },
			func(p *Profile, v float64) { p.HBMContention = v }, steps(0, 0.2, 0.02)},
		{"CommLatencySensitivity", func(p Profile) float64 { return p.CommLatencySensitivity },
			func(p *Profile, v float64) { p.CommLatencySensitivity = v }, steps(0, 5, 0.25)},
		{"ReductionSMBandwidth", func(p Profile) float64 { return p.ReductionSMBandwidth },
			func(p *Profile, v float64) { p.ReductionSMBandwidth = v }, steps(10e9, 150e9, 5e9)},
		{"RestPartitionGEMMLoss", func(p Profile) float64 { return p.RestPartitionGEMMLoss },
			func(p *Profile, v float64) { p.RestPartitionGEMMLoss = v }, steps(0, 0.3, 0.02)},
		{"LaunchGap", func(p Profile) float64 { return p.LaunchGap },
			// Never 0: the second stream's op waits on an event recorded
			// behind the start gate, so it cannot start with the first.
			func(p *Profile, v float64) { p.LaunchGap = v }, []float64{1e-6, 2e-6, 5e-6, 10e-6}},
	}
	return ps
}

// mainStrategies are the strategies whose mean fraction of ideal the fit
// weighs fully.
var mainStrategies = []string{"baseline", "comm-first+prio", "dma", "dma-prio"}

// fitLoss is stage 2's loss: the mean |log error| of T_c3 over every
// replayed run (each run counts, so no constant can trade one collective's
// error against another's), plus the gap in mean fraction of ideal of the
// main strategies and, at a tenth of the weight, of the others.
func fitLoss(t *testing.T, p Profile, sm, dma, red sweepfile.File) float64 {
	all := replay(t, p, sm, func(string) bool { return true })
	all = append(all, replay(t, p, dma, fitDMA)...)
	all = append(all, replay(t, p, red, fitRed)...)
	var loss float64
	for _, r := range all {
		loss += math.Abs(math.Log(r.Sim.TC3.Median/r.Real.TC3.Median)) / float64(len(all))
	}
	for st, f := range summarize(all).Fraction {
		w := 0.1
		if slices.Contains(mainStrategies, st) {
			w = 1
		}
		loss += w * math.Abs(f[1]-f[0])
	}
	b := New(p)
	for _, r := range gpuTestRuns {
		sc := scenarios.Scenario{Name: "gpu-test", GPUs: 2,
			Compute: scenarios.ComputeOp{Kind: scenarios.GEMM, M: 8192, N: 8192, K: 8192, DType: scenarios.BF16},
			Comm:    scenarios.CommOp{Collective: r.coll, Bytes: 256 << 20}}
		o, err := b.Simulate(backends.Experiment{Scenario: sc, Strategy: r.st, Mode: backends.ModeConcurrent, Reps: 1})
		if err != nil {
			t.Fatal(err)
		}
		loss += 0.1 * math.Abs(math.Log(float64(o.Rep.Wall)/r.c3)) / float64(len(gpuTestRuns))
	}
	return loss
}

// gpuTestRuns are the copy-engine reductions TestGPUCopyEngineCollectives
// ran next to a bf16 8192^3 GEMM (backends/cuda/results/
// 2026-11-30-h200x2-session3/gpu-tests-reductions.txt): the add after the
// copies at top priority, and pipelined with them on 8 and 16 SMs, the only
// runs where the reduction kernel is confined to a few SMs for its whole
// life, so they pin ReductionSMBandwidth and ContendedSMBandwidth. c3 is
// the measured T_c3 in nanoseconds.
var gpuTestRuns = []struct {
	coll scenarios.Collective
	st   scenarios.Strategy
	c3   float64
}{
	{scenarios.ReduceScatter, scenarios.Strategy{CommEngine: scenarios.EngineDMA, Launch: scenarios.CommFirst, CommPriority: -5}, 1661.0e3},
	{scenarios.ReduceScatter, scenarios.Strategy{CommEngine: scenarios.EngineDMA, Launch: scenarios.CommFirst, CommSMs: 8}, 2458.0e3},
	{scenarios.ReduceScatter, scenarios.Strategy{CommEngine: scenarios.EngineDMA, Launch: scenarios.CommFirst, CommSMs: 16}, 1762.4e3},
	{scenarios.AllReduce, scenarios.Strategy{CommEngine: scenarios.EngineDMA, Launch: scenarios.CommFirst, CommPriority: -5}, 1925.8e3},
	{scenarios.AllReduce, scenarios.Strategy{CommEngine: scenarios.EngineDMA, Launch: scenarios.CommFirst, CommSMs: 8}, 1542.9e3},
	{scenarios.AllReduce, scenarios.Strategy{CommEngine: scenarios.EngineDMA, Launch: scenarios.CommFirst, CommSMs: 16}, 1743.0e3},
}

// isolatedCompute is the experiment of a scenario's compute op alone.
func isolatedCompute(sc scenarios.Scenario) backends.Experiment {
	return backends.Experiment{Scenario: sc, Mode: backends.ModeCompute, Reps: 1}
}

// cloneProfile deep-copies a profile's maps so a fit can change one.
func cloneProfile(p Profile) Profile {
	q := p
	q.PeakFLOPs = cloneMap(p.PeakFLOPs)
	q.GEMMEfficiency = cloneMap(p.GEMMEfficiency)
	q.LinkEfficiencySM = cloneMap(p.LinkEfficiencySM)
	q.CommCTAs = cloneMap(p.CommCTAs)
	q.CTALinkBandwidth = cloneMap(p.CTALinkBandwidth)
	q.CommHBMPerLinkByte = cloneMap(p.CommHBMPerLinkByte)
	q.CommSetup = cloneMap(p.CommSetup)
	q.DMAHBMPerLinkByte = cloneMap(p.DMAHBMPerLinkByte)
	return q
}

func cloneMap[K comparable, V any](m map[K]V) map[K]V {
	c := make(map[K]V, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// describeFit prints the fitted constants as profile.go spells them.
func describeFit(p Profile) string {
	var b strings.Builder
	pr := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	pr("GEMMEfficiency bf16 %.3f fp16 %.3f fp8 %.3f", p.GEMMEfficiency[scenarios.BF16], p.GEMMEfficiency[scenarios.FP16], p.GEMMEfficiency[scenarios.FP8])
	pr("GEMMMemoryStall %.2f L2Interference %.3f HBMContention %.2f", p.GEMMMemoryStall, p.L2Interference, p.HBMContention)
	for _, c := range scenarios.Collectives {
		pr("%-14s LinkEfficiencySM %.3f (%.0f GB/s) CommSetup %.1f µs CTALinkBandwidth %.1f GB/s", c,
			p.LinkEfficiencySM[c], p.LinkEfficiencySM[c]*p.LinkBandwidth/1e9, p.CommSetup[c]*1e6, p.CTALinkBandwidth[c]/1e9)
	}
	pr("CommLatencySensitivity %.2f LaunchGap %.0f µs", p.CommLatencySensitivity, p.LaunchGap*1e6)
	pr("LinkEfficiencyCE %.3f (%.0f GB/s) CopySyncOverhead %.1f µs", p.LinkEfficiencyCE, p.LinkEfficiencyCE*p.LinkBandwidth/1e9, p.CopySyncOverhead*1e6)
	pr("LinkEfficiencyNCCLCE %.3f (%.0f GB/s) NCCLCESetup %.1f µs", p.LinkEfficiencyNCCLCE, p.LinkEfficiencyNCCLCE*p.LinkBandwidth/1e9, p.NCCLCESetup*1e6)
	pr("ReductionBandwidth %.3f TB/s ReductionSMBandwidth %.1f GB/s ContendedSMBandwidth %.1f GB/s RestPartitionGEMMLoss %.2f", p.ReductionBandwidth/1e12, p.ReductionSMBandwidth/1e9, p.ContendedSMBandwidth/1e9, p.RestPartitionGEMMLoss)
	return b.String()
}
