package sim

import (
	"context"
	"math"
	"testing"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
)

// measureOn is measure on a simulator of profile p.
func measureOn(t *testing.T, p Profile, sc scenarios.Scenario, st scenarios.Strategy) profiler.Result {
	t.Helper()
	r, err := profiler.Measure(context.Background(), New(p), sc, st, profiler.Options{Reps: 1})
	if err != nil {
		t.Fatalf("measure %s under %s: %v", sc.Name, st, err)
	}
	return r
}

// pairOf is a one-pair scenario of a bf16 GEMM and a collective on 2 GPUs.
func pairOf(m, n, k int, coll scenarios.Collective, bytes scenarios.ByteSize) scenarios.Scenario {
	return scenarios.Scenario{
		Name: "pair", GPUs: 2,
		Compute: scenarios.ComputeOp{Kind: scenarios.GEMM, M: m, N: n, K: k, DType: scenarios.BF16},
		Comm:    scenarios.CommOp{Collective: coll, Bytes: bytes},
	}
}

// simPair runs a pair once and returns its outcome.
func simPair(t *testing.T, p Profile, sc scenarios.Scenario, st scenarios.Strategy, mode backends.Mode) Outcome {
	t.Helper()
	o, err := New(p).Simulate(backends.Experiment{Scenario: sc, Strategy: st, Mode: mode, Reps: 1})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// spanOf returns the first span of an op on a track (kernel spans only
// for SM tracks).
func spanOf(t *testing.T, o Outcome, op backends.Op) backends.Span {
	t.Helper()
	for _, s := range o.Spans {
		if s.Op == op {
			return s
		}
	}
	t.Fatalf("no span of %s", op)
	return backends.Span{}
}

// The launch table decides, in a pair as in a graph, whether a GEMM frees
// SMs before its end. A collective launched after the GEMM at priority -5
// waits for a persistent GEMM to end (the SMs its last round frees are no
// use to NCCL's clustered kernel); next to the same GEMM launched in
// waves it starts at the first wave boundary (not before: no CTA is
// evicted); at equal priority it waits for the GEMM's pending CTAs, which
// arrived first, and starts in the last wave.
func TestPairGEMMWavesFromLaunchTable(t *testing.T) {
	p := H200()
	sc := pairOf(16384, 8192, 8192, scenarios.AllGather, 16<<20)
	waved := inWaves(p, sc.Compute)
	l := waved.gemmLaunch(sc.Compute, p.SMs)
	waves := float64(ceilDiv(l.GridCTAs, p.SMs))
	for _, tc := range []struct {
		name   string
		p      Profile
		prio   int
		lo, hi float64 // the collective's start, as a share of the GEMM's span
	}{
		{"persistent, priority -5", p, -5, 0.98, 1.01},
		{"in waves, equal priority", waved, 0, 1 - 1.5/waves, 1.01},
		{"in waves, priority -5", waved, -5, 0.5 / waves, 1.5 / waves},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := simPair(t, tc.p, sc, scenarios.Strategy{CommPriority: tc.prio}, backends.ModeConcurrent)
			g, c := spanOf(t, o, backends.OpCompute), spanOf(t, o, backends.OpComm)
			if f := float64(c.Start-g.Start) / float64(g.End-g.Start); f < tc.lo || f > tc.hi {
				t.Errorf("the all-gather starts %.3f of the way through the GEMM (%d waves); want %.3f..%.3f", f, int(waves), tc.lo, tc.hi)
			}
		})
	}
}

