package sim

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/c3lab/c3lab/scenarios"
)

// GEMMLaunch is how one GEMM shape launches on the device: the grid and
// CTA size of the cuBLASLt algorithm the cuda backend picks for it, as a
// kernel profiler's launch statistics report them (ncu's LaunchStats and
// Occupancy sections), per shape, element type and SM count target.
//
// The simulator runs a GEMM from its launch: a persistent kernel (grid no
// larger than the CTAs the SMs keep resident) loops over its tiles and
// holds its SMs to its end; any other kernel runs in waves of CTAs, each
// leaving its SM when its tile is done, so that the block scheduler can
// hand the SM to a pending CTA of another kernel at the wave boundary.
type GEMMLaunch struct {
	// M, N, K and DType are the GEMM's shape and element type.
	M     int             `json:"m"`
	N     int             `json:"n"`
	K     int             `json:"k"`
	DType scenarios.DType `json:"dtype"`
	// SMTarget is the SM count cuBLASLt planned for: the whole device's
	// SMs, or the compute partition's, or a strategy's gemm_sm_target.
	SMTarget int `json:"sm_target"`
	// GridCTAs and ThreadsPerCTA are the launch's grid and block sizes.
	GridCTAs      int `json:"grid_ctas"`
	ThreadsPerCTA int `json:"threads_per_cta"`
	// CTAsPerSM is how many of its CTAs one SM keeps resident (ncu's
	// "block limit", the least of its registers, shared memory and warps
	// limits).
	CTAsPerSM int `json:"ctas_per_sm"`
	// Persistent says the kernel loops over tiles: its grid fits the
	// resident slots (GridCTAs <= SMTarget x CTAsPerSM) and its CTAs
	// stay until the last tile is done.
	Persistent bool `json:"persistent"`
	// TileM x TileN is the output tile one CTA computes at a time, and
	// SplitK how many CTAs share one tile's K dimension.
	TileM  int `json:"tile_m"`
	TileN  int `json:"tile_n"`
	SplitK int `json:"split_k"`
	// Kernel is the kernel's name as the profiler reports it, when known.
	Kernel string `json:"kernel,omitempty"`
	// SharedBytes is the shared memory one CTA of the main kernel holds
	// (ncu's launch__shared_mem_per_block, the driver's reserved 1 KiB
	// included), when measured; 0 when not known. It decides the
	// shared-memory carveout the kernel leaves its SMs at
	// (Profile.HostCopyInheritedAbove).
	SharedBytes int `json:"shared_bytes,omitempty"`
	// Source says where the entry comes from: LaunchMeasured (a kernel
	// profiler's launch statistics on the device), LaunchModel (the
	// simulator's tile rule, written into the table until a measurement
	// replaces it) or, never in a file, LaunchRule (a shape the table
	// lacks, decided by the rule at run time).
	Source string `json:"source"`
}

// Where a GEMMLaunch comes from (GEMMLaunch.Source).
const (
	LaunchMeasured = "measured"
	LaunchModel    = "model"
	LaunchRule     = "rule"
)

// Tiles is the number of work units the GEMM's CTAs share: output tiles
// times split-K slices.
func (l GEMMLaunch) Tiles() int {
	return ceilDiv(l.M, l.TileM) * ceilDiv(l.N, l.TileN) * l.SplitK
}

// matches reports whether the entry is the launch of c planned for
// smTarget SMs.
func (l GEMMLaunch) matches(c scenarios.ComputeOp, smTarget int) bool {
	return l.M == c.M && l.N == c.N && l.K == c.K && l.DType == c.DType && l.SMTarget == smTarget
}

// launchFile is the JSON form of a launch table.
type launchFile struct {
	// Device names the device the launches were recorded on.
	Device string `json:"device"`
	// Regenerate says how the file was made and how to make it again.
	Regenerate string       `json:"regenerate"`
	Launches   []GEMMLaunch `json:"launches"`
}

// maxLaunchDim bounds a table's dimensions and counts, so that a corrupt
// file cannot overflow the tile arithmetic.
const maxLaunchDim = 1 << 24

// maxSharedBytes bounds a launch's shared memory per CTA: 256 KiB, above
// any SM's (an H200's CTA may hold 227 KiB, 228 with the driver's 1 KiB).
const maxSharedBytes = 256 << 10

