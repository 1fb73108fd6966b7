package cuda

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/telemetry"
	"github.com/c3lab/c3lab/scenarios"
)

// monitorGPU0 opens NVML's monitor of GPU 0 for the test, skipping it
// without NVML, and closes it at the test's end.
func monitorGPU0(t *testing.T) *telemetry.Monitor {
	t.Helper()
	mon, err := telemetry.OpenMonitor(nvml.New(), telemetry.Config{Devices: []int{0}})
	if err != nil {
		t.Skipf("the probe needs NVML: %v", err)
	}
	t.Cleanup(func() { mon.Close() })
	return mon
}

// gemmBesideHostCopy is a one-GPU bf16 GEMM beside a 64 MiB h2d copy.
func gemmBesideHostCopy(name string, m, n, k int) scenarios.Scenario {
	return scenarios.Scenario{Name: name, GPUs: 1,
		Compute: scenarios.ComputeOp{Kind: scenarios.GEMM, M: m, N: n, K: k, DType: scenarios.BF16},
		Comm:    scenarios.CommOp{Collective: scenarios.HostToDevice, Bytes: 64 << 20}}
}

// duringCostRow is one measurement of the during-readings cost probe.
type duringCostRow struct {
	During    bool    `json:"during"`
	TCompNs   float64 `json:"t_comp_ns"`
	TCommNs   float64 `json:"t_comm_ns"`
	TC3Ns     float64 `json:"t_c3_ns"`
	Note      string  `json:"clock_note,omitempty"`
	Readings  int     `json:"readings_during"`
	MinSMMHz  float64 `json:"min_sm_clock_mhz,omitempty"`
	MeanSMMHz float64 `json:"mean_sm_clock_c3_mhz,omitempty"`
}

// TestGPUDuringReadingsCost checks on a real GPU what the machine record's
// readings during every run (profiler.Options.DuringInterval) cost: a
// bf16 8192^3 GEMM beside a 64 MiB host copy on the copy engines (a load
// the power limit hardly touches, so that the clock does not blur the
// comparison), measured 10 times with the readings on and 10 times off,
// alternating. The medians of T_comp, T_comm and T_c3 with and without
// must agree within 1 %, and the readings must have run (a count above
// zero) only when on. JSON to $C3LAB_DURING_COST_OUT.
func TestGPUDuringReadingsCost(t *testing.T) {
	b := openGPU(t)
	mon := monitorGPU0(t)
	sc := gemmBesideHostCopy("during-cost", 8192, 8192, 8192)
	st := scenarios.Strategy{CommEngine: scenarios.EngineDMA}
	ctx := context.Background()
	var rows []duringCostRow
	for i := range 20 {
		on := i%2 == 0
		opt := profiler.Options{Reps: 10, Warmup: 2, Rounds: 3, Machine: mon, DuringInterval: -1}
		if on {
			opt.DuringInterval = 2 * time.Millisecond
		}
		r, err := profiler.Measure(ctx, b, sc, st, opt)
		if err != nil {
			t.Fatal(err)
		}
		row := duringCostRow{During: on, TCompNs: r.TComp.Median, TCommNs: r.TComm.Median, TC3Ns: r.TC3.Median}
		if r.Drift != nil {
			row.Note = r.Drift.ClockNote()
			for _, run := range r.Drift.Runs {
				for _, d := range run.During {
					row.Readings += d.Readings
					if d.MinSMClockMHz > 0 && (row.MinSMMHz == 0 || d.MinSMClockMHz < row.MinSMMHz) {
						row.MinSMMHz = d.MinSMClockMHz
					}
				}
			}
			for _, m := range r.Drift.During {
				if m.Mode == backends.ModeConcurrent && !m.SerialDefault {
					row.MeanSMMHz = m.SMClockMHz
				}
			}
		}
		t.Logf("readings during %-5v T_comp %8.1f µs  T_comm %8.1f µs  T_c3 %8.1f µs  readings %4d  min clock %4.0f MHz  %s",
			on, row.TCompNs/1e3, row.TCommNs/1e3, row.TC3Ns/1e3, row.Readings, row.MinSMMHz, row.Note)
		rows = append(rows, row)
	}
	med := func(on bool, f func(duringCostRow) float64) float64 {
		var xs []float64
		for _, r := range rows {
			if r.During == on {
				xs = append(xs, f(r))
			}
		}
		m, _, _ := medianCI(xs)
		return m
	}
	for _, c := range []struct {
		name string
		f    func(duringCostRow) float64
	}{{"T_comp", func(r duringCostRow) float64 { return r.TCompNs }}, {"T_comm", func(r duringCostRow) float64 { return r.TCommNs }}, {"T_c3", func(r duringCostRow) float64 { return r.TC3Ns }}} {
		on, off := med(true, c.f), med(false, c.f)
		t.Logf("%s with the readings over without: %.4f", c.name, on/off)
		if math.Abs(on/off-1) > 0.01 {
			t.Errorf("%s: %.1f µs with the readings during the runs, %.1f µs without (%+.2f %%); they should cost under 1 %%", c.name, on/1e3, off/1e3, 100*(on/off-1))
		}
	}
	for _, r := range rows {
		if r.During && r.Readings == 0 {
			t.Errorf("a measurement with the readings on recorded none during its runs")
		}
		if !r.During && r.Readings != 0 {
			t.Errorf("a measurement with the readings off recorded %d during its runs", r.Readings)
		}
	}
	writeReport(t, "C3LAB_DURING_COST_OUT", "c3lab during-readings cost", map[string]any{
		"devices": b.Devices(), "doctor": Probe(), "rows": rows})
}

