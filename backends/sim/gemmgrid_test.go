package sim

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// The GEMM shape grids measured on one H200 (TestGPUGEMMShapeGrid,
// backends/cuda/results/2026-12-02-h200x1-s7): GEMMs none of the suite's
// scenarios has, alone on the whole GPU and on the 68 SMs comm-sms-64
// leaves. The first is a designed grid (decode, small K, squares, prefill,
// long K), the second 100 random shapes drawn and measured apart.
var gemmGridFiles = []string{
	"../cuda/results/2026-12-02-h200x1-s7/gemm-grid.json",
	"../cuda/results/2026-12-02-h200x1-s7/gemm-grid-b.json",
}

// gridEntry is one measured shape and placement of a grid.
type gridEntry struct {
	M, N, K   int
	DType     scenarios.DType `json:"dtype"`
	SMTarget  int             `json:"sm_target"`
	Placement string          `json:"placement"`
	Time      struct {
		Median float64 `json:"median_ns"`
	} `json:"time"`
}

func (e gridEntry) op() scenarios.ComputeOp {
	return scenarios.ComputeOp{Kind: scenarios.GEMM, M: e.M, N: e.N, K: e.K, DType: e.DType}
}

func loadGEMMGrid(t *testing.T, path string) []gridEntry {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the GEMM grid: %v", err)
	}
	var g struct {
		Ops    []gridEntry `json:"ops"`
		Placed []gridEntry `json:"placed"`
	}
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(g.Ops) == 0 {
		t.Fatalf("%s: no whole-GPU GEMM", path)
	}
	return append(g.Ops, g.Placed...)
}

// gridErrors simulates every entry alone with p and returns the relative
// errors (simulated / measured - 1) per placement.
func gridErrors(t *testing.T, p Profile, entries []gridEntry) map[string][]float64 {
	t.Helper()
	b := New(p)
	out := map[string][]float64{}
	for _, e := range entries {
		st := scenarios.Strategy{}
		if e.SMTarget > 0 {
			st.CommSMs = p.SMs - e.SMTarget
		}
		sc := scenarios.Scenario{Name: "gemm-grid", GPUs: 1, Compute: e.op(),
			Comm: scenarios.CommOp{Collective: scenarios.HostToDevice, Bytes: 64 << 10}}
		res, err := b.Run(t.Context(), backends.Experiment{Scenario: sc, Strategy: st, Mode: backends.ModeCompute, Reps: 1}, nil)
		if err != nil {
			t.Fatalf("%s on %s: %v", e.op(), e.Placement, err)
		}
		rel := float64(res.Reps[0].Compute)/e.Time.Median - 1
		out[e.Placement] = append(out[e.Placement], rel)
		if os.Getenv("C3LAB_GRID_VERBOSE") != "" {
			fmt.Printf("%-10s %-28s meas %9.1f sim %9.1f %+6.1f%%\n", e.Placement, e.op(), e.Time.Median/1e3, float64(res.Reps[0].Compute)/1e3, 100*rel)
		}
	}
	return out
}

// absStats is the median and 90th percentile (nearest rank) of |v|.
func absStats(v []float64) (med, p90 float64) {
	a := make([]float64, len(v))
	for i, x := range v {
		a[i] = math.Abs(x)
	}
	slices.Sort(a)
	if len(a) == 0 {
		return math.NaN(), math.NaN()
	}
	return medianOf(a), a[max(0, int(math.Ceil(0.9*float64(len(a))))-1)]
}

// withoutGridLaunches is p with the grids' measured launches taken out of
// its table: the grids' shapes then take the tile rule's launch, as a
// shape a user brings does.
func withoutGridLaunches(t *testing.T, p Profile) Profile {
	t.Helper()
	grid := map[scenarios.ComputeOp]bool{}
	for _, f := range gemmGridFiles {
		for _, e := range loadGEMMGrid(t, f) {
			grid[e.op()] = true
		}
	}
	p.GEMMLaunches = slices.DeleteFunc(slices.Clone(p.GEMMLaunches), func(l GEMMLaunch) bool {
		return grid[scenarios.ComputeOp{Kind: scenarios.GEMM, M: l.M, N: l.N, K: l.K, DType: l.DType}]
	})
	return p
}

