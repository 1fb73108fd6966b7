package heuristics

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/backends/sim"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
)

func scenario(compute scenarios.ComputeOp, coll scenarios.Collective, bytes scenarios.ByteSize) scenarios.Scenario {
	return scenarios.Scenario{Name: "s", GPUs: 2, Compute: compute, Comm: scenarios.CommOp{Collective: coll, Bytes: bytes}}
}

var (
	bigGEMM   = scenarios.ComputeOp{Kind: scenarios.GEMM, M: 8192, N: 8192, K: 8192, DType: scenarios.BF16}
	smallMGEM = scenarios.ComputeOp{Kind: scenarios.GEMM, M: 64, N: 28672, K: 8192, DType: scenarios.BF16}
)

func TestMemoryBound(t *testing.T) {
	for _, tc := range []struct {
		c    scenarios.ComputeOp
		want bool
	}{
		{bigGEMM, false},
		{smallMGEM, true},
		{scenarios.ComputeOp{Kind: scenarios.GEMM, M: 256, N: 32768, K: 6144, DType: scenarios.FP8}, true},
		{scenarios.ComputeOp{Kind: scenarios.Stream, Bytes: 1 << 30}, true},
		{scenarios.ComputeOp{Kind: scenarios.GEMM, M: 2048, N: 2048, K: 2048, DType: scenarios.FP32}, false},
	} {
		if got := MemoryBound(tc.c); got != tc.want {
			t.Errorf("%s: memory-bound %v, want %v", tc.c, got, tc.want)
		}
	}
}

func TestAdvise(t *testing.T) {
	simCaps := sim.New(sim.H200()).Capabilities()
	noDMAReductions := simCaps
	noDMAReductions.DMAReductions = false
	for _, tc := range []struct {
		name   string
		sc     scenarios.Scenario
		caps   backends.Capabilities
		want   scenarios.Strategy
		reason string
	}{
		{"large all-gather goes to the copy engines", scenario(bigGEMM, scenarios.AllGather, 224<<20), simCaps,
			scenarios.Strategy{Launch: scenarios.CommFirst, CommPriority: -5, CommEngine: scenarios.EngineDMA}, "copy engines"},
		{"small all-gather stays on the SMs, no partition next to a compute-bound GEMM", scenario(bigGEMM, scenarios.AllGather, 1<<20), simCaps,
			scenarios.Strategy{Launch: scenarios.CommFirst, CommPriority: -5}, "overhead"},
		{"a memory-bound GEMM can give SMs to the collective", scenario(smallMGEM, scenarios.AllGather, 1<<20), simCaps,
			scenarios.Strategy{Launch: scenarios.CommFirst, CommPriority: -5, CommSMs: 32}, "memory-bound"},
		{"reduce-scatter next to a compute-bound GEMM: copy engines, the add after them, the GEMM leaving 20 SMs", scenario(bigGEMM, scenarios.ReduceScatter, 224<<20), simCaps,
			scenarios.Strategy{Launch: scenarios.CommFirst, CommPriority: -5, CommEngine: scenarios.EngineDMA, ComputeSMs: 112}, "SM time is the same"},
		{"all-reduce next to a memory-bound op: copy engines, no GEMM partition", scenario(smallMGEM, scenarios.AllReduce, 224<<20), simCaps,
			scenarios.Strategy{Launch: scenarios.CommFirst, CommPriority: -5, CommEngine: scenarios.EngineDMA}, "copy engines"},
		{"a small all-reduce stays on NCCL", scenario(bigGEMM, scenarios.AllReduce, 1<<20), simCaps,
			scenarios.Strategy{Launch: scenarios.CommFirst, CommPriority: -5}, "synchronization overhead"},
		{"no copy-engine reductions: reduce-scatter stays on the SMs", scenario(bigGEMM, scenarios.ReduceScatter, 224<<20), noDMAReductions,
			scenarios.Strategy{Launch: scenarios.CommFirst, CommPriority: -5}, "no copy-engine reduction"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := Advise(tc.sc, tc.caps)
			if a.Strategy.Normalize() != tc.want.Normalize() {
				t.Errorf("advice %s, want %s", a.Strategy, tc.want)
			}
			if !strings.Contains(strings.Join(a.Reasons, " "), tc.reason) {
				t.Errorf("reasons lack %q: %v", tc.reason, a.Reasons)
			}
			if errs := scenarios.ValidateStrategy(a.Strategy, tc.caps.Limits); len(errs) > 0 {
				t.Errorf("advice is not a valid strategy: %v", errs)
			}
			if len(a.Candidates) < 3 || a.Candidates[0].Name != "advice" {
				t.Errorf("candidates %v", a.Candidates)
			}
		})
	}
}