// Within partitions: a GEMM in waves confined to a compute partition
// frees SMs of its partition only, which a collective confined to the
// comm partition never waits for; and the waves of a GEMM do not open
// the comm partition's SMs to it.
func TestWavesStayInTheirPartition(t *testing.T) {
	p := H200()
	sc := pairOf(16384, 8192, 8192, scenarios.AllGather, 16<<20)
	st := scenarios.Strategy{CommSMs: 32}
	waved := inWaves(p, sc.Compute)
	// The table's entry is for the whole device: on 100 SMs the rule
	// decides (persistent); list the partition's launch in waves too.
	cp := sc.Compute
	l := waved.gemmLaunch(cp, p.SMs-32)
	l.Persistent, l.GridCTAs, l.Source = false, l.Tiles(), LaunchMeasured
	waved.GEMMLaunches = append(waved.GEMMLaunches, l)
	o := simPair(t, waved, sc, st, backends.ModeConcurrent)
	g, c := spanOf(t, o, backends.OpCompute), spanOf(t, o, backends.OpComm)
	if c.Start > g.Start+ns(p.CommSetup[scenarios.AllGather])+ns(p.LaunchGap)+1000 {
		t.Errorf("the all-gather in its partition starts at %d ns, after the GEMM's %d ns: it waited for SMs", c.Start, g.Start)
	}
	for _, s := range o.Samples {
		if s.Metric == backends.MetricSMsCompute && s.Value > float64(p.SMs-32)+1e-9 {
			t.Fatalf("the GEMM held %v SMs at %d ns, more than its partition's %d", s.Value, s.Time, p.SMs-32)
		}
	}
}

// A persistent launch whose grid fills only part of the SMs (here two
// CTAs per SM, so 132 CTAs hold 66 SMs) leaves the rest to a collective
// launched after it, which then does not wait for the GEMM; the GEMM,
// on half the SMs, takes about twice as long as on all of them.
func TestPersistentGridLeavesSMs(t *testing.T) {
	p := H200()
	sc := pairOf(16384, 8192, 8192, scenarios.AllGather, 16<<20)
	half := p
	l := p.gemmLaunch(sc.Compute, p.SMs)
	l.CTAsPerSM, l.GridCTAs, l.Source = 2, p.SMs, LaunchMeasured
	half.GEMMLaunches = append([]GEMMLaunch{l}, p.GEMMLaunches...)
	full := simPair(t, p, sc, scenarios.Strategy{}, backends.ModeConcurrent)
	o := simPair(t, half, sc, scenarios.Strategy{}, backends.ModeConcurrent)
	g, c := spanOf(t, o, backends.OpCompute), spanOf(t, o, backends.OpComm)
	if c.Start > g.Start+ns(p.LaunchGap)+1000 {
		t.Errorf("the all-gather starts at %d ns next to a GEMM on 66 SMs (GEMM from %d ns): it waited", c.Start, g.Start)
	}
	if fg := spanOf(t, full, backends.OpCompute); float64(g.End-g.Start) < 1.8*float64(fg.End-fg.Start) {
		t.Errorf("the GEMM on 66 SMs takes %d ns, on 132 %d ns; want about twice", g.End-g.Start, fg.End-fg.Start)
	}
	if fc := spanOf(t, full, backends.OpComm); fc.Start < spanOf(t, full, backends.OpCompute).End {
		t.Errorf("next to a GEMM on every SM the all-gather starts at %d ns, before the GEMM's end %d ns", fc.Start, spanOf(t, full, backends.OpCompute).End)
	}
}

// HBM is one pool: copy engines lose bandwidth to an HBM-heavy GEMM (low
// arithmetic intensity) and not to a compute-bound one; serving the
// copies first (a large CopyHBMWeight, the model before issue 17) keeps
// them at their rate next to both.
func TestCopiesLoseHBMToHBMHeavyGEMM(t *testing.T) {
	p := H200()
	first := p
	first.CopyHBMWeight = 1e6
	dma := scenarios.Strategy{CommEngine: scenarios.EngineDMA}
	heavy := pairOf(32768, 32768, 64, scenarios.AllGather, 256<<20)
	light := pairOf(8192, 8192, 8192, scenarios.AllGather, 256<<20)
	for _, tc := range []struct {
		name         string
		p            Profile
		sc           scenarios.Scenario
		minCE, maxCE float64 // the copies' slowdown
	}{
		{"shared pool, HBM-heavy GEMM", p, heavy, 1.1, 2},
		{"shared pool, compute-bound GEMM", p, light, 0.99, 1.02},
		{"copies first, HBM-heavy GEMM", first, heavy, 0.99, 1.02},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := measureOn(t, tc.p, tc.sc, dma)
			t.Logf("copies %.2fx, GEMM %.2fx", r.CommSlowdown, r.CompSlowdown)
			if r.CommSlowdown < tc.minCE || r.CommSlowdown > tc.maxCE {
				t.Errorf("the copies slow %.2fx next to %s; want %.2f..%.2f", r.CommSlowdown, tc.sc.Compute, tc.minCE, tc.maxCE)
			}
		})
	}
}

