package sim

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"slices"
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
// table and models only the shapes the table lacks (the model's time
// there scaled by the table's prior for the place, Profile.PlacementPrior).
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
	// Swept marks a ratio timed in a sweep's conditions rather than by the
	// partition probe: c3lab sweep ran the GEMM beside an h2d copy of at
	// most 1 MiB that ends in microseconds, and the ratio is its time in
	// the concurrent run over its time alone on the whole device
	// (profiler.Result.CompSlowdown, with its interval). For a GEMM of
	// 1.7 ms or more the probe's runs of four repetitions and a sweep's
	// rounds disagree: on the rest of a 16- or 32-SM partition the sweep
	// took 3-14 % less than the probe's ratio, on a compute partition up
	// to 8 % more (model.md, "A GEMM in a placement"), and the sweeps
	// are what the simulator's predictions are scored on.
	Swept bool `json:"swept,omitempty" yaml:"Swept,omitempty"`
}

// GEMMWholeTime is one GEMM's measured time alone on the whole device:
// the median over the partition probe's interleaved rounds, the same
// runs its placements' ratios divide by.
//
// The model's time for a shape alone is within 3 % of the measured one
// for most of the suite, but decode GEMMs of a few hundred rows are off
// by up to 12 % either way (the kernel cuBLASLt picks for a skinny
// shape, its split-K and its grid). Taken as a shape's deviation from
// the model (Profile.GEMMWholeTimes), the table corrects them; the
// model keeps setting the level.
type GEMMWholeTime struct {
	M     int             `json:"m"`
	N     int             `json:"n"`
	K     int             `json:"k"`
	DType scenarios.DType `json:"dtype"`
	// MedianNs is the median time alone on the whole device, in ns, as
	// c3lab run times it: the probe's median less its own time per
	// repetition beyond the kernel (placementFile.ProbeOverheadNs, 1.6 µs
	// on H200: 6-9 % of a GEMM under 35 µs, nothing for a large one).
	MedianNs float64 `json:"median_ns"`
	// SMClockMHz is the SM clock NVML read while it ran. The table lists
	// only shapes that ran with no throttle reason: a time taken at a
	// power-capped clock tells the probe's power state, not the shape.
	SMClockMHz float64 `json:"sm_clock_mhz"`
}

// placementFile is the table's file (gemm_placements_h200.json).
type placementFile struct {
	// Device names the device the table was measured on.
	Device string `json:"device"`
	// Regenerate says how the file was made and how to make it again.
	Regenerate string          `json:"regenerate"`
	Placements []GEMMPlacement `json:"placements"`
	WholeGPU   []GEMMWholeTime `json:"whole_gpu"`
	// ProbeOverheadNs is what was taken off every probe time in WholeGPU:
	// the probe's time per repetition beyond the kernel, which c3lab run
	// does not time (GEMMWholeTime.MedianNs).
	ProbeOverheadNs float64 `json:"probe_overhead_ns,omitempty"`
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
func h200Placements() ([]GEMMPlacement, []GEMMWholeTime) {
	pl, whole, err := ParseGEMMPlacements(gemmPlacementsH200)
	if err != nil {
		panic("backends/sim: the embedded " + placementTableFile + " is broken: " + err.Error())
	}
	return pl, whole
}

// ParseGEMMPlacements reads a placement table (the JSON of
// gemm_placements_h200.json): the placements' ratios and the shapes'
// times alone on the whole device, every entry checked and no shape
// timed twice.
func ParseGEMMPlacements(data []byte) ([]GEMMPlacement, []GEMMWholeTime, error) {
	var f placementFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, nil, fmt.Errorf("reading the GEMM placement table: %w", err)
	}
	for i, pl := range f.Placements {
		if err := pl.validate(); err != nil {
			return nil, nil, fmt.Errorf("GEMM placement table, entry %d (%dx%dx%d %s %s): %w", i, pl.M, pl.N, pl.K, pl.DType, pl.Placement, err)
		}
	}
	seen := map[gemmKey]bool{}
	for i, w := range f.WholeGPU {
		if err := w.validate(); err != nil {
			return nil, nil, fmt.Errorf("GEMM placement table, whole-GPU entry %d (%dx%dx%d %s): %w", i, w.M, w.N, w.K, w.DType, err)
		}
		k := gemmKey{w.M, w.N, w.K, w.DType}
		if seen[k] {
			return nil, nil, fmt.Errorf("GEMM placement table, whole-GPU entry %d: %dx%dx%d %s is timed twice", i, w.M, w.N, w.K, w.DType)
		}
		seen[k] = true
	}
	return f.Placements, f.WholeGPU, nil
}

