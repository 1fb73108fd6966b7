package cuda

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/telemetry"
	"github.com/c3lab/c3lab/scenarios"
)

// gemmPartitionConfig is one way to confine a GEMM running alone: a
// strategy whose partition or SM target the compute op keeps in
// ModeCompute.
type gemmPartitionConfig struct {
	Name     string             `json:"name"`
	Strategy scenarios.Strategy `json:"strategy"`
	// StructuredRest runs it with the structured-rest probe on.
	StructuredRest bool `json:"structured_rest,omitempty"`
}

// gemmPartitionConfigs are the GEMM's places in the strategies the suite
// sweeps: the whole GPU; the rest of a comm partition of 8, 16, 32 and 64
// SMs (comm-sms-*, dma-comm-sms-*), as is and as a structured group split
// again out of it (the structured-rest probe); a compute partition of 120 and
// 112 SMs (dma-gemm-*); cuBLASLt planned for 116 and 100 SMs without a
// partition (gemm_sm_target).
func gemmPartitionConfigs() []gemmPartitionConfig {
	return []gemmPartitionConfig{
		{Name: "full"},
		{Name: "rest-of-8", Strategy: scenarios.Strategy{CommSMs: 8}},
		{Name: "rest-of-16", Strategy: scenarios.Strategy{CommSMs: 16}},
		{Name: "rest-of-32", Strategy: scenarios.Strategy{CommSMs: 32}},
		{Name: "rest-of-64", Strategy: scenarios.Strategy{CommSMs: 64}},
		{Name: "structured-rest-of-8", Strategy: scenarios.Strategy{CommSMs: 8}, StructuredRest: true},
		{Name: "structured-rest-of-16", Strategy: scenarios.Strategy{CommSMs: 16}, StructuredRest: true},
		{Name: "structured-rest-of-32", Strategy: scenarios.Strategy{CommSMs: 32}, StructuredRest: true},
		{Name: "structured-rest-of-64", Strategy: scenarios.Strategy{CommSMs: 64}, StructuredRest: true},
		{Name: "compute-120", Strategy: scenarios.Strategy{ComputeSMs: 120}},
		{Name: "compute-112", Strategy: scenarios.Strategy{ComputeSMs: 112}},
		{Name: "target-116", Strategy: scenarios.Strategy{GEMMSMTarget: 116}},
		{Name: "target-100", Strategy: scenarios.Strategy{GEMMSMTarget: 100}},
	}
}