// settleRow is one measurement of the settling probe.
type settleRow struct {
	Settle  bool    `json:"settle"`
	TCompNs float64 `json:"t_comp_ns"`
	TC3Ns   float64 `json:"t_c3_ns"`
	CompMHz float64 `json:"compute_alone_sm_clock_mhz"`
	C3MHz   float64 `json:"concurrent_sm_clock_mhz"`
	Note    string  `json:"clock_note,omitempty"`
	Capped  bool    `json:"capped"`
}

// TestGPUSettle checks what settling (profiler.Options.Settle, the cuda
// backend's 300 ms) does for a load at the power limit: a bf16
// 8192x16384x16384 GEMM beside a 64 MiB host copy, measured after 1 s of
// idle 6 times settled and 6 times not, alternating, with the clocks read
// during the runs. It reports the spread of T_comp and T_c3 over the
// measurements and how far the compute-alone and concurrent runs' clocks
// were apart; it fails only when a settled measurement read no clocks.
// JSON to $C3LAB_SETTLE_OUT.
func TestGPUSettle(t *testing.T) {
	b := openGPU(t)
	mon := monitorGPU0(t)
	sc := gemmBesideHostCopy("settle", 8192, 16384, 16384)
	st := scenarios.Strategy{CommEngine: scenarios.EngineDMA}
	ctx := context.Background()
	var rows []settleRow
	for i := range 12 {
		settle := i%2 == 0
		opt := profiler.Options{Reps: 10, Warmup: 2, Rounds: 5, Machine: mon}
		if !settle {
			opt.Settle = -1
		}
		time.Sleep(time.Second)
		r, err := profiler.Measure(ctx, b, sc, st, opt)
		if err != nil {
			t.Fatal(err)
		}
		row := settleRow{Settle: settle, TCompNs: r.TComp.Median, TC3Ns: r.TC3.Median}
		if r.Drift != nil {
			row.Note, row.Capped = r.Drift.ClockNote(), r.Drift.ClockCapped()
			for _, m := range r.Drift.During {
				if m.SerialDefault || m.Device != 0 {
					continue
				}
				switch m.Mode {
				case backends.ModeCompute:
					row.CompMHz = m.SMClockMHz
				case backends.ModeConcurrent:
					row.C3MHz = m.SMClockMHz
				}
			}
		}
		if settle && row.C3MHz == 0 {
			t.Errorf("a settled measurement read no clock during its concurrent runs")
		}
		t.Logf("settle %-5v T_comp %8.1f µs  T_c3 %8.1f µs  clock compute alone %4.0f MHz, concurrent %4.0f MHz  %s",
			settle, row.TCompNs/1e3, row.TC3Ns/1e3, row.CompMHz, row.C3MHz, row.Note)
		rows = append(rows, row)
	}
	for _, settle := range []bool{true, false} {
		var comp, c3, gap []float64
		for _, r := range rows {
			if r.Settle == settle {
				comp, c3 = append(comp, r.TCompNs), append(c3, r.TC3Ns)
				gap = append(gap, math.Abs(r.CompMHz-r.C3MHz))
			}
		}
		spread := func(xs []float64) float64 {
			lo, hi := math.Inf(1), math.Inf(-1)
			for _, x := range xs {
				lo, hi = math.Min(lo, x), math.Max(hi, x)
			}
			return hi/lo - 1
		}
		g, _, _ := medianCI(gap)
		t.Logf("settle %-5v: T_comp spread %.2f %%, T_c3 spread %.2f %% (max/min - 1 over %d measurements); compute-alone vs concurrent clock apart by %.0f MHz (median)",
			settle, 100*spread(comp), 100*spread(c3), len(comp), g)
	}
	writeReport(t, "C3LAB_SETTLE_OUT", "c3lab settling", map[string]any{
		"devices": b.Devices(), "doctor": Probe(), "rows": rows})
}