// On the simulator the advice beats plain C3 on a balanced scenario.
func TestTuneOnTheSimulator(t *testing.T) {
	b := sim.New(sim.H200())
	sc, err := scenarios.Find("llama3-70b-fsdp-ffn-up-ag-224m")
	if err != nil {
		t.Fatal(err)
	}
	a := Advise(sc, b.Capabilities())
	trials, best, err := Tune(context.Background(), b, sc, a.Candidates, profiler.Options{Reps: 3})
	if err != nil || best < 0 {
		t.Fatalf("tune: best %d, %v", best, err)
	}
	frac := func(name string) float64 {
		for _, tr := range trials {
			if tr.Name == name && tr.Fraction != nil {
				return *tr.Fraction
			}
		}
		t.Fatalf("no trial %s", name)
		return 0
	}
	if frac("advice") <= frac("baseline") {
		t.Errorf("advice %.2f does not beat baseline %.2f", frac("advice"), frac("baseline"))
	}
}

// scripted is a backend whose answers a test sets: the compute op takes
// 1000 ns alone, the collective 800 ns, and the concurrent run the time
// c3 gives for its strategy; a strategy c3 lacks fails.
type scripted struct {
	caps backends.Capabilities
	c3   map[scenarios.Strategy]int64
	// dmaComm, when set, is the collective's time alone on copy engines.
	dmaComm int64
	// later, when set, is the concurrent time of a strategy from its
	// (after+1)-th concurrent run on: what a measurement again finds.
	later map[scenarios.Strategy]int64
	after int
	calls map[scenarios.Strategy]int
}

func (b *scripted) Name() string { return "scripted" }
func (b *scripted) Devices() []backends.DeviceInfo {
	return []backends.DeviceInfo{{Name: "gpu"}, {Index: 1, Name: "gpu"}}
}
func (b *scripted) Capabilities() backends.Capabilities { return b.caps }
func (b *scripted) Close() error                        { return nil }

func (b *scripted) Run(_ context.Context, ex backends.Experiment, _ backends.EventSink) (backends.RunResult, error) {
	rep := backends.Rep{Wall: 1000, Compute: 1000}
	switch ex.Mode {
	case backends.ModeComm:
		rep = backends.Rep{Wall: 800, Comm: 800}
		if b.dmaComm > 0 && ex.Strategy.Normalize().CommEngine == scenarios.EngineDMA {
			rep = backends.Rep{Wall: b.dmaComm, Comm: b.dmaComm}
		}
	case backends.ModeConcurrent:
		t, ok := b.c3[ex.Strategy]
		if !ok {
			return backends.RunResult{}, errors.New("device lost")
		}
		if b.calls == nil {
			b.calls = map[scenarios.Strategy]int{}
		}
		b.calls[ex.Strategy]++
		if l, ok := b.later[ex.Strategy]; ok && b.calls[ex.Strategy] > b.after {
			t = l
		}
		rep = backends.Rep{Wall: t, Compute: min(t, 1000), Comm: t}
	}
	res := backends.RunResult{Mode: ex.Mode}
	for range ex.Reps {
		res.Reps = append(res.Reps, rep)
	}
	return res, nil
}