// suiteGEMMs lists every distinct GEMM of the built-in scenarios (the
// pairs' compute ops and the stream scenarios' GEMMs), in suite order.
func suiteGEMMs() []scenarios.ComputeOp {
	var out []scenarios.ComputeOp
	add := func(c scenarios.ComputeOp) {
		if c.Kind == scenarios.GEMM && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	for _, sc := range scenarios.Builtin() {
		add(sc.Compute)
		for _, s := range sc.Streams {
			for _, o := range s.Ops {
				if o.Kind == scenarios.OpKind(scenarios.GEMM) {
					add(o.AsCompute())
				}
			}
		}
	}
	return out
}

// gemmPartitionShape is one GEMM's times under every config.
type gemmPartitionShape struct {
	GEMM    string                          `json:"gemm"`
	M       int                             `json:"m"`
	N       int                             `json:"n"`
	K       int                             `json:"k"`
	DType   scenarios.DType                 `json:"dtype"`
	Stats   map[string]profiler.Stat        `json:"stats"`
	OverAll map[string]gemmPartitionRatio   `json:"over_full"`
	State   map[string][]profiler.PartState `json:"state,omitempty"`
	Rounds  ceRuns                          `json:"rounds_ns"`
	// sums are the NVML readings of GPU 0 per config.
	sums map[string]*profiler.StateSum
}

// gemmPartitionRatio is the per-round ratio of a config's mean time over
// the whole GPU's in the same round: its median and a distribution-free
// 95 % interval of that median.
type gemmPartitionRatio struct {
	Median float64 `json:"median"`
	Lo     float64 `json:"ci_lo"`
	Hi     float64 `json:"ci_hi"`
}

// Probe parameters: rounds of a few repetitions, each config once per
// round in an order rotated by one place each round.
const (
	gemmPartitionRounds = 6
	gemmPartitionReps   = 4
)

// TestGPUGEMMOnPartitions times every GEMM of the suite alone on one GPU
// in the places the strategies put it: the whole GPU, the rest of a comm
// partition, a compute partition, and cuBLASLt's plan for fewer SMs
// without a partition. It is the measurement behind the simulator's GEMM
// on a partition (issue 17: "the GEMM on the rest of a green-context split
// loses more than its SMs, by shape", RestPartitionGEMMLoss being one
// number for all shapes), free of the collective's interference: the
// sweeps only hold the GEMM beside a collective. NVML's clocks and power
// are read around every run, since a confined GEMM draws less power and
// may hold a higher clock. JSON to $C3LAB_GEMM_PARTITION_OUT.
func TestGPUGEMMOnPartitions(t *testing.T) {
	b := openGPU(t)
	ctx := context.Background()
	var state *telemetry.StateReader
	if s, err := telemetry.OpenState(nvml.New(), nil); err != nil {
		t.Logf("no NVML state: %v", err)
	} else {
		state = s
	}
	configs := gemmPartitionConfigs()
	var shapes []gemmPartitionShape
	for _, g := range suiteGEMMs() {
		sc := scenarios.Scenario{
			Name: "gemm-partition", GPUs: 1, Compute: g,
			Comm: scenarios.CommOp{Collective: scenarios.HostToDevice, Bytes: 64 << 10},
		}
		sh := gemmPartitionShape{GEMM: g.String(), M: g.M, N: g.N, K: g.K, DType: g.DType,
			Stats: map[string]profiler.Stat{}, OverAll: map[string]gemmPartitionRatio{}, State: map[string][]profiler.PartState{},
			Rounds: ceRuns{}, sums: map[string]*profiler.StateSum{}}
		for r := -1; r < gemmPartitionRounds; r++ {
			k := ((r % len(configs)) + len(configs)) % len(configs)
			for _, c := range append(slices.Clone(configs[k:]), configs[:k]...) {
				reps, warm := gemmPartitionReps, 0
				if r < 0 {
					reps, warm = 1, 2 // set-up, verification and the plan's first launches, untimed
				}
				must(t, b.setStructuredRest(c.StructuredRest))
				pre := state.State()
				res, err := b.Run(ctx, backends.Experiment{Scenario: sc, Strategy: c.Strategy, Mode: backends.ModeCompute, Reps: reps, Warmup: warm}, nil)
				post := state.State()
				if err != nil {
					t.Fatalf("%s on %s: %v", g, c.Name, err)
				}
				if r < 0 {
					continue
				}
				var ts []int64
				for _, rep := range res.Reps {
					ts = append(ts, rep.Compute)
				}
				sh.Rounds[ceCond(c.Name)] = append(sh.Rounds[ceCond(c.Name)], ts)
				for _, s := range append(pre, post...) {
					if s.Device == 0 {
						if sh.sums[c.Name] == nil {
							sh.sums[c.Name] = &profiler.StateSum{}
						}
						sh.sums[c.Name].Add(s)
					}
				}
			}
		}
		line := fmt.Sprintf("%-30s", g)
		for _, c := range configs {
			var all []int64
			for _, ts := range sh.Rounds[ceCond(c.Name)] {
				all = append(all, ts...)
			}
			sh.Stats[c.Name] = profiler.Summarize(all)
			rt := sh.Rounds.ratio(ceCond(c.Name), "full", false)
			med := rt.Median
			sh.OverAll[c.Name] = gemmPartitionRatio{Median: med, Lo: rt.Lo, Hi: rt.Hi}
			if s := sh.sums[c.Name]; s != nil {
				sh.State[c.Name] = []profiler.PartState{s.State()}
			}
			if c.Name == "full" {
				line += fmt.Sprintf(" full %8.1f µs", sh.Stats[c.Name].Median/1e3)
			} else {
				line += fmt.Sprintf(" %s %.3f", c.Name, med)
			}
		}
		t.Log(line)
		shapes = append(shapes, sh)
	}
	// The partitions must confine: a GEMM of at least 1 ms on the whole GPU
	// needs at least 1.3x that on 68 SMs (132/68 = 1.94 if it scaled).
	for _, sh := range shapes {
		if full, rest := sh.Stats["full"].Median, sh.OverAll["rest-of-64"].Median; full >= 1e6 && !(rest >= 1.3) && !math.IsNaN(rest) {
			t.Errorf("%s: %.0f µs on the whole GPU and only %.2fx that on the rest of a 64-SM partition; the partition is not confining it", sh.GEMM, full/1e3, rest)
		}
	}
	writeReport(t, "C3LAB_GEMM_PARTITION_OUT", "c3lab GEMMs on partitions", map[string]any{
		"devices": b.Devices(), "doctor": Probe(), "rounds": gemmPartitionRounds, "reps_per_run": gemmPartitionReps,
		"configs": configs, "shapes": shapes})
}