// ParseGEMMLaunches reads a launch table (the JSON of
// gemm_launches_h200.json) and checks every entry: positive shapes and
// sizes, a known element type, a persistent grid that fits its resident
// slots, a known source, and no shape twice.
func ParseGEMMLaunches(data []byte) ([]GEMMLaunch, error) {
	var f launchFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("reading the GEMM launch table: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("reading the GEMM launch table: data after the table")
	}
	type key struct {
		m, n, k, sms int
		dt           scenarios.DType
	}
	seen := map[key]bool{}
	for i, l := range f.Launches {
		if err := l.validate(); err != nil {
			return nil, fmt.Errorf("GEMM launch table, entry %d (%dx%dx%d %s on %d SMs): %w", i, l.M, l.N, l.K, l.DType, l.SMTarget, err)
		}
		k := key{l.M, l.N, l.K, l.SMTarget, l.DType}
		if seen[k] {
			return nil, fmt.Errorf("GEMM launch table, entry %d: %dx%dx%d %s on %d SMs is listed twice", i, l.M, l.N, l.K, l.DType, l.SMTarget)
		}
		seen[k] = true
	}
	return f.Launches, nil
}

// validate checks one entry of a launch table.
func (l GEMMLaunch) validate() error {
	for _, v := range []struct {
		name string
		v    int
	}{{"m", l.M}, {"n", l.N}, {"k", l.K}, {"sm_target", l.SMTarget}, {"grid_ctas", l.GridCTAs},
		{"threads_per_cta", l.ThreadsPerCTA}, {"ctas_per_sm", l.CTAsPerSM}, {"tile_m", l.TileM}, {"tile_n", l.TileN}, {"split_k", l.SplitK}} {
		if v.v < 1 || v.v > maxLaunchDim {
			return fmt.Errorf("%s is %d; want 1 to %d", v.name, v.v, maxLaunchDim)
		}
	}
	if t := float64(ceilDiv(l.M, l.TileM)) * float64(ceilDiv(l.N, l.TileN)) * float64(l.SplitK); t > 1<<40 {
		return fmt.Errorf("%.3g tiles; want at most 2^40", t)
	}
	if l.DType.Size() == 0 {
		return fmt.Errorf("unknown element type %q", l.DType)
	}
	if l.ThreadsPerCTA > 1024 {
		return fmt.Errorf("threads_per_cta is %d; a CTA has at most 1024", l.ThreadsPerCTA)
	}
	if l.CTAsPerSM > 32 {
		return fmt.Errorf("ctas_per_sm is %d; an SM holds at most 32 CTAs", l.CTAsPerSM)
	}
	if l.Persistent && l.GridCTAs > l.SMTarget*l.CTAsPerSM {
		return fmt.Errorf("persistent with %d CTAs, more than the %d resident slots of %d SMs", l.GridCTAs, l.SMTarget*l.CTAsPerSM, l.SMTarget)
	}
	if l.SharedBytes < 0 || l.SharedBytes > maxSharedBytes {
		return fmt.Errorf("shared_bytes is %d; want 0 (not known) to %d", l.SharedBytes, maxSharedBytes)
	}
	if l.Source != LaunchMeasured && l.Source != LaunchModel {
		return fmt.Errorf("source %q; want %q or %q", l.Source, LaunchMeasured, LaunchModel)
	}
	return nil
}

// gemmLaunchesH200 is the H200's launch table (see its "regenerate" field
// and TestWriteGEMMLaunchTable).
//
//go:embed gemm_launches_h200.json
var gemmLaunchesH200 []byte

// h200Launches parses the embedded H200 table. The file is part of the
// build and TestH200LaunchTable parses it, so a failure here is a build
// defect, not bad input.
func h200Launches() []GEMMLaunch {
	l, err := ParseGEMMLaunches(gemmLaunchesH200)
	if err != nil {
		panic("backends/sim: the embedded gemm_launches_h200.json is broken: " + err.Error())
	}
	return l
}

// gemmLaunch returns the launch of GEMM c planned for smTarget SMs: the
// profile's table entry, or the tile rule's (Source LaunchRule) when the
// table lacks the shape.
func (p Profile) gemmLaunch(c scenarios.ComputeOp, smTarget int) GEMMLaunch {
	for _, l := range p.GEMMLaunches {
		if l.matches(c, smTarget) {
			return l
		}
	}
	return ruleLaunch(p, c, smTarget)
}

