package sim

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/c3lab/c3lab/scenarios"
)

// GEMMPlacement is one GEMM's measured time alone in one placement (the
// rest of a comm partition, a compute partition, or cuBLASLt planned for
// fewer SMs) over its time alone on the whole device, the two timed in the
// same interleaved rounds (backends/cuda TestGPUGEMMOnPartitions).
//
// The time a GEMM takes on fewer SMs does not follow from its SMs, nor
// from its tiles and cluster: alone on the 68 SMs a 64-SM split leaves,
// the suite's GEMMs take 1.2x to 3.2x their whole-GPU time, by what
// cuBLASLt picks for the partition and how its clusters fit the rest's
// GPCs (model.md, "A GEMM in a placement"). So, as for its launch
// (GEMMLaunches), the simulator takes a measured shape's ratio from the
// table and models only the shapes the table lacks.
type GEMMPlacement struct {
	M     int             `json:"m"`
	N     int             `json:"n"`
	K     int             `json:"k"`
	DType scenarios.DType `json:"dtype"`
	// Placement is where the GEMM ran: "rest-of-S" (a comm partition of S
	// SMs, the GEMM on the rest), "compute-S" (a compute partition of S
	// SMs) or "target-S" (no partition, cuBLASLt planned for S SMs).
	Placement string `json:"placement"`
	// Ratio is the median over the rounds of the placement's time over
	// the whole device's; Lo and Hi bound its 95 % interval.
	Ratio float64 `json:"ratio"`
	Lo    float64 `json:"ci_lo"`
	Hi    float64 `json:"ci_hi"`
}

// placementFile is the table's file (gemm_placements_h200.json).
type placementFile struct {
	// Device names the device the table was measured on.
	Device string `json:"device"`
	// Regenerate says how the file was made and how to make it again.
	Regenerate string          `json:"regenerate"`
	Placements []GEMMPlacement `json:"placements"`
}

// placementTableFile is the embedded H200 table's name.
const placementTableFile = "gemm_placements_h200.json"

// gemmPlacementsH200 is the H200's placement table (its "regenerate" field
// and TestWriteGEMMPlacementTable say how it is made).
//
//go:embed gemm_placements_h200.json
var gemmPlacementsH200 []byte

// h200Placements parses the embedded H200 table. The file is part of the
// build and TestH200PlacementTable parses it, so a failure here is a build
// defect, not bad input.
func h200Placements() []GEMMPlacement {
	pl, err := ParseGEMMPlacements(gemmPlacementsH200)
	if err != nil {
		panic("backends/sim: the embedded " + placementTableFile + " is broken: " + err.Error())
	}
	return pl
}

// ParseGEMMPlacements reads a placement table (the JSON of
// gemm_placements_h200.json) and checks every entry.
func ParseGEMMPlacements(data []byte) ([]GEMMPlacement, error) {
	var f placementFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("reading the GEMM placement table: %w", err)
	}
	for i, pl := range f.Placements {
		if err := pl.validate(); err != nil {
			return nil, fmt.Errorf("GEMM placement table, entry %d (%dx%dx%d %s %s): %w", i, pl.M, pl.N, pl.K, pl.DType, pl.Placement, err)
		}
	}
	return f.Placements, nil
}

// validate checks an entry: positive dimensions within the launch table's
// bounds, a known element type, a placement this simulator can name, and
// a ratio between a fifth and ten times the whole device's time.
func (pl GEMMPlacement) validate() error {
	for _, d := range []int{pl.M, pl.N, pl.K} {
		if d < 1 || d > maxLaunchDim {
			return fmt.Errorf("dimension %d outside 1..%d", d, maxLaunchDim)
		}
	}
	if pl.DType.Size() == 0 {
		return fmt.Errorf("unknown element type %q", pl.DType)
	}
	if _, _, err := parsePlacement(pl.Placement); err != nil {
		return err
	}
	if !(pl.Ratio >= 0.2 && pl.Ratio <= 10) {
		return fmt.Errorf("ratio %v outside 0.2..10", pl.Ratio)
	}
	if !(pl.Lo <= pl.Ratio && pl.Ratio <= pl.Hi) || math.IsNaN(pl.Lo) || math.IsNaN(pl.Hi) {
		return fmt.Errorf("interval [%v, %v] does not hold the ratio %v", pl.Lo, pl.Hi, pl.Ratio)
	}
	return nil
}

