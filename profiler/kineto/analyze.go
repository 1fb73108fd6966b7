package kineto

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/report"
	"github.com/c3lab/c3lab/scenarios"
)

// Select picks the part of a trace to analyse: one ProfilerStep#N, a time
// window, or (both zero) the whole trace.
type Select struct {
	// Step is a step number ("3" or "ProfilerStep#3"); empty for none.
	Step string
	// From and To bound a window in nanoseconds from the trace's first GPU
	// activity; To 0 means the end.
	From, To int64
}

// Item is one GPU activity as the analysis sees it.
type Item struct {
	Op    GPUOp
	Class Class
	Role  scenarios.Role
	// Key groups the instances of one kind of op: a GEMM shape, a
	// collective and its size, a kernel's short name.
	Key string
	// GEMM is the shape of a GEMM kernel, from the aten op that launched
	// it; nil when the trace does not say.
	GEMM *GEMMShape
	// Collective and CommBytes describe an NCCL kernel or a copy, in
	// c3lab's terms (CommOp.Bytes: per rank).
	Collective scenarios.Collective
	CommBytes  int64
	// StreamBytes is a compute kernel's input size (a stream op's bytes).
	StreamBytes int64
	// Unmapped says why c3lab has no op for it ("" when it has one).
	Unmapped string
	// Alone is true when no activity of the other role overlapped it.
	Alone bool
	// TAlone is its isolated time estimate in ns: its class's median alone
	// when some instance ran alone, else its own duration.
	TAlone float64
}

// ClassStat is one kind of op's figures (Item.Key).
type ClassStat struct {
	Key   string         `json:"key"`
	Class Class          `json:"class"`
	Role  scenarios.Role `json:"role"`
	Count int            `json:"count"`
	// TotalNs is the sum of the instances' durations.
	TotalNs int64 `json:"total_ns"`
	// AloneN instances ran with nothing of the other role beside them;
	// AloneMedianNs is their median (0 when none).
	AloneN        int     `json:"alone_n"`
	AloneMedianNs float64 `json:"alone_median_ns,omitempty"`
	// OverlappedN instances ran next to the other role; their median.
	OverlappedN        int     `json:"overlapped_n"`
	OverlappedMedianNs float64 `json:"overlapped_median_ns,omitempty"`
	// Slowdown is the overlapped median over the alone median, where the
	// trace has both (profiler.Slowdown).
	Slowdown *float64 `json:"slowdown,omitempty"`
	// Unmapped says why the scenario leaves this kind of op out.
	Unmapped string `json:"unmapped,omitempty"`
}

