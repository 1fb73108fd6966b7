package cuda

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/telemetry"
	"github.com/c3lab/c3lab/scenarios"
)

// ceBiasRun is one run of the probe with the GPUs' state around it.
type ceBiasRun struct {
	Round int                  `json:"round"`
	Cond  ceCond               `json:"cond"`
	Op    []int64              `json:"op_ns"`         // the collective's own time per repetition (Rep.Ops[1], Measure's)
	Start []int64              `json:"from_start_ns"` // from the shared start to its end (Rep.Comm)
	Pre   []telemetry.GPUState `json:"before,omitempty"`
	Post  []telemetry.GPUState `json:"after,omitempty"`
}

// ceBiasScenario is one scenario's probe: every run, each condition's
// pooled stats and machine state, and the verdicts.
type ceBiasScenario struct {
	Scenario string                          `json:"scenario"`
	Runs     []ceBiasRun                     `json:"runs"`
	Stats    map[ceCond]profiler.Stat        `json:"stats"`
	State    map[ceCond][]profiler.PartState `json:"state,omitempty"`
	Ratio    ceRatio                         `json:"alone_over_c3"`
	Verdicts []ceVerdict                     `json:"verdicts"`
}

// Probe parameters: Measure's default round size (20 repetitions in 5
// rounds), many rounds, the busy kernel on 4 SMs.
const (
	ceBiasRounds   = 24
	ceBiasReps     = scenarios.DefaultReps / profiler.DefaultRounds
	ceBiasBusyCTAs = 4
)

