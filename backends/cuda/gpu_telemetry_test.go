package cuda

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/telemetry"
	"github.com/c3lab/c3lab/scenarios"
)

// telemetryPhase is one workload run back to back while NVML is sampled.
type telemetryPhase struct {
	Name string `json:"name"`
	// Mean of each metric over the phase's samples, per device.
	Means map[string][]float64 `json:"means"`
	Ticks int                  `json:"ticks"`
}

// runPhase runs work repeatedly for d while the sampler ticks, and returns
// the mean of every metric per device over the ticks that fell inside.
func runPhase(t *testing.T, s *telemetry.Sampler, name string, d time.Duration, devices int, work func() error) telemetryPhase {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	batches := make(chan telemetry.Batch, 1024)
	done := make(chan struct{})
	go func() { s.Run(ctx, batches); close(done) }()
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		if err := work(); err != nil {
			cancel()
			<-done
			t.Fatalf("%s: %v", name, err)
		}
	}
	cancel()
	<-done
	close(batches)
	sums := map[string][]float64{}
	counts := map[string][]int{}
	ticks := 0
	for b := range batches {
		ticks++
		for _, smp := range b.Samples {
			if sums[smp.Metric] == nil {
				sums[smp.Metric], counts[smp.Metric] = make([]float64, devices), make([]int, devices)
			}
			if smp.Device < devices {
				sums[smp.Metric][smp.Device] += smp.Value
				counts[smp.Metric][smp.Device]++
			}
		}
	}
	p := telemetryPhase{Name: name, Means: map[string][]float64{}, Ticks: ticks}
	for m, v := range sums {
		for i := range v {
			if counts[m][i] > 0 {
				v[i] /= float64(counts[m][i])
			}
		}
		p.Means[m] = v
	}
	return p
}

