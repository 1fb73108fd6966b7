package profiler

import (
	"context"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// graphFake runs a scenario's graph with scripted per-instance times: a
// GEMM instance takes its M rows in ns plus a fixed cost per instance, a
// comm instance its bytes / 1 KiB in ns on NCCL and half that on copy
// engines. In C3 every op is slow times slower and the wall time is the
// list schedule at those times plus wallExtra.
type graphFake struct {
	caps      backends.Capabilities
	calls     []backends.Experiment
	fixed     int64   // per-instance cost of a GEMM
	slow      float64 // slowdown of every op in C3 (0 is 1)
	wallExtra float64 // added to the concurrent wall time
	noOps     bool    // report Compute and Comm only, as old recordings do
}

func (f *graphFake) Name() string                        { return "graphfake" }
func (f *graphFake) Devices() []backends.DeviceInfo      { return []backends.DeviceInfo{{Name: "fake"}} }
func (f *graphFake) Capabilities() backends.Capabilities { return f.caps }
func (f *graphFake) Close() error                        { return nil }

// instanceTime is one instance of op o alone under strategy st.
func (f *graphFake) instanceTime(o scenarios.GraphOp, st scenarios.Strategy) int64 {
	if o.Role == scenarios.RoleComm {
		t := int64(o.Comm.Bytes) / 1024
		if st.Normalize().CommEngine == scenarios.EngineDMA {
			t /= 2
		}
		return t
	}
	return int64(o.Compute.M) + f.fixed
}

func (f *graphFake) Run(_ context.Context, ex backends.Experiment, _ backends.EventSink) (backends.RunResult, error) {
	f.calls = append(f.calls, ex)
	g, err := ex.Scenario.Graph(ex.Strategy)
	if err != nil {
		return backends.RunResult{}, err
	}
	slow := f.slow
	if slow == 0 {
		slow = 1
	}
	var rep backends.Rep
	rep.Ops = make([]int64, len(g.Ops))
	dur := make([]float64, len(g.Ops))
	for i, o := range g.Ops {
		t := f.instanceTime(o, ex.Strategy)
		run := ex.Mode == backends.ModeConcurrent ||
			ex.Mode == backends.ModeCompute && o.Role == scenarios.RoleCompute ||
			ex.Mode == backends.ModeComm && o.Role == scenarios.RoleComm
		if !run {
			continue
		}
		if ex.Mode == backends.ModeConcurrent {
			t = int64(float64(t) * slow)
		}
		dur[i] = float64(t)
		rep.Ops[i] = t * int64(o.Count)
		if o.Role == scenarios.RoleComm {
			rep.Comm += rep.Ops[i]
		} else {
			rep.Compute += rep.Ops[i]
		}
	}
	rep.Wall = rep.Compute + rep.Comm
	if ex.Mode == backends.ModeConcurrent {
		rep.Wall = int64(g.ListSchedule(dur).Makespan + f.wallExtra)
	}
	if f.noOps {
		rep.Ops = nil
	}
	res := backends.RunResult{Mode: ex.Mode}
	for range ex.Reps {
		res.Reps = append(res.Reps, rep)
	}
	return res, nil
}

func graphCaps() backends.Capabilities {
	return backends.Capabilities{Limits: limits(), Deterministic: true}.With(scenarios.CapDMA, scenarios.CapDecompose, scenarios.CapPriority)
}

func gemm(name string, m int, after ...string) scenarios.StreamOp {
	return scenarios.StreamOp{Name: name, Kind: scenarios.OpKind(scenarios.GEMM), M: m, N: 64, K: 512, DType: scenarios.BF16, After: after}
}

func gather(name string, bytes scenarios.ByteSize, after ...string) scenarios.StreamOp {
	return scenarios.StreamOp{Name: name, Kind: scenarios.OpKind(scenarios.AllGather), Bytes: bytes, After: after}
}

func graphOf(streams ...scenarios.StreamSpec) scenarios.Scenario {
	sc := scenarios.Scenario{Name: "g", GPUs: 2, Streams: streams}
	// The lead ops, what a summary names.
	for _, ss := range streams {
		for _, o := range ss.Ops {
			switch {
			case o.Kind.IsCompute() && sc.Compute.Kind == "":
				sc.Compute = o.AsCompute()
			case o.Kind.IsComm() && sc.Comm.Collective == "":
				sc.Comm = o.AsComm()
			}
		}
	}
	return sc
}

// For one compute op next to one collective every figure is the paper's:
// T_serial = T_comp + T_comm, T_ideal = max, S_ideal, S_real, F, and under
// the default strategy U = S_real, with per-op times or without them.
func TestMeasurePairIsThePapersFormulas(t *testing.T) {
	pair := scenarios.Scenario{
		Name: "p", GPUs: 2,
		Compute: scenarios.ComputeOp{Kind: scenarios.GEMM, M: 3000, N: 64, K: 512, DType: scenarios.BF16},
		Comm:    scenarios.CommOp{Collective: scenarios.AllGather, Bytes: 2048 << 10},
	}
	for _, tc := range []struct {
		name  string
		noOps bool
	}{{"per-op times", false}, {"old recording: compute and comm only", true}} {
		t.Run(tc.name, func(t *testing.T) {
			fb := &graphFake{caps: graphCaps(), slow: 1.25, wallExtra: 900, noOps: tc.noOps}
			r, err := Measure(context.Background(), fb, pair, scenarios.Strategy{}, Options{Reps: 3})
			if err != nil {
				t.Fatal(err)
			}
			tComp, tComm := 3000.0, 2048.0
			tC3 := 1.25*3000 + 900
			sIdeal := (tComp + tComm) / max(tComp, tComm)
			sReal := (tComp + tComm) / tC3
			checks := []struct {
				what      string
				got, want float64
			}{
				{"T_comp", r.TComp.Median, tComp},
				{"T_comm", r.TComm.Median, tComm},
				{"T_serial", r.TSerial, tComp + tComm},
				{"T_ideal", r.TIdeal, max(tComp, tComm)},
				{"S_ideal", r.IdealSpeedup, sIdeal},
				{"S_real", r.RealizedSpeedup, sReal},
				{"U", r.Uplift, sReal},
				{"serial default", r.SerialDefault, tComp + tComm},
				{"compute slowdown", r.CompSlowdown, 1.25},
				{"comm slowdown", r.CommSlowdown, 1.25},
			}
			for _, c := range checks {
				if c.got != c.want {
					t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
				}
			}
			if f, ok := r.Fraction(); !ok || f != (sReal-1)/(sIdeal-1) {
				t.Errorf("F = %v (%v), want %v", f, ok, (sReal-1)/(sIdeal-1))
			}
			if len(r.Ops) != 2 || r.Ops[0].Name != "compute" || r.Ops[1].Name != "comm" {
				t.Fatalf("ops %+v, want compute and comm", r.Ops)
			}
			if r.Ops[0].TAlone.Median != tComp || r.Ops[1].TAlone.Median != tComm || r.Ops[0].Slowdown != 1.25 || r.Ops[1].Slowdown != 1.25 {
				t.Errorf("per-op figures %+v", r.Ops)
			}
			if len(fb.calls) != 3 || r.DefaultReps != nil {
				t.Errorf("%d backend calls, default reps %v: the default strategy is its own serial default", len(fb.calls), r.DefaultReps)
			}
		})
	}
}

// T_ideal is the graph's list schedule at the ops' isolated times (per
// instance: the op's time over its count), T_serial their sum.
func TestMeasureGraphIdeal(t *testing.T) {
	for _, tc := range []struct {
		name          string
		sc            scenarios.Scenario
		st            scenarios.Strategy
		serial, ideal float64
	}{
		{
			// ag (1024 ns) then the GEMM that waits for it (2048 ns): no
			// overlap is possible.
			name: "chain",
			sc: graphOf(
				scenarios.StreamSpec{Name: "tp", Ops: []scenarios.StreamOp{gather("ag", 1<<20)}},
				scenarios.StreamSpec{Name: "compute", Ops: []scenarios.StreamOp{gemm("g", 2048, "ag")}},
			),
			serial: 3072, ideal: 3072,
		},
		{
			// Two streams of instances: 4 GEMMs of 500 next to 8
			// all-gathers of 256: max(2000, 2048).
			name: "streams",
			sc: graphOf(
				scenarios.StreamSpec{Name: "compute", Ops: []scenarios.StreamOp{{Name: "g", Kind: scenarios.OpKind(scenarios.GEMM), M: 500, N: 64, K: 512, DType: scenarios.BF16, Count: 4}}},
				scenarios.StreamSpec{Name: "comm", Ops: []scenarios.StreamOp{{Name: "ag", Kind: scenarios.OpKind(scenarios.AllGather), Bytes: 256 << 10, Count: 8}}},
			),
			serial: 4048, ideal: 2048,
		},
		{
			// A fork: g1 (1000) and the all-gather (1024) both start at
			// once; g2 (2000) waits for the all-gather: 1024 + 2000.
			name: "fork",
			sc: graphOf(
				scenarios.StreamSpec{Name: "compute", Ops: []scenarios.StreamOp{gemm("g1", 1000), gemm("g2", 2000, "ag")}},
				scenarios.StreamSpec{Name: "comm", Ops: []scenarios.StreamOp{gather("ag", 1<<20)}},
			),
			serial: 4024, ideal: 3024,
		},
		{
			// The chain decomposed in 4: ag chunks of 256, GEMM chunks of
			// 512, each waiting for its chunk and the one before it: they
			// start at 256, 768, 1280, 1792, the last ends at 2304.
			name: "decomposed",
			sc: graphOf(
				scenarios.StreamSpec{Name: "tp", Ops: []scenarios.StreamOp{gather("ag", 1<<20)}},
				scenarios.StreamSpec{Name: "compute", Ops: []scenarios.StreamOp{gemm("g", 2048, "ag")}},
			),
			st:     scenarios.Strategy{Decompose: 4},
			serial: 3072, ideal: 2304,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fb := &graphFake{caps: graphCaps(), slow: 2}
			r, err := Measure(context.Background(), fb, tc.sc, tc.st, Options{Reps: 2})
			if err != nil {
				t.Fatal(err)
			}
			if r.TSerial != tc.serial || r.TIdeal != tc.ideal {
				t.Errorf("T_serial %v, T_ideal %v; want %v, %v", r.TSerial, r.TIdeal, tc.serial, tc.ideal)
			}
			if r.IdealSpeedup != tc.serial/tc.ideal {
				t.Errorf("S_ideal %v, want %v", r.IdealSpeedup, tc.serial/tc.ideal)
			}
			if r.TComp.Median+r.TComm.Median != r.TSerial {
				t.Errorf("T_comp %v + T_comm %v is not T_serial %v", r.TComp.Median, r.TComm.Median, r.TSerial)
			}
			for _, o := range r.Ops {
				if o.Slowdown != 2 {
					t.Errorf("op %s slowdown %v, want 2", o.Name, o.Slowdown)
				}
			}
		})
	}
}