// Tune picks the candidate whose measured T_c3 is lowest: not the first,
// not the advice, not one that failed; the earlier of two that tie; the
// baseline over a candidate slower than it; none when all fail.
func TestTunePicksTheFastest(t *testing.T) {
	caps := sim.New(sim.H200()).Capabilities()
	sc := scenario(bigGEMM, scenarios.AllGather, 64<<20)
	// Four distinct strategies the simulator's limits accept.
	cands := []profiler.NamedStrategy{
		{Name: "advice", Strategy: scenarios.Strategy{Launch: scenarios.CommFirst, CommPriority: -5}},
		{Name: "baseline", Strategy: scenarios.Strategy{}},
		{Name: "prio", Strategy: scenarios.Strategy{CommPriority: -5}},
		{Name: "sms", Strategy: scenarios.Strategy{CommSMs: 32}},
	}
	const fail = -1 // the candidate's concurrent run fails
	for _, tc := range []struct {
		name string
		c3   []int64 // T_c3 per candidate, in order; fail for a failure
		best string  // "" for none
	}{
		{"the fastest is a later candidate", []int64{1200, 1500, 900, 1000}, "prio"},
		{"a tie goes to the earlier candidate", []int64{1000, 1500, 1000, 1000}, "advice"},
		{"a failed candidate is never the best", []int64{fail, 1500, 1200, fail}, "prio"},
		{"the baseline beats a slower advice", []int64{1800, 1500, 1600, 1700}, "baseline"},
		{"the best is the last", []int64{1400, 1500, 1300, 1100}, "sms"},
		{"all fail", []int64{fail, fail, fail, fail}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &scripted{caps: caps, c3: map[scenarios.Strategy]int64{}}
			for i, c := range cands {
				if tc.c3[i] != fail {
					b.c3[c.Strategy.Normalize()] = tc.c3[i]
				}
			}
			trials, best, err := Tune(context.Background(), b, sc, cands, profiler.Options{Reps: 3})
			if err != nil {
				t.Fatal(err)
			}
			if len(trials) != len(cands) {
				t.Fatalf("%d trials for %d candidates", len(trials), len(cands))
			}
			got := ""
			if best >= 0 {
				got = trials[best].Name
			}
			if got != tc.best {
				t.Errorf("best %q (index %d), want %q; trials %+v", got, best, tc.best, trials)
			}
			if best >= 0 {
				// The best is measured again, and the trials no interval
				// tells apart from it (here: the same T_c3) are ties.
				if re := trials[best].Remeasured; re == nil || re.Err != "" || re.TC3 != float64(tc.c3[best]) {
					t.Errorf("best re-measured as %+v, want T_c3 %d", re, tc.c3[best])
				}
				others := 0
				for i, c := range tc.c3 {
					wantTied := c == tc.c3[best] && i != best
					if wantTied {
						others++
					}
					if i != best && trials[i].Tied != wantTied {
						t.Errorf("%s tied %v, want %v", trials[i].Name, trials[i].Tied, wantTied)
					}
				}
				if trials[best].Tied != (others > 0) {
					t.Errorf("the best says tied %v with %d others tied", trials[best].Tied, others)
				}
			}
			for i, tr := range trials {
				if i != best && tr.Remeasured != nil {
					t.Errorf("%s, not the best, was measured again", tr.Name)
				}
				if tr.Name != cands[i].Name {
					t.Errorf("trial %d is %s, want %s (the candidates' order)", i, tr.Name, cands[i].Name)
				}
				failed := tc.c3[i] == fail
				switch {
				case failed && (tr.Err == "" || tr.Fraction != nil):
					t.Errorf("%s failed but its trial says %+v", tr.Name, tr)
				case !failed && (tr.Err != "" || tr.TC3 != float64(tc.c3[i]) || tr.Fraction == nil):
					t.Errorf("%s: trial %+v, want T_c3 %d ns and a fraction", tr.Name, tr, tc.c3[i])
				}
			}
		})
	}
}