// Report is one rank's figures for the selected part of its trace.
type Report struct {
	File      string `json:"file"`
	Rank      int    `json:"rank"`
	WorldSize int    `json:"world_size,omitempty"`
	Device    string `json:"device,omitempty"`
	// Selection names the part analysed: "whole trace", "ProfilerStep#3",
	// "window 10ms..20ms".
	Selection string `json:"selection"`
	// Steps lists the trace's ProfilerStep#N names.
	Steps []string `json:"steps,omitempty"`
	// Ops counts the GPU activities selected, by role.
	ComputeOps int `json:"compute_ops"`
	CommOps    int `json:"comm_ops"`
	// SpanNs is from the first selected activity's start to the last end;
	// BusyNs the time at least one ran (the union); IdleNs the rest.
	SpanNs int64 `json:"span_ns"`
	BusyNs int64 `json:"busy_ns"`
	IdleNs int64 `json:"idle_ns"`
	// ComputeNs and CommNs are the unions of each role's activities;
	// OverlapNs the time both ran; ExposedCommNs communication with no
	// compute beside it.
	ComputeNs     int64 `json:"compute_ns"`
	CommNs        int64 `json:"comm_ns"`
	OverlapNs     int64 `json:"overlap_ns"`
	ExposedCommNs int64 `json:"exposed_comm_ns"`
	// Overlap is OverlapNs / CommNs (nil without communication): the share
	// of communication time hidden under compute, copies included.
	Overlap *float64 `json:"overlap,omitempty"`
	// HTAOverlap is Holistic Trace Analysis's figure: the time NCCL
	// kernels overlap other kernels over the NCCL kernels' time (copies and
	// fills are neither); nil without NCCL kernels.
	HTAOverlap *float64 `json:"hta_overlap,omitempty"`
	// TSerial, TIdeal and TC3 (ns) follow ARCHITECTURE.md: every op at its
	// isolated time, one after another; the list schedule of the streams
	// at those times; and the measured time, here the GPU's busy time (the
	// step's idle gaps are the host's, not C3's).
	TSerialNs        float64  `json:"t_serial_ns"`
	TSerialComputeNs float64  `json:"t_serial_compute_ns"`
	TSerialCommNs    float64  `json:"t_serial_comm_ns"`
	TIdealNs         float64  `json:"t_ideal_ns"`
	TC3Ns            float64  `json:"t_c3_ns"`
	IdealSpeedup     float64  `json:"ideal_speedup"`
	RealizedSpeedup  float64  `json:"realized_speedup"`
	FractionOfIdeal  *float64 `json:"fraction_of_ideal,omitempty"`
	// Dependencies says what T_ideal's schedule honours.
	Dependencies string `json:"dependencies"`
	// AloneFromTrace counts the ops whose isolated time came from an
	// instance of their kind that ran alone; the others use their own
	// (possibly slowed) duration.
	AloneFromTrace int `json:"alone_from_trace"`
	// Classes are the kinds of ops, longest total first.
	Classes []ClassStat `json:"classes"`
	// Unmapped counts the activities the scenario has no op for, and
	// UnmappedNs their time; each kind is named in Classes.
	Unmapped   int   `json:"unmapped"`
	UnmappedNs int64 `json:"unmapped_ns"`
	// Skipped counts the events by category the analysis does not use.
	Skipped map[string]int `json:"skipped,omitempty"`
	Events  int            `json:"events"`

	items []Item
}

// Items returns the selected activities, each stream's in start order.
func (r *Report) Items() []Item { return r.items }

// Analyze computes one rank's report for the selected part of its trace.
func Analyze(t *Trace, sel Select) (*Report, error) {
	r := &Report{File: t.File, Rank: t.Rank, WorldSize: t.WorldSize, Events: t.Events, Skipped: t.Skipped}
	for _, s := range t.Steps {
		if !s.GPU && !slices.Contains(r.Steps, s.Name) {
			r.Steps = append(r.Steps, s.Name)
		}
	}
	ops, label, err := selectOps(t, sel)
	if err != nil {
		return nil, err
	}
	r.Selection = label
	if len(ops) == 0 {
		return nil, fmt.Errorf("%s: no GPU activity in %s (the trace has %d; was it recorded with ProfilerActivity.CUDA?)", t.File, label, len(t.Ops))
	}
	if len(t.Devices) > 0 {
		r.Device = t.Devices[ops[0].Device]
	}
	items := make([]Item, len(ops))
	for i, o := range ops {
		items[i] = describe(t, o)
	}
	slices.SortStableFunc(items, func(a, b Item) int {
		return cmp.Or(cmp.Compare(a.Op.Stream, b.Op.Stream), cmp.Compare(a.Op.Start, b.Op.Start))
	})
	r.figures(items)
	r.items = items
	return r, nil
}