// Every compute kernel pays its fixed cost, in a pair as in a graph: a
// GEMM alone runs KernelFixedCost longer than its CTAs, and its span
// starts that much after its launch.
func TestPairKernelFixedCost(t *testing.T) {
	p := H200()
	sc := pairOf(128, 128, 128, scenarios.AllGather, 1<<20)
	none := p
	none.KernelFixedCost = 0
	with := simPair(t, p, sc, scenarios.Strategy{}, backends.ModeCompute)
	without := simPair(t, none, sc, scenarios.Strategy{}, backends.ModeCompute)
	if d := with.Rep.Compute - without.Rep.Compute; d != ns(p.KernelFixedCost) {
		t.Errorf("the fixed cost adds %d ns to a tiny GEMM; want %d", d, ns(p.KernelFixedCost))
	}
	if s := spanOf(t, with, backends.OpCompute).Start; s != ns(p.KernelFixedCost) {
		t.Errorf("the GEMM's span starts at %d ns; want its fixed cost, %d ns", s, ns(p.KernelFixedCost))
	}
	g := simGraph(t, p, graphOf(stream("compute", gemmOp("g", 128, 128, 128, 1))), scenarios.Strategy{}, backends.ModeCompute, graphOptions{})
	if g.Rep.Compute != with.Rep.Compute {
		t.Errorf("the same GEMM takes %d ns in a graph, %d ns as a pair", g.Rep.Compute, with.Rep.Compute)
	}
}

// The launch gap, in a pair as in a graph: the op enqueued second becomes
// runnable LaunchGap after the first (the gated protocol's event wait), so
// a collective on an idle GPU starts that much later; in a graph a
// stream's first instance, enqueued after another stream's, does too.
func TestLaunchGapPairAndGraph(t *testing.T) {
	p := H200()
	p.HostLaunchGap = 0 // the host's own pace aside: the gap alone
	sc := pairOf(8192, 8192, 8192, scenarios.AllGather, 16<<20)
	st := scenarios.Strategy{CommSMs: 32}
	o := simPair(t, p, sc, st, backends.ModeConcurrent)
	if c := spanOf(t, o, backends.OpComm).Start; c != ns(p.LaunchGap+p.KernelFixedCost) {
		t.Errorf("the pair's all-gather starts at %d ns; want the launch gap and its fixed cost, %d ns", c, ns(p.LaunchGap+p.KernelFixedCost))
	}
	g := simGraph(t, p, graphOf(stream("compute", gemmOp("g", 8192, 8192, 8192, 1)), stream("comm", collOp("ag", scenarios.AllGather, 16<<20, 2))),
		st, backends.ModeConcurrent, graphOptions{})
	ag := kernelSpans(g, "ag")
	if ag[0].Start != ns(p.LaunchGap+p.KernelFixedCost) {
		t.Errorf("the graph's first all-gather starts at %d ns; want the launch gap and its fixed cost, %d ns", ag[0].Start, ns(p.LaunchGap+p.KernelFixedCost))
	}
	// Its second instance follows its own stream's first: no gap.
	if d := ag[1].Start - ag[0].End; d != ns(p.KernelFixedCost) {
		t.Errorf("the second all-gather starts %d ns after the first ends; want its fixed cost alone, %d ns", d, ns(p.KernelFixedCost))
	}
	if gs := kernelSpans(g, "g")[0].Start; gs != ns(p.KernelFixedCost) {
		t.Errorf("the graph's GEMM, enqueued first, starts at %d ns; want its fixed cost %d ns", gs, ns(p.KernelFixedCost))
	}
}

