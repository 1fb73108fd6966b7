package sim

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// A graph scenario (format 2) runs as its op instances, each one or more
// engine jobs: a compute instance is a kernel (a GEMM as its launch,
// Profile.GEMMLaunches: persistent, holding its SMs to its end, or in
// waves, freeing them at its wave boundaries; a stream op in waves of
// short CTAs), a communication instance the jobs a pair's collective
// would be. The host enqueues the instances in the graph's enqueue order,
// one every Profile.HostLaunchGap; an instance may run once it is enqueued
// and its stream predecessor and dependencies have ended (events; one of
// another stream costs Profile.LaunchGap), and then pays its fixed cost.
// The block scheduler serves pending CTAs by stream priority, then by
// arrival (the time a kernel became runnable).

// graphPlan is a graph experiment turned into engine jobs.
type graphPlan struct {
	plan
	g *scenarios.Graph
	// run lists the instances the mode runs (Graph.Instances positions),
	// in the order the host enqueues them.
	run []int
	// jobs holds each instance's jobs (nil for one the mode skips).
	jobs [][]*job
}

// graphOptions are model switches tests flip to show what a rule does.
type graphOptions struct {
	// priority, when set, gives a stream's kernels this priority (CUDA's
	// convention) instead of the strategy's (0 for compute streams).
	priority map[string]int
}

// buildGraph turns a graph experiment into a plan for one GPU.
func buildGraph(p Profile, ex backends.Experiment, opt graphOptions) (*graphPlan, error) {
	sc, st := ex.Scenario, ex.Strategy.Normalize()
	g, err := sc.Graph(st)
	if err != nil {
		return nil, err
	}
	eng := &engine{p: p, flopsPerUnit: map[*job]float64{}, byArrival: true}
	gp := &graphPlan{
		plan: plan{eng: eng, opJobs: map[backends.Op][]*job{}, opLaunch: map[backends.Op]float64{}, peakTensor: p.PeakFLOPs[scenarios.BF16]},
		g:    g, jobs: make([][]*job, len(g.Instances)),
	}
	computeDom, commDom := partition(p, st, eng)
	for _, o := range g.Ops {
		if o.Role == scenarios.RoleCompute && o.Compute.Kind == scenarios.GEMM {
			gp.peakTensor = p.PeakFLOPs[o.Compute.DType]
			break
		}
	}

	// Which instances run, in enqueue order, and what each waits for.
	runs := func(in scenarios.Instance) bool {
		switch ex.Mode {
		case backends.ModeCompute:
			return g.Ops[in.Op].Role == scenarios.RoleCompute
		case backends.ModeComm:
			return g.Ops[in.Op].Role == scenarios.RoleComm
		}
		return true
	}
	for _, i := range g.EnqueueOrder(st.Launch) {
		if runs(g.Instances[i]) {
			gp.run = append(gp.run, i)
		}
	}
	preds := make([][]int, len(g.Instances))
	for k, i := range gp.run {
		switch {
		case ex.Mode != backends.ModeConcurrent:
			// Alone, one after another: a dependency on the other role is
			// dropped, and the order is the host's.
			if k > 0 {
				preds[i] = []int{gp.run[k-1]}
			}
		default:
			in := g.Instances[i]
			if in.Prev >= 0 {
				preds[i] = append(preds[i], in.Prev)
			}
			preds[i] = append(preds[i], in.Deps...)
		}
	}

	firstStream, seenStream := -1, map[int]bool{}
	var computeSoFar []*job // the compute kernels enqueued so far (ncclCEWaitsFor)
	for k, i := range gp.run {
		in := g.Instances[i]
		op := g.Ops[in.Op]
		stream := g.Streams[op.Stream].Name
		at := float64(k) * p.HostLaunchGap
		if firstStream < 0 {
			firstStream = op.Stream
		}
		if !seenStream[op.Stream] {
			seenStream[op.Stream] = true
			if op.Stream != firstStream {
				// As in a pair: a stream other than the first waits on the
				// start event recorded on the first, and runs LaunchGap
				// after it (backends/cuda's gated protocol).
				at = math.Max(at, p.LaunchGap)
			}
		}
		var jobs []*job
		if op.Role == scenarios.RoleCompute {
			j, flops, err := computeJob(p, op.Compute, st, computeDom, eng)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", op.Name, err)
			}
			j.jitter = !j.pooled
			j.launch = at + p.KernelFixedCost
			eng.flopsPerUnit[j] = flops
			jobs = []*job{j}
			computeSoFar = append(computeSoFar, j)
		} else {
			one := scenarios.Scenario{Name: sc.Name, GPUs: sc.GPUs, Comm: op.Comm}
			jobs = commJobs(p, one, st, commDom, eng, at, k)
			if st.CommEngine == scenarios.EngineNCCLCE {
				ncclCEWaitsFor(jobs, slices.Clone(computeSoFar))
			}
		}
		for _, j := range jobs {
			j.order = k
			if !j.copy {
				j.track = stream
			}
			if prio, ok := opt.priority[stream]; ok {
				j.priority = prio
			}
			j.group = jobs
			if j.after != nil {
				continue
			}
			// A job that starts the instance: runnable once the instance is
			// enqueued and what it waits for has ended, then its own delay.
			j.hostAt, j.delay = at, j.launch-at
			j.runnableAt, j.enqueued = at, at
			for _, pi := range preds[i] {
				// An event of another stream costs the launch gap, as the
				// second op of a pair pays it; the stream's own
				// predecessor does not.
				gap := 0.0
				if g.Ops[g.Instances[pi].Op].Stream != op.Stream {
					gap = p.LaunchGap
				}
				for _, w := range gp.jobs[pi] {
					j.waits = append(j.waits, w)
					j.waitGaps = append(j.waitGaps, gap)
				}
			}
		}
		if len(preds[i]) > 0 {
			for _, j := range jobs {
				j.runnableAt, j.enqueued = math.Inf(1), math.Inf(1)
			}
		}
		gp.jobs[i] = jobs
		eng.jobs = append(eng.jobs, jobs...)
		role := backends.OpCompute
		if op.Role == scenarios.RoleComm {
			role = backends.OpComm
		}
		gp.opJobs[role] = append(gp.opJobs[role], jobs...)
	}
	return gp, nil
}