// ruleLaunch is the tile rule's launch (see tileRule): a persistent
// kernel of one 384-thread CTA (three warp groups) per SM, at most one per
// tile, as cuBLASLt's Hopper kernels are by default.
func ruleLaunch(p Profile, c scenarios.ComputeOp, sms int) GEMMLaunch {
	tm, tn, splitK := tileRule(p, c, sms)
	l := GEMMLaunch{
		M: c.M, N: c.N, K: c.K, DType: c.DType, SMTarget: sms,
		ThreadsPerCTA: 384, CTAsPerSM: 1, Persistent: true,
		TileM: tm, TileN: tn, SplitK: splitK, Source: LaunchRule,
	}
	l.GridCTAs = min(l.Tiles(), max(sms, 1))
	return l
}

// tileRule picks the launch cuBLASLt's Hopper kernels take (see the
// model.md section "The tile rule"): the tile and split-K that a simple
// cost model of the library's heuristic finds fastest. The nvjet kernels
// ncu saw on an H200 take any tile M in steps of 8 up to 320 (an M of 80
// gets an 80-row tile, 3160 gets 96 so that 33 x 4 tiles fill 132 SMs),
// under 64 only for an M under 64; tile N from 64 to 256 (384 and 512
// only for M up to 64); and split K when the tiles leave SMs idle. The
// cost of a candidate is its rounds of tiles on the SMs (wave
// quantization) times one tile: its K steps, each the
// larger of its tensor work at one SM's rate and its operand loads
// ((tile M + tile N) x K step elements) at ruleOperandBandwidth, then the
// epilogue; split K adds the partial sums' traffic and the reduction
// kernel's launch.
//
// On fewer SMs than the device has (a partition's SM target) the older
// rule, partitionTileRule, still decides: the model's GEMM on a partition
// was calibrated with its launches, and on the grid's 68-SM placements
// neither rule comes within 10 % at the median (model.md, "The tile
// rule").
func tileRule(p Profile, c scenarios.ComputeOp, sms int) (tm, tn, splitK int) {
	if sms < p.SMs {
		return partitionTileRule(p, c, sms)
	}
	sms = max(sms, 1)
	b := float64(c.DType.Size())
	kstep := 64
	if c.DType == scenarios.FP8 {
		kstep = 128
	}
	perSM := p.PeakFLOPs[c.DType] * p.gemmEfficiency(c.DType) / float64(p.SMs)
	best := math.Inf(1)
	tm, tn, splitK = 128, 256, 1
	m8 := ceilDiv(c.M, 8) * 8
	for m := min(m8, 64); m <= min(ruleMaxTileM, m8); m += 8 {
		for _, n := range ruleTileN() {
			if m*n > ruleMaxTileArea || (n > 256 && c.M > 64) {
				continue
			}
			out := ceilDiv(c.M, m) * ceilDiv(c.N, n)
			for sk := 1; sk <= 16 && (sk == 1 || c.K/sk >= 1024); sk++ {
				tiles := out * sk
				rounds := ceilDiv(tiles, min(tiles, sms))
				steps := ceilDiv(ceilDiv(c.K, sk), kstep)
				step := math.Max(2*float64(m*n*kstep)/perSM, float64((m+n)*kstep)*b/ruleOperandBandwidth)
				est := float64(rounds) * (float64(steps)*step + p.GEMMTileEpilogue)
				if sk > 1 {
					est += float64(c.M*c.N)*4*2/p.HBMBandwidth + p.KernelFixedCost
				}
				if est < best*(1-1e-9) {
					best, tm, tn, splitK = est, m, n, sk
				}
			}
		}
	}
	return tm, tn, splitK
}

// partitionTileRule is the tile rule for an SM target under the device's
// SM count: 128 x 256 for large M, 128 x 128 under M = 1024, 64 x 128 up
// to M = 64, and split K when the tiles cannot fill the SMs, or cannot
// fill memBoundWaves waves of them for a memory-bound shape (arithmetic
// intensity below the machine balance).
func partitionTileRule(p Profile, c scenarios.ComputeOp, sms int) (tm, tn, splitK int) {
	tm, tn = 128, 256
	if c.M < 1024 {
		tn = 128
	}
	if c.M <= 64 {
		tm = 64
	}
	tiles := ceilDiv(c.M, tm) * ceilDiv(c.N, tn)
	b := float64(c.DType.Size())
	out := math.Max(b, 2) // fp8 GEMMs write bf16
	M, N, K := float64(c.M), float64(c.N), float64(c.K)
	balance := p.PeakFLOPs[c.DType] * p.gemmEfficiency(c.DType) / p.HBMBandwidth
	memBound := c.FLOPs()/((M*K+K*N)*b+M*N*out) < balance
	splitK = 1
	switch {
	case memBound && tiles < memBoundWaves*sms:
		splitK = max(1, min(ceilDiv(memBoundWaves*sms, tiles), c.K/256))
	case tiles < sms:
		splitK = max(1, min(sms/tiles, c.K/256))
	}
	return tm, tn, splitK
}