// selectOps returns the activities of the selection and its label.
func selectOps(t *Trace, sel Select) ([]GPUOp, string, error) {
	switch {
	case sel.Step != "":
		name := sel.Step
		if !strings.HasPrefix(name, "ProfilerStep#") {
			if _, err := strconv.Atoi(name); err != nil {
				return nil, "", fmt.Errorf("step %q is not a step number; want N or ProfilerStep#N", sel.Step)
			}
			name = "ProfilerStep#" + name
		}
		var cpu, gpu *Span
		var names []string
		for i, s := range t.Steps {
			if s.Name == name {
				if s.GPU {
					gpu = &t.Steps[i]
				} else {
					cpu = &t.Steps[i]
				}
			}
			if !s.GPU {
				names = append(names, strings.TrimPrefix(s.Name, "ProfilerStep#"))
			}
		}
		if cpu == nil && gpu == nil {
			if len(names) == 0 {
				return nil, "", fmt.Errorf("%s has no ProfilerStep annotations (call prof.step() each step); use --window instead", t.File)
			}
			return nil, "", fmt.Errorf("%s has no %s; its steps are %s", t.File, name, strings.Join(names, ", "))
		}
		var out []GPUOp
		for _, o := range t.Ops {
			if inStep(t, o, cpu, gpu) {
				out = append(out, o)
			}
		}
		return out, name, nil
	case sel.From != 0 || sel.To != 0:
		if sel.To != 0 && sel.To <= sel.From {
			return nil, "", fmt.Errorf("window ends before it starts")
		}
		t0 := int64(math.MaxInt64)
		for _, o := range t.Ops {
			t0 = min(t0, o.Start)
		}
		var out []GPUOp
		for _, o := range t.Ops {
			d := o.Start - t0
			if d >= sel.From && (sel.To == 0 || d < sel.To) {
				out = append(out, o)
			}
		}
		to := "end"
		if sel.To != 0 {
			to = report.Duration(float64(sel.To))
		}
		return out, "window " + report.Duration(float64(sel.From)) + ".." + to, nil
	}
	return t.Ops, "whole trace", nil
}

// inStep places an activity in a step: by the launch that enqueued it
// when the trace has the runtime call (the CPU step's span), else by its
// start within the step's GPU annotation, else within the CPU span.
func inStep(t *Trace, o GPUOp, cpu, gpu *Span) bool {
	if cpu != nil {
		if ts, ok := t.Launch[o.Correlation]; ok && o.Correlation != 0 {
			return ts >= cpu.Start && ts < cpu.Start+cpu.Dur
		}
	}
	if gpu != nil {
		return o.Start >= gpu.Start && o.Start < gpu.Start+gpu.Dur
	}
	return o.Start >= cpu.Start && o.Start < cpu.Start+cpu.Dur
}

// describe classifies one activity and reads its shape or size.
func describe(t *Trace, o GPUOp) Item {
	it := Item{Op: o, Class: classify(o)}
	it.Role = it.Class.Role()
	cpu, linked := t.CPU[o.ExternalID]
	if o.ExternalID == 0 {
		linked = false
	}
	switch it.Class {
	case ClassGEMM:
		if linked && cpu.GEMM != nil {
			g := *cpu.GEMM
			it.GEMM = &g
			dt := dtypeOf(g.DType)
			if dt == "" {
				dt = gemmDTypeFromName(o.Name)
			}
			it.Key = fmt.Sprintf("gemm %dx%dx%d %s", g.M, g.N, g.K, dt)
			if dt == "" {
				it.Unmapped = "element type " + g.DType + " has no c3lab GEMM"
			}
		} else {
			it.Key = "gemm " + ShortName(o.Name)
			it.Unmapped = "GEMM shape not in the trace (record with record_shapes=True)"
			if m, n, _, ok := gemmTile(o.Name); ok && o.Grid > 0 {
				it.Unmapped += fmt.Sprintf("; its name gives a %dx%d tile over %d CTAs", m, n, o.Grid)
			}
		}
	case ClassNCCL:
		args := o.Comm
		if args == nil && linked {
			args = cpu.Comm
		}
		it.Collective = collectiveOf(o.Name, args)
		it.CommBytes = commBytes(it.Collective, args)
		switch {
		case it.Collective == "":
			it.Key = "nccl " + ShortName(o.Name)
			it.Unmapped = "a collective c3lab has no op for"
		case it.CommBytes == 0:
			it.Key = string(it.Collective) + " " + ShortName(o.Name)
			it.Unmapped = "message size not in the trace (torch adds it to NCCL kernels from 2.x with record_shapes)"
		default:
			it.Key = fmt.Sprintf("%s %s", it.Collective, scenarios.ByteSize(it.CommBytes))
		}
	case ClassH2D, ClassD2H:
		it.Collective = scenarios.HostToDevice
		if it.Class == ClassD2H {
			it.Collective = scenarios.DeviceToHost
		}
		it.CommBytes = o.Bytes
		it.Key = fmt.Sprintf("%s %s", it.Collective, scenarios.ByteSize(o.Bytes))
		if o.Bytes <= 0 {
			it.Unmapped = "copy size not in the trace"
		}
	case ClassD2D:
		it.StreamBytes = o.Bytes
		it.Key = fmt.Sprintf("copy d2d %s", scenarios.ByteSize(o.Bytes))
		if o.Bytes <= 0 {
			it.Unmapped = "copy size not in the trace"
		}
	case ClassP2P:
		it.Key = fmt.Sprintf("copy p2p %s", scenarios.ByteSize(o.Bytes))
		it.Unmapped = "a peer copy outside NCCL; c3lab has no op for it"
	case ClassMemset:
		it.Key = "memset"
		it.Unmapped = "a fill; c3lab has no op for it"
	case ClassUnknown:
		it.Key = "memcpy " + o.Name
		it.Unmapped = "a copy of unknown direction"
	default:
		it.Key = ShortName(o.Name)
		if linked && cpu.InputBytes > 0 {
			it.StreamBytes = cpu.InputBytes
			it.Key = fmt.Sprintf("%s (%s)", ShortName(o.Name), cpu.Name)
		} else {
			it.Unmapped = "unknown kernel: no input shapes in the trace to size it (record with record_shapes=True)"
		}
	}
	return it
}