// Tune ranks by the uplift over the serial default, not by F: copy
// engines that make the collective faster alone (400 ns against NCCL's
// 800) shrink their own ideal, so a copy-engine run with a lower F can
// still be the faster one. Here F says the baseline (48 % against 30 %),
// U says dma (1800/1250 against 1800/1300).
func TestTuneRanksByUpliftNotFraction(t *testing.T) {
	caps := sim.New(sim.H200()).Capabilities()
	sc := scenario(bigGEMM, scenarios.AllGather, 64<<20)
	dma := scenarios.Strategy{CommEngine: scenarios.EngineDMA}
	b := &scripted{caps: caps, dmaComm: 400, c3: map[scenarios.Strategy]int64{
		scenarios.Strategy{}.Normalize(): 1300, dma.Normalize(): 1250,
	}}
	cands := []profiler.NamedStrategy{{Name: "baseline"}, {Name: "dma", Strategy: dma}}
	trials, best, err := Tune(context.Background(), b, sc, cands, profiler.Options{Reps: 3})
	if err != nil {
		t.Fatal(err)
	}
	if best != 1 {
		t.Fatalf("best %d, want dma; trials %+v", best, trials)
	}
	base, d := trials[0], trials[1]
	if *base.Fraction <= *d.Fraction {
		t.Errorf("the case needs F to favour the baseline: F %v against %v", *base.Fraction, *d.Fraction)
	}
	if base.Uplift != 1800.0/1300 || d.Uplift != 1800.0/1250 {
		t.Errorf("U %v and %v, want 1800/1300 and 1800/1250 (both over NCCL's serial time)", base.Uplift, d.Uplift)
	}
}

// Tune never answers with a strategy slower than the default: a "best"
// whose lead does not hold when measured again (here sms, 900 ns on its
// first measurement, 1600 ns again, against the baseline's 1500) yields
// the baseline, with the reason. The baseline is measured even when the
// caller's candidates lack it (appended last); a best that holds, or one
// measured again slower than at first but still ahead of the baseline,
// stays the answer.
func TestTuneFallsBackToTheBaseline(t *testing.T) {
	caps := sim.New(sim.H200()).Capabilities()
	sc := scenario(bigGEMM, scenarios.AllGather, 64<<20)
	prio := scenarios.Strategy{Launch: scenarios.CommFirst, CommPriority: -5}
	sms := scenarios.Strategy{CommSMs: 32}
	opt := profiler.Options{Reps: 3}
	// How many concurrent runs one measurement makes, from a plain one.
	count := &scripted{caps: caps, c3: map[scenarios.Strategy]int64{sms.Normalize(): 900}}
	if _, err := profiler.Measure(context.Background(), count, sc, sms, opt); err != nil {
		t.Fatal(err)
	}
	perMeasure := count.calls[sms.Normalize()]
	if perMeasure == 0 {
		t.Fatal("a measurement made no concurrent run")
	}
	for _, tc := range []struct {
		name     string
		cands    []profiler.NamedStrategy
		again    int64 // sms's T_c3 when measured again
		want     string
		fallback bool
	}{
		{"the best is slower again: the baseline, appended", []profiler.NamedStrategy{{Name: "prio", Strategy: prio}, {Name: "sms", Strategy: sms}}, 1600, "baseline", true},
		{"the best is slower again: the caller's baseline", []profiler.NamedStrategy{{Name: "sms", Strategy: sms}, {Name: "default", Strategy: scenarios.Strategy{}}, {Name: "prio", Strategy: prio}}, 1600, "default", true},
		{"slower again but still ahead of the baseline", []profiler.NamedStrategy{{Name: "prio", Strategy: prio}, {Name: "sms", Strategy: sms}}, 1400, "sms", false},
		{"the best holds", []profiler.NamedStrategy{{Name: "prio", Strategy: prio}, {Name: "sms", Strategy: sms}}, 900, "sms", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &scripted{caps: caps, after: perMeasure,
				c3:    map[scenarios.Strategy]int64{scenarios.Strategy{}.Normalize(): 1500, prio.Normalize(): 1700, sms.Normalize(): 900},
				later: map[scenarios.Strategy]int64{sms.Normalize(): tc.again}}
			trials, best, err := Tune(context.Background(), b, sc, tc.cands, opt)
			if err != nil {
				t.Fatal(err)
			}
			if best < 0 || trials[best].Name != tc.want {
				t.Fatalf("answer %d, want %s; trials %+v", best, tc.want, trials)
			}
			names := []string{}
			for _, tr := range trials {
				names = append(names, tr.Name)
			}
			if !slices.Contains(names, "baseline") && !slices.Contains(names, "default") {
				t.Errorf("trials %v lack the baseline", names)
			}
			if len(trials) != 3 {
				t.Errorf("%d trials %v, want 3 (the baseline once)", len(trials), names)
			}
			got := trials[best].Fallback
			if tc.fallback != (got != "") || (tc.fallback && !strings.Contains(got, "sms, measured again")) {
				t.Errorf("fallback %q, want one: %v", got, tc.fallback)
			}
			i := slices.Index(names, "sms")
			if re := trials[i].Remeasured; re == nil || re.TC3 != float64(tc.again) {
				t.Errorf("sms measured again as %+v, want T_c3 %d", re, tc.again)
			}
			for _, tr := range trials {
				if tr.Fallback != "" && tr.Name != trials[best].Name {
					t.Errorf("%s, not the answer, has a fallback %q", tr.Name, tr.Fallback)
				}
			}
		})
	}
}