// TestPartitionSMLinkBandwidth checks the partition model: an SM
// collective confined to fewer SMs than its CTAs moves at
// PartitionSMLinkBandwidth per SM of the partition (its time in C3, next
// to a short op, is its setup plus the bytes over SMs x that bandwidth);
// in a partition at least as large as its CTA count it keeps the CTA model
// but pays no latency stall (it shares no SM) when PartitionLatencyShare
// has no entry for it; without the constant the CTA model and the stall
// hold everywhere.
func TestPartitionSMLinkBandwidth(t *testing.T) {
	sc, err := scenarios.Find("llama3-70b-tp-swiglu-stream-ag-224m-2gpu")
	if err != nil {
		t.Fatal(err)
	}
	commInC3 := func(bw, stall float64, sms int) float64 {
		p := H200()
		p.PartitionLatencyShare = nil // the stall's share: TestPartitionLatencyShare
		if bw > 0 {
			p.PartitionSMLinkBandwidth = map[scenarios.Collective]float64{scenarios.AllGather: bw}
		}
		if stall >= 0 {
			p.CommLatencySensitivity = stall
		}
		r, err := profiler.Measure(context.Background(), New(p), sc, scenarios.Strategy{CommSMs: sms}, profiler.Options{Reps: 1})
		if err != nil {
			t.Fatal(err)
		}
		return r.TCommInC3.Median / 1e9
	}
	p := H200()
	bytes := sc.Comm.LinkBytes(sc.GPUs)
	for _, bw := range []float64{6e9, 10e9} {
		want := p.CommSetup[scenarios.AllGather] + bytes/(16*bw)
		if got := commInC3(bw, -1, 16); math.Abs(got/want-1) > 0.05 {
			t.Errorf("at 16 SMs and %.0f GB/s per SM the all-gather took %.0f µs in C3, want about %.0f µs", bw/1e9, 1e6*got, 1e6*want)
		}
	}
	// 32 SMs, as many as the all-gather's CTAs: the CTA model without
	// the stall.
	if with, noStall, plain := commInC3(6e9, -1, 32), commInC3(0, 0, 32), commInC3(0, -1, 32); with != noStall || with >= plain {
		t.Errorf("32 SMs: %.1f µs under the partition model, %.1f µs by the CTA model without the stall, %.1f µs with it", 1e6*with, 1e6*noStall, 1e6*plain)
	}
	if with, without := commInC3(6e9, -1, 16), commInC3(0, -1, 16); with == without {
		t.Error("the constant changed nothing at 16 SMs")
	}
	// Unconfined, the constant changes nothing.
	if with, without := commInC3(6e9, -1, 0), commInC3(0, -1, 0); with != without {
		t.Errorf("no partition: %.1f µs with the constant, %.1f µs without", 1e6*with, 1e6*without)
	}
}

// TestPartitionLatencyShare checks the stall a partitioned collective
// keeps: beside the AdamW stream op, the all-reduce in a partition of 32
// SMs (as many as its CTAs) pays PartitionLatencyShare of the
// CommLatencySensitivity stall. At share 1 it takes as long as under the
// CTA model, stall in full; at share 0 less; at a share in between as
// long as with share 1 and the sensitivity scaled by it. Alone, or with no
// partition, the share changes nothing.
func TestPartitionLatencyShare(t *testing.T) {
	sc, err := scenarios.Find("llama3-70b-tp-dp-adam-stream-ar-160m-2gpu")
	if err != nil {
		t.Fatal(err)
	}
	comm := func(share, sensitivity float64, st scenarios.Strategy, mode backends.Mode) float64 {
		p := H200()
		p.PartitionSMLinkBandwidth = map[scenarios.Collective]float64{scenarios.AllReduce: 14e9}
		p.PartitionLatencyShare = map[scenarios.Collective]float64{scenarios.AllReduce: share}
		p.CommLatencySensitivity = sensitivity
		s := spanOf(t, simPair(t, p, sc, st, mode), backends.OpComm)
		return float64(s.End - s.Start)
	}
	part, sens := scenarios.Strategy{CommSMs: 32}, 4.0
	none, full := comm(0, sens, part, backends.ModeConcurrent), comm(1, sens, part, backends.ModeConcurrent)
	if none >= full {
		t.Errorf("in 32 SMs beside the stream op: %.1f µs at share 0, %.1f at 1; want share 1 slower", none/1e3, full/1e3)
	}
	p := H200()
	p.CommLatencySensitivity = sens
	plain := spanOf(t, simPair(t, p, sc, part, backends.ModeConcurrent), backends.OpComm)
	if d := float64(plain.End - plain.Start); math.Abs(d/full-1) > 1e-9 {
		t.Errorf("share 1: %.1f µs; the CTA model with its stall: %.1f µs", full/1e3, d/1e3)
	}
	for _, share := range []float64{0.3, 0.61} {
		if a, b := comm(share, sens, part, backends.ModeConcurrent), comm(1, share*sens, part, backends.ModeConcurrent); math.Abs(a/b-1) > 1e-9 || a <= none || a >= full {
			t.Errorf("share %.2f: %.1f µs; with the sensitivity scaled instead %.1f µs; want those equal, between %.1f and %.1f", share, a/1e3, b/1e3, none/1e3, full/1e3)
		}
	}
	for _, c := range []struct {
		name string
		st   scenarios.Strategy
		mode backends.Mode
	}{
		{"alone in its partition", part, backends.ModeComm},
		{"beside the stream op, no partition", scenarios.Strategy{}, backends.ModeConcurrent},
	} {
		if a, b := comm(0, sens, c.st, c.mode), comm(1, sens, c.st, c.mode); a != b {
			t.Errorf("%s: %.1f µs at share 0, %.1f at 1; want no change", c.name, a/1e3, b/1e3)
		}
	}
}

