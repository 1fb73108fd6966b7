package cuda

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/telemetry"
	"github.com/c3lab/c3lab/scenarios"
)

// gemmGridFile is the committed list of shapes the grid probe times
// (reference/make_gemm_grid.py writes it).
const gemmGridFile = "reference/gemm-shapes-grid.txt"

// gemmGridFileB is the second, random set of shapes (make_gemm_grid.py
// --random 100 --seed 7), measured apart to check a model designed on the
// first.
const gemmGridFileB = "reference/gemm-shapes-grid-b.txt"

// Grid probe parameters: each shape and placement runs in gridRounds
// timed runs of about gridRunNs of GEMMs (gridMinReps..gridMaxReps
// repetitions), each after gridIdle with the GPU idle, so that a run
// starts as a sweep's short runs do, before the power limit takes hold
// (TestGPUGEMMClockTransient: about 100 ms of load after an idle spell).
const (
	gridRounds  = 2
	gridRunNs   = 40e6
	gridMinReps = 5
	gridMaxReps = 50
	gridIdle    = 150 * time.Millisecond
)

// gridClock is what NVML read every 2 ms during a run: the SM clock's
// median and minimum, the board power's median, and the clock event
// reasons seen.
type gridClock struct {
	SMClockMedianMHz float64  `json:"sm_clock_median_mhz"`
	SMClockMinMHz    float64  `json:"sm_clock_min_mhz"`
	PowerMedianW     float64  `json:"power_median_w"`
	Reasons          []string `json:"reasons,omitempty"`
	Readings         int      `json:"readings"`
}

// gridOp is one shape on one placement: every timed repetition summed
// up, the per-run medians (their spread is the run-to-run noise), and the
// clocks during the runs. Kind, Label, Stat and TFLOPs are the reference
// ops' fields, so that the whole-GPU list reads as a reference-ops file
// (c3lab calibrate --ref).
type gridOp struct {
	Kind      string          `json:"kind"`
	Label     string          `json:"label"`
	Stat      profiler.Stat   `json:"time"`
	TFLOPs    float64         `json:"tflops"`
	M         int             `json:"m"`
	N         int             `json:"n"`
	K         int             `json:"k"`
	DType     scenarios.DType `json:"dtype"`
	SMTarget  int             `json:"sm_target"`
	Placement string          `json:"placement"`
	Reps      int             `json:"reps_per_run"`
	RunMedian []float64       `json:"run_median_ns"`
	Clock     gridClock       `json:"clock"`
}

