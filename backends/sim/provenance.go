package sim

// Source says where a profile constant comes from.
type Source string

// The sources of a profile constant.
const (
	// SourceDatasheet is the vendor's specification.
	SourceDatasheet Source = "datasheet"
	// SourceMeasured is a measurement on the device, not a fit.
	SourceMeasured Source = "measured"
	// SourceFitted is fitted to sweeps by c3lab calibrate (or was by
	// TestFitH200 before it).
	SourceFitted Source = "fitted"
	// SourceModel is an estimate no run has pinned down yet.
	SourceModel Source = "model"
)

// Sources lists the sources in the order documents give them.
func Sources() []Source {
	return []Source{SourceDatasheet, SourceMeasured, SourceFitted, SourceModel}
}

// The stages of a fit (Provenance.Stage).
const (
	// StageIsolated fits a constant in closed form to isolated runs.
	StageIsolated = 1
	// StageInterference fits a constant to concurrent runs with a global
	// search, holding the isolated ones.
	StageInterference = 2
)

// Provenance is where one constant of a profile comes from and the values
// it may physically take. It covers a whole field of Profile: every entry
// of a map field alike.
type Provenance struct {
	// Source is datasheet, measured, fitted or model.
	Source Source `yaml:"source"`
	// Stage is the fit stage of a fitted constant (StageIsolated or
	// StageInterference); 0 for the others.
	Stage int `yaml:"stage,omitempty"`
	// Range is the physical range [min, max] of the constant (of every
	// entry of a map); a profile file's value outside it is refused, and a
	// fit keeps the constant inside it. Nil: any finite value >= 0.
	Range []float64 `yaml:"range,omitempty"`
	// Note says briefly what pins it down.
	Note string `yaml:"note,omitempty"`
	// Fit is how well calibrate identified a fitted constant; nil for the
	// others and in the built-in table.
	Fit *Identification `yaml:"identified,omitempty"`
}

// Identification is how well a fit pins a constant down.
type Identification struct {
	// Low and High bound the values (the others held at the fit) over which
	// the fit-set loss rises by at most LossRise (a share: 0.02 is 2 %).
	// For a stage-1 constant they are the value +- one standard error of
	// its closed-form fit.
	Low      float64 `yaml:"low"`
	High     float64 `yaml:"high"`
	LossRise float64 `yaml:"loss_rise,omitempty"`
	// AtBound is "low" or "high" when the fitted value sits within 1 % of
	// the range's width from that end of its range.
	AtBound string `yaml:"at_bound,omitempty"`
	// Poor flags a constant the data hardly constrain: its interval spans
	// more than half its range, or it is at a bound.
	Poor bool `yaml:"poor,omitempty"`
	// Points is how many runs the fit of this constant used.
	Points int `yaml:"points,omitempty"`
	// Note says why a fit kept the starting value (no data for it).
	Note string `yaml:"note,omitempty"`
}

