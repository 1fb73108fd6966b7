package kineto

import (
	"context"
	"fmt"
	"slices"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
)

// BackendName is the backend an imported step's result names.
const BackendName = "kineto-trace"

// Result measures the imported scenario on the trace itself: a backend
// answers profiler.Measure's runs from the recorded activities, so that
// the step's result is a profiler.Result like any run's (the recorder
// writes it, c3lab replay and the lab show it, c3lab compare pairs it with
// c3lab's own run of the scenario), with every figure derived by the
// profiler's code.
//
// The concurrent run is the step as it ran, with the GPU's idle gaps
// taken out (they are the host's, not C3's): each op's time is the sum of
// its instances' durations, the spans are the activities on their
// scenario streams. The isolated runs give each op its instances' alone
// times (Item.TAlone: the median of the instances of its kind that ran
// with nothing of the other role beside them, else its own duration).
func (im *Imported) Result(ctx context.Context) (profiler.Result, error) {
	if len(im.Scenario.Streams) == 0 {
		return profiler.Result{}, fmt.Errorf("no scenario to measure")
	}
	b := &traceBackend{im: im}
	return profiler.Measure(ctx, b, im.Scenario, im.Scenario.Strategy, profiler.Options{Reps: 1, Rounds: 1, Warmup: -1})
}

type traceBackend struct{ im *Imported }

func (b *traceBackend) Name() string { return BackendName }

func (b *traceBackend) Devices() []backends.DeviceInfo {
	r := b.im.report
	name := r.Device
	if name == "" {
		name = "GPU of the trace"
	}
	out := make([]backends.DeviceInfo, b.im.Scenario.GPUs)
	for i := range out {
		out[i] = backends.DeviceInfo{Index: i, Name: name}
	}
	return out
}

func (b *traceBackend) Capabilities() backends.Capabilities {
	return backends.Capabilities{Deterministic: true, Limits: scenarios.Limits{Device: b.Devices()[0].Name}}
}

func (b *traceBackend) Close() error { return nil }

func (b *traceBackend) Run(ctx context.Context, ex backends.Experiment, sink backends.EventSink) (backends.RunResult, error) {
	if err := ctx.Err(); err != nil {
		return backends.RunResult{}, err
	}
	if !profiler.IsSerialDefault(ex.Scenario, ex.Strategy) && ex.Mode == backends.ModeConcurrent {
		return backends.RunResult{}, fmt.Errorf("the trace ran the step one way only; it has no run under %s", ex.Strategy)
	}
	g, err := ex.Scenario.Graph(ex.Strategy)
	if err != nil {
		return backends.RunResult{}, err
	}
	opOf := map[string]int{}
	for i, o := range g.Ops {
		opOf[o.Name] = i
	}
	items := b.im.report.items
	var rep backends.Rep
	rep.Ops = make([]int64, len(g.Ops))
	switch ex.Mode {
	case backends.ModeCompute, backends.ModeComm:
		role := scenarios.RoleCompute
		if ex.Mode == backends.ModeComm {
			role = scenarios.RoleComm
		}
		for i, it := range items {
			j, ok := opOf[b.im.Op[i]]
			if !ok || g.Ops[j].Role != role {
				continue
			}
			rep.Ops[j] += int64(it.TAlone)
			rep.Wall += int64(it.TAlone)
		}
		if role == scenarios.RoleCompute {
			rep.Compute = rep.Wall
		} else {
			rep.Comm = rep.Wall
		}
	default:
		var iv []interval
		for i, it := range items {
			if _, ok := opOf[b.im.Op[i]]; ok {
				iv = append(iv, interval{it.Op.Start, it.Op.End()})
			}
		}
		u := union(iv)
		busyBefore := make([]int64, len(u))
		for k := 1; k < len(u); k++ {
			busyBefore[k] = busyBefore[k-1] + u[k-1].e - u[k-1].s
		}
		// at maps a trace time inside the union to the step's time with
		// the idle gaps taken out.
		at := func(t int64) int64 {
			k, _ := slices.BinarySearchFunc(u, t, func(x interval, t int64) int {
				if x.e < t {
					return -1
				}
				return 1
			})
			k = min(k, len(u)-1)
			return busyBefore[k] + t - u[k].s
		}
		rep.Wall = length(u)
		first := map[scenarios.Role]int64{}
		last := map[scenarios.Role]int64{}
		var spans []backends.Span
		for i, it := range items {
			j, ok := opOf[b.im.Op[i]]
			if !ok {
				continue
			}
			s, e := at(it.Op.Start), at(it.Op.End())
			rep.Ops[j] += it.Op.Dur
			role := g.Ops[j].Role
			if v, seen := first[role]; !seen || s < v {
				first[role] = s
			}
			last[role] = max(last[role], e)
			kind := "kernel"
			if it.Op.Kind == Memcpy {
				kind = "copy"
			}
			op := backends.OpCompute
			if role == scenarios.RoleComm {
				op = backends.OpComm
			}
			spans = append(spans, backends.Span{Op: op, GraphOp: g.Ops[j].Name, Instance: b.im.Instance[i], Name: it.Key,
				Device: 0, Track: g.Streams[g.Ops[j].Stream].Name, Kind: kind, Start: s, End: e})
		}
		rep.Compute = last[scenarios.RoleCompute] - first[scenarios.RoleCompute]
		rep.Comm = last[scenarios.RoleComm] - first[scenarios.RoleComm]
		if sink != nil {
			for k := range ex.Reps {
				rs := slices.Clone(spans)
				for i := range rs {
					rs[i].Rep = k
				}
				sink.Spans(rs)
			}
		}
	}
	out := backends.RunResult{Mode: ex.Mode}
	for range ex.Reps {
		out.Reps = append(out.Reps, rep)
	}
	return out, nil
}