// interval is [s, e).
type interval struct{ s, e int64 }

// union merges intervals (sorted in place by start).
func union(iv []interval) []interval {
	slices.SortFunc(iv, func(a, b interval) int { return cmp.Compare(a.s, b.s) })
	var out []interval
	for _, x := range iv {
		if x.e <= x.s {
			continue
		}
		if n := len(out); n > 0 && x.s <= out[n-1].e {
			out[n-1].e = max(out[n-1].e, x.e)
			continue
		}
		out = append(out, x)
	}
	return out
}

func length(iv []interval) int64 {
	var t int64
	for _, x := range iv {
		t += x.e - x.s
	}
	return t
}

// intersect is the total length of the intersection of two unions.
func intersect(a, b []interval) int64 {
	var t int64
	for i, j := 0, 0; i < len(a) && j < len(b); {
		s, e := max(a[i].s, b[j].s), min(a[i].e, b[j].e)
		if e > s {
			t += e - s
		}
		if a[i].e < b[j].e {
			i++
		} else {
			j++
		}
	}
	return t
}

// overlaps reports whether [s, e) meets the union u (sorted).
func overlaps(u []interval, s, e int64) bool {
	i, _ := slices.BinarySearchFunc(u, s, func(x interval, t int64) int {
		if x.e <= t {
			return -1
		}
		return 1
	})
	return i < len(u) && u[i].s < e
}

// Overlap is the share of b's time (the union of its intervals) during
// which a also runs, Holistic Trace Analysis's comm/comp overlap when a is
// compute and b is communication. ok is false when b has no time.
func overlapShare(comp, comm []interval) (float64, bool) {
	cu := union(comm)
	l := length(cu)
	if l == 0 {
		return 0, false
	}
	return float64(intersect(union(comp), cu)) / float64(l), true
}