// TestGPUGEMMShapeGrid times the GEMM shapes of reference/gemm-shapes-grid.txt,
// none of them a GEMM of the built-in scenarios, alone on one GPU: on the
// whole GPU and at the SM targets listed (68: the rest of a 64-SM
// communication partition, as comm-sms-64 confines the GEMM). It is the
// measurement the simulator's GEMM model is checked on away from the
// sweeps' shapes: skinny decode GEMMs, small K, squares, prefill and
// long-K shapes in bf16, fp8 and fp16. NVML's SM clock and power are read
// every 2 ms while each run lasts. JSON to $C3LAB_GEMM_GRID_OUT, with the
// whole-GPU ops as "ops" (the reference-ops format) and the others as
// "placed". C3LAB_GEMM_GRID_SHAPES names another shapes file (the random
// second set, reference/gemm-shapes-grid-b.txt). A shape that fails is
// said and left out, and fails the test once the others are written.
func TestGPUGEMMShapeGrid(t *testing.T) {
	b := openGPU(t)
	ctx := context.Background()
	shapesFile := packageFile(gemmGridFile)
	if f := os.Getenv("C3LAB_GEMM_GRID_SHAPES"); f != "" {
		shapesFile = f
	}
	shapes, err := readGEMMShapes(shapesFile)
	if err != nil {
		t.Fatal(err)
	}
	state, err := telemetry.OpenState(nvml.New(), []int{0})
	if err != nil {
		t.Skipf("the grid probe reads the clocks during its runs and needs NVML: %v", err)
	}
	t.Cleanup(func() { _ = state.Close() })
	sms := b.Devices()[0].SMs
	start := time.Now()
	var whole, placed []gridOp
	var failed []string
	// The report is written after every shape, so that a run stopped by its
	// time limit keeps what it measured.
	doctor := Probe()
	save := func() {
		writeReport(t, "C3LAB_GEMM_GRID_OUT", "c3lab GEMM shape grid", map[string]any{
			"devices": b.Devices(), "doctor": doctor, "shapes_file": shapesFile, "rounds": gridRounds,
			"entries": len(shapes), "idle_before_run_ms": gridIdle.Milliseconds(), "sample_interval_ms": 2,
			"ops": whole, "placed": placed, "failed": failed})
	}
	save() // checks the output path before the work
	for i, sh := range shapes {
		g := scenarios.ComputeOp{Kind: scenarios.GEMM, M: sh.m, N: sh.n, K: sh.k, DType: sh.dtype}
		st, place, err := gridPlacement(sh.smTarget, sms)
		if err != nil {
			t.Fatalf("%s: %v", g, err)
		}
		sc := scenarios.Scenario{Name: "gemm-grid", GPUs: 1, Compute: g,
			Comm: scenarios.CommOp{Collective: scenarios.HostToDevice, Bytes: 64 << 10}}
		// An untimed run plans the GEMM, checks it and sets the repetitions.
		res, err := b.Run(ctx, backends.Experiment{Scenario: sc, Strategy: st, Mode: backends.ModeCompute, Reps: 2, Warmup: 1}, nil)
		if err != nil {
			// A shape cuBLASLt has no algorithm for is said and left out;
			// the others still run and are written.
			failed = append(failed, fmt.Sprintf("%s on %s: %v", g, place, err))
			t.Logf("%3d/%d %s on %s: %v", i+1, len(shapes), g, place, err)
			continue
		}
		est := float64(res.Reps[len(res.Reps)-1].Compute)
		reps := min(gridMaxReps, max(gridMinReps, int(math.Ceil(gridRunNs/max(est, 1)))))
		op := gridOp{Kind: "gemm", Label: g.String(), M: sh.m, N: sh.n, K: sh.k, DType: sh.dtype, SMTarget: sh.smTarget, Placement: place, Reps: reps}
		var all []int64
		var clock, power []float64
		var reasons uint64
		var runErr error
		for range gridRounds {
			time.Sleep(gridIdle)
			var ns []int64
			var c, p []float64
			var r uint64
			c, p, r, runErr = readDuring(state, func() error {
				res, err := b.Run(ctx, backends.Experiment{Scenario: sc, Strategy: st, Mode: backends.ModeCompute, Reps: reps, Warmup: 2}, nil)
				if err == nil {
					for _, rep := range res.Reps {
						ns = append(ns, rep.Compute)
					}
				}
				return err
			})
			if runErr != nil {
				break
			}
			all = append(all, ns...)
			clock, power, reasons = append(clock, c...), append(power, p...), reasons|r
			op.RunMedian = append(op.RunMedian, profiler.Summarize(ns).Median)
		}
		if runErr != nil {
			failed = append(failed, fmt.Sprintf("%s on %s: %v", g, place, runErr))
			t.Logf("%3d/%d %s on %s: %v", i+1, len(shapes), g, place, runErr)
			continue
		}
		op.Stat = profiler.Summarize(all)
		op.TFLOPs = g.FLOPs() / (op.Stat.Median / 1e9) / 1e12
		op.Clock = gridClock{Readings: len(clock)}
		op.Clock.SMClockMedianMHz, _, _ = medianCI(clock)
		op.Clock.PowerMedianW, _, _ = medianCI(power)
		if len(clock) > 0 {
			op.Clock.SMClockMinMHz = slices.Min(clock)
		}
		if reasons != 0 {
			op.Clock.Reasons = []string{telemetry.ThrottleNames(reasons)}
		}
		t.Logf("%3d/%d %-30s %-11s %9.1f µs (runs %s) %6.0f TFLOP/s %4.0f MHz (min %4.0f) %3.0f W %s",
			i+1, len(shapes), op.Label, place, op.Stat.Median/1e3, fmtRuns(op.RunMedian), op.TFLOPs,
			op.Clock.SMClockMedianMHz, op.Clock.SMClockMinMHz, op.Clock.PowerMedianW, telemetry.ThrottleNames(reasons))
		if sh.smTarget == 0 {
			whole = append(whole, op)
		} else {
			placed = append(placed, op)
		}
		save()
	}
	t.Logf("%d shapes and placements in %s", len(shapes), time.Since(start).Round(time.Second))
	save()
	for _, f := range failed {
		t.Errorf("failed: %s", f)
	}
}

// gridPlacement is the strategy that gives cuBLASLt smTarget SMs the way
// a sweep strategy does: 0 is the whole GPU, a smaller count the rest of a
// communication partition of the other SMs (comm-sms-64 leaves 68 of an
// H200's 132).
func gridPlacement(smTarget, sms int) (scenarios.Strategy, string, error) {
	switch {
	case smTarget == 0:
		return scenarios.Strategy{}, "full", nil
	case smTarget > 0 && smTarget < sms:
		return scenarios.Strategy{CommSMs: sms - smTarget}, fmt.Sprintf("rest-of-%d", sms-smTarget), nil
	}
	return scenarios.Strategy{}, "", fmt.Errorf("SM target %d on a GPU of %d SMs", smTarget, sms)
}

// readDuring runs fn while a goroutine reads GPU 0's SM clock, power and
// clock event reasons every 2 ms; the readings stop when fn returns.
func readDuring(state *telemetry.StateReader, fn func() error) (clock, power []float64, reasons uint64, err error) {
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				for _, st := range state.State() {
					clock, power = append(clock, st.SMClockMHz), append(power, st.PowerW)
					reasons |= st.Throttle
				}
			}
		}
	}()
	err = fn()
	close(stop)
	<-done
	return clock, power, reasons, err
}

// packageFile is a path of this package's directory as seen from where
// the test runs: the package directory under go test, the repository root
// when gpu-suite.sh runs the compiled test binary.
func packageFile(rel string) string {
	if _, err := os.Stat(rel); err == nil {
		return rel
	}
	return filepath.Join("backends", "cuda", rel)
}

// fmtRuns prints per-run medians in µs.
func fmtRuns(ns []float64) string {
	s := ""
	for i, v := range ns {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%.1f", v/1e3)
	}
	return s
}