// U is measured against the serial default: the NCCL collective for a
// strategy on copy engines (whose own isolated collective is faster), the
// undecomposed pair for a decomposed strategy (whose chunks pay a fixed
// cost each); the serial default's runs are interleaved with the others.
func TestUpliftIsOverTheSerialDefault(t *testing.T) {
	pair := scenarios.Scenario{
		Name: "p", GPUs: 2,
		Compute: scenarios.ComputeOp{Kind: scenarios.GEMM, M: 3000, N: 64, K: 512, DType: scenarios.BF16},
		Comm:    scenarios.CommOp{Collective: scenarios.AllGather, Bytes: 2048 << 10},
	}
	chain := graphOf(
		scenarios.StreamSpec{Name: "tp", Ops: []scenarios.StreamOp{gather("ag", 1<<20)}},
		scenarios.StreamSpec{Name: "compute", Ops: []scenarios.StreamOp{gemm("g", 2048, "ag")}},
	)
	// GEMMs pay a fixed 100 ns each.
	for _, tc := range []struct {
		name             string
		sc               scenarios.Scenario
		st               scenarios.Strategy
		serial, defaultT float64
	}{
		{"dma", pair, scenarios.Strategy{CommEngine: scenarios.EngineDMA}, 3100 + 1024, 3100 + 2048},
		{"decomposed", chain, scenarios.Strategy{Decompose: 4}, 1024 + 4*(512+100), 1024 + 2048 + 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fb := &graphFake{caps: graphCaps(), fixed: 100, wallExtra: 50}
			fb.caps.Deterministic = false
			r, err := Measure(context.Background(), fb, tc.sc, tc.st, Options{Reps: 4, Rounds: 2, Warmup: -1})
			if err != nil {
				t.Fatal(err)
			}
			if r.TSerial != tc.serial || r.SerialDefault != tc.defaultT {
				t.Errorf("T_serial %v, serial default %v; want %v, %v", r.TSerial, r.SerialDefault, tc.serial, tc.defaultT)
			}
			tC3 := r.TC3.Median
			if r.Uplift != tc.defaultT/tC3 || r.RealizedSpeedup != tc.serial/tC3 {
				t.Errorf("U %v, S_real %v; want %v, %v", r.Uplift, r.RealizedSpeedup, tc.defaultT/tC3, tc.serial/tC3)
			}
			// Two rounds of compute, comm, default compute, default comm,
			// concurrent.
			want := []string{"compute", "comm", "compute default", "comm default", "concurrent"}
			if len(fb.calls) != 2*len(want) {
				t.Fatalf("%d calls, want %d", len(fb.calls), 2*len(want))
			}
			for i, c := range fb.calls {
				got := string(c.Mode)
				if c.Strategy == SerialDefaultStrategy() && !IsSerialDefault(tc.sc, tc.st) && c.Mode != backends.ModeConcurrent {
					got += " default"
				}
				if got != want[i%len(want)] {
					t.Errorf("call %d: %s, want %s", i, got, want[i%len(want)])
				}
			}
			if len(r.DefaultReps[backends.ModeCompute]) != 4 || len(r.DefaultReps[backends.ModeComm]) != 4 {
				t.Errorf("default reps %v", r.DefaultReps)
			}

			// A baseline of the scenario, under any strategy, holds the
			// serial default: live mode does not measure it again.
			bl := r.Baseline()
			fb.calls = nil
			r2, err := Measure(context.Background(), fb, tc.sc, scenarios.Strategy{CommPriority: -2}, Options{Reps: 4, Rounds: 1, Baseline: &bl})
			if err != nil {
				t.Fatal(err)
			}
			if len(fb.calls) != 3 || r2.SerialDefault != tc.defaultT {
				t.Errorf("%d calls, serial default %v: want the isolated runs and the concurrent run, %v", len(fb.calls), r2.SerialDefault, tc.defaultT)
			}
			bl2 := r2.Baseline()
			fb.calls = nil
			r3, err := Measure(context.Background(), fb, tc.sc, tc.st, Options{Reps: 4, Rounds: 1, Baseline: &bl2})
			if err != nil {
				t.Fatal(err)
			}
			if len(fb.calls) != 3 || r3.SerialDefault != tc.defaultT || r3.Uplift != r.Uplift {
				t.Errorf("%d calls, serial default %v, U %v: want 3 calls, %v, %v", len(fb.calls), r3.SerialDefault, r3.Uplift, tc.defaultT, r.Uplift)
			}
		})
	}
}

// A graph measured on a backend that gives no per-op times is refused in
// one line, not guessed.
func TestMeasureGraphNeedsPerOpTimes(t *testing.T) {
	sc := graphOf(
		scenarios.StreamSpec{Name: "compute", Ops: []scenarios.StreamOp{gemm("g1", 1000), gemm("g2", 2000)}},
		scenarios.StreamSpec{Name: "comm", Ops: []scenarios.StreamOp{gather("ag", 1<<20)}},
	)
	fb := &graphFake{caps: graphCaps(), noOps: true}
	if _, err := Measure(context.Background(), fb, sc, scenarios.Strategy{}, Options{Reps: 1}); err == nil || !strings.Contains(err.Error(), "no per-op times") {
		t.Errorf("error %v, want one saying the backend gave no per-op times", err)
	}
}
