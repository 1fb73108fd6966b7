package sim

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/scenarios"
)

// blindCDir is the third blind one-GPU set: GEMM shapes that neither the
// placement table nor the launch table has, timed alone on partitions
// after the simulator's predictions for them were committed.
const blindCDir = "testdata/blind-h200x1-c"

// readShapeList reads a list of GEMM shapes, one "M N K dtype sm_target"
// per line ('#' starts a comment), as C3LAB_GEMM_PARTITION_SHAPES takes.
func readShapeList(t *testing.T, path string) []scenarios.ComputeOp {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var out []scenarios.ComputeOp
	sc := bufio.NewScanner(fh)
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if len(f) != 5 {
			t.Fatalf("%s:%d: want M N K dtype sm_target", path, line)
		}
		var dims [3]int
		for i := range dims {
			if dims[i], err = strconv.Atoi(f[i]); err != nil {
				t.Fatalf("%s:%d: %v", path, line, err)
			}
		}
		out = append(out, scenarios.ComputeOp{Kind: scenarios.GEMM, M: dims[0], N: dims[1], K: dims[2], DType: scenarios.DType(f[3])})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// blindPlacementProfile is the profile the third blind set's placement
// predictions come from: the committed calibration, with the placement
// prior on or off.
func blindPlacementProfile(t *testing.T, prior bool) Profile {
	t.Helper()
	pf, err := LoadProfileFile("profiles/h200-fit.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := CloneProfile(pf.Profile)
	p.PlacementPrior = prior
	return p
}

// placementStrategy is the strategy that puts a GEMM in placement where.
func placementStrategy(t *testing.T, where string) scenarios.Strategy {
	t.Helper()
	kind, sms, err := parsePlacement(where)
	if err != nil {
		t.Fatal(err)
	}
	switch kind {
	case placementRest:
		return scenarios.Strategy{CommSMs: sms}
	case placementCompute:
		return scenarios.Strategy{ComputeSMs: sms}
	}
	return scenarios.Strategy{GEMMSMTarget: sms}
}

// TestBlindPlacementShapesAreUnseen: the third blind set's GEMMs are in
// neither of the simulator's measured tables, so their placements take
// the model and the prior, which is what the set checks.
func TestBlindPlacementShapesAreUnseen(t *testing.T) {
	p := blindPlacementProfile(t, true)
	shapes := readShapeList(t, blindCDir+"/gemm-shapes.txt")
	if len(shapes) < 30 {
		t.Fatalf("%d shapes; the set has 33", len(shapes))
	}
	measured := indexGEMMTables(p).measured
	for _, c := range shapes {
		if measured[keyOf(c)] {
			t.Errorf("%v is in the model's measured GEMM tables (placements, times alone, launches)", c)
		}
	}
}

// TestWriteBlindPlacementPredictions writes the simulator's predictions for
// the third blind set's GEMMs, each alone in every placement the probe
// times, over its time alone on the whole GPU, with the placement prior
// and without, to $C3LAB_SIM_WRITE_BLIND_PLACEMENTS (predicted-placements.txt
// was written so before the GEMMs ran).
func TestWriteBlindPlacementPredictions(t *testing.T) {
	out := os.Getenv("C3LAB_SIM_WRITE_BLIND_PLACEMENTS")
	if out == "" {
		t.Skip("set C3LAB_SIM_WRITE_BLIND_PLACEMENTS to a file to write the predictions to")
	}
	shapes := readShapeList(t, blindCDir+"/gemm-shapes.txt")
	var b strings.Builder
	b.WriteString("# The simulator's predictions for the third blind set's GEMMs alone (profiles/h200-fit.yaml):\n")
	b.WriteString("# time in a placement over the time on the whole GPU, without the placement prior and with it.\n")
	b.WriteString("# go test ./backends/sim -run TestWriteBlindPlacementPredictions with C3LAB_SIM_WRITE_BLIND_PLACEMENTS=FILE\n")
	b.WriteString("# M N K dtype placement whole_us without with\n")
	off, on := blindPlacementProfile(t, false), blindPlacementProfile(t, true)
	for _, c := range shapes {
		whole := aloneCompute(t, on, c, scenarios.Strategy{})
		for _, where := range probePlacements {
			st := placementStrategy(t, where)
			fmt.Fprintf(&b, "%d %d %d %s %s %.1f %.4f %.4f\n", c.M, c.N, c.K, c.DType, where, whole/1e3,
				aloneCompute(t, off, c, st)/aloneCompute(t, off, c, scenarios.Strategy{}), aloneCompute(t, on, c, st)/whole)
		}
	}
	if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// blindCProbe is the partition probe of the third blind set's GEMMs on one
// H200, run after predicted-placements.txt was committed.
const blindCProbe = "../cuda/results/2026-12-04-h200x1-s26/call1/probe.json.gz"

// TestBlindPlacementScore scores the simulator's GEMMs alone in every
// placement on the third blind set's 33 unseen shapes against the probe
// (TestGPUGEMMOnPartitions), with the placement prior and without. What
// the committed predictions scored (the profile and model at 401ccd2):
// |error| median / p90 over 264 placements 8.9 / 19.6 % without the prior
// and 3.5 / 14.3 % with it; compute partitions and SM targets 7.8-13.2 %
// at the median without, 1.6-2.6 % with. The test holds the model to
// those figures with the prior (a point of slack) and to the prior
// beating its absence on those placements.
func TestBlindPlacementScore(t *testing.T) {
	probe, err := readPartitionProbe(blindCProbe)
	if err != nil {
		t.Fatal(err)
	}
	shapes := readShapeList(t, blindCDir+"/gemm-shapes.txt")
	type key struct {
		gemmKey
		where string
	}
	measured := map[key]float64{}
	for _, s := range probe.Shapes {
		for where, r := range s.OverFull {
			measured[key{gemmKey{s.M, s.N, s.K, s.DType}, where}] = r.Median
		}
	}
	errs := map[bool]map[string][]float64{false: {}, true: {}}
	for _, prior := range []bool{false, true} {
		p := blindPlacementProfile(t, prior)
		for _, c := range shapes {
			whole := aloneCompute(t, p, c, scenarios.Strategy{})
			for _, where := range probePlacements {
				r, ok := measured[key{keyOf(c), where}]
				if !ok || !(r > 0) {
					t.Fatalf("the probe has no %s for %v", where, c)
				}
				e := aloneCompute(t, p, c, placementStrategy(t, where))/whole/r - 1
				errs[prior][where] = append(errs[prior][where], e)
				errs[prior]["all"] = append(errs[prior]["all"], e)
			}
		}
	}
	for _, where := range append([]string{"all"}, probePlacements...) {
		offMed, offP90 := absStats(errs[false][where])
		onMed, onP90 := absStats(errs[true][where])
		t.Logf("%-12s %3d: |error| median / p90 %4.1f / %4.1f %% without the prior, %4.1f / %4.1f %% with it",
			where, len(errs[true][where]), 100*offMed, 100*offP90, 100*onMed, 100*onP90)
		switch {
		case where == "all":
			if onMed > 0.045 || onP90 > 0.153 {
				t.Errorf("all placements: |error| median / p90 %.1f / %.1f %%; committed 3.5 / 14.3", 100*onMed, 100*onP90)
			}
		case strings.HasPrefix(where, placementCompute), strings.HasPrefix(where, placementTarget):
			if onMed > 0.036 || onMed >= offMed {
				t.Errorf("%s: |error| median %.1f %% with the prior, %.1f %% without; want at most 3.6 %% and better", where, 100*onMed, 100*offMed)
			}
		}
	}
}