// The tile rule's candidates and cost (tileRule).
const (
	// ruleMaxTileM and ruleMaxTileArea bound a tile: at most 320 rows and
	// 320 x 128 accumulators (the largest nvjet tiles measured: 320 x 128,
	// 208 x 192, 152 x 256).
	ruleMaxTileM    = 320
	ruleMaxTileArea = 320 * 128
	// ruleOperandBandwidth is the rate one SM loads its operand tiles at
	// (from L2 mostly), bytes/s: what makes a small tile slow per FLOP.
	// Model: about twice one SM's share of HBM.
	ruleOperandBandwidth = 128e9
)

// ruleTileN are the tile N sizes the rule tries.
func ruleTileN() [8]int { return [...]int{64, 96, 128, 160, 192, 256, 384, 512} }

// ncuLaunches is the measurement file the cuda backend's GPU suite writes
// (backends/cuda/reference/gemm_launches.py over ncu's LaunchStats of
// TestGPUGEMMLaunches): per shape its main kernel, the split-K reduction
// kernel when there is one, and whether the grid fits the resident slots.
type ncuLaunches struct {
	SMs    int `json:"sms"`
	Shapes []struct {
		M          int             `json:"m"`
		N          int             `json:"n"`
		K          int             `json:"k"`
		DType      scenarios.DType `json:"dtype"`
		SMTarget   int             `json:"sm_target"`
		Persistent bool            `json:"persistent"`
		Main       ncuKernel       `json:"main"`
		Reduce     *ncuKernel      `json:"reduce"`
	} `json:"shapes"`
}

// ncuKernel is one kernel's launch statistics.
type ncuKernel struct {
	Kernel      string `json:"kernel"`
	Grid        int    `json:"grid"`
	Block       int    `json:"block"`
	CTAsPerSM   int    `json:"ctas_per_sm"`
	SharedBytes int    `json:"shared_bytes"`
}

// launchesFromNCU turns the measurement file into launch table entries
// (Source LaunchMeasured). An SM target of 0 is the whole device. The
// tile is read from the kernel's name (nvjet's "tst_128x160_...",
// CUTLASS's "gemm_f16_64x256_..."; 128 x 256 when the name has none);
// ncu does not report split-K, so a shape with a split-K reduction
// kernel gets its grid over its output tiles (at least 2), 1 otherwise.
func launchesFromNCU(data []byte) ([]GEMMLaunch, error) {
	var f ncuLaunches
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("reading the ncu launch statistics: %w", err)
	}
	if f.SMs < 1 || f.SMs > maxLaunchDim {
		return nil, fmt.Errorf("ncu launch statistics: sms is %d; want the device's SM count", f.SMs)
	}
	var out []GEMMLaunch
	for i, s := range f.Shapes {
		l := GEMMLaunch{
			M: s.M, N: s.N, K: s.K, DType: s.DType, SMTarget: s.SMTarget,
			GridCTAs: s.Main.Grid, ThreadsPerCTA: s.Main.Block, CTAsPerSM: s.Main.CTAsPerSM,
			Persistent: s.Persistent, SplitK: 1, Kernel: s.Main.Kernel, SharedBytes: s.Main.SharedBytes,
			Source: LaunchMeasured,
		}
		if l.SMTarget == 0 {
			l.SMTarget = f.SMs
		}
		l.TileM, l.TileN = tileOfKernel(s.Main.Kernel)
		if s.Reduce != nil && l.M > 0 && l.N > 0 && l.TileM > 0 && l.TileN > 0 {
			tiles := ceilDiv(l.M, l.TileM) * ceilDiv(l.N, l.TileN)
			l.SplitK = max(2, ceilDiv(l.GridCTAs, max(tiles, 1)))
		}
		if err := l.validate(); err != nil {
			return nil, fmt.Errorf("ncu launch statistics, shape %d (%dx%dx%d %s): %w", i, s.M, s.N, s.K, s.DType, err)
		}
		out = append(out, l)
	}
	return out, nil
}