// A cancelled tuning run stops before the next candidate and says why.
func TestTuneStopsWhenCancelled(t *testing.T) {
	b := &scripted{caps: sim.New(sim.H200()).Capabilities(), c3: map[scenarios.Strategy]int64{{}: 1000}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	trials, best, err := Tune(ctx, b, scenario(bigGEMM, scenarios.AllGather, 64<<20), []profiler.NamedStrategy{{Name: "baseline"}}, profiler.Options{Reps: 1})
	if !errors.Is(err, context.Canceled) || len(trials) != 0 || best != -1 {
		t.Errorf("trials %v, best %d, error %v; want none, -1 and context.Canceled", trials, best, err)
	}
}

// For reductions the candidates hold both copy-engine designs: the add
// after the copies at top priority on the whole GPU, and the add pipelined
// with the copies on the 20 SMs a GEMM on an aligned 112-SM group leaves.
func TestReductionCandidates(t *testing.T) {
	caps := sim.New(sim.H200()).Capabilities()
	a := Advise(scenario(bigGEMM, scenarios.AllReduce, 224<<20), caps)
	want := map[string]scenarios.Strategy{
		"dma":               {Launch: scenarios.CommFirst, CommPriority: -5, CommEngine: scenarios.EngineDMA},
		"dma-gemm-112-pipe": {Launch: scenarios.CommFirst, CommEngine: scenarios.EngineDMA, ComputeSMs: 112, CommSMs: 20},
	}
	for _, c := range a.Candidates {
		if w, ok := want[c.Name]; ok {
			if c.Strategy.Normalize() != w.Normalize() {
				t.Errorf("%s candidate %s, want %s", c.Name, c.Strategy, w)
			}
			delete(want, c.Name)
		}
	}
	if len(want) > 0 {
		t.Errorf("candidates %v lack %v", a.Candidates, want)
	}
}

func TestLeaveSMs(t *testing.T) {
	for _, tc := range []struct{ sms, step, want int }{
		{132, 8, 112}, // H200
		{304, 8, 256}, // MI300X-sized
		{8, 8, 0},     // nothing to spare
	} {
		if got := leaveSMs(scenarios.Limits{SMs: tc.sms, SMStep: tc.step}); got != tc.want {
			t.Errorf("leaveSMs(%d SMs, step %d) = %d, want %d", tc.sms, tc.step, got, tc.want)
		}
	}
}

// A host copy goes to the copy engines, with reasons that say why not the
// copy kernel and that priority does not act on copies; without copy
// engines the copy kernel is launched first at top priority.
func TestAdviseHostCopy(t *testing.T) {
	caps := sim.New(sim.H200()).Capabilities()
	noCE := caps
	noCE = noCE.Without(scenarios.CapDMA)
	for _, tc := range []struct {
		name    string
		coll    scenarios.Collective
		bytes   scenarios.ByteSize
		caps    backends.Capabilities
		want    scenarios.Strategy
		reasons []string
	}{
		{"d2h", scenarios.DeviceToHost, 112 << 20, caps, scenarios.Strategy{CommEngine: scenarios.EngineDMA},
			[]string{"copy engines: they take no SM", "not c3lab's SM copy kernel", "do not act on copy engines"}},
		{"swap", scenarios.HostSwap, 96 << 20, caps, scenarios.Strategy{CommEngine: scenarios.EngineDMA},
			[]string{"each direction on an engine of its own"}},
		{"small h2d", scenarios.HostToDevice, 512 << 10, caps, scenarios.Strategy{CommEngine: scenarios.EngineDMA},
			[]string{"fixed cost (about 15 µs"}},
		{"no copy engines", scenarios.HostToDevice, 64 << 20, noCE, scenarios.Strategy{Launch: scenarios.CommFirst, CommPriority: -5},
			[]string{"has no copy engines"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := scenario(bigGEMM, tc.coll, tc.bytes)
			sc.GPUs = 1
			a := Advise(sc, tc.caps)
			if a.Strategy != tc.want {
				t.Errorf("advice %s, want %s", a.Strategy, tc.want)
			}
			all := strings.Join(a.Reasons, "\n")
			for _, r := range tc.reasons {
				if !strings.Contains(all, r) {
					t.Errorf("reasons lack %q:\n%s", r, all)
				}
			}
			if strings.Contains(all, "collective") || strings.Contains(all, "NCCL") {
				t.Errorf("host-copy reasons speak of collectives:\n%s", all)
			}
			if len(a.Candidates) < 2 || a.Candidates[0].Strategy != tc.want {
				t.Errorf("candidates %v", a.Candidates)
			}
		})
	}
}

// Advice never rests on a guess: while p2p-load's per-CTA load bandwidth
// is the model's estimate (its provenance), its candidates are left out
// and a reason says why; once a profile file says it was measured, they
// are ranked.
func TestAdviceLeavesOutUnmeasuredCandidates(t *testing.T) {
	sc, err := scenarios.Find("llama3-70b-tp-ffn-down-rs-112m-2gpu")
	if err != nil {
		t.Fatal(err)
	}
	ranked := func(a Advice) bool {
		for _, p := range a.Predictions {
			if strings.HasPrefix(p.Name, "p2p-") {
				return true
			}
		}
		return strings.HasPrefix(a.Advised, "p2p-")
	}
	notRanked := func(a Advice) bool {
		return slices.ContainsFunc(a.Reasons, func(r string) bool {
			return strings.HasPrefix(r, "not ranked: p2p-load") && strings.Contains(r, "PeerLoadCTABandwidth")
		})
	}
	guess := sim.New(sim.H200())
	a, err := AdviseModel(context.Background(), BackendModel{Backend: guess}, sc, guess.Capabilities(), AdviseOptions{TopK: 30})
	if err != nil {
		t.Fatal(err)
	}
	if ranked(a) || !notRanked(a) {
		t.Errorf("with a guessed constant: advised %s, predictions %v, reasons %q", a.Advised, a.Candidates, a.Reasons)
	}
	pf := sim.ProfileFile{Format: sim.ProfileFormat, Base: "h200", Profile: sim.H200(),
		Provenance: map[string]sim.Provenance{"PeerLoadCTABandwidth": {Source: sim.SourceMeasured}}} // as a measured profile would say
	measured := sim.NewFromFile(pf)
	a, err = AdviseModel(context.Background(), BackendModel{Backend: measured}, sc, measured.Capabilities(), AdviseOptions{TopK: 30})
	if err != nil {
		t.Fatal(err)
	}
	if !ranked(a) || notRanked(a) {
		t.Errorf("with the constant set: advised %s, predictions %v, reasons %q", a.Advised, a.Candidates, a.Reasons)
	}
}