// TestGPUTelemetry checks NVML telemetry against known workloads: NVLink
// traffic rises during an all-gather, SM utilization stays low while the
// copy engines run one, and a GEMM shows tensor activity. It writes JSON to
// $C3LAB_TELEMETRY_OUT when set.
func TestGPUTelemetry(t *testing.T) {
	b := openGPU(t)
	devices := []int{0, 1}
	if len(b.Devices()) < 2 {
		devices = devices[:1]
	}
	s, err := telemetry.Open(nvml.New(), telemetry.Config{Devices: devices})
	if err != nil {
		t.Fatalf("NVML on a machine with a driver: %v", err)
	}
	defer s.Close()
	var unsupported []telemetry.Status
	for _, st := range s.Status() {
		if !st.Supported {
			unsupported = append(unsupported, st)
		}
	}
	ctx := context.Background()
	run := func(sc scenarios.Scenario, st scenarios.Strategy, mode backends.Mode) func() error {
		return func() error {
			_, err := b.Run(ctx, backends.Experiment{Scenario: sc, Strategy: st, Mode: mode, Reps: 10}, nil)
			return err
		}
	}
	// The node's C3: a 1 GiB all-gather, or on one GPU a 1 GiB host to
	// device copy; by NCCL's (or c3lab's copy) kernels, then by the copy
	// engines.
	sc := nodeScenario(b, 1<<30)
	smName, ceName := "nccl all-gather 1 GiB", "copy-engine all-gather 1 GiB"
	if sc.Comm.Collective.IsHostCopy() {
		smName, ceName = "copy kernel h2d 1 GiB", "copy-engine h2d 1 GiB"
	}
	// Load and verify everything first, so no phase pays for set-up.
	for _, w := range []func() error{run(sc, scenarios.Strategy{}, backends.ModeComm), run(sc, scenarios.Strategy{CommEngine: scenarios.EngineDMA}, backends.ModeComm), run(sc, scenarios.Strategy{}, backends.ModeCompute)} {
		if err := w(); err != nil {
			t.Fatal(err)
		}
	}
	const d = 1500 * time.Millisecond
	phases := []telemetryPhase{
		runPhase(t, s, "idle", d, len(devices), func() error { time.Sleep(10 * time.Millisecond); return nil }),
		runPhase(t, s, smName, d, len(devices), run(sc, scenarios.Strategy{}, backends.ModeComm)),
		runPhase(t, s, ceName, d, len(devices), run(sc, scenarios.Strategy{CommEngine: scenarios.EngineDMA}, backends.ModeComm)),
		runPhase(t, s, "bf16 GEMM 8192^3", d, len(devices), run(sc, scenarios.Strategy{}, backends.ModeCompute)),
	}
	metrics := []string{backends.MetricSMUtil, telemetry.MetricSMOccupancy, backends.MetricTensorUtil, backends.MetricHBMUtil,
		telemetry.MetricLinkTXBytes, telemetry.MetricLinkRXBytes, telemetry.MetricPCIeRXBytes, backends.MetricPCIeRXUtil,
		telemetry.MetricPowerW, telemetry.MetricSMClockMHz}
	for _, p := range phases {
		line := ""
		for _, m := range metrics {
			if v, ok := p.Means[m]; ok {
				line += " " + m + "=" + fmtPair(v)
			}
		}
		t.Logf("%-30s ticks %2d:%s", p.Name, p.Ticks, line)
	}
	for _, st := range unsupported {
		t.Logf("unsupported on GPU %d: %s (%s)", st.Device, st.Metric, st.Reason)
	}
	// What one tick (every metric of every sampled GPU) costs the sampling goroutine.
	var tickNs []int64
	for range 30 {
		t0 := time.Now()
		s.Tick(t0)
		tickNs = append(tickNs, time.Since(t0).Nanoseconds())
		time.Sleep(20 * time.Millisecond)
	}
	tick := profiler.Summarize(tickNs)
	t.Logf("sampler tick, %d GPU(s), all metrics: median %.0f µs (p10 %.0f, p90 %.0f, 30 ticks)", len(devices), tick.Median/1e3, tick.P10/1e3, tick.P90/1e3)
	writeReport(t, "C3LAB_TELEMETRY_OUT", "c3lab telemetry check", map[string]any{
		"devices": b.Devices(), "interval_ms": s.Interval().Milliseconds(), "phases": phases, "unsupported": unsupported, "tick_cost": tick})
	idle, nccl, ce, gemm := phases[0], phases[1], phases[2], phases[3] // nccl: the SM path, NCCL or c3lab's copy kernel
	mean := func(p telemetryPhase, m string) float64 {
		v := p.Means[m]
		if len(v) == 0 {
			t.Fatalf("%s: no %s samples (supported metrics should report)", p.Name, m)
		}
		sum := 0.0
		for _, x := range v {
			sum += x
		}
		return sum / float64(len(v))
	}
	// An all-gather shows on NVLink; a host to device copy on PCIe, as
	// bytes the GPU receives.
	moved, least := []string{telemetry.MetricLinkTXBytes, telemetry.MetricLinkRXBytes}, 50e9
	if sc.Comm.Collective.IsHostCopy() {
		moved, least = []string{telemetry.MetricPCIeRXBytes}, 10e9
		// And as a share of the link: a copy that moves data fills part of it.
		for _, p := range []telemetryPhase{nccl, ce} {
			if u := mean(p, backends.MetricPCIeRXUtil); u < 0.1 || u > 1.05 {
				t.Errorf("%s: PCIe RX utilization %.3f; want a share of the link between 0.1 and 1", p.Name, u)
			}
		}
	}
	for _, m := range moved {
		for _, p := range []telemetryPhase{nccl, ce} {
			if got, base := mean(p, m), mean(idle, m); got < least || got < 10*base {
				t.Errorf("%s: %s %.1f GB/s (idle %.1f GB/s); copies of 1 GiB should move at least %.0f GB/s", p.Name, m, got/1e9, base/1e9, least/1e9)
			}
		}
	}
	if got := mean(ce, backends.MetricSMUtil); got > 0.1 || got >= mean(nccl, backends.MetricSMUtil) {
		t.Errorf("%s: SM utilization %.3f (%s: %.3f); copy engines should leave the SMs idle", ce.Name, got, nccl.Name, mean(nccl, backends.MetricSMUtil))
	}
	if got := mean(gemm, backends.MetricTensorUtil); got < 0.3 {
		t.Errorf("GEMM phase: tensor activity %.2f, want well above 0.3", got)
	}
}

