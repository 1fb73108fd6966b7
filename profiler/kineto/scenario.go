package kineto

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/c3lab/c3lab/scenarios"
)

// ScenarioOptions name the scenario written from a report.
type ScenarioOptions struct {
	// Name is the scenario's name; empty derives one from the trace file.
	Name string
	// GPUs overrides the GPU count (the trace's world size otherwise).
	GPUs int
}

// Scenario writes one rank's selected activities as a format-2 scenario:
// each trace stream a stream (split in two, compute and communication,
// when it holds both, the second half waiting for the first where the
// trace ran them in turn), each activity an op with its shape or size,
// back-to-back repeats of one op folded into a count. Activities c3lab
// has no op for are left out; left lists them, by kind, with the time
// they took.
func (r *Report) Scenario(opt ScenarioOptions) (sc scenarios.Scenario, left []ClassStat, err error) {
	im, err := r.Import(opt)
	if im == nil {
		return scenarios.Scenario{}, nil, err
	}
	return im.Scenario, im.Left, err
}

// Imported is a scenario written from a report, and which op instance of
// it each selected activity became.
type Imported struct {
	Scenario scenarios.Scenario
	// Left lists the kinds of activities left out, with their counts and
	// time.
	Left []ClassStat
	// Op and Instance give, per activity (Report.Items order), the op it
	// became and its instance; "" for one left out.
	Op       []string
	Instance []int

	report *Report
}

// Import is Scenario with the map from activities to op instances.
func (r *Report) Import(opt ScenarioOptions) (*Imported, error) {
	im := &Imported{report: r, Op: make([]string, len(r.items)), Instance: make([]int, len(r.items))}
	sc, left, err := r.build(opt, im)
	im.Scenario, im.Left = sc, left
	return im, err
}

func (r *Report) build(opt ScenarioOptions, im *Imported) (sc scenarios.Scenario, left []ClassStat, err error) {
	gpus := opt.GPUs
	if gpus == 0 {
		gpus = r.WorldSize
	}
	if gpus == 0 {
		for _, it := range r.items {
			if it.Op.Comm != nil && it.Op.Comm.GroupSize > 0 {
				gpus = it.Op.Comm.GroupSize
				break
			}
		}
	}
	gpus = max(gpus, 1)
	name := opt.Name
	if name == "" {
		name = scenarioName(r.File, r.Selection)
	}
	sc = scenarios.Scenario{Name: name, GPUs: gpus, Source: "kineto trace " + filepath.Base(r.File)}

	type sub struct {
		spec *scenarios.StreamSpec
		// last is the index in spec.Ops of the op the next one may fold into.
		last int
	}
	subs := map[string]*sub{}
	var order []string
	counters := map[string]int{}
	leftBy := map[string]*ClassStat{}
	var leftKeys []string
	leave := func(it Item, why string) {
		c := leftBy[it.Key]
		if c == nil {
			c = &ClassStat{Key: it.Key, Class: it.Class, Role: it.Role, Unmapped: why}
			leftBy[it.Key] = c
			leftKeys = append(leftKeys, it.Key)
		}
		c.Count++
		c.TotalNs += it.Op.Dur
	}
	// prev is, per trace stream, the name of the op the stream ran last
	// and its role, for the waits between a split stream's halves.
	type prevOp struct {
		name string
		role scenarios.Role
	}
	prev := map[int]prevOp{}
	for idx, it := range r.items {
		op, why := streamOp(it, gpus)
		if why != "" {
			leave(it, why)
			continue
		}
		roles := r.streamRoles(it.Op.Stream)
		sname := fmt.Sprintf("s%d", it.Op.Stream)
		if len(roles) > 1 {
			sname += "-" + string(it.Role)
		}
		s := subs[sname]
		if s == nil {
			s = &sub{spec: &scenarios.StreamSpec{Name: sname}, last: -1}
			subs[sname] = s
			order = append(order, sname)
		}
		p, hasPrev := prev[it.Op.Stream]
		if s.last >= 0 && hasPrev && p.role == it.Role {
			last := &s.spec.Ops[s.last]
			if sameWork(*last, op) {
				last.Count = last.CountOrOne() + 1
				im.Op[idx], im.Instance[idx] = last.Name, last.Count-1
				continue
			}
		}
		counters[string(op.Kind)]++
		op.Name = fmt.Sprintf("%s%d", opPrefix(op.Kind), counters[string(op.Kind)])
		if hasPrev && p.role != it.Role {
			op.After = []string{p.name}
		}
		s.spec.Ops = append(s.spec.Ops, op)
		s.last = len(s.spec.Ops) - 1
		im.Op[idx], im.Instance[idx] = op.Name, 0
		prev[it.Op.Stream] = prevOp{name: op.Name, role: it.Role}
	}
	for _, k := range leftKeys {
		left = append(left, *leftBy[k])
	}
	slices.SortStableFunc(left, func(a, b ClassStat) int { return int(b.TotalNs - a.TotalNs) })
	if len(order) == 0 {
		return sc, left, fmt.Errorf("%s: none of the %d GPU activities in %s maps to a c3lab op (see the report's ? lines)", r.File, len(r.items), r.Selection)
	}
	if len(order) > scenarios.MaxStreams {
		return sc, left, fmt.Errorf("%s: %s runs on %d streams (compute and communication apart); a scenario holds at most %d: pick a shorter --window or one --step", r.File, r.Selection, len(order), scenarios.MaxStreams)
	}
	total := 0
	for _, n := range order {
		s := subs[n].spec
		if len(s.Ops) > scenarios.MaxStreamOps {
			return sc, left, fmt.Errorf("%s: stream %s of %s holds %d ops after folding repeats; a scenario stream holds at most %d: pick a shorter --window or one --step", r.File, n, r.Selection, len(s.Ops), scenarios.MaxStreamOps)
		}
		for _, o := range s.Ops {
			total += o.CountOrOne()
		}
		sc.Streams = append(sc.Streams, *s)
	}
	if total > scenarios.MaxInstances {
		return sc, left, fmt.Errorf("%s: %s has %d op instances; a scenario holds at most %d: pick a shorter --window or one --step", r.File, r.Selection, total, scenarios.MaxInstances)
	}
	sc = sc.WithLead()
	if sc.Compute.Kind == "" || sc.Comm.Collective == "" {
		missing := "compute op (a GEMM, a sized kernel, a copy within the GPU)"
		if sc.Compute.Kind != "" {
			missing = "communication op (an NCCL collective, a copy to or from the host)"
		}
		return sc, left, fmt.Errorf("%s: %s has no %s that c3lab can run, and a scenario runs compute next to communication", r.File, r.Selection, missing)
	}
	sc.Description = r.scenarioDescription(sc, left)
	if err := scenarios.Validate(sc, scenarios.Limits{}); err != nil {
		return sc, left, fmt.Errorf("%s: the scenario written from %s is not valid: %w", r.File, r.Selection, err)
	}
	return sc, left, nil
}