// Under LateCTASetup a kernel's CTAs that get SMs after its first ones
// spend its setup themselves. A collective launched after a persistent
// GEMM of 128 CTAs gets the 4 SMs the GEMM leaves: off, its handshake
// ends there and the rest of its CTAs start moving data as soon as the
// GEMM ends; on, they spend the handshake first (the decode GEMM beside
// its all-to-all on two H200s: measured 178 µs, against 155 µs off and
// 173 µs on before any refit). A collective alone, whose CTAs all start
// together, and a GEMM that holds every SM do not change; a GEMM in
// waves pays its prologue once per wave.
func TestLateCTASetup(t *testing.T) {
	base := H200()
	sc := pairOf(64, 16384, 6144, scenarios.AllToAll, 48<<20)
	l := base.gemmLaunch(sc.Compute, base.SMs)
	l.GridCTAs, l.CTAsPerSM, l.Persistent, l.Source = base.SMs-4, 1, true, LaunchMeasured
	p := withLaunch(base, l)
	on, off := p, p
	on.LateCTASetup, off.LateCTASetup = true, false
	setup := inKernel(p, p.CommSetup[scenarios.AllToAll])

	tail := func(pr Profile) float64 {
		o := simPair(t, pr, sc, scenarios.Strategy{}, backends.ModeConcurrent)
		return float64(spanOf(t, o, backends.OpComm).End - spanOf(t, o, backends.OpCompute).End)
	}
	if d := (tail(on) - tail(off)) / 1e9; d < 0.7*setup || d > 1.05*setup {
		t.Errorf("the all-to-all ends %.1f µs later after the GEMM with late CTAs paying the setup; want about the setup, %.1f µs", d*1e6, setup*1e6)
	}
	for _, mode := range []backends.Mode{backends.ModeComm, backends.ModeCompute} {
		a := simPair(t, on, sc, scenarios.Strategy{}, mode)
		b := simPair(t, off, sc, scenarios.Strategy{}, mode)
		if a.Rep.Wall != b.Rep.Wall {
			t.Errorf("%s alone: %d ns with late setup, %d ns without; want the same", mode, a.Rep.Wall, b.Rep.Wall)
		}
	}

	gemm := pairOf(16384, 8192, 8192, scenarios.AllGather, 16<<20)
	waved := inWaves(base, gemm.Compute)
	wl := waved.gemmLaunch(gemm.Compute, base.SMs)
	waves := math.Ceil(float64(wl.GridCTAs) / float64(base.SMs))
	won, woff := waved, waved
	won.LateCTASetup, woff.LateCTASetup = true, false
	a := simPair(t, won, gemm, scenarios.Strategy{}, backends.ModeCompute)
	b := simPair(t, woff, gemm, scenarios.Strategy{}, backends.ModeCompute)
	want := (waves - 1) * base.GEMMPrologue
	if d := float64(a.Rep.Wall-b.Rep.Wall) / 1e9; d < 0.8*want || d > 1.2*want {
		t.Errorf("a GEMM of %.0f waves takes %.1f µs longer with late setup; want a prologue per later wave, %.1f µs", waves, d*1e6, want*1e6)
	}
}
