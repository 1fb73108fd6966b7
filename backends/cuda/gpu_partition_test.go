package cuda

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"testing"
	"time"

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

// rotated returns xs started at place r (modulo its length, r may be
// negative): the order of round r in probes that rotate their configs by
// one place each round, so that no config always runs first.
func rotated[T any](xs []T, r int) []T {
	if len(xs) == 0 {
		return nil
	}
	k := (r%len(xs) + len(xs)) % len(xs)
	return append(slices.Clone(xs[k:]), xs[:k]...)
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
// may hold a higher clock. JSON to $C3LAB_GEMM_PARTITION_OUT. With
// $C3LAB_GEMM_PARTITION_SHAPES (one "M N K dtype 0" per line, the format of
// C3LAB_GEMM_SHAPES) it times those GEMMs instead of the suite's: the
// shapes of older sweeps that the suite no longer has.
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
	gemms := suiteGEMMs()
	if path := os.Getenv("C3LAB_GEMM_PARTITION_SHAPES"); path != "" {
		list, err := readGEMMShapes(path)
		if err != nil {
			t.Fatal(err)
		}
		gemms = gemms[:0]
		for _, sh := range list {
			if sh.smTarget != 0 {
				t.Fatalf("%dx%dx%d %s: the partition probe sets its own SM targets; give 0", sh.m, sh.n, sh.k, sh.dtype)
			}
			gemms = append(gemms, scenarios.ComputeOp{Kind: scenarios.GEMM, M: sh.m, N: sh.n, K: sh.k, DType: sh.dtype})
		}
	}
	var shapes []gemmPartitionShape
	for _, g := range gemms {
		sc := scenarios.Scenario{
			Name: "gemm-partition", GPUs: 1, Compute: g,
			Comm: scenarios.CommOp{Collective: scenarios.HostToDevice, Bytes: 64 << 10},
		}
		sh := gemmPartitionShape{GEMM: g.String(), M: g.M, N: g.N, K: g.K, DType: g.DType,
			Stats: map[string]profiler.Stat{}, OverAll: map[string]gemmPartitionRatio{}, State: map[string][]profiler.PartState{},
			Rounds: ceRuns{}, sums: map[string]*profiler.StateSum{}}
		for r := -1; r < gemmPartitionRounds; r++ {
			for _, c := range rotated(configs, r) {
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

// gemmClockConfigs are the placements whose clocks the clock probe reads:
// the whole GPU, the structured groups and SM targets that lose less than
// their share of the SMs, and two rests of a split that lose more.
func gemmClockConfigs() []gemmPartitionConfig {
	keep := []string{"full", "compute-120", "compute-112", "target-116", "target-100", "rest-of-16", "rest-of-64"}
	var out []gemmPartitionConfig
	for _, c := range gemmPartitionConfigs() {
		if slices.Contains(keep, c.Name) {
			out = append(out, c)
		}
	}
	return out
}

// gemmClockShapes are large suite GEMMs with the sub-linear scaling the
// partition probe found (a 120-SM group within 2 % of the whole GPU for
// the largest), and an fp8 one.
func gemmClockShapes() []scenarios.ComputeOp {
	bf := func(m, n, k int) scenarios.ComputeOp {
		return scenarios.ComputeOp{Kind: scenarios.GEMM, M: m, N: n, K: k, DType: scenarios.BF16}
	}
	fp8 := bf(4096, 13312, 16384)
	fp8.DType = scenarios.FP8
	return []scenarios.ComputeOp{bf(8192, 16384, 16384), bf(16384, 10240, 8192), bf(4096, 16384, 16384), bf(16384, 1280, 8192), fp8}
}

// gemmClockSample is the NVML readings taken while one placement's GEMMs
// ran: SM clock (MHz) and board power (W) per reading, and the union of
// the clock event reasons seen.
type gemmClockSample struct {
	SMClockMHz []float64 `json:"sm_clock_mhz"`
	PowerW     []float64 `json:"power_w"`
	Reasons    []string  `json:"reasons,omitempty"`
}

// gemmClockResult is one shape's per-placement figures: the median time
// of one GEMM, its ratio over the whole GPU's in the same round (median
// over rounds), and the NVML readings taken during the timed runs.
type gemmClockResult struct {
	GEMM       string                      `json:"gemm"`
	RepsPerRun int                         `json:"reps_per_run"`
	MedianNs   map[string]float64          `json:"median_ns"`
	OverFull   map[string]float64          `json:"over_full"`
	During     map[string]*gemmClockSample `json:"during"`
	ClockMed   map[string]float64          `json:"sm_clock_median_mhz"`
	PowerMed   map[string]float64          `json:"power_median_w"`
}

// TestGPUGEMMPartitionClocks asks why a GEMM in a structured group or
// planned for fewer SMs loses less than its share of the SMs (the
// partition probe: 1.045x on 120 SMs for 1.100 of the SMs): is the whole
// GPU held back by its power limit, so that a confined GEMM runs at a
// higher SM clock? It runs a few large suite GEMMs on the placements that
// differ most, each for about 300 ms per run in 3 interleaved rounds, and
// reads NVML's SM clock, power and clock event reasons every 2 ms while
// the GEMMs run (the partition probe read them only around each run).
// JSON to $C3LAB_GEMM_CLOCKS_OUT.
func TestGPUGEMMPartitionClocks(t *testing.T) {
	b := openGPU(t)
	ctx := context.Background()
	state, err := telemetry.OpenState(nvml.New(), []int{0})
	if err != nil {
		t.Skipf("the clock probe needs NVML: %v", err)
	}
	configs := gemmClockConfigs()
	const rounds, runTarget = 3, 300e6 // ns of GEMMs per run
	var results []gemmClockResult
	for _, g := range gemmClockShapes() {
		sc := scenarios.Scenario{Name: "gemm-clocks", GPUs: 1, Compute: g,
			Comm: scenarios.CommOp{Collective: scenarios.HostToDevice, Bytes: 64 << 10}}
		// One untimed run per placement (plans, verification), then the
		// whole GPU's time sets the repetitions per run.
		var fullNs float64
		for _, c := range configs {
			res, err := b.Run(ctx, backends.Experiment{Scenario: sc, Strategy: c.Strategy, Mode: backends.ModeCompute, Reps: 3, Warmup: 2}, nil)
			if err != nil {
				t.Fatalf("%s on %s: %v", g, c.Name, err)
			}
			if c.Name == "full" {
				fullNs = float64(res.Reps[len(res.Reps)-1].Compute)
			}
		}
		reps := max(8, int(runTarget/max(fullNs, 1)))
		r := gemmClockResult{GEMM: g.String(), RepsPerRun: reps, MedianNs: map[string]float64{}, OverFull: map[string]float64{},
			During: map[string]*gemmClockSample{}, ClockMed: map[string]float64{}, PowerMed: map[string]float64{}}
		means := map[string][]float64{}
		all := map[string][]int64{}
		for round := range rounds {
			for _, c := range rotated(configs, round) {
				s := r.During[c.Name]
				if s == nil {
					s = &gemmClockSample{}
					r.During[c.Name] = s
				}
				var res backends.RunResult
				clock, power, reasons, err := readDuring(state, func() error {
					var err error
					res, err = b.Run(ctx, backends.Experiment{Scenario: sc, Strategy: c.Strategy, Mode: backends.ModeCompute, Reps: reps, Warmup: 1}, nil)
					return err
				})
				if err != nil {
					t.Fatalf("%s on %s: %v", g, c.Name, err)
				}
				s.SMClockMHz, s.PowerW = append(s.SMClockMHz, clock...), append(s.PowerW, power...)
				if n := telemetry.ThrottleNames(reasons); n != "" && !slices.Contains(s.Reasons, n) {
					s.Reasons = append(s.Reasons, n)
				}
				var sum float64
				for _, rep := range res.Reps {
					all[c.Name] = append(all[c.Name], rep.Compute)
					sum += float64(rep.Compute)
				}
				means[c.Name] = append(means[c.Name], sum/float64(len(res.Reps)))
			}
		}
		line := fmt.Sprintf("%-30s reps %4d", g, reps)
		for _, c := range configs {
			r.MedianNs[c.Name] = profiler.Summarize(all[c.Name]).Median
			var ratios []float64
			for i := range means[c.Name] {
				ratios = append(ratios, means[c.Name][i]/means["full"][i])
			}
			r.OverFull[c.Name], _, _ = medianCI(ratios)
			r.ClockMed[c.Name], _, _ = medianCI(r.During[c.Name].SMClockMHz)
			r.PowerMed[c.Name], _, _ = medianCI(r.During[c.Name].PowerW)
			line += fmt.Sprintf(" | %s %.3f %4.0f MHz %3.0f W", c.Name, r.OverFull[c.Name], r.ClockMed[c.Name], r.PowerMed[c.Name])
		}
		t.Log(line)
		results = append(results, r)
	}
	writeReport(t, "C3LAB_GEMM_CLOCKS_OUT", "c3lab GEMM clocks on partitions", map[string]any{
		"devices": b.Devices(), "doctor": Probe(), "rounds": rounds, "sample_interval_ms": 2,
		"configs": configs, "shapes": results})
}

// clockTrace is NVML's SM clock and power read every millisecond or so,
// with the time since the trace started.
type clockTrace struct {
	AtMs       []float64 `json:"at_ms"`
	SMClockMHz []float64 `json:"sm_clock_mhz"`
	PowerW     []float64 `json:"power_w"`
}

// clockTransient is one GEMM on one placement after the GPU idled: its
// repetition times, in order, through runs of a given length started back
// to back, and the clock trace over them.
type clockTransient struct {
	GEMM     string     `json:"gemm"`
	Place    string     `json:"place"`
	Pattern  string     `json:"pattern"`
	RepsNs   [][]int64  `json:"reps_ns"` // per run, per repetition
	RunAtMs  []float64  `json:"run_at_ms"`
	Trace    clockTrace `json:"trace"`
	IdleSecs float64    `json:"idle_s"`
}

// TestGPUGEMMClockTransient measures how fast the power limit takes hold:
// after 1.5 s idle, a large GEMM runs (a) as one run of 60 repetitions and
// (b) as 15 runs of 4 started back to back (what a sweep's rounds and the
// partition probe do), on the whole GPU and on a 112-SM compute
// partition, while NVML's SM clock and power are read about every
// millisecond. The repetition times in order show the clock's effect on
// the GEMM. JSON to $C3LAB_GEMM_TRANSIENT_OUT.
func TestGPUGEMMClockTransient(t *testing.T) {
	b := openGPU(t)
	ctx := context.Background()
	state, err := telemetry.OpenState(nvml.New(), []int{0})
	if err != nil {
		t.Skipf("the transient probe needs NVML: %v", err)
	}
	bf := func(m, n, k int) scenarios.ComputeOp {
		return scenarios.ComputeOp{Kind: scenarios.GEMM, M: m, N: n, K: k, DType: scenarios.BF16}
	}
	places := []gemmPartitionConfig{{Name: "full"}, {Name: "compute-112", Strategy: scenarios.Strategy{ComputeSMs: 112}}}
	patterns := []struct {
		name       string
		runs, reps int
	}{{"1x60", 1, 60}, {"15x4", 15, 4}}
	var out []clockTransient
	for _, g := range []scenarios.ComputeOp{bf(8192, 16384, 16384), bf(16384, 10240, 8192)} {
		sc := scenarios.Scenario{Name: "gemm-transient", GPUs: 1, Compute: g,
			Comm: scenarios.CommOp{Collective: scenarios.HostToDevice, Bytes: 64 << 10}}
		for _, pl := range places {
			// Plans and verification, untimed.
			if _, err := b.Run(ctx, backends.Experiment{Scenario: sc, Strategy: pl.Strategy, Mode: backends.ModeCompute, Reps: 1, Warmup: 1}, nil); err != nil {
				t.Fatalf("%s on %s: %v", g, pl.Name, err)
			}
			for _, pat := range patterns {
				const idle = 1.5
				time.Sleep(time.Duration(idle * float64(time.Second)))
				tr := clockTransient{GEMM: g.String(), Place: pl.Name, Pattern: pat.name, IdleSecs: idle}
				t0 := time.Now()
				stop, done := make(chan struct{}), make(chan struct{})
				go func() {
					defer close(done)
					for {
						select {
						case <-stop:
							return
						default:
						}
						for _, st := range state.State() {
							tr.Trace.AtMs = append(tr.Trace.AtMs, float64(time.Since(t0).Microseconds())/1e3)
							tr.Trace.SMClockMHz = append(tr.Trace.SMClockMHz, st.SMClockMHz)
							tr.Trace.PowerW = append(tr.Trace.PowerW, st.PowerW)
						}
						time.Sleep(500 * time.Microsecond)
					}
				}()
				for range pat.runs {
					tr.RunAtMs = append(tr.RunAtMs, float64(time.Since(t0).Microseconds())/1e3)
					res, err := b.Run(ctx, backends.Experiment{Scenario: sc, Strategy: pl.Strategy, Mode: backends.ModeCompute, Reps: pat.reps}, nil)
					if err != nil {
						close(stop)
						<-done
						t.Fatalf("%s on %s: %v", g, pl.Name, err)
					}
					var ts []int64
					for _, r := range res.Reps {
						ts = append(ts, r.Compute)
					}
					tr.RepsNs = append(tr.RepsNs, ts)
				}
				time.Sleep(20 * time.Millisecond)
				close(stop)
				<-done
				first, last := tr.RepsNs[0][0], tr.RepsNs[len(tr.RepsNs)-1][len(tr.RepsNs[len(tr.RepsNs)-1])-1]
				minClock := math.Inf(1)
				for _, c := range tr.Trace.SMClockMHz {
					minClock = math.Min(minClock, c)
				}
				t.Logf("%-28s %-12s %-5s first rep %7.1f µs, last %7.1f µs (%.3fx), lowest clock %4.0f MHz, %d readings over %.0f ms",
					g, pl.Name, pat.name, float64(first)/1e3, float64(last)/1e3, float64(last)/float64(first), minClock, len(tr.Trace.AtMs), float64(time.Since(t0).Microseconds())/1e3)
				out = append(out, tr)
			}
		}
	}
	writeReport(t, "C3LAB_GEMM_TRANSIENT_OUT", "c3lab GEMM clock transient", map[string]any{
		"devices": b.Devices(), "doctor": Probe(), "transients": out})
}

// TestGPUGEMMPartitionModes asks why a long GEMM on the rest of a comm
// partition took 5-13 % less in a sweep's concurrent run than in the
// partition probe's runs of its own (results/2026-12-03-h200x1-s17, calls
// 1-4). In interleaved rounds it times each GEMM on the whole GPU alone,
// on the rest of a 16-SM partition alone (the probe's way) and there
// beside a 1 MiB h2d copy kernel on the partition (a sweep's concurrent
// run), each in runs of 4 and of 20 repetitions: a gap between "alone" and
// "concurrent" at equal repetitions points at the concurrent run, a gap
// between 4 and 20 at the run's length. With $C3LAB_GEMM_MODES_WARMUP
// each run first makes that many untimed repetitions, as c3lab's
// profiler does (3). JSON to $C3LAB_GEMM_MODES_OUT.
func TestGPUGEMMPartitionModes(t *testing.T) {
	b := openGPU(t)
	ctx := context.Background()
	gemm := func(m, n, k int) scenarios.ComputeOp {
		return scenarios.ComputeOp{Kind: scenarios.GEMM, M: m, N: n, K: k, DType: scenarios.BF16}
	}
	shapes := []scenarios.ComputeOp{gemm(4096, 28672, 8192), gemm(8192, 28672, 8192), gemm(8192, 7168, 8192)}
	type config struct {
		Name string
		Mode backends.Mode
		St   scenarios.Strategy
		Reps int
	}
	rest := scenarios.Strategy{CommSMs: 16}
	var configs []config
	for _, reps := range []int{4, 20} {
		configs = append(configs,
			config{fmt.Sprintf("full-alone-%d", reps), backends.ModeCompute, scenarios.Strategy{}, reps},
			config{fmt.Sprintf("rest16-alone-%d", reps), backends.ModeCompute, rest, reps},
			config{fmt.Sprintf("rest16-concurrent-%d", reps), backends.ModeConcurrent, rest, reps})
	}
	const rounds = 6
	warmup := envRepetitions(t, "C3LAB_GEMM_MODES_WARMUP", 0, 0)
	report := map[string]map[string]float64{}
	for _, g := range shapes {
		sc := scenarios.Scenario{Name: "gemm-partition-modes", GPUs: 1, Compute: g,
			Comm: scenarios.CommOp{Collective: scenarios.HostToDevice, Bytes: 1 << 20}}
		times := map[string][]int64{}
		for r := -1; r < rounds; r++ {
			for _, c := range rotated(configs, r) {
				reps, warm := c.Reps, warmup
				if r < 0 {
					reps, warm = 1, 2 // set-up and the plan's first launches, untimed
				}
				res, err := b.Run(ctx, backends.Experiment{Scenario: sc, Strategy: c.St, Mode: c.Mode, Reps: reps, Warmup: warm}, nil)
				if err != nil {
					t.Fatalf("%s %s: %v", g, c.Name, err)
				}
				if r < 0 {
					continue
				}
				for _, rep := range res.Reps {
					times[c.Name] = append(times[c.Name], rep.Compute)
				}
			}
		}
		med := map[string]float64{}
		line := fmt.Sprintf("%-30s", g)
		for _, c := range configs {
			med[c.Name] = profiler.Summarize(times[c.Name]).Median
		}
		for _, c := range configs {
			full := med[fmt.Sprintf("full-alone-%d", c.Reps)]
			med[c.Name+"-ratio"] = med[c.Name] / full
			line += fmt.Sprintf(" %s %.0f µs (%.3f)", c.Name, med[c.Name]/1e3, med[c.Name]/full)
		}
		t.Log(line)
		report[g.String()] = med
	}
	writeReport(t, "C3LAB_GEMM_MODES_OUT", "c3lab GEMM partition modes", map[string]any{
		"devices": b.Devices(), "rounds": rounds, "warmup": warmup, "shapes": report})
}

func TestRotated(t *testing.T) {
	xs := []int{0, 1, 2}
	tests := []struct {
		r    int
		want []int
	}{{0, []int{0, 1, 2}}, {1, []int{1, 2, 0}}, {4, []int{1, 2, 0}}, {-1, []int{2, 0, 1}}}
	for _, tc := range tests {
		if got := rotated(xs, tc.r); !slices.Equal(got, tc.want) {
			t.Errorf("rotated(%v, %d) = %v, want %v", xs, tc.r, got, tc.want)
		}
	}
	if got := rotated([]int(nil), 3); got != nil {
		t.Errorf("rotated(nil, 3) = %v, want nil", got)
	}
	if rotated(xs, 1); !slices.Equal(xs, []int{0, 1, 2}) {
		t.Errorf("rotated changed its input to %v", xs)
	}
}