// TestGEMMGrid scores the calibrated profile's GEMM alone against the two
// grids, once with the launches ncu measured for them (the embedded table
// has them: what the model's time is worth given the kernel) and once
// with the tile rule's (what a shape outside the table gets), and fails
// when a figure is worse than the committed ceiling. The tile rule before
// the current one was 8.2 / 39.8 % (median / p90) off on the first grid
// and 10.4 / 43.4 % on the second on the whole GPU. Since the GEMM
// constants are fitted to one-GPU time (MultiGPUComputeScale, model.md)
// the whole GPU comes to 3.0 / 10.4 and 4.0 / 14.5 % with the measured
// launches (6.4 / 17.0 and 5.0 / 15.7 before, signed +6.2 and +4.1 %),
// 3.2 / 9.5 and 3.2 / 14.7 % with the rule's (5.6 / 13.6 and 4.3 / 11.0:
// the rule's long-K split-K launches now come out 15-27 % fast, where the
// larger prologue had hidden it). On the 68-SM rest of a partition (where
// the older rule still decides) the measured GEMM runs 1.0x to 3.4x its
// whole-GPU time, by its kernel's cluster size; with RestClusterLoss the
// measured launches come to 9.7 / 31.5 and 11.3 / 38.3 % (the p90s rose
// from 26.8 and 33.6 with the one-GPU GEMM constants), the rule's, which
// name no cluster, 10.6 / 35.2 and 12.1 / 30.7 % (model.md). The refit
// with the copy phases' fixed costs moved RestPartitionGEMMLoss from
// 0.066 to 0.076: on the rest of the partition the measured launches come
// to 9.8 / 30.9 and 11.9 / 37.7 %, the rule's 10.6 / 34.6 and 12.5 /
// 31.4 %. Since the measured GEMM placements (GEMMPlacements) the sweeps'
// GEMMs on partitions come from the table, so only shapes it lacks (the
// decomposed chunks) still inform RestPartitionGEMMLoss, and the refit
// moved it from 0.063 to 0.046: the measured launches come to 10.3 / 31.5
// and 10.7 / 39.3 %, the rule's 11.2 / 36.4 and 11.1 / 31.0 % (the grids'
// shapes are not in the table). The twenty-first session's refit moved it
// from 0.049 to 0.030: 9.6 / 32.1 and 10.4 / 40.0 % with the measured
// launches, 11.3 / 37.3 and 10.8 / 32.0 % with the rule's.
func TestGEMMGrid(t *testing.T) {
	pf, err := LoadProfileFile("profiles/h200-fit.yaml")
	if err != nil {
		t.Fatal(err)
	}
	measured := CloneProfile(pf.Profile)
	measured.GEMMLaunches = H200().GEMMLaunches
	rule := withoutGridLaunches(t, measured)
	for _, tc := range []struct {
		launches string
		p        Profile
		grid     int
		// ceilings, median and p90 of |error|, per placement
		full, rest [2]float64
	}{
		{"measured", measured, 0, [2]float64{0.035, 0.11}, [2]float64{0.105, 0.325}},
		{"measured", measured, 1, [2]float64{0.045, 0.15}, [2]float64{0.12, 0.405}},
		{"rule", rule, 0, [2]float64{0.035, 0.10}, [2]float64{0.115, 0.375}},
		{"rule", rule, 1, [2]float64{0.035, 0.15}, [2]float64{0.13, 0.32}},
	} {
		errs := gridErrors(t, tc.p, loadGEMMGrid(t, gemmGridFiles[tc.grid]))
		for _, pl := range []struct {
			name string
			ceil [2]float64
		}{{"full", tc.full}, {"rest-of-64", tc.rest}} {
			med, p90 := absStats(errs[pl.name])
			t.Logf("grid %c, %-8s launches, %-10s %3d GEMMs: |error| median %5.1f %%, p90 %5.1f %%, signed median %+5.1f %%",
				'a'+tc.grid, tc.launches, pl.name, len(errs[pl.name]), 100*med, 100*p90, 100*medianOf(errs[pl.name]))
			if tc.launches == "rule" && tc.grid == 1 && pl.name == "full" &&
				(math.Abs(med-UnmeasuredGEMMMedian) > 0.002 || math.Abs(p90-UnmeasuredGEMMP90) > 0.002) {
				t.Errorf("grid b, rule launches, whole GPU: |error| median %.1f %%, p90 %.1f %%; the lab quotes UnmeasuredGEMMMedian %.1f %% and UnmeasuredGEMMP90 %.1f %% for a GEMM its tables lack",
					100*med, 100*p90, 100*UnmeasuredGEMMMedian, 100*UnmeasuredGEMMP90)
			}
			if !(med <= pl.ceil[0]) || !(p90 <= pl.ceil[1]) {
				t.Errorf("grid %c, %s launches, %s: |error| median %.1f %%, p90 %.1f %%; ceilings %.1f and %.1f %%",
					'a'+tc.grid, tc.launches, pl.name, 100*med, 100*p90, 100*pl.ceil[0], 100*pl.ceil[1])
			}
		}
	}
}