// streamRoles lists the roles of the mapped activities on a trace stream.
func (r *Report) streamRoles(stream int) []scenarios.Role {
	var out []scenarios.Role
	for _, it := range r.items {
		if it.Op.Stream != stream || it.Unmapped != "" {
			continue
		}
		if !slices.Contains(out, it.Role) {
			out = append(out, it.Role)
		}
	}
	return out
}

// streamOp is the scenario op for one activity, or why there is none.
func streamOp(it Item, gpus int) (scenarios.StreamOp, string) {
	if it.Unmapped != "" {
		return scenarios.StreamOp{}, it.Unmapped
	}
	switch {
	case it.Class == ClassGEMM && it.GEMM != nil:
		dt := dtypeOf(it.GEMM.DType)
		if dt == "" {
			dt = gemmDTypeFromName(it.Op.Name)
		}
		return scenarios.StreamOp{Kind: scenarios.OpKind(scenarios.GEMM), M: it.GEMM.M, N: it.GEMM.N, K: it.GEMM.K, DType: dt}, ""
	case it.Class == ClassNCCL:
		if gpus < 2 {
			return scenarios.StreamOp{}, "a collective on a 1-GPU scenario (the trace's world size is 1)"
		}
		return scenarios.StreamOp{Kind: scenarios.OpKind(it.Collective), Bytes: scenarios.ByteSize(it.CommBytes)}, ""
	case it.Class == ClassH2D || it.Class == ClassD2H:
		return scenarios.StreamOp{Kind: scenarios.OpKind(it.Collective), Bytes: scenarios.ByteSize(it.CommBytes)}, ""
	case it.StreamBytes > 0:
		return scenarios.StreamOp{Kind: scenarios.OpKind(scenarios.Stream), Bytes: scenarios.ByteSize(it.StreamBytes)}, ""
	}
	return scenarios.StreamOp{}, "no c3lab op for it"
}

func sameWork(a, b scenarios.StreamOp) bool {
	return a.Kind == b.Kind && a.M == b.M && a.N == b.N && a.K == b.K && a.DType == b.DType && a.Bytes == b.Bytes
}

func opPrefix(k scenarios.OpKind) string {
	switch scenarios.Collective(k) {
	case scenarios.AllGather:
		return "ag"
	case scenarios.ReduceScatter:
		return "rs"
	case scenarios.AllReduce:
		return "ar"
	case scenarios.AllToAll:
		return "a2a"
	}
	return string(k)
}

var nameJunk = regexp.MustCompile(`[^a-z0-9._-]+`)

// scenarioName derives a valid scenario name from the trace file and the
// selection: "import-rank0-trace-step3".
func scenarioName(file, sel string) string {
	base := strings.ToLower(filepath.Base(file))
	for _, ext := range []string{".gz", ".json", ".pt.trace"} {
		base = strings.TrimSuffix(base, ext)
	}
	n := "import-" + base
	if s, ok := strings.CutPrefix(sel, "ProfilerStep#"); ok {
		n += "-step" + s
	}
	n = strings.Trim(nameJunk.ReplaceAllString(n, "-"), "-._")
	if len(n) > 80 {
		n = strings.TrimRight(n[:80], "-._")
	}
	return n
}

func (r *Report) scenarioDescription(sc scenarios.Scenario, left []ClassStat) string {
	var ops int
	for _, s := range sc.Streams {
		for _, o := range s.Ops {
			ops += o.CountOrOne()
		}
	}
	d := fmt.Sprintf("Imported from %s (rank %d, %s): %d GPU ops on %d streams.", filepath.Base(r.File), r.Rank, r.Selection, ops, len(sc.Streams))
	if len(left) > 0 {
		var n int
		var t int64
		for _, c := range left {
			n += c.Count
			t += c.TotalNs
		}
		d += fmt.Sprintf(" Left out: %d activities c3lab has no op for (%.1f µs).", n, float64(t)/1e3)
	}
	d += " Waits between streams: only where one trace stream ran compute and communication in turn."
	return d
}
