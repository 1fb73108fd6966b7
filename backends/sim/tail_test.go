package sim

import (
	"math"
	"testing"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// A persistent GEMM whose tiles leave its last round partly empty frees
// the SMs of the CTAs that round leaves without a tile as it starts: a
// small copy kernel queued behind it ends inside it, about a round before
// its end, as on one H200 (results/2026-12-03-h200x1-s15: 49-113 µs
// before). Behind a GEMM whose tiles fill whole rounds the wait lasts to
// the GEMM's end, and NCCL's kernel waits for the end by the empirical
// rule (job.skipsTails). The GEMM's own time does not move.
func TestPersistentGEMMTailFreesSMs(t *testing.T) {
	p := H200()
	for _, tc := range []struct {
		name    string
		m, n, k int
		coll    scenarios.Collective
		gpus    int
		inside  bool // the comm op ends before the GEMM
	}{
		{"d2h copy behind 8192^3 (2048 tiles: 15 rounds + 68)", 8192, 8192, 8192, scenarios.DeviceToHost, 1, true},
		{"h2d copy behind 8192x10240x8192 (2080 tiles: 15 rounds + 100)", 8192, 10240, 8192, scenarios.HostToDevice, 1, true},
		{"h2d copy behind 4096x28672x8192 (3300 tiles: 25 whole rounds)", 4096, 28672, 8192, scenarios.HostToDevice, 1, false},
		{"all-gather behind 8192^3", 8192, 8192, 8192, scenarios.AllGather, 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := scenarios.Scenario{Name: "tail", GPUs: tc.gpus,
				Compute: scenarios.ComputeOp{Kind: scenarios.GEMM, M: tc.m, N: tc.n, K: tc.k, DType: scenarios.BF16},
				Comm:    scenarios.CommOp{Collective: tc.coll, Bytes: 1 << 20}}
			st := scenarios.Strategy{}
			if tc.coll.IsHostCopy() {
				st.CommCTAs = 8
			}
			o := simPair(t, p, sc, st, backends.ModeConcurrent)
			g, c := spanOf(t, o, backends.OpCompute), spanOf(t, o, backends.OpComm)
			alone := spanOf(t, simPair(t, p, sc, st, backends.ModeCompute), backends.OpCompute)
			if d := math.Abs(float64(g.End-g.Start)/float64(alone.End-alone.Start) - 1); d > 0.01 {
				t.Errorf("the GEMM took %d ns beside the copy, %d alone", g.End-g.Start, alone.End-alone.Start)
			}
			round := float64(alone.End-alone.Start) / math.Ceil(float64(tileCount(p, sc.Compute))/float64(p.SMs))
			if tc.inside {
				if before := float64(g.End - c.End); before < 0.2*round || before > round {
					t.Errorf("the copy ends %.0f µs before the GEMM; want within its last round of %.0f µs", before/1e3, round/1e3)
				}
			} else if c.Start < g.End {
				t.Errorf("the %s starts at %d ns, before the GEMM's end %d ns", tc.coll, c.Start, g.End)
			}
		})
	}
}

// tileCount is a GEMM's tiles in its whole-GPU launch.
func tileCount(p Profile, c scenarios.ComputeOp) int {
	t, _ := tileGEMM(p, c, p.gemmLaunch(c, p.SMs), p.SMs, 1)
	return t.Launch.Tiles()
}

// A swap's cap on the copy kernel follows its CTA count between the
// measured points (interpolated in log2 of the count), flat beyond them;
// without the table it is HostCopyKernelDuplexBandwidth.
func TestHostCopyDuplexByCTAs(t *testing.T) {
	p := H200()
	for _, tc := range []struct {
		ctas int
		want float64
	}{
		{1, 48.2e9}, {4, 48.2e9}, {8, 54.2e9}, {16, 60.2e9}, {32, 63.9e9}, {48, 63.9e9 + (73.8e9-63.9e9)*math.Log2(1.5)}, {64, 73.8e9}, {512, 73.8e9},
	} {
		if got := p.hostCopyDuplex(tc.ctas); math.Abs(got/tc.want-1) > 1e-9 {
			t.Errorf("%d CTAs: %.2f GB/s, want %.2f", tc.ctas, got/1e9, tc.want/1e9)
		}
	}
	p.HostCopyKernelDuplexByCTAs = nil
	if got := p.hostCopyDuplex(8); got != p.HostCopyKernelDuplexBandwidth {
		t.Errorf("without the table: %.2f GB/s, want HostCopyKernelDuplexBandwidth %.2f", got/1e9, p.HostCopyKernelDuplexBandwidth/1e9)
	}
	// A swap alone at 8 CTAs runs at the table's rate, one direction at
	// the kernel's one-way cap whatever the count.
	swap := scenarios.Scenario{Name: "swap", GPUs: 1,
		Compute: scenarios.ComputeOp{Kind: scenarios.GEMM, M: 4096, N: 4096, K: 4096, DType: scenarios.BF16},
		Comm:    scenarios.CommOp{Collective: scenarios.HostSwap, Bytes: 48 << 20}}
	q := H200()
	for _, ctas := range []int{4, 64} {
		o := simPair(t, q, swap, scenarios.Strategy{CommCTAs: ctas}, backends.ModeComm)
		c := spanOf(t, o, backends.OpComm)
		gbps := float64(2*48<<20) / float64(c.End-c.Start)
		if want := q.hostCopyDuplex(ctas) / 1e9; math.Abs(gbps/want-1) > 0.05 {
			t.Errorf("a 48 MiB swap alone on %d CTAs: %.1f GB/s, want about %.1f", ctas, gbps, want)
		}
	}
}

// A kernel launched in clusters starts on a last round's SMs as a lone
// CTA's does: behind an nvjet GEMM of clusters of 2, one H200 let 7 of 48
// small nvjet GEMMs of clusters of 2 end inside it
// (results/2026-12-03-h200x1-s15, tail-runs.txt), and c3lab's copy
// kernel in clusters of 4 and 8, one CTA to an SM, started a round before
// the end of two such GEMMs and filled the SMs their rounds free
// (results/2026-12-04-h200x1-s24, call 5). Small GEMMs of clusters of 2
// and of 4 both end inside the big one.
func TestTailSMsWhateverTheClusters(t *testing.T) {
	for _, kernel := range []string{"nvjet_sm90_tst_64x8_64x16_1x2_h_bz_TNT", "nvjet_sm90_tst_64x8_64x16_2x2_h_bz_TNT"} {
		t.Run(kernel, func(t *testing.T) {
			p := withLaunch(H200(), GEMMLaunch{M: 256, N: 256, K: 256, DType: scenarios.BF16, SMTarget: 132, GridCTAs: 4,
				ThreadsPerCTA: 384, CTAsPerSM: 1, Persistent: true, TileM: 64, TileN: 8, SplitK: 1, Source: LaunchMeasured, Kernel: kernel})
			sc := graphOf(stream("big", gemmOp("big", 8192, 8192, 8192, 1)), stream("small", gemmOp("small", 256, 256, 256, 48)))
			sc.GPUs = 1
			o := simGraph(t, p, sc, scenarios.Strategy{}, backends.ModeConcurrent, graphOptions{})
			end := kernelSpans(o, "big")[0].End
			in := 0
			for _, s := range kernelSpans(o, "small") {
				if s.End <= end {
					in++
				}
			}
			if in == 0 {
				t.Errorf("none of 48 small GEMMs ends inside the big one's last round")
			}
		})
	}
}
