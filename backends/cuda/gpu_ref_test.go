package cuda

import (
	"context"
	"testing"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
)

// refOp is one op timed alone, as bench/torch_reference.py times it.
type refOp struct {
	Kind   string         `json:"kind"` // "gemm" or a collective
	Label  string         `json:"label"`
	Stat   profiler.Stat  `json:"time"`
	TFLOPs float64        `json:"tflops,omitempty"`
	BusBW  float64        `json:"busbw_gb_s,omitempty"`
	Extra  map[string]any `json:"extra,omitempty"`
}

// TestGPUReferenceOps times the ops bench/torch_reference.py times (50
// timed reps after 10 warm-up) and writes JSON to $C3LAB_REF_OUT when set.
func TestGPUReferenceOps(t *testing.T) {
	b := openGPU(t)
	ctx := context.Background()
	var out []refOp
	isolated := func(sc scenarios.Scenario, mode backends.Mode) profiler.Stat {
		res, err := b.Run(ctx, backends.Experiment{Scenario: sc, Mode: mode, Reps: 50, Warmup: 10}, nil)
		if err != nil {
			t.Fatalf("%s: %v", sc.Compute, err)
		}
		var ns []int64
		for _, r := range res.Reps {
			if mode == backends.ModeCompute {
				ns = append(ns, r.Compute)
			} else {
				ns = append(ns, r.Comm)
			}
		}
		return profiler.Summarize(ns)
	}
	for _, g := range []scenarios.ComputeOp{
		{Kind: scenarios.GEMM, M: 8192, N: 8192, K: 8192, DType: scenarios.BF16},
		{Kind: scenarios.GEMM, M: 4096, N: 4096, K: 4096, DType: scenarios.BF16},
		{Kind: scenarios.GEMM, M: 16384, N: 1280, K: 8192, DType: scenarios.BF16},
		{Kind: scenarios.GEMM, M: 64, N: 28672, K: 8192, DType: scenarios.BF16},
		{Kind: scenarios.GEMM, M: 8192, N: 8192, K: 8192, DType: scenarios.FP16},
		{Kind: scenarios.GEMM, M: 8192, N: 8192, K: 8192, DType: scenarios.FP8},
	} {
		sc := nodeScenario(b, 16<<20)
		sc.Compute = g
		st := isolated(sc, backends.ModeCompute)
		op := refOp{Kind: "gemm", Label: g.String(), Stat: st, TFLOPs: g.FLOPs() / (st.Median / 1e9) / 1e12}
		t.Logf("%-28s median %8.1f µs (p10 %8.1f, p90 %8.1f) %6.0f TFLOP/s", op.Label, st.Median/1e3, st.P10/1e3, st.P90/1e3, op.TFLOPs)
		out = append(out, op)
	}
	if len(b.Devices()) < 2 {
		t.Logf("one GPU: the collectives' reference times need 2 GPUs (TestGPUHostCopies times what one GPU moves)")
		writeReport(t, "C3LAB_REF_OUT", "c3lab cuda reference ops", map[string]any{"devices": b.Devices(), "doctor": Probe(), "ops": out})
		return
	}
	for _, c := range []scenarios.CommOp{
		{Collective: scenarios.AllGather, Bytes: 64 << 20},
		{Collective: scenarios.AllGather, Bytes: 256 << 20},
		{Collective: scenarios.AllGather, Bytes: 1 << 30},
		{Collective: scenarios.ReduceScatter, Bytes: 256 << 20},
		{Collective: scenarios.AllReduce, Bytes: 256 << 20},
		{Collective: scenarios.AllToAll, Bytes: 256 << 20},
	} {
		sc := gpuScenario(c.Collective, c.Bytes)
		sc.Compute = scenarios.ComputeOp{Kind: scenarios.Stream, Bytes: 1 << 20}
		st := isolated(sc, backends.ModeComm)
		bw := profiler.BusBW(c.Collective, 2, profiler.AlgBW(c.SizeBytes(2), st.Median/1e9)) / 1e9
		op := refOp{Kind: string(c.Collective), Label: c.String(), Stat: st, BusBW: bw}
		t.Logf("%-28s median %8.1f µs (p10 %8.1f, p90 %8.1f) busbw %6.1f GB/s", op.Label, st.Median/1e3, st.P10/1e3, st.P90/1e3, bw)
		out = append(out, op)
	}
	writeReport(t, "C3LAB_REF_OUT", "c3lab cuda reference ops", map[string]any{"devices": b.Devices(), "doctor": Probe(), "ops": out})
}

