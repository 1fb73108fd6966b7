package sim

import (
	"encoding/json"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// ceSizes reads one of the copy-engine size sweeps (TestGPUCopyEngineSizes,
// 2 x H200): per collective and bytes per rank, the dma path's median in µs.
func ceSizes(t *testing.T, name string) map[scenarios.Collective]map[int64]float64 {
	t.Helper()
	data, err := os.ReadFile("../cuda/results/2026-11-30-h200x2-session3/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Sizes []struct {
			Bytes      int64              `json:"bytes_per_rank"`
			Collective string             `json:"collective"`
			Median     map[string]float64 `json:"median_us"`
		} `json:"sizes"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	out := map[scenarios.Collective]map[int64]float64{}
	for _, s := range f.Sizes {
		c := scenarios.Collective(s.Collective)
		if out[c] == nil {
			out[c] = map[int64]float64{}
		}
		out[c][s.Bytes] = s.Median["dma"]
	}
	return out
}

// TestCopyStreamSyncMeasured checks the built-in CopyStreamSyncOverhead
// (fitted in stage 1 to the sweeps' isolated copy-engine collectives,
// 84 MiB to 1 GiB) against a measurement the fit never saw: the same
// all-gathers and all-to-alls of 64 KiB to 1 MiB per rank (too small for
// bandwidth to matter) on 2 x H200, every transfer cut over the 3
// engines' streams (ce-sizes-split-always.json) against one copy on one
// stream (ce-sizes-one-copy.json). The two estimates of a stream's cost
// must agree within a quarter.
func TestCopyStreamSyncMeasured(t *testing.T) {
	split := ceSizes(t, "ce-sizes-split-always.json")
	whole := ceSizes(t, "ce-sizes-one-copy.json")
	var per []float64
	for _, c := range []scenarios.Collective{scenarios.AllGather, scenarios.AllToAll} {
		for _, b := range []int64{64 << 10, 256 << 10, 1 << 20} {
			s, w := split[c][b], whole[c][b]
			if s <= 0 || w <= 0 {
				t.Fatalf("%s at %d bytes per rank: no measurement (%v, %v)", c, b, s, w)
			}
			per = append(per, (s-w)/2*1e-6)
		}
	}
	slices.Sort(per)
	got := medianOf(per)
	fit := H200().CopyStreamSyncOverhead
	t.Logf("per extra copy stream: %.2f µs at the median of small copies (%.2f to %.2f); fitted to the sweeps %.2f µs", got*1e6, per[0]*1e6, per[len(per)-1]*1e6, fit*1e6)
	if math.Abs(got-fit) > 0.25*fit {
		t.Errorf("small copies give %.2f µs per extra stream; the built-in H200 has %.2f fitted", got*1e6, fit*1e6)
	}
}

// TestCopyStreamSync shows the effect: an all-gather whose transfers are
// cut over three engines pays two streams' sync more than the same one
// whole on one engine, and nothing else changes where one engine already
// outruns the link (the built-in H200 on 2 GPUs).
func TestCopyStreamSync(t *testing.T) {
	p := H200()
	sc := gemmAG()
	comm := func(p Profile, st scenarios.Strategy) float64 {
		t.Helper()
		res, err := New(p).Run(t.Context(), backends.Experiment{Scenario: sc, Strategy: st, Mode: backends.ModeComm, Reps: 1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return float64(res.Reps[0].Comm) / 1e9
	}
	three := scenarios.Strategy{CommEngine: scenarios.EngineDMA}
	one := three
	one.CopyEngines = 1
	phase := sc.Comm.LinkBytes(sc.GPUs)
	if _, _, n := copyPhase(p, sc, three, phase); n != 3 {
		t.Fatalf("the split phase uses %d streams, want 3", n)
	}
	if _, _, n := copyPhase(p, sc, one, phase); n != 1 {
		t.Fatalf("the one-engine phase uses %d streams, want 1", n)
	}
	if p.CopyEngineBandwidth < p.LinkBandwidth*p.LinkEfficiencyCE {
		t.Fatal("one engine no longer outruns the link: the test needs another scenario")
	}
	gap := comm(p, three) - comm(p, one)
	if want := 2 * p.CopyStreamSyncOverhead; math.Abs(gap-want) > 0.05*want {
		t.Errorf("three streams cost %.2f µs more than one; want %.2f", gap*1e6, want*1e6)
	}
	free := p
	free.CopyStreamSyncOverhead = 0
	if g := comm(free, three) - comm(free, one); math.Abs(g) > 0.05*p.CopyStreamSyncOverhead {
		t.Errorf("without the term three streams cost %.2f µs more than one; want 0", g*1e6)
	}
	if got, want := CopyPhaseSync(p, sc, three, phase), p.CopySyncOverhead+2*p.CopyStreamSyncOverhead; math.Abs(got-want) > 1e-12 {
		t.Errorf("CopyPhaseSync = %v, want %v", got, want)
	}
}

// TestCopyChainSync shows the chained phase: an all-reduce's second copy
// phase pays CopyChainSyncOverhead after the reduction, where its first
// pays CopySyncOverhead; a reduce-scatter has no second phase.
func TestCopyChainSync(t *testing.T) {
	comm := func(p Profile, coll scenarios.Collective) float64 {
		t.Helper()
		sc := gemmAG()
		sc.Comm = scenarios.CommOp{Collective: coll, Bytes: 16 << 20}
		st := scenarios.Strategy{CommEngine: scenarios.EngineDMA}
		res, err := New(p).Run(t.Context(), backends.Experiment{Scenario: sc, Strategy: st, Mode: backends.ModeComm, Reps: 1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return float64(res.Reps[0].Comm) / 1e9
	}
	p := H200()
	const d = 5e-6
	chain, first := p, p
	chain.CopyChainSyncOverhead += d
	first.CopySyncOverhead += d
	for _, tc := range []struct {
		name         string
		p            Profile
		coll         scenarios.Collective
		wantIncrease float64
	}{
		{"the chained phase, all-reduce", chain, scenarios.AllReduce, d},
		{"the chained phase, reduce-scatter", chain, scenarios.ReduceScatter, 0},
		{"the first phase only, all-reduce", first, scenarios.AllReduce, d},
		{"the first phase, reduce-scatter", first, scenarios.ReduceScatter, d},
	} {
		if got := comm(tc.p, tc.coll) - comm(p, tc.coll); math.Abs(got-tc.wantIncrease) > 0.02*d {
			t.Errorf("%s: %.2f µs more; want %.2f", tc.name, got*1e6, tc.wantIncrease*1e6)
		}
	}
}