// H200Provenance returns the provenance of every constant of the built-in
// H200 profile, keyed by Profile field name. A field missing here is
// reported by the tests; a profile file's loader treats it as a model
// value whose range is any finite value >= 0.
func H200Provenance() map[string]Provenance {
	r := func(lo, hi float64) []float64 { return []float64{lo, hi} }
	return map[string]Provenance{
		"Name":            {Source: SourceModel, Note: "the profile's key"},
		"Device":          {Source: SourceDatasheet, Note: "the device's marketing name"},
		"SMs":             {Source: SourceDatasheet, Range: r(1, 1024)},
		"SMStep":          {Source: SourceMeasured, Range: r(1, 1024), Note: "green-context partition granularity"},
		"MaxGPUs":         {Source: SourceModel, Range: r(1, 8), Note: "NVSwitch node of 8"},
		"HighestPriority": {Source: SourceMeasured, Range: r(-16, 0)},
		"MemoryBytes":     {Source: SourceMeasured, Range: r(1, 1e15), Note: "cuDeviceTotalMem"},

		"PeakFLOPs":       {Source: SourceDatasheet, Range: r(0, 1e17)},
		"GEMMEfficiency":  {Source: SourceFitted, Stage: StageIsolated, Range: r(0.05, 1.2), Note: "median over isolated tensor-bound GEMMs; at the maximum SM clock, so past 1 under a power limit (PeakFLOPs is the datasheet's, at 1830 MHz)"},
		"GEMMMemoryStall": {Source: SourceFitted, Stage: StageInterference, Range: r(0, 2)},
		"GEMMLaunches": {Source: SourceMeasured,
			Note: "ncu launch statistics per shape (backends/cuda/results/2026-12-01-h200x1-i17); each entry says measured, model or rule"},
		"GEMMPlacements": {Source: SourceMeasured,
			Note: "each GEMM alone on partitions and SM targets over the whole GPU, interleaved rounds on one H200 (backends/cuda/results/2026-12-02-h200x1-s12)"},
		"GEMMWholeTimes": {Source: SourceMeasured,
			Note: "each GEMM alone on the whole GPU, the same probe's rounds; the simulator takes each shape's deviation from the model (backends/cuda/results/2026-12-02-h200x1-s12)"},

		"HBMBandwidth":   {Source: SourceMeasured, Range: r(1e9, 1e14)},
		"SMHBMBandwidth": {Source: SourceModel, Range: r(1e9, 1e13)},
		"HBMContention":  {Source: SourceFitted, Stage: StageInterference, Range: r(0, 0.5)},
		"L2Bytes":        {Source: SourceDatasheet, Range: r(0, 1e10)},
		"L2Interference": {Source: SourceFitted, Stage: StageInterference, Range: r(0, 2)},
		"InterferenceKnee": {Source: SourceModel, Range: r(0, 1),
			Note: "the others' HBM share at which L2Interference and HBMContention apply in full; 0 = always in full (the built-in); profiles/h200-measured.yaml fits it"},

		"LinkBandwidth":        {Source: SourceDatasheet, Range: r(1e9, 1e13)},
		"LinkEfficiencySM":     {Source: SourceFitted, Stage: StageIsolated, Range: r(0.05, 1), Note: "slope of isolated SM collectives against size"},
		"LinkEfficiencyCE":     {Source: SourceFitted, Stage: StageIsolated, Range: r(0.05, 1), Note: "slope of isolated copy-engine collectives"},
		"LinkEfficiencyNCCLCE": {Source: SourceFitted, Stage: StageIsolated, Range: r(0.05, 1), Note: "slope of NCCL's isolated copy-engine collectives"},

		"CommCTAs":                 {Source: SourceModel, Range: r(1, 1024), Note: "NCCL's channel count on NV18"},
		"CommCTAScaling":           {Source: SourceFitted, Stage: StageIsolated, Range: r(0, 0.5), Note: "the exponent that gives the CTA-capped collectives of every cap one bandwidth per CTA"},
		"CTALinkBandwidth":         {Source: SourceFitted, Stage: StageIsolated, Range: r(1e8, 1e12), Note: "CTA-capped collectives after the GEMM"},
		"PartitionSMLinkBandwidth": {Source: SourceFitted, Stage: StageIsolated, Range: r(0, 1e12), Note: "collectives in a partition of fewer SMs than their CTAs, next to a short GEMM; 0 keeps the CTA model"},
		"CommLatencySensitivity":   {Source: SourceFitted, Stage: StageInterference, Range: r(0, 8)},
		"PartitionLatencyShare": {Source: SourceMeasured, Range: r(0, 1),
			Note: "c3lab's reduction and copy kernels in a green context of their own beside the 1 GiB stream op, against sharing its SMs (results/2026-12-04-h200x1-s23, analyze.py)"},
		"CommHBMPerLinkByte": {Source: SourceModel, Range: r(0, 16)},
		"CommLocalCopy":      {Source: SourceModel},
		"CommSetup":          {Source: SourceFitted, Stage: StageIsolated, Range: r(0, 1e-3), Note: "intercept of isolated SM collectives against size"},

		"CommComputeStall": {Source: SourceFitted, Stage: StageInterference, Range: r(0, 1),
			Note: "an SM collective slows while compute kernels (GEMMs, stream ops) hold SMs beside it; at most 2x with every SM taken; 0 = off (the built-in)"},

		"CopyEngines":         {Source: SourceMeasured, Range: r(0, 64)},
		"CopyEngineBandwidth": {Source: SourceMeasured, Range: r(1e9, 1e13)},
		"CopyLaunchOverhead":  {Source: SourceModel, Range: r(0, 1e-3)},
		"CopySyncOverhead":    {Source: SourceFitted, Stage: StageIsolated, Range: r(0, 1e-3), Note: "one-stream intercept of isolated copy-engine collectives"},
		"CopyStreamSyncOverhead": {Source: SourceFitted, Stage: StageIsolated, Range: r(0, 1e-4),
			Note: "each copy stream beyond the first, per phase, with CopySyncOverhead from the isolated copy-engine collectives; small messages measured 7.5 µs (TestCopyStreamSyncMeasured)"},
		"CopyChainSyncOverhead": {Source: SourceFitted, Stage: StageIsolated, Range: r(0, 1e-4),
			Note: "an all-reduce's second copy phase, from the reduction's end; with ReductionBandwidth from the isolated copy-engine reductions"},
		"CopyChunkGap": {Source: SourceModel, Range: r(0, 1e-3)},
		"CopyHBMWeight": {Source: SourceFitted, Stage: StageInterference, Range: r(0.25, 64),
			Note: "copy engines' weight in the shared HBM pool: 1 an equal footing, 64 about served first"},
		"DMAHBMPerLinkByte":  {Source: SourceModel, Range: r(0, 16)},
		"ReductionCTAsPerSM": {Source: SourceMeasured, Range: r(1, 64), Note: "c3lab's kernel launches 4 per SM"},
		"ReductionSMBandwidth": {Source: SourceFitted, Stage: StageInterference, Range: r(10e9, 200e9),
			Note: "pinned by the GPU tests' reductions on 8 and 16 SMs"},
		"ReductionBandwidth":    {Source: SourceFitted, Stage: StageIsolated, Range: r(1e11, 1e13), Note: "isolated copy-engine reductions less their copies"},
		"PowerLimitSMs":         {Source: SourceMeasured, Range: r(0, 1024), Note: "busy SMs at the power limit at the maximum clock; TestH200PowerLimit fits it to the clock probe; 0 = no limit"},
		"PowerClockExponent":    {Source: SourceMeasured, Range: r(0, 8), Note: "power ~ clock^exponent; TestH200PowerLimit fits it with PowerLimitSMs"},
		"RepGap":                {Source: SourceMeasured, Range: r(0, 1e-2), Note: "the cuda backend's idle time between repetitions; the clock probe's short GEMM"},
		"RestPartitionGEMMLoss": {Source: SourceFitted, Stage: StageInterference, Range: r(0, 0.5)},
		"RestClusterLoss": {Source: SourceMeasured, Range: r(0, 0.5),
			Note: "68 SMs over the whole GPU by kernel cluster, GEMM grids and partition probe (results/2026-12-02-h200x1-s7)"},
		"ContendedSMBandwidth": {Source: SourceMeasured, Range: r(1e9, 1e12), Note: "reduction spans next to a GEMM (FINDINGS.md section 4)"},

		"NCCLCECTAs":  {Source: SourceModel, Range: r(0, 1024)},
		"NCCLCESetup": {Source: SourceFitted, Stage: StageIsolated, Range: r(0, 1e-3), Note: "intercept of NCCL's isolated copy-engine collectives"},

		"PeerLoadCTABandwidth": {Source: SourceModel, Range: r(0, 1e12),
			Note: "32 KiB in flight per CTA over a ~2 µs NVLink round trip; unmeasured (no 2-GPU run of p2p-load yet); 0 takes the default"},

		"PCIeBandwidth":                 {Source: SourceMeasured, Range: r(1e8, 1e12)},
		"PCIeDuplexBandwidth":           {Source: SourceMeasured, Range: r(1e8, 1e12)},
		"PCIeLinkBandwidth":             {Source: SourceDatasheet, Range: r(1e8, 1e12)},
		"HostCopySetup":                 {Source: SourceMeasured, Range: r(0, 1e-3)},
		"HostCopyCTAs":                  {Source: SourceMeasured, Range: r(1, 4096)},
		"HostCopyCTAsPerSM":             {Source: SourceMeasured, Range: r(0, 32), Note: "copy CTAs an SM holds once the copy waits for SMs; SM ids of every CTA on one H200 (results/2026-12-04-h200x1-s22)"},
		"HostCopyCTABandwidth":          {Source: SourceMeasured, Range: r(1e8, 1e12)},
		"HostCopyInheritedAbove":        {Source: SourceMeasured, Range: r(0, 256<<10), Note: "GEMM kernels' shared memory per CTA above which the copy kernel's CTAs behind them slow down: the largest carveout (results/2026-12-04-h200x1-s25, call 4)"},
		"HostCopyInheritedCTABandwidth": {Source: SourceMeasured, Range: r(0, 1e12), Note: "the copy kernel's CTAs behind a GEMM, under its shared-memory carveout (results/2026-12-02-h200x1-s11)"},
		"HostCopyKernelBandwidth":       {Source: SourceMeasured, Range: r(1e8, 1e12)},
		"HostCopyKernelDuplexBandwidth": {Source: SourceMeasured, Range: r(1e8, 1e12)},
		"HostCopyKernelDuplexByCTAs": {Source: SourceMeasured,
			Note: "a 48 MiB swap alone at 4, 16 and 64 CTAs (results/2026-12-03-h200x1-s15) and at the default 32"},
		"HostCopyKernelSetup": {Source: SourceMeasured, Range: r(0, 1e-3)},
		"HostCopyKernelBusyGain": {Source: SourceMeasured, Range: r(0, 0.5),
			Note: "a 32 MiB swap on the side of a partition beside a stream op and a GEMM against beside next to nothing, one H200 (results/2026-12-03-h200x1-s18)"},
		"HostWriteEndWait": {Source: SourceMeasured, Range: r(0, 1e-2),
			Note: "64 MiB stream ops back to back beside one 128 MiB d2h copy kernel at 8-64 CTAs, one H200 (results/2026-12-03-h200x1-s19, call 1)"},
		"HostWriteLaunchGap": {Source: SourceMeasured, Range: r(0, 1e-2),
			Note: "the gaps between those stream ops"},
		"HostWriteLaunchGapWeight": {Source: SourceMeasured, Range: r(0.01, 8),
			Note: "the copy's write weight from which the gap is whole, from the same gaps"},
		"HostCopyKernelReadStall": {Source: SourceMeasured, Range: r(0, 20),
			Note: "off (0) since the twenty-first session: GEMMs beside an h2d copy kernel slow alike whatever their demand on HBM (HostReadStall); set from GEMMs beside a copy of 32 CTAs on one H200 (results/2026-12-03-h200x1-s16)"},
		"HostReadStall": {Source: SourceMeasured, Range: r(0, 20),
			Note: "single bf16 GEMMs beside a 128 MiB h2d copy kernel at 8-64 CTAs, one H200 (results/2026-12-03-h200x1-s20 call 4; checked on -s21 call 1)"},
		"HostReadEndWait": {Source: SourceMeasured, Range: r(0, 1e-2),
			Note: "the ends of single GEMMs of 94-345 µs and of decode GEMMs back to back beside a 128 MiB h2d copy kernel at 8-32 CTAs, one H200 (results/2026-12-03-h200x1-s20, calls 1 and 4)"},
		"HostReadApartWait": {Source: SourceMeasured, Range: r(0, 1e-2),
			Note: "per unit of read weight, a GEMM on the rest of a partition beside an h2d copy kernel in it (backends/cuda/results/2026-12-04-h200x1-s26, call 2)"},
		"HostReadStallFrom": {Source: SourceMeasured, Range: r(0, 4),
			Note: "the read weight past which those GEMMs all but stop (the same probes)"},
		"HostReadStallSteep": {Source: SourceMeasured, Range: r(0, 100),
			Note: "the GEMMs' stall at 48 and 64 copy CTAs (the same probes)"},
		"HostReadStallTiles": {Source: SourceMeasured, Range: r(0, 64),
			Note: "GEMMs of 13-16 tiles per CTA against those of about four (the same probes)"},
		"HostWriteStall": {Source: SourceFitted, Stage: StageInterference, Range: r(0, 30),
			Note: "a d2h copy kernel's posted writes to host memory slow the kernels beside it"},
		"HostReadLaunchGap": {Source: SourceMeasured, Range: r(0, 1e-2),
			Note: "the gaps between decode GEMMs beside a 128 MiB h2d copy kernel at 8, 16 and 32 CTAs, one H200 (results/2026-12-03-h200x1-s20 call 1, -s19 call 3)"},
		"HostWriteStallFrom": {Source: SourceMeasured, Range: r(0, 1),
			Note: "off (0) in the calibrated profiles; profiles/h200-hostwrite.yaml: single bf16 GEMMs beside a 256 MiB d2h copy kernel (results/2026-12-03-h200x1-s19 call 4, -s20 call 1)"},
		"HostWriteStallAlone": {Source: SourceMeasured, Range: r(0, 100),
			Note: "the steep write stall behind a d2h copy kernel that started first: single GEMMs and 4096^3 streams beside 128-256 MiB copies launched first against the same with the GEMMs first, one H200 (results/2026-12-03-h200x1-s19, -s20, -s21 call 4)"},
		"HostWriteStallTiles": {Source: SourceMeasured, Range: r(0, 64),
			Note: "off (0) in the calibrated profiles; profiles/h200-hostwrite.yaml: GEMMs of 8-28 tiles per CTA against those of 1-4 (the same probes)"},
		"HostWriteTail": {Source: SourceMeasured, Range: r(0, 1),
			Note: "off (0) in the calibrated profiles; profiles/h200-hostwrite.yaml: ops beside the copy speed up over its last part (results/2026-12-03-h200x1-s19, calls 1-2)"},
		"HostWriteStreamStall": {Source: SourceMeasured, Range: r(0, 30),
			Note: "the 1 GiB Adam stream beside a 32 MiB d2h copy kernel on the rests of 16 and 32 SMs and with the copy first, on one H200 (results/2026-12-03-h200x1-s18, TestStreamFillsCopySMs)"},
		"CopyEngineH2DStall": {Source: SourceMeasured, Range: r(0, 2),
			Note: "GEMMs of 16, 241 and 2731 flop/B next to a 54 GB/s copy-engine h2d (results/2026-12-01-h200x1-s3, ce_hbm_probe.py); the sweeps do not identify it"},
		"CopyEngineD2HStall": {Source: SourceMeasured, Range: r(0, 2),
			Note: "the same GEMMs next to a copy-engine d2h"},

		"LaunchGap": {Source: SourceFitted, Stage: StageInterference, Range: r(1e-6, 20e-6),
			Note: "never 0: the second stream waits on an event behind the start gate"},

		"HostLaunchGap":   {Source: SourceModel, Range: r(0, 1e-3)},
		"KernelFixedCost": {Source: SourceModel, Range: r(0, 1e-3)},
		"WaveJitter":      {Source: SourceModel, Range: r(0, 1)},

		"GEMMTiles":          {Source: SourceModel, Note: "the GEMM's time from its tiles (on) or the roofline (off)"},
		"PlacementPrior":     {Source: SourceModel, Note: "a GEMM the placement table lacks takes the table's median measured-over-modelled ratio in its placement (on) or the model's alone (off)"},
		"LateCTASetup":       {Source: SourceModel, Note: "CTAs dispatched after a kernel's first spend its setup themselves (on) or start at once (off)"},
		"StreamFillsCopySMs": {Source: SourceModel, Note: "a stream op's CTAs run beside c3lab's copy kernel's on its SMs (on) or every CTA holds its SM alone (off)"},
		"MultiGPUComputeScale": {Source: SourceMeasured, Range: r(0, 0.2),
			Note: "the two-GPU sweeps' GEMMs (T_comp) against the same GEMMs on one GPU: T_2gpu = 1.024 T_1gpu + 3.0 us over 66 and 97 GEMMs (backends/cuda/results/2026-12-02-h200x1-s8/compare_machines.py)"},
		"MultiGPUComputeDelay": {Source: SourceMeasured, Range: r(0, 20e-6),
			Note: "as MultiGPUComputeScale: the fixed part of the two-GPU GEMMs' extra time"},
		"GEMMPrologue": {Source: SourceFitted, Stage: StageIsolated, Range: r(0, 100e-6),
			Note: "intercept of the isolated GEMMs' times (with GEMMTileEpilogue, least squares on relative error)"},
		"GEMMTileEpilogue": {Source: SourceFitted, Stage: StageIsolated, Range: r(0, 20e-6),
			Note: "per tile of the busiest CTA, from the isolated GEMMs' times"},
	}
}

// BuiltinProvenance returns the provenance table of a built-in profile by
// name, and whether there is one.
func BuiltinProvenance(name string) (map[string]Provenance, bool) {
	if name == H200().Name {
		return H200Provenance(), true
	}
	return nil, false
}