// Placement kinds (GEMMPlacement.Placement is "<kind>-<SMs>").
const (
	placementRest    = "rest-of"
	placementCompute = "compute"
	placementTarget  = "target"
)

// parsePlacement splits a placement name into its kind and SM count.
func parsePlacement(s string) (kind string, sms int, err error) {
	i := strings.LastIndexByte(s, '-')
	if i <= 0 {
		return "", 0, fmt.Errorf("placement %q; want rest-of-S, compute-S or target-S", s)
	}
	kind = s[:i]
	if kind != placementRest && kind != placementCompute && kind != placementTarget {
		return "", 0, fmt.Errorf("placement %q; want rest-of-S, compute-S or target-S", s)
	}
	sms, err = strconv.Atoi(s[i+1:])
	if err != nil || sms < 1 || sms > maxLaunchDim {
		return "", 0, fmt.Errorf("placement %q: the SM count is not a number from 1 to %d", s, maxLaunchDim)
	}
	return kind, sms, nil
}

// placementOf names where strategy st puts the compute op, as the table
// does: a compute partition, the rest of a comm partition, cuBLASLt's SM
// target without a partition; "" for the whole device or a combination
// the table does not measure (an SM target inside a partition).
func placementOf(st scenarios.Strategy) string {
	switch {
	case st.GEMMSMTarget > 0 && (st.CommSMs > 0 || st.ComputeSMs > 0):
		return ""
	case st.GEMMSMTarget > 0:
		return placementTarget + "-" + strconv.Itoa(st.GEMMSMTarget)
	case st.ComputeSMs > 0:
		return placementCompute + "-" + strconv.Itoa(st.ComputeSMs)
	case st.CommSMs > 0:
		return placementRest + "-" + strconv.Itoa(st.CommSMs)
	}
	return ""
}

// placementRatio is the table's ratio for GEMM c where st puts it, and
// whether the table has one.
func (p Profile) placementRatio(c scenarios.ComputeOp, st scenarios.Strategy) (float64, bool) {
	where := placementOf(st)
	if where == "" || c.Kind != scenarios.GEMM {
		return 0, false
	}
	for _, pl := range p.GEMMPlacements {
		if pl.M == c.M && pl.N == c.N && pl.K == c.K && pl.DType == c.DType && pl.Placement == where {
			return pl.Ratio, true
		}
	}
	return 0, false
}

// aloneTiles is a tiling's time alone on sms SMs past its CTAs' prologue:
// a persistent launch's busiest CTA's rounds of tiles, a launch in waves
// its waves of CTAs, each CTA its share of the tiles.
func aloneTiles(t gemmTiling, sms int) float64 {
	if t.Launch.Persistent {
		return float64(t.Rounds) * t.Tile()
	}
	tiles := float64(t.Launch.Tiles())
	waves := ceilDiv(t.CTAs, max(sms, 1))
	return float64(waves) * tiles / float64(t.CTAs) * t.Tile()
}

// placementRateScale is what a GEMM's CTA rate is multiplied by so that,
// alone in the placement st puts it, it takes the table's ratio of its
// simulated time alone on the whole device (here is its tiling on the
// placement's sms SMs); 1 when the table lacks the shape there. Alone on
// the whole device a GEMM takes its CTAs' prologue, then its tiles or,
// if longer, its HBM traffic at HBM's bandwidth (a memory-bound GEMM's
// CTAs together ask more than HBM gives); the ratio applies to the
// prologue as well. On fewer SMs the CTAs' own rate is what the table
// sets: a memory-bound GEMM on 68 SMs measured over 2x its time, which
// the SMs' share of HBM would not explain.
func placementRateScale(p Profile, c scenarios.ComputeOp, st scenarios.Strategy, here gemmTiling, sms int) float64 {
	r, ok := p.placementRatio(c, st)
	if !ok {
		return 1
	}
	full, g := tileGEMM(p, c, p.gemmLaunch(c, p.SMs), p.SMs, 1)
	fixed := p.KernelFixedCost + p.GEMMPrologue
	fullTime := aloneTiles(full, p.SMs)
	if p.HBMBandwidth > 0 {
		fullTime = math.Max(fullTime, g.traffic/p.HBMBandwidth)
	}
	want := r*(fixed+fullTime) - fixed
	have := aloneTiles(here, sms)
	if !(want > 0) || !(have > 0) {
		return 1
	}
	return have / want
}