// instanceTimes returns when instance i became runnable (what a CUDA event
// recorded on its stream before it marks) and when its last job ended.
func (gp *graphPlan) instanceTimes(i int) (start, end float64) {
	start = math.Inf(1)
	for _, j := range gp.jobs[i] {
		if j.after == nil {
			start = math.Min(start, j.runnableAt)
		}
		end = math.Max(end, j.end)
	}
	return start, end
}

// simulateGraph runs a graph experiment once.
func (b *Backend) simulateGraph(ex backends.Experiment, opt graphOptions) (Outcome, error) {
	p := b.p.onGPUs(ex.Scenario.GPUs)
	gp, err := atPowerClock(p, func() (*graphPlan, *engine, error) {
		gp, err := buildGraph(p, ex, opt)
		if err != nil {
			return nil, nil, err
		}
		return gp, gp.eng, nil
	})
	if err != nil {
		return Outcome{}, err
	}
	if !gp.eng.allDone() {
		return Outcome{}, fmt.Errorf("simulation of %s did not finish (a model bug; please report it with the scenario)", ex.Scenario.Name)
	}
	g := gp.g
	var out Outcome
	out.Rep.Ops = make([]int64, len(g.Ops))
	first := map[scenarios.Role]float64{scenarios.RoleCompute: math.Inf(1), scenarios.RoleComm: math.Inf(1)}
	last := map[scenarios.Role]float64{}
	opTime := make([]float64, len(g.Ops))
	wall := 0.0
	for _, i := range gp.run {
		in := g.Instances[i]
		op := g.Ops[in.Op]
		s, e := gp.instanceTimes(i)
		opTime[in.Op] += e - s
		first[op.Role] = math.Min(first[op.Role], s)
		last[op.Role] = math.Max(last[op.Role], e)
		wall = math.Max(wall, e)
		for _, j := range gp.jobs[i] {
			for _, sp := range spans(j) {
				sp.GraphOp, sp.Instance = op.Name, in.Index
				out.Spans = append(out.Spans, sp)
			}
		}
	}
	for i := range g.Ops {
		out.Rep.Ops[i] = ns(opTime[i])
	}
	if t, ok := last[scenarios.RoleCompute]; ok {
		out.Rep.Compute = ns(t - first[scenarios.RoleCompute])
	}
	if t, ok := last[scenarios.RoleComm]; ok {
		out.Rep.Comm = ns(t - first[scenarios.RoleComm])
	}
	out.Rep.Wall = ns(wall)
	out.Explain = gp.explain(p)
	out.Samples = samples(p, &gp.plan)
	return out, nil
}

// explain says, per graph op the run ran, which resources bounded its
// instances and for how long (summed over them).
func (gp *graphPlan) explain(p Profile) []backends.OpExplanation {
	g := gp.g
	jobsOf := make([][]*job, len(g.Ops))
	for _, i := range gp.run {
		op := g.Instances[i].Op
		jobsOf[op] = append(jobsOf[op], gp.jobs[i]...)
	}
	var out []backends.OpExplanation
	for oi, op := range g.Ops {
		if len(jobsOf[oi]) == 0 {
			continue
		}
		role := backends.OpCompute
		if op.Role == scenarios.RoleComm {
			role = backends.OpComm
		}
		e := backends.OpExplanation{Op: role, Label: op.Label()}
		total := map[backends.Resource]float64{}
		who := map[backends.Resource]*job{}
		for _, j := range jobsOf[oi] {
			for r, t := range j.bounds {
				total[r] += t
				if who[r] == nil {
					who[r] = j
				}
			}
		}
		for r, t := range total {
			if d := ns(t); d > 0 {
				e.Bounds = append(e.Bounds, backends.Bound{Resource: r, Nanos: d, Detail: gp.boundDetail(p, who[r], r)})
			}
		}
		slices.SortFunc(e.Bounds, func(a, b backends.Bound) int {
			if a.Nanos != b.Nanos {
				return int(b.Nanos - a.Nanos)
			}
			return strings.Compare(string(a.Resource), string(b.Resource))
		})
		out = append(out, e)
	}
	return out
}

// boundDetail is the pair's detail, in a graph's words where they differ.
func (gp *graphPlan) boundDetail(p Profile, j *job, r backends.Resource) string {
	switch {
	case r == backends.ResWaitSMs && j.skipsTails:
		return "CTAs queued: no free SM in its domain, all held by kernels that came first or outrank it, or freed by a GEMM's last round, which the sweeps' collectives gain little from (the block scheduler serves priority, then arrival, and never evicts; SMs free up as CTAs end)"
	case r == backends.ResWaitSMs:
		return "CTAs queued: no free SM in its domain, all held by kernels that came first or outrank it (the block scheduler serves priority, then arrival, and never evicts; SMs free up as CTAs end)"
	case r == backends.ResLaunch && j.op == backends.OpCompute:
		return fmt.Sprintf("the kernel's fixed cost per instance (launch and teardown, %.0f µs), holding no SM", p.KernelFixedCost*1e6)
	}
	return boundDetail(p, j, r, &gp.plan)
}
