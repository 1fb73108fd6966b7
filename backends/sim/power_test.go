package sim

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// clockProbe is what TestGPUGEMMPartitionClocks (backends/cuda) wrote: per
// GEMM and placement, the median SM clock during the runs and the clock
// event reasons seen.
type clockProbe struct {
	Shapes []struct {
		GEMM     string             `json:"gemm"`
		MedianNs map[string]float64 `json:"median_ns"`
		OverFull map[string]float64 `json:"over_full"`
		ClockMed map[string]float64 `json:"sm_clock_median_mhz"`
		During   map[string]struct {
			Reasons []string `json:"reasons"`
		} `json:"during"`
	} `json:"shapes"`
}

// clockProbeFile is the committed clock probe of one H200.
const clockProbeFile = "../cuda/results/2026-12-02-h200x1-s6/gemm-clocks.json.gz"

// clockProbeMaxMHz is the H200's maximum SM clock (nvidia-smi's
// clocks.max.sm in the same results).
const clockProbeMaxMHz = 1980

// placementSMs is the SMs a probe placement gives the GEMM and whether it
// is the rest of a comm partition.
func placementSMs(p Profile, name string) (sms int, rest bool, ok bool) {
	switch name {
	case "full":
		return p.SMs, false, true
	case "compute-120":
		return 120, false, true
	case "compute-112":
		return 112, false, true
	case "target-116":
		return 116, false, true
	case "target-100":
		return 100, false, true
	case "rest-of-16":
		return p.SMs - 16, true, true
	case "rest-of-64":
		return p.SMs - 64, true, true
	}
	return 0, false, false
}

// probeBusySMs is the power limit's busy SM count of GEMM c alone on sms
// SMs: its resident CTAs weighed by their main-loop share, as the engine
// counts them (engine.powerBusySMs).
func probeBusySMs(p Profile, c scenarios.ComputeOp, sms int, rest bool) float64 {
	scale := 1.0
	if rest {
		scale = 1 - p.RestPartitionGEMMLoss
	}
	l := p.gemmLaunch(c, sms)
	t, _ := tileGEMM(p, c, l, sms, scale)
	return float64(t.CTAs) * t.Main / t.Tile()
}

// powerPoint is one placement of one GEMM: its busy SM count, its time
// per repetition (seconds), its time over the whole GPU's, and the clock
// the probe read, as a share of the maximum.
type powerPoint struct {
	gemm, place     string
	c               scenarios.ComputeOp
	busy, rep, over float64
	clock           float64
	capped          bool
}

// avgBusy is the busy SM count averaged over a repetition and the gap
// before the next, as atPowerClock takes it.
func (pt powerPoint) avgBusy(gap float64) float64 { return pt.busy * pt.rep / (pt.rep + gap) }