// TestGPUCopyEngineBaselineBias looks for why a copy-engine collective
// measures slower alone than next to a GEMM (issue 16: 77 % of the
// copy-engine all-gather and all-to-all cells, median 0.986x). In
// interleaved rounds it times the comm op alone as profiler.Measure does
// (with the serial default's runs and the concurrent run of the same
// round), alone with a busy kernel on a few SMs (idle clocks), alone with
// an untimed copy per copy stream before the gate (first copy), alone and
// next to the GEMM ungated (the gate), and reads NVML's clocks and power
// around every run. Part a: one GPU's host copies (h2d, d2h) on the copy
// engines; part b (two GPUs): the copy-engine all-gather and all-to-all at
// 64 and 256 MiB. It logs one verdict per hypothesis and writes JSON to
// $C3LAB_CEBIAS_OUT.
func TestGPUCopyEngineBaselineBias(t *testing.T) {
	b := openGPU(t)
	ctx := context.Background()
	devs := b.Devices()
	var scs []scenarios.Scenario
	for _, kind := range []scenarios.Collective{scenarios.HostToDevice, scenarios.DeviceToHost} {
		sc := gpuScenario(kind, 64<<20)
		sc.GPUs, sc.Name = 1, "1gpu-"+string(kind)+"-64m"
		scs = append(scs, sc)
	}
	partB := "ran"
	if len(devs) >= 2 {
		for _, kind := range []scenarios.Collective{scenarios.AllGather, scenarios.AllToAll} {
			for _, mib := range []int{64, 256} {
				sc := gpuScenario(kind, scenarios.ByteSize(mib)<<20)
				sc.Name = fmt.Sprintf("2gpu-%s-%dm", kind, mib)
				scs = append(scs, sc)
			}
		}
	} else {
		partB = fmt.Sprintf("skipped: the collectives need 2 GPUs, this node has %d", len(devs))
		t.Logf("part b %s", partB)
	}
	var state *telemetry.StateReader
	if s, err := telemetry.OpenState(nvml.New(), nil); err != nil {
		t.Logf("no NVML state: %v", err)
	} else {
		state = s
	}
	st := scenarios.Strategy{CommEngine: scenarios.EngineDMA}
	var out []ceBiasScenario
	tally := map[string]map[string]int{}
	for _, sc := range scs {
		res := ceBiasScenario{Scenario: sc.Name + " (" + sc.Compute.String() + ", " + sc.Comm.String() + ")"}
		runs := ceRuns{}
		one := func(round, warm int, s ceStep) {
			t.Helper()
			ex := backends.Experiment{Scenario: sc, Strategy: s.St, Mode: s.Mode, Reps: ceBiasReps, Warmup: warm}
			var stop func() error
			switch s.Cond {
			case ceBusy:
				var err error
				if stop, err = b.keepBusy(sc.GPUs, ceBiasBusyCTAs, int64(20*time.Second)); err != nil {
					t.Fatalf("%s: %v", sc.Name, err)
				}
			case cePrimed:
				must(t, b.setPrimeCopies(true))
				defer func() { must(t, b.setPrimeCopies(false)) }()
			case ceUngated, ceC3Ungated:
				must(t, b.setUngated(true))
				defer func() { must(t, b.setUngated(false)) }()
			}
			pre := state.State()
			rr, err := b.Run(ctx, ex, nil)
			post := state.State()
			if stop != nil {
				err = errors.Join(err, stop())
			}
			if err != nil {
				t.Fatalf("%s %s: %v", sc.Name, s.Cond, err)
			}
			r := ceBiasRun{Round: round, Cond: s.Cond, Pre: pre, Post: post}
			for _, rep := range rr.Reps {
				op := rep.Comm
				if len(rep.Ops) == 2 {
					op = rep.Ops[1]
				}
				if s.Mode == backends.ModeCompute {
					op = rep.Compute
				}
				r.Op, r.Start = append(r.Op, op), append(r.Start, rep.Comm)
			}
			if round >= 0 {
				res.Runs = append(res.Runs, r)
				runs[s.Cond] = append(runs[s.Cond], r.Op)
			}
		}
		// Set-up (buffers, verification, streams, NCCL) before any timing
		// and before the busy kernel, which must not run across a free.
		for _, blk := range ceRound(st, 0) {
			for _, s := range blk {
				if s.Cond != ceBusy {
					one(-1, 0, s)
				}
			}
		}
		for r := range ceBiasRounds {
			for _, blk := range ceRound(st, r) {
				for _, s := range blk {
					warm := 0
					if r == 0 && s.Cond != ceBusy {
						warm = profiler.DefaultWarmup // Measure's first round
					}
					one(r, warm, s)
				}
			}
		}
		res.Stats, res.State = map[ceCond]profiler.Stat{}, map[ceCond][]profiler.PartState{}
		sums := map[ceCond][]profiler.StateSum{}
		for _, r := range res.Runs {
			for _, g := range append(r.Pre, r.Post...) {
				for len(sums[r.Cond]) <= g.Device {
					sums[r.Cond] = append(sums[r.Cond], profiler.StateSum{})
				}
				sums[r.Cond][g.Device].Add(g)
			}
		}
		for c, ss := range sums {
			for _, s := range ss[:sc.GPUs] {
				res.State[c] = append(res.State[c], s.State())
			}
		}
		for c, rs := range runs {
			var all []int64
			for _, x := range rs {
				all = append(all, x...)
			}
			res.Stats[c] = profiler.Summarize(all)
		}
		res.Ratio = runs.ratio(ceAlone, ceC3, false)
		res.Verdicts = runs.verdicts()
		t.Logf("%s: alone/C3 %.4f [%.4f, %.4f] over %d rounds", res.Scenario, res.Ratio.Median, res.Ratio.Lo, res.Ratio.Hi, len(res.Ratio.Rounds))
		for _, c := range []ceCond{ceAlone, ceC3, ceBusy, cePrimed, ceUngated, ceC3Ungated} {
			s := res.Stats[c]
			line := fmt.Sprintf("  %-14s median %9.1f µs (p10 %9.1f, p90 %9.1f)", c, s.Median/1e3, s.P10/1e3, s.P90/1e3)
			for dev, p := range res.State[c] {
				line += fmt.Sprintf("  GPU %d SM %4.0f MHz mem %4.0f MHz %3.0f W", dev, p.SMClockMHz, p.MemClockMHz, p.PowerW)
			}
			t.Log(line)
		}
		for _, v := range res.Verdicts {
			t.Logf("  %s", v.Line)
			if tally[v.Hypothesis] == nil {
				tally[v.Hypothesis] = map[string]int{}
			}
			tally[v.Hypothesis][v.Outcome]++
		}
		out = append(out, res)
	}
	for _, h := range ceHypotheses {
		t.Logf("VERDICT %s: %v over %d scenarios", h.Name, tally[h.Name], len(out))
	}
	writeReport(t, "C3LAB_CEBIAS_OUT", "c3lab copy-engine baseline bias probe", map[string]any{
		"devices": devs, "doctor": Probe(), "rounds": ceBiasRounds, "reps_per_run": ceBiasReps, "busy_ctas": ceBiasBusyCTAs,
		"prime_bytes": primeBytes, "part_b": partB, "scenarios": out})
}

// must fails the test on err.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