func (r *Report) figures(items []Item) {
	var all, comp, comm, htaComp, htaComm []interval
	first, last := int64(math.MaxInt64), int64(math.MinInt64)
	for _, it := range items {
		iv := interval{it.Op.Start, it.Op.End()}
		all = append(all, iv)
		first, last = min(first, iv.s), max(last, iv.e)
		if it.Role == scenarios.RoleComm {
			comm = append(comm, iv)
			r.CommOps++
		} else {
			comp = append(comp, iv)
			r.ComputeOps++
		}
		if it.Op.Kind == Kernel {
			if IsNCCL(it.Op.Name) {
				htaComm = append(htaComm, iv)
			} else {
				htaComp = append(htaComp, iv)
			}
		}
	}
	r.SpanNs = last - first
	r.BusyNs = length(union(all))
	r.IdleNs = r.SpanNs - r.BusyNs
	cu, mu := union(comp), union(comm)
	r.ComputeNs, r.CommNs = length(cu), length(mu)
	r.OverlapNs = intersect(cu, mu)
	r.ExposedCommNs = r.CommNs - r.OverlapNs
	if f, ok := overlapShare(comp, comm); ok {
		r.Overlap = &f
	}
	if f, ok := overlapShare(htaComp, htaComm); ok {
		r.HTAOverlap = &f
	}

	// Which instances ran alone, and each kind's medians.
	type acc struct {
		st          ClassStat
		alone, with []float64
	}
	byKey := map[string]*acc{}
	var keys []string
	for i := range items {
		it := &items[i]
		other := cu
		if it.Role == scenarios.RoleCompute {
			other = mu
		}
		it.Alone = !overlaps(other, it.Op.Start, it.Op.End())
		a := byKey[it.Key]
		if a == nil {
			a = &acc{st: ClassStat{Key: it.Key, Class: it.Class, Role: it.Role, Unmapped: it.Unmapped}}
			byKey[it.Key] = a
			keys = append(keys, it.Key)
		}
		a.st.Count++
		a.st.TotalNs += it.Op.Dur
		if it.Alone {
			a.alone = append(a.alone, float64(it.Op.Dur))
		} else {
			a.with = append(a.with, float64(it.Op.Dur))
		}
		if it.Unmapped != "" {
			r.Unmapped++
			r.UnmappedNs += it.Op.Dur
		}
	}
	for _, k := range keys {
		a := byKey[k]
		a.st.AloneN, a.st.OverlappedN = len(a.alone), len(a.with)
		if len(a.alone) > 0 {
			a.st.AloneMedianNs = median(a.alone)
		}
		if len(a.with) > 0 {
			a.st.OverlappedMedianNs = median(a.with)
		}
		if len(a.alone) > 0 && len(a.with) > 0 {
			s := profiler.Slowdown(a.st.OverlappedMedianNs, a.st.AloneMedianNs)
			a.st.Slowdown = &s
		}
		r.Classes = append(r.Classes, a.st)
	}
	slices.SortStableFunc(r.Classes, func(a, b ClassStat) int { return cmp.Compare(b.TotalNs, a.TotalNs) })

	// Isolated times, T_serial, and T_ideal from the streams' list
	// schedule (each trace stream runs its ops in order).
	dur := make([]float64, len(items))
	g := &scenarios.Graph{}
	prevOnStream := map[int]int{}
	for i := range items {
		it := &items[i]
		a := byKey[it.Key]
		it.TAlone = float64(it.Op.Dur)
		if a.st.AloneN > 0 {
			it.TAlone = a.st.AloneMedianNs
			r.AloneFromTrace++
		}
		dur[i] = it.TAlone
		if it.Role == scenarios.RoleComm {
			r.TSerialCommNs += it.TAlone
		} else {
			r.TSerialComputeNs += it.TAlone
		}
		prev, ok := prevOnStream[it.Op.Stream]
		if !ok {
			prev = -1
		}
		g.Instances = append(g.Instances, scenarios.Instance{Op: i, Index: 0, Prev: prev})
		prevOnStream[it.Op.Stream] = i
	}
	r.TSerialNs = r.TSerialComputeNs + r.TSerialCommNs
	r.TIdealNs = g.ListSchedule(dur).Makespan
	r.Dependencies = "stream order only: the trace records no waits between streams, so T_ideal lets every stream run back to back"
	r.TC3Ns = float64(r.BusyNs)
	r.IdealSpeedup = profiler.SpeedupOver(r.TSerialNs, r.TIdealNs)
	r.RealizedSpeedup = profiler.SpeedupOver(r.TSerialNs, r.TC3Ns)
	if f, ok := profiler.FractionOfIdeal(r.RealizedSpeedup, r.IdealSpeedup); ok {
		r.FractionOfIdeal = &f
	}
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