// validate checks a whole-GPU entry: dimensions and element type as for
// a placement, and a time from 100 ns to 10 s.
func (w GEMMWholeTime) validate() error {
	if err := checkGEMMShape(w.M, w.N, w.K, w.DType); err != nil {
		return err
	}
	if !(w.MedianNs >= 100 && w.MedianNs <= 1e10) {
		return fmt.Errorf("time %v ns outside 100 ns..10 s", w.MedianNs)
	}
	if !(w.SMClockMHz > 0 && w.SMClockMHz <= 1e4) {
		return fmt.Errorf("SM clock %v MHz outside 0..10000", w.SMClockMHz)
	}
	return nil
}

// checkGEMMShape checks a table entry's shape: positive dimensions within
// the launch table's bounds and a known element type.
func checkGEMMShape(m, n, k int, dt scenarios.DType) error {
	for _, d := range []int{m, n, k} {
		if d < 1 || d > maxLaunchDim {
			return fmt.Errorf("dimension %d outside 1..%d", d, maxLaunchDim)
		}
	}
	if dt.Size() == 0 {
		return fmt.Errorf("unknown element type %q", dt)
	}
	return nil
}

// validate checks an entry: positive dimensions within the launch table's
// bounds, a known element type, a placement this simulator can name, and
// a ratio between a fifth and ten times the whole device's time.
func (pl GEMMPlacement) validate() error {
	if err := checkGEMMShape(pl.M, pl.N, pl.K, pl.DType); err != nil {
		return err
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

// gemmKey names a GEMM shape in the measured tables.
type gemmKey struct {
	M, N, K int
	DType   scenarios.DType
}

func keyOf(c scenarios.ComputeOp) gemmKey { return gemmKey{c.M, c.N, c.K, c.DType} }

// placementKey names a GEMM shape in one placement.
type placementKey struct {
	gemmKey
	where string
}

// gemmTables is a profile's measured GEMM tables indexed for lookup
// (New builds it once per simulator): each placement's ratio, and each
// whole-GPU-timed shape's deviation from the model.
type gemmTables struct {
	ratio map[placementKey]float64
	// deviation is, per shape of GEMMWholeTimes, its measured time over
	// the model's estimate (wholeDeviceEstimate), divided by the median
	// of that ratio over the table's shapes: how much slower or faster
	// than the model this shape runs than the table's typical shape
	// does. Dividing by the median keeps what differs between the
	// probe's runs and the profile's (the clocks a long probe settles
	// at, the day's GPU) out of it, so the fitted constants still set
	// the level.
	deviation map[gemmKey]float64
	// prior is, per kind of placement (placementRest, placementCompute,
	// placementTarget) and SM count the table measured, the median over
	// its GEMMs of their measured ratio over the model's there
	// (placementPriors): what a GEMM the table lacks takes in that place
	// (Profile.PlacementPrior).
	prior map[string]map[int]float64
	// measured holds every shape the profile has a measurement of: a time
	// alone (GEMMWholeTimes), a placement (GEMMPlacements) or the launch
	// cuBLASLt ran (a measured GEMMLaunches entry).
	measured map[gemmKey]bool
}

// indexGEMMTables indexes p's GEMMPlacements and GEMMWholeTimes, and
// notes every shape they or the measured GEMMLaunches hold.
func indexGEMMTables(p Profile) *gemmTables {
	tb := &gemmTables{ratio: make(map[placementKey]float64, len(p.GEMMPlacements)), measured: map[gemmKey]bool{}}
	for _, pl := range p.GEMMPlacements {
		k := gemmKey{pl.M, pl.N, pl.K, pl.DType}
		tb.ratio[placementKey{k, pl.Placement}] = pl.Ratio
		tb.measured[k] = true
	}
	for _, w := range p.GEMMWholeTimes {
		tb.measured[gemmKey{w.M, w.N, w.K, w.DType}] = true
	}
	for _, l := range p.GEMMLaunches {
		if l.Source == LaunchMeasured {
			tb.measured[gemmKey{l.M, l.N, l.K, l.DType}] = true
		}
	}
	if p.PlacementPrior {
		tb.prior = placementPriors(p)
	}
	if len(p.GEMMWholeTimes) == 0 {
		return tb
	}
	over := make([]float64, 0, len(p.GEMMWholeTimes))
	for _, w := range p.GEMMWholeTimes {
		c := scenarios.ComputeOp{Kind: scenarios.GEMM, M: w.M, N: w.N, K: w.K, DType: w.DType}
		est, _ := wholeDeviceEstimate(p, c)
		over = append(over, w.MedianNs*1e-9/est)
	}
	typical := medianInPlace(slices.Clone(over))
	if !(typical > 0) || math.IsInf(typical, 0) {
		return tb
	}
	tb.deviation = make(map[gemmKey]float64, len(over))
	for i, w := range p.GEMMWholeTimes {
		if d := over[i] / typical; d > 0 && !math.IsInf(d, 0) {
			tb.deviation[gemmKey{w.M, w.N, w.K, w.DType}] = d
		}
	}
	return tb
}

// placementSMCount is the SMs a GEMM has in placement kind/sms on p's
// device: the rest of a comm partition, the compute partition, or the SM
// target on the whole device.
func placementSMCount(p Profile, kind string, sms int) int {
	if kind == placementRest {
		return max(p.SMs-sms, 1)
	}
	return min(sms, p.SMs)
}

// modelPlacementRatio is the model's time for GEMM c alone in placement
// kind/sms over its time alone on the whole device, as gemmRateScale sees
// both: the launch and the CTAs' prologue, then its tiles on the SMs it
// has or its traffic at HBM's bandwidth, whichever is longer.
func modelPlacementRatio(p Profile, c scenarios.ComputeOp, kind string, sms int) float64 {
	whole, _ := wholeDeviceEstimate(p, c)
	n := placementSMCount(p, kind, sms)
	l := p.gemmLaunch(c, n)
	scale := 1.0
	if kind == placementRest {
		scale = (1 - p.RestPartitionGEMMLoss) * restClusterScale(p, l)
	}
	t, g := tileGEMM(p, c, l, n, scale)
	here := aloneTiles(t, n)
	if p.HBMBandwidth > 0 {
		here = math.Max(here, g.traffic/p.HBMBandwidth)
	}
	return (p.KernelFixedCost + p.GEMMPrologue + here) / whole
}

// placementPriors is, per placement kind and SM count of p's placement
// table, the median over the table's GEMMs there of their measured ratio
// over modelPlacementRatio: how far the model is from the table where it
// measured, which a GEMM it lacks takes there (Profile.PlacementPrior).
func placementPriors(p Profile) map[string]map[int]float64 {
	over := map[string]map[int][]float64{}
	for _, pl := range p.GEMMPlacements {
		kind, sms, err := parsePlacement(pl.Placement)
		if err != nil {
			continue
		}
		c := scenarios.ComputeOp{Kind: scenarios.GEMM, M: pl.M, N: pl.N, K: pl.K, DType: pl.DType}
		m := modelPlacementRatio(p, c, kind, sms)
		if !(m > 0) || math.IsInf(m, 0) || !(pl.Ratio > 0) {
			continue
		}
		if over[kind] == nil {
			over[kind] = map[int][]float64{}
		}
		over[kind][sms] = append(over[kind][sms], pl.Ratio/m)
	}
	prior := make(map[string]map[int]float64, len(over))
	for kind, bySMs := range over {
		prior[kind] = make(map[int]float64, len(bySMs))
		for sms, xs := range bySMs {
			prior[kind][sms] = medianInPlace(xs)
		}
	}
	return prior
}

// priorFor is the placement prior where st puts a GEMM: the table's
// median for that kind and SM count, or for the nearest SM count of the
// kind it measured (the smaller on a tie); 1 when it measured none of
// the kind, for the whole device, or with PlacementPrior off.
func (tb *gemmTables) priorFor(st scenarios.Strategy) float64 {
	kind, sms, err := parsePlacement(placementOf(st))
	if err != nil || tb.prior[kind] == nil {
		return 1
	}
	if k, ok := tb.prior[kind][sms]; ok {
		return k
	}
	best, k := -1, 1.0
	for n, v := range tb.prior[kind] {
		d := abs(n - sms)
		if best < 0 || d < best || (d == best && n < sms) {
			best, k = d, v
		}
	}
	return k
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// medianInPlace is the median of xs (NaN for none); xs is reordered.
func medianInPlace(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	slices.Sort(xs)
	if len(xs)%2 == 1 {
		return xs[len(xs)/2]
	}
	return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
}

// gemms is p's indexed tables: the ones New built, else built now (a
// profile used without New, as some tests do).
func (p Profile) gemms() *gemmTables {
	if p.tables != nil {
		return p.tables
	}
	return indexGEMMTables(p)
}

// withTables returns p with its GEMM tables indexed.
func (p Profile) withTables() Profile {
	p.tables = indexGEMMTables(p)
	return p
}

// placementRatio is the table's ratio for GEMM c where st puts it, and
// whether the table has one.
func (p Profile) placementRatio(c scenarios.ComputeOp, st scenarios.Strategy) (float64, bool) {
	where := placementOf(st)
	if where == "" || c.Kind != scenarios.GEMM {
		return 0, false
	}
	r, ok := p.gemms().ratio[placementKey{keyOf(c), where}]
	return r, ok
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

// wholeDeviceEstimate is the model's time for GEMM c alone on the whole
// device: its launch and its CTAs' prologue, then its tiles or, if
// longer, its HBM traffic at HBM's bandwidth (a memory-bound GEMM's CTAs
// together ask more than HBM gives). floor is that launch, prologue and
// traffic alone: no deviation makes a GEMM faster.
func wholeDeviceEstimate(p Profile, c scenarios.ComputeOp) (est, floor float64) {
	full, g := tileGEMM(p, c, p.gemmLaunch(c, p.SMs), p.SMs, 1)
	fixed := p.KernelFixedCost + p.GEMMPrologue
	t := aloneTiles(full, p.SMs)
	if p.HBMBandwidth > 0 {
		floor = g.traffic / p.HBMBandwidth
		t = math.Max(t, floor)
	}
	return fixed + t, fixed + floor
}

// wholeDeviceTime is GEMM c's time alone on the whole device in the
// simulator: the model's estimate times the shape's deviation dev, no
// less than its HBM floor.
func wholeDeviceTime(p Profile, c scenarios.ComputeOp, dev float64) float64 {
	est, floor := wholeDeviceEstimate(p, c)
	return math.Max(dev*est, floor)
}

// gemmRateScale is what a GEMM's CTA rate is multiplied by for the
// measured tables (here is its tiling on the sms SMs st leaves it):
//   - in a placement the table has, alone it takes the table's ratio of
//     its whole-device time;
//   - that whole-device time is the model's estimate times the shape's
//     deviation (GEMMWholeTimes) when the shape was timed, the model's
//     alone, and never less than its HBM floor;
//   - in a placement the table lacks, a timed shape takes its deviation
//     times the model's time there;
//   - in a placement the table has for other shapes, that time (the
//     deviation 1 for a shape not timed) times the placement's prior
//     (Profile.PlacementPrior);
//   - 1 for a shape neither table has, elsewhere.
//
// The launch and the prologue count as fixed costs the ratio applies to
// as well. On fewer SMs the CTAs' own rate is what the table sets: a
// memory-bound GEMM on 68 SMs measured over 2x its time, which the SMs'
// share of HBM would not explain.
func gemmRateScale(p Profile, c scenarios.ComputeOp, st scenarios.Strategy, here gemmTiling, sms int) float64 {
	if c.Kind != scenarios.GEMM {
		return 1
	}
	tb := p.gemms()
	dev, timed := tb.deviation[keyOf(c)]
	if !timed {
		dev = 1
	}
	r, placed := tb.ratio[placementKey{keyOf(c), placementOf(st)}]
	fixed := p.KernelFixedCost + p.GEMMPrologue
	have := aloneTiles(here, sms)
	prior := 1.0
	if !placed && sms < p.SMs {
		prior = tb.priorFor(st)
	}
	var want float64
	switch {
	case placed:
		want = r*wholeDeviceTime(p, c, dev) - fixed
	case !timed && prior == 1:
		return 1
	case timed && sms >= p.SMs:
		want = wholeDeviceTime(p, c, dev) - fixed
	default:
		want = prior*dev*(fixed+have) - fixed
	}
	if !(want > 0) || !(have > 0) {
		return 1
	}
	return have / want
}