// TestGPUHarnessOverhead checks that the measurement protocol adds under
// 1 % to an isolated op's time, gated (the default) and ungated. It writes
// JSON to $C3LAB_OVERHEAD_OUT when set.
func TestGPUHarnessOverhead(t *testing.T) {
	report := map[string]any{}
	var gatedOverhead float64
	for _, protocol := range []struct {
		name string
		opts Options
	}{{"gated", Options{}}, {"ungated", Options{Ungated: true}}} {
		b := openGPUWith(t, protocol.opts)
		sc, protocolStat, bare := harnessOverhead(t, b)
		overhead := protocolStat.Median/bare.Median - 1
		t.Logf("%s harness overhead on a %s: %+.2f%% (protocol median %.1f µs, p10 %.1f, p90 %.1f; bare median %.1f µs, p10 %.1f, p90 %.1f; 50 runs each; %d gate stalls)",
			protocol.name, sc.Compute, overhead*100, protocolStat.Median/1e3, protocolStat.P10/1e3, protocolStat.P90/1e3, bare.Median/1e3, bare.P10/1e3, bare.P90/1e3, b.gateStalls)
		report["devices"], report["op"] = b.Devices(), sc.Compute.String()
		report[protocol.name] = map[string]any{"protocol": protocolStat, "bare": bare, "overhead_fraction": overhead, "gate_stalls": b.gateStalls}
		if protocol.name == "gated" {
			gatedOverhead = overhead
		}
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
	}
	writeReport(t, "C3LAB_OVERHEAD_OUT", "c3lab harness overhead", report)
	if gatedOverhead > 0.01 {
		t.Errorf("the gated harness adds %.2f%% to an isolated GEMM; want under 1%%", gatedOverhead*100)
	}
}

// harnessOverhead times the isolated GEMM as the protocol does (shared
// start event, per-op events, polling) and with the bare minimum (one event
// pair around the GEMM, then a blocking wait; behind the start gate when
// the backend is gated, so both leave the launch latency out or both keep
// it), alternating the two so clock drift touches both alike: 50 runs each
// after a warm-up round.
func harnessOverhead(t *testing.T, b *Backend) (scenarios.Scenario, profiler.Stat, profiler.Stat) {
	t.Helper()
	ctx := context.Background()
	sc := nodeScenario(b, 16<<20)
	var bare, harn []int64
	for i := range 11 {
		res, err := b.Run(ctx, backends.Experiment{Scenario: sc, Mode: backends.ModeCompute, Reps: 5, Warmup: 1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var ns []int64
		b.do(func() { ns, err = b.bareGEMM(5, !b.opts.Ungated) })
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			continue // warm-up round
		}
		for _, r := range res.Reps {
			harn = append(harn, r.Compute)
		}
		bare = append(bare, ns...)
	}
	return sc, profiler.Summarize(harn), profiler.Summarize(bare)
}

// bareGEMM times the prepared GEMM n times on GPU 0, each between one pair
// of events only, followed by a blocking wait (on the worker goroutine).
// Gated, the stream waits at the start gate, opened once all is enqueued.
func (b *Backend) bareGEMM(n int, gated bool) ([]int64, error) {
	p := b.prepared
	pl, err := b.strategyPlan(p, scenarios.Strategy{})
	if err != nil {
		return nil, err
	}
	s, ev := pl.computeStreams[0], p.ev[0]
	var out []int64
	for range n {
		if gated {
			b.gateVal++
			if err := b.g.GateWait(s, b.gateVal); err != nil {
				return nil, err
			}
		}
		if err := b.g.Record(ev[evStart], s); err != nil {
			return nil, err
		}
		if err := b.g.GEMM(s, pl.gemm, p.a[0], p.bm[0], p.d[0]); err != nil {
			return nil, err
		}
		if err := b.g.Record(ev[evCompEnd], s); err != nil {
			return nil, err
		}
		if gated {
			b.g.OpenGate(b.gateVal)
		}
		if err := b.g.Synchronize(0); err != nil {
			return nil, err
		}
		t, err := b.g.Elapsed(ev[evStart], ev[evCompEnd])
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// TestGPUGatedProtocol runs the cases that deadlocked the first gated
// protocol (a GEMM in a fresh 16-SM partition, a concurrent run) and
// reports how often the gate's watchdog had to open it.
func TestGPUGatedProtocol(t *testing.T) {
	b, err := Open(Options{RepTimeoutNanos: 20e9})
	if err != nil {
		if IsMissingDriver(err) {
			t.Skipf("no NVIDIA driver or GPU on this machine: %v", err)
		}
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	sc := nodeScenario(b, 256<<20)
	for _, st := range []scenarios.Strategy{{ComputeSMs: 16}, {}, {CommSMs: 32}, {Launch: scenarios.CommFirst, CommPriority: -5}} {
		r, err := profiler.Measure(ctx, b, sc, st, profiler.Options{Reps: 10})
		if err != nil {
			t.Fatalf("%s: %v", st, err)
		}
		f, _ := r.Fraction()
		t.Logf("gated %-22s T_comp %7.1f µs T_comm %7.1f µs T_c3 %7.1f µs F %5.1f%%", st, r.TComp.Median/1e3, r.TComm.Median/1e3, r.TC3.Median/1e3, f*100)
	}
	small := nodeScenario(b, 16<<20)
	small.Compute = scenarios.ComputeOp{Kind: scenarios.GEMM, M: 64, N: 28672, K: 8192, DType: scenarios.BF16}
	r, err := profiler.Measure(ctx, b, small, scenarios.Strategy{}, profiler.Options{Reps: 50, IsolatedOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("gated %s: %.1f µs (torch.matmul measured 121 µs on this node)", small.Compute, r.TComp.Median/1e3)
	t.Logf("gate stalls (watchdog openings): %d", b.gateStalls)
}