// readClockProbe turns the committed probe into power points.
func readClockProbe(t *testing.T, p Profile) []powerPoint {
	t.Helper()
	f, err := os.Open(clockProbeFile)
	if err != nil {
		t.Fatalf("the clock probe: %v", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var probe clockProbe
	if err := json.NewDecoder(zr).Decode(&probe); err != nil {
		t.Fatal(err)
	}
	var out []powerPoint
	for _, s := range probe.Shapes {
		c := scenarios.ComputeOp{Kind: scenarios.GEMM}
		var dtype string
		if _, err := fmt.Sscanf(s.GEMM, "gemm %dx%dx%d %s", &c.M, &c.N, &c.K, &dtype); err != nil {
			t.Fatalf("%q: %v", s.GEMM, err)
		}
		c.DType = scenarios.DType(dtype)
		for place, mhz := range s.ClockMed {
			sms, rest, ok := placementSMs(p, place)
			if !ok {
				continue
			}
			out = append(out, powerPoint{gemm: s.GEMM, place: place, c: c, busy: probeBusySMs(p, c, sms, rest),
				rep: s.MedianNs[place] / 1e9, over: s.OverFull[place],
				clock: mhz / clockProbeMaxMHz, capped: slices.Contains(s.During[place].Reasons, "sw-power-cap")})
		}
	}
	slices.SortFunc(out, func(a, b powerPoint) int {
		if a.gemm != b.gemm {
			return compareStrings(a.gemm, b.gemm)
		}
		return compareStrings(a.place, b.place)
	})
	return out
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// fitPowerLimit fits PowerLimitSMs and PowerClockExponent to the points
// whose clock the power limit held (the sw-power-cap reason, and the clock
// at least 1.5 % under the maximum): log clock = (log limit - log busy) /
// exponent, busy averaged over a repetition and gap, least squares in the
// logs.
func fitPowerLimit(pts []powerPoint, gap float64) (limit, exponent float64, n int) {
	var xs, ys []float64
	for _, pt := range pts {
		if pt.capped && pt.clock < 0.985 {
			xs = append(xs, math.Log(pt.avgBusy(gap)))
			ys = append(ys, math.Log(pt.clock))
		}
	}
	if len(xs) < 3 {
		return 0, 0, len(xs)
	}
	a, b := stat.LinearRegression(xs, ys, nil, false)
	if b >= 0 {
		return 0, 0, len(xs)
	}
	return math.Exp(-a / b), -1 / b, len(xs)
}

// TestH200PowerLimit fits the power limit to the committed clock probe of
// one H200 and checks profiles/h200-power.yaml holds that fit, and that
// the fitted model reads every clock of the probe within 5 points of the
// maximum, the short GEMM's (never capped) and the 68-SM rests' among them.
func TestH200PowerLimit(t *testing.T) {
	pf, err := LoadProfileFile("profiles/h200-power.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := pf.Profile
	pts := readClockProbe(t, p)
	limit, exponent, n := fitPowerLimit(pts, p.RepGap)
	t.Logf("fit on %d capped placements: PowerLimitSMs %.2f, PowerClockExponent %.3f", n, limit, exponent)
	if n < 10 {
		t.Fatalf("only %d placements were held by the power limit; the probe should have about 20", n)
	}
	if math.Abs(p.PowerLimitSMs-limit) > 0.01*limit || math.Abs(p.PowerClockExponent-exponent) > 0.01*exponent {
		t.Errorf("profiles/h200-power.yaml has PowerLimitSMs %.2f, PowerClockExponent %.3f; the probe fits %.2f, %.3f: update it", p.PowerLimitSMs, p.PowerClockExponent, limit, exponent)
	}
	fitted := p
	fitted.PowerLimitSMs, fitted.PowerClockExponent = limit, exponent
	for _, pt := range pts {
		model := fitted.powerClock(pt.avgBusy(p.RepGap))
		t.Logf("%-28s %-12s busy %6.1f SMs, %5.2f ms: clock %.3f measured, %.3f model", pt.gemm, pt.place, pt.busy, pt.rep*1e3, pt.clock, model)
		if math.Abs(model-pt.clock) > 0.05 {
			t.Errorf("%s on %s: the model's clock %.3f is more than 5 points from the measured %.3f", pt.gemm, pt.place, model, pt.clock)
		}
	}
}

// TestPowerLimitSlowsTensorBoundOnly shows the effect in the engine: a
// large GEMM on every SM runs at the clock the limit allows, the same GEMM
// confined to a partition loses less than its share of the SMs, and a
// memory-bound GEMM keeps its time.
func TestPowerLimitSlowsTensorBoundOnly(t *testing.T) {
	big := scenarios.ComputeOp{Kind: scenarios.GEMM, M: 8192, N: 16384, K: 16384, DType: scenarios.BF16}
	decode := scenarios.ComputeOp{Kind: scenarios.GEMM, M: 16, N: 49152, K: 12288, DType: scenarios.FP16}
	timeOf := func(p Profile, c scenarios.ComputeOp, st scenarios.Strategy) float64 {
		t.Helper()
		sc := scenarios.Scenario{Name: "power", GPUs: 1, Compute: c,
			Comm: scenarios.CommOp{Collective: scenarios.HostToDevice, Bytes: 64 << 10}}
		b := New(p)
		res, err := b.Run(t.Context(), backends.Experiment{Scenario: sc, Strategy: st, Mode: backends.ModeCompute, Reps: 1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return float64(res.Reps[0].Compute)
	}
	off := H200()
	off.PowerLimitSMs = 0
	on := H200()
	on.PowerLimitSMs, on.PowerClockExponent, on.RepGap = 60.9, 2.9, 0.85e-3
	group := scenarios.Strategy{ComputeSMs: 112}
	if r := timeOf(on, big, scenarios.Strategy{}) / timeOf(off, big, scenarios.Strategy{}); r < 1.15 {
		t.Errorf("a large GEMM on all SMs under the power limit takes %.3fx its unlimited time; want the clock's ~1.2x", r)
	}
	offRatio := timeOf(off, big, group) / timeOf(off, big, scenarios.Strategy{})
	onRatio := timeOf(on, big, group) / timeOf(on, big, scenarios.Strategy{})
	if !(onRatio < offRatio-0.03) {
		t.Errorf("on a 112-SM group the GEMM takes %.3fx its whole-GPU time with the limit, %.3fx without; the limit should leave it less behind", onRatio, offRatio)
	}
	if r := timeOf(on, decode, scenarios.Strategy{}) / timeOf(off, decode, scenarios.Strategy{}); math.Abs(r-1) > 0.01 {
		t.Errorf("a memory-bound decode GEMM takes %.3fx its time under the power limit; it should keep it", r)
	}
}