// fmtPair prints one value per device, bytes/s as GB/s.
func fmtPair(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		if x >= 1e6 {
			parts[i] = fmt.Sprintf("%.1fG", x/1e9)
		} else {
			parts[i] = fmt.Sprintf("%.3g", x)
		}
	}
	return strings.Join(parts, "/")
}

// TestGPUProfilerOverhead measures what profiling costs the run: a
// concurrent scenario measured with the NVML sampler running and every
// span collected, against neither, alternating rounds. The target is under
// 1 % on median op times. It writes JSON to $C3LAB_PROFILER_OVERHEAD_OUT.
func TestGPUProfilerOverhead(t *testing.T) {
	b := openGPU(t)
	s, err := telemetry.Open(nvml.New(), telemetry.Config{})
	if err != nil {
		t.Fatalf("NVML on a machine with a driver: %v", err)
	}
	defer s.Close()
	ctx := context.Background()
	sc := nodeScenario(b, 256<<20)
	st := scenarios.Strategy{Launch: scenarios.CommFirst, CommPriority: -5}
	type arm struct{ comp, comm, c3 []int64 }
	var on, off arm
	measure := func(a *arm, profiled bool) {
		var sink backends.EventSink
		stop := func() {}
		if profiled {
			sink = &backends.Collector{}
			c, cancel := context.WithCancel(ctx)
			batches := make(chan telemetry.Batch, 64)
			done := make(chan struct{})
			go func() { s.Run(c, batches); close(done) }()
			go func() {
				for range batches {
				}
			}()
			stop = func() { cancel(); <-done; close(batches) }
		}
		defer stop()
		for _, m := range []backends.Mode{backends.ModeCompute, backends.ModeComm, backends.ModeConcurrent} {
			res, err := b.Run(ctx, backends.Experiment{Scenario: sc, Strategy: st, Mode: m, Reps: 10, Warmup: 2}, sink)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res.Reps {
				switch m {
				case backends.ModeCompute:
					a.comp = append(a.comp, r.Compute)
				case backends.ModeComm:
					a.comm = append(a.comm, r.Comm)
				default:
					a.c3 = append(a.c3, r.Wall)
				}
			}
		}
	}
	measure(&off, false) // warm-up round
	off = arm{}
	for i := range 12 {
		if i%2 == 0 {
			measure(&on, true)
			measure(&off, false)
		} else {
			measure(&off, false)
			measure(&on, true)
		}
	}
	report := map[string]any{"devices": b.Devices(),
		"scenario": sc, "strategy": st.String(), "sampler_interval_ms": s.Interval().Milliseconds()}
	worst := 0.0
	for name, pair := range map[string][2][]int64{"T_comp": {on.comp, off.comp}, "T_comm": {on.comm, off.comm}, "T_c3": {on.c3, off.c3}} {
		a, o := profiler.Summarize(pair[0]), profiler.Summarize(pair[1])
		d := a.Median/o.Median - 1
		worst = max(worst, d, -d)
		report[name] = map[string]any{"profiled": a, "plain": o, "change_fraction": d}
		t.Logf("%-6s profiled %8.1f µs (p10 %8.1f, p90 %8.1f)  plain %8.1f µs (p10 %8.1f, p90 %8.1f)  %+.2f%% (%d runs each)",
			name, a.Median/1e3, a.P10/1e3, a.P90/1e3, o.Median/1e3, o.P10/1e3, o.P90/1e3, d*100, len(pair[0]))
	}
	writeReport(t, "C3LAB_PROFILER_OVERHEAD_OUT", "c3lab profiler overhead", report)
	if worst > 0.01 {
		t.Errorf("profiling changes a median op time by %.2f%%; want under 1%%", worst*100)
	}
}