// tileOfKernel reads a GEMM kernel's output tile from its name with
// ParseKernelName (nvjet's "<types>_<m>x<n>_..." for every type code,
// CUTLASS's "gemm_<type>_<m>x<n>_..."); 128 x 256 when the name is not
// one it reads.
func tileOfKernel(name string) (tm, tn int) {
	if t, ok := ParseKernelName(name); ok {
		return t.TileM, t.TileN
	}
	return 128, 256
}

// KernelTile is what a GEMM kernel's name says about its work unit: the
// output tile one CTA computes (TileM x TileN), the K step of one main
// loop iteration and the pipeline's stages, the thread-block cluster, the
// element types and whether it splits K.
type KernelTile struct {
	// Family is the kernel family: "nvjet" (cuBLASLt's Hopper kernels) or
	// "cutlass" (CUTLASS's sm80 kernels).
	Family string
	// Types is the name's element-type code: nvjet's "tst" (bf16), "hsh"
	// (fp16), "qqtst" (fp8 in, bf16 out); CUTLASS's "bf16", "f16".
	Types string
	// TileM x TileN is the output tile, KStep the K of one main-loop
	// iteration, Stages the iterations in flight.
	TileM, TileN, KStep, Stages int
	// ClusterM x ClusterN is the thread-block cluster (1 x 1 for sm80).
	ClusterM, ClusterN int
	// SplitK says the name marks a split-K kernel.
	SplitK bool
}

// maxTileDim bounds a parsed name's dimensions.
const maxTileDim = 1024

// ParseKernelName reads a GEMM kernel's tile from its name:
//
//	nvjet_sm90_tst_128x160_64x5_2x1_v_bz_TNT: tile 128 x 160, K step 64, 5 stages, cluster 2 x 1
//	...cutlass_80_tensorop_bf16_s16816gemm_bf16_64x256_64x4_tn_align2...: tile 64 x 256, K step 64, 4 stages
//
// It reports false for a name it cannot read (another family, missing or
// out-of-range fields); it never panics.
func ParseKernelName(name string) (KernelTile, bool) {
	dims := func(s string) (a, b int, ok bool) {
		x, y, found := strings.Cut(s, "x")
		if !found {
			return 0, 0, false
		}
		a, errA := strconv.Atoi(x)
		b, errB := strconv.Atoi(y)
		if errA != nil || errB != nil || a < 1 || b < 1 || a > maxTileDim || b > maxTileDim {
			return 0, 0, false
		}
		return a, b, true
	}
	if rest, ok := strings.CutPrefix(name, "nvjet_"); ok {
		f := strings.Split(rest, "_")
		if len(f) < 4 || !strings.HasPrefix(f[0], "sm") || f[1] == "" {
			return KernelTile{}, false
		}
		t := KernelTile{Family: "nvjet", Types: f[1], ClusterM: 1, ClusterN: 1}
		var ok1, ok2 bool
		t.TileM, t.TileN, ok1 = dims(f[2])
		t.KStep, t.Stages, ok2 = dims(f[3])
		if !ok1 || !ok2 || t.Stages > 64 {
			return KernelTile{}, false
		}
		if len(f) > 4 {
			if cm, cn, ok := dims(f[4]); ok && cm <= 16 && cn <= 16 {
				t.ClusterM, t.ClusterN = cm, cn
			}
		}
		t.SplitK = slices.Contains(f, "splitK")
		return t, true
	}
	i := strings.Index(name, "cutlass_80_")
	if i < 0 {
		return KernelTile{}, false
	}
	f := strings.Split(name[i:], "_")
	for j := 0; j+2 < len(f); j++ {
		if !strings.HasSuffix(f[j], "gemm") {
			continue
		}
		t := KernelTile{Family: "cutlass", Types: f[j+1], ClusterM: 1, ClusterN: 1}
		var ok1, ok2 bool
		t.TileM, t.TileN, ok1 = dims(f[j+2])
		if j+3 < len(f) {
			t.KStep, t.Stages, ok2 = dims(f[j+3])
		}
		if !ok1 || !ok2 || t.Stages > 64 {
			return KernelTile{}, false
		}
		return t, true
	}
	return KernelTile{}, false
}
