package sim

import (
	"math"
	"testing"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

func TestParseKernelName(t *testing.T) {
	cases := []struct {
		name string
		ok   bool
		want KernelTile
	}{
		{"nvjet_sm90_tst_128x160_64x5_2x1_v_bz_TNT", true, KernelTile{Family: "nvjet", Types: "tst", TileM: 128, TileN: 160, KStep: 64, Stages: 5, ClusterM: 2, ClusterN: 1}},
		{"nvjet_sm90_qqtst_128x128_128x6_1x4_h_bz_coopA_algo2_TNT", true, KernelTile{Family: "nvjet", Types: "qqtst", TileM: 128, TileN: 128, KStep: 128, Stages: 6, ClusterM: 1, ClusterN: 4}},
		{"nvjet_sm90_hsh_16x384_64x4_1x2_h_bz_TNN", true, KernelTile{Family: "nvjet", Types: "hsh", TileM: 16, TileN: 384, KStep: 64, Stages: 4, ClusterM: 1, ClusterN: 2}},
		{"nvjet_sm90_tst_32x192_64x7_1x2_h_bz_splitK_TNN", true, KernelTile{Family: "nvjet", Types: "tst", TileM: 32, TileN: 192, KStep: 64, Stages: 7, ClusterM: 1, ClusterN: 2, SplitK: true}},
		{"void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_bf16_64x256_64x4_tn_align2>(T1::Params)", true, KernelTile{Family: "cutlass", Types: "bf16", TileM: 64, TileN: 256, KStep: 64, Stages: 4, ClusterM: 1, ClusterN: 1}},
		{"", false, KernelTile{}},
		{"nvjet_sm90_tst", false, KernelTile{}},
		{"nvjet_sm90_tst_128x_64x5", false, KernelTile{}},
		{"nvjet_sm90_tst_0x160_64x5_2x1", false, KernelTile{}},
		{"nvjet_sm90_tst_128x160_64x500_2x1", false, KernelTile{}},
		{"nvjet_sm90_tst_99999x160_64x5_2x1", false, KernelTile{}},
		{"sm90_xmma_gemm_bf16bf16_bf16f32", false, KernelTile{}},
		{"void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_bf16_64x256>", false, KernelTile{}},
	}
	for _, c := range cases {
		got, ok := ParseKernelName(c.name)
		if ok != c.ok || got != c.want {
			t.Errorf("ParseKernelName(%q) = %+v, %v; want %+v, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

func FuzzParseKernelName(f *testing.F) {
	for _, s := range []string{"nvjet_sm90_tst_128x160_64x5_2x1_v_bz_TNT", "cutlass_80_tensorop_f16_s16816gemm_f16_64x256_64x4_tn_align2", "nvjet_", "x_x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		k, ok := ParseKernelName(name)
		if !ok {
			return
		}
		for _, v := range []int{k.TileM, k.TileN, k.KStep, k.Stages, k.ClusterM, k.ClusterN} {
			if v < 1 || v > maxTileDim {
				t.Fatalf("ParseKernelName(%q) = %+v: a dimension out of range", name, k)
			}
		}
	})
}

// tiledProfile is the H200 with per-tile GEMM times and round constants.
func tiledProfile() Profile {
	p := H200()
	p.GEMMTiles = true
	p.GEMMPrologue = 5e-6
	p.GEMMTileEpilogue = 1e-6
	p.KernelFixedCost = 3e-6
	// The tiles alone: no multi-GPU run's extra time.
	p.MultiGPUComputeScale, p.MultiGPUComputeDelay = 0, 0
	return p
}

// gemmAloneTime simulates a GEMM of launch l alone on p.
func gemmAloneTime(t *testing.T, p Profile, l GEMMLaunch) float64 {
	t.Helper()
	p.GEMMLaunches = []GEMMLaunch{l}
	c := scenarios.ComputeOp{Kind: scenarios.GEMM, M: l.M, N: l.N, K: l.K, DType: l.DType}
	sc := scenarios.Scenario{Name: "t", GPUs: 2, Compute: c, Comm: scenarios.CommOp{Collective: scenarios.AllGather, Bytes: 1 << 20}}
	o, err := New(p).Simulate(backends.Experiment{Scenario: sc, Mode: backends.ModeCompute, Reps: 1})
	if err != nil {
		t.Fatal(err)
	}
	return float64(o.Rep.Compute) / 1e9
}

func TestTileQuantization(t *testing.T) {
	p := tiledProfile()
	// Compute-bound shapes: 12 x 11 = 132 tiles of 256 x 128 fill the
	// grid of 132 exactly; 7 x 19 = 133 tiles need a second round for one
	// CTA.
	launch := func(m, n int) GEMMLaunch {
		return GEMMLaunch{M: m, N: n, K: 8192, DType: scenarios.BF16, SMTarget: 132, GridCTAs: 132, ThreadsPerCTA: 384,
			CTAsPerSM: 1, Persistent: true, TileM: 256, TileN: 128, SplitK: 1, Kernel: "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT", Source: LaunchMeasured}
	}
	full := launch(256*12, 128*11)
	over := launch(256*7, 128*19)
	if full.Tiles() != 132 || over.Tiles() != 133 {
		t.Fatalf("tiles %d and %d; want 132 and 133", full.Tiles(), over.Tiles())
	}
	fixed := p.KernelFixedCost + p.GEMMPrologue
	a, b := gemmAloneTime(t, p, full)-fixed, gemmAloneTime(t, p, over)-fixed
	if r := b / a; math.Abs(r-2) > 0.01 {
		t.Errorf("133 tiles on 132 CTAs take %.3gx the time of 132 (%.4g against %.4g s); want 2x", r, b, a)
	}
	// The roofline (GEMMTiles off) gives 133/132.
	p.GEMMTiles = false
	a, b = gemmAloneTime(t, p, full), gemmAloneTime(t, p, over)
	if r := b / a; r > 1.05 {
		t.Errorf("roofline: 133 tiles take %.3gx the time of 132; want about 1.01x", r)
	}
}

func TestTileMemoryAndComputeBound(t *testing.T) {
	p := tiledProfile()
	cases := []struct {
		name   string
		l      GEMMLaunch
		memory bool
	}{
		{"decode 16x49152x12288 fp16", GEMMLaunch{M: 16, N: 49152, K: 12288, DType: scenarios.FP16, SMTarget: 132, GridCTAs: 128, ThreadsPerCTA: 384, CTAsPerSM: 1, Persistent: true, TileM: 128, TileN: 256, SplitK: 1, Kernel: "nvjet_sm90_hsh_16x384_64x4_1x2_h_bz_TNN", Source: LaunchMeasured}, true},
		{"square 8192^3 bf16", GEMMLaunch{M: 8192, N: 8192, K: 8192, DType: scenarios.BF16, SMTarget: 132, GridCTAs: 132, ThreadsPerCTA: 384, CTAsPerSM: 1, Persistent: true, TileM: 256, TileN: 128, SplitK: 1, Kernel: "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT", Source: LaunchMeasured}, false},
	}
	for _, c := range cases {
		c3 := scenarios.ComputeOp{Kind: scenarios.GEMM, M: c.l.M, N: c.l.N, K: c.l.K, DType: c.l.DType}
		tl, g := tileGEMM(p, c3, c.l, 132, 1)
		if !tl.Parsed {
			t.Errorf("%s: the kernel name did not parse", c.name)
		}
		if got := tl.Mem > tl.Main; got != c.memory {
			t.Errorf("%s: memory-bound %v (main %.3g s, mem %.3g s); want %v", c.name, got, tl.Main, tl.Mem, c.memory)
		}
		d := gemmAloneTime(t, p, c.l)
		if c.memory {
			// HBM as a whole bounds it: its bytes at HBM bandwidth, plus the fixed parts.
			want := g.traffic/p.HBMBandwidth + p.KernelFixedCost + p.GEMMPrologue
			if math.Abs(d/want-1) > 0.15 {
				t.Errorf("%s: %.4g s; want about %.4g s (its bytes at HBM bandwidth)", c.name, d, want)
			}
		} else {
			want := float64(tl.Rounds)*tl.Tile() + p.KernelFixedCost + p.GEMMPrologue
			if math.Abs(d/want-1) > 0.01 {
				t.Errorf("%s: %.4g s; want %.4g s (%d rounds of %.4g s)", c.name, d, want, tl.Rounds, tl.Tile())
			}
		}
	}
	// The table's tile of an fp16 kernel (128 x 256) gives way to its name's (16 x 384).
	l := cases[0].l
	tl, _ := tileGEMM(p, scenarios.ComputeOp{Kind: scenarios.GEMM, M: l.M, N: l.N, K: l.K, DType: l.DType}, l, 132, 1)
	if tl.Launch.TileM != 16 || tl.Launch.TileN != 384 || tl.Rounds != 1 {
		t.Errorf("fp16 decode: tile %dx%d, %d rounds; want 16x384 in 1 round", tl.Launch.TileM, tl.Launch.TileN, tl.Rounds)
	}
	// A name that does not parse keeps the table's tile, marked.
	l.Kernel = "some_other_kernel"
	tl, _ = tileGEMM(p, scenarios.ComputeOp{Kind: scenarios.GEMM, M: l.M, N: l.N, K: l.K, DType: l.DType}, l, 132, 1)
	if tl.Parsed || tl.Launch.TileM != 128 || tl.Launch.TileN != 256 || tl.KStep != 64 {
		t.Errorf("unparsed name: %+v; want the table's 128x256, K step 64, not parsed", tl)
	}
}

func TestEpilogueShareFallsWithK(t *testing.T) {
	p := tiledProfile()
	prev := 1.0
	for _, k := range []int{256, 1024, 4096, 16384} {
		c := scenarios.ComputeOp{Kind: scenarios.GEMM, M: 8192, N: 8192, K: k, DType: scenarios.BF16}
		l := GEMMLaunch{M: 8192, N: 8192, K: k, DType: scenarios.BF16, SMTarget: 132, GridCTAs: 132, ThreadsPerCTA: 384, CTAsPerSM: 1, Persistent: true, TileM: 256, TileN: 128, SplitK: 1, Kernel: "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT", Source: LaunchMeasured}
		tl, _ := tileGEMM(p, c, l, 132, 1)
		share := tl.Epilogue / tl.Tile()
		if share >= prev {
			t.Errorf("K %d: epilogue share %.3f, not below %.3f at the K before", k, share, prev)
		}
		prev = share
	}
}

func TestTiledLaunchInWaves(t *testing.T) {
	// The sm80 CUTLASS launch of the fp16 decode chunks: 384 CTAs of one
	// 64 x 256 tile each, in waves on 132 SMs: 3 waves of one tile each.
	p := tiledProfile()
	p.WaveJitter = 0
	l := GEMMLaunch{M: 4, N: 98304, K: 12288, DType: scenarios.FP16, SMTarget: 132, GridCTAs: 384, ThreadsPerCTA: 128,
		CTAsPerSM: 1, Persistent: false, TileM: 64, TileN: 256, SplitK: 1,
		Kernel: "void cutlass::Kernel2<cutlass_80_tensorop_f16_s16816gemm_f16_64x256_64x4_tn_align2>(T1::Params)", Source: LaunchMeasured}
	c := scenarios.ComputeOp{Kind: scenarios.GEMM, M: l.M, N: l.N, K: l.K, DType: l.DType}
	tl, _ := tileGEMM(p, c, l, 132, 1)
	if !tl.Parsed || tl.CTAs != 384 || tl.Rounds != 1 {
		t.Fatalf("tiling %+v; want 384 CTAs of 1 tile from the parsed name", tl)
	}
	// HBM-bound as a whole, or not: the time is at least 3 waves of tiles.
	d := gemmAloneTime(t, p, l) - p.KernelFixedCost - p.GEMMPrologue
	if w := 3 * tl.Tile(); d < w*0.99 {
		t.Errorf("%.4g s; want at least 3 waves of %.4g s", d, tl.Tile())
	}
}

// TestMultiGPUCompute checks the multi-GPU run's extra GEMM time: a
// tensor-bound GEMM's main loops MultiGPUComputeScale slower and
// MultiGPUComputeDelay more from two GPUs on, nothing on one, and the
// profile it came from left as it was.
func TestMultiGPUCompute(t *testing.T) {
	p := H200()
	p.MultiGPUComputeScale, p.MultiGPUComputeDelay = 0.05, 4e-6
	gemm := scenarios.ComputeOp{Kind: scenarios.GEMM, M: 8192, N: 8192, K: 8192, DType: scenarios.BF16}
	alone := func(p Profile, gpus int) float64 {
		t.Helper()
		sc := scenarios.Scenario{Name: "g", GPUs: gpus, Compute: gemm, Comm: scenarios.CommOp{Collective: scenarios.AllGather, Bytes: 1 << 20}}
		if gpus == 1 {
			sc.Comm = scenarios.CommOp{Collective: scenarios.HostToDevice, Bytes: 1 << 20}
		}
		o, err := New(p).Simulate(backends.Experiment{Scenario: sc, Mode: backends.ModeCompute, Reps: 1})
		if err != nil {
			t.Fatal(err)
		}
		return float64(o.Rep.Compute) / 1e9
	}
	off := p
	off.MultiGPUComputeScale, off.MultiGPUComputeDelay = 0, 0
	one, two, eight, plain := alone(p, 1), alone(p, 2), alone(p, 8), alone(off, 2)
	if one != plain {
		t.Errorf("one GPU: %.6g s with the multi-GPU terms, %.6g s without; want the same", one, plain)
	}
	if two != eight {
		t.Errorf("two GPUs %.6g s, eight %.6g s; want the same", two, eight)
	}
	// The main loops are nearly all of a large square GEMM: about 5 % + 4 µs.
	if want := plain*1.05 + 4e-6; math.Abs(two/want-1) > 0.005 {
		t.Errorf("two GPUs: %.6g s; want about %.6g s (%.6g s x 1.05 + 4 µs)", two, want, plain)
	}
	if p.GEMMEfficiency[scenarios.BF16] != H200().GEMMEfficiency[scenarios.BF16] || p.GEMMPrologue != H200().GEMMPrologue {
		t.Error("simulating a two-GPU run changed the profile")
	}
}
