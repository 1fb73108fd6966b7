package scenarios

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// A scenario in format 2 is a small graph of ops on streams, the C3 real
// layers run: streams of GEMMs next to streams of collectives, a TP
// all-gather feeding the GEMM that consumes it, decomposed into chunks so
// chunk i of the GEMM starts as soon as chunk i has arrived. The one-pair
// scenario of format 1 (compute and comm) is the graph of one op per
// stream with no dependency (Scenario.Graph builds it), so every backend
// runs graphs and every metric is the graph's.

// OpKind names what a graph op is: a compute kind (gemm, stream) or a
// communication kind (a collective or a host copy).
type OpKind string

// OpKinds lists every op kind a stream may hold, compute kinds first.
func OpKinds() []OpKind {
	out := []OpKind{OpKind(GEMM), OpKind(Stream)}
	for _, c := range CommKinds {
		out = append(out, OpKind(c))
	}
	return out
}

// IsComm reports whether the kind is a collective or a host copy.
func (k OpKind) IsComm() bool { return slices.Contains(CommKinds, Collective(k)) }

// IsCompute reports whether the kind is a GEMM or a stream op.
func (k OpKind) IsCompute() bool { return k == OpKind(GEMM) || k == OpKind(Stream) }

// StreamOp is one op of a stream: a compute op or a communication op,
// run Count times back to back, each instance after the ops in After.
type StreamOp struct {
	// Name identifies the op in After lists and on the timeline; unique in
	// the scenario. Empty takes "<stream>.<index>" (1-based).
	Name string `yaml:"name,omitempty" json:"name,omitempty"`
	// Kind is gemm, stream or a communication kind (all-gather, ..., swap).
	Kind OpKind `yaml:"kind" json:"kind"`
	// M, N, K and DType are a GEMM's shape.
	M     int   `yaml:"m,omitempty" json:"m,omitempty"`
	N     int   `yaml:"n,omitempty" json:"n,omitempty"`
	K     int   `yaml:"k,omitempty" json:"k,omitempty"`
	DType DType `yaml:"dtype,omitempty" json:"dtype,omitempty"`
	// Bytes is a stream op's buffer, or a communication op's per-rank
	// message (CommOp.Bytes).
	Bytes ByteSize `yaml:"bytes,omitempty" json:"bytes,omitempty"`
	// Count is how many instances run back to back on the stream; 0 is 1.
	Count int `yaml:"count,omitempty" json:"count,omitempty"`
	// After lists what each instance waits for: "op" (every instance of
	// op), "op[2]" (its instance 2, from 0) or "op[i]" (the instance with
	// this instance's index; the counts must match).
	After []string `yaml:"after,omitempty" json:"after,omitempty"`
	// Decompose splits this op and the one op it waits for (a collective
	// feeding a GEMM, or a GEMM feeding a collective) into this many
	// chunks wired chunk by chunk (async TP); 0 or 1 keeps them whole. The
	// strategy's decompose knob overrides it.
	Decompose int `yaml:"decompose,omitempty" json:"decompose,omitempty"`
}

// CountOrOne returns Count, or 1 when unset.
func (o StreamOp) CountOrOne() int { return max(o.Count, 1) }

// AsCompute returns the op as a ComputeOp (meaningful for compute kinds).
func (o StreamOp) AsCompute() ComputeOp {
	return ComputeOp{Kind: ComputeKind(o.Kind), M: o.M, N: o.N, K: o.K, DType: o.DType, Bytes: o.Bytes}
}

// AsComm returns the op as a CommOp (meaningful for communication kinds).
func (o StreamOp) AsComm() CommOp { return CommOp{Collective: Collective(o.Kind), Bytes: o.Bytes} }

// ComputeStreamOp is the stream op form of a compute op.
func ComputeStreamOp(name string, c ComputeOp) StreamOp {
	return StreamOp{Name: name, Kind: OpKind(c.Kind), M: c.M, N: c.N, K: c.K, DType: c.DType, Bytes: c.Bytes}
}

// CommStreamOp is the stream op form of a communication op.
func CommStreamOp(name string, c CommOp) StreamOp {
	return StreamOp{Name: name, Kind: OpKind(c.Collective), Bytes: c.Bytes}
}

// String is a short label: "gemm 4096x4096x4096 bf16 x16".
func (o StreamOp) String() string {
	var s string
	if o.Kind.IsComm() {
		s = o.AsComm().String()
	} else {
		s = o.AsCompute().String()
	}
	if o.CountOrOne() > 1 {
		s += fmt.Sprintf(" x%d", o.CountOrOne())
	}
	return s
}

// StreamSpec is one stream of a format-2 scenario: its ops, in order.
type StreamSpec struct {
	// Name identifies the stream ("compute", "comm", "tp"); unique.
	Name string     `yaml:"name" json:"name"`
	Ops  []StreamOp `yaml:"ops" json:"ops"`
}

// IsGraph reports whether the scenario is written as streams (format 2)
// rather than as one compute op next to one comm op.
func (s Scenario) IsGraph() bool { return len(s.Streams) > 0 }

// WithLead returns the scenario with Compute and Comm set to its lead ops,
// the first compute op and the first communication op in stream order
// (streams in order, each stream's ops in order), so that code describing
// a scenario by its pair (summaries, the composer's header) keeps working.
// A one-pair scenario comes back as it is; a graph without an op of one
// role leaves that side zero.
func (s Scenario) WithLead() Scenario {
	if !s.IsGraph() {
		return s
	}
	s.Compute, s.Comm = ComputeOp{}, CommOp{}
	var haveCompute, haveComm bool
	for _, ss := range s.Streams {
		for _, o := range ss.Ops {
			switch {
			case o.Kind.IsCompute() && !haveCompute:
				s.Compute, haveCompute = o.AsCompute(), true
			case o.Kind.IsComm() && !haveComm:
				s.Comm, haveComm = o.AsComm(), true
			}
		}
	}
	return s
}

// Limits on a graph's size: a scenario is a layer, not a training run.
const (
	// MaxStreams is the most streams a scenario may have.
	MaxStreams = 8
	// MaxStreamOps is the most ops one stream may list.
	MaxStreamOps = 64
	// MaxInstances is the most op instances a graph may expand to (after
	// counts and decomposition), summed over streams.
	MaxInstances = 4096
	// MaxChunks is the largest decomposition.
	MaxChunks = 64
	// MaxAfter is the most entries one after list may hold (a combine
	// waiting for every expert of a layer is well inside it).
	MaxAfter = 64
)

// Role says which side of C3 an op is on.
type Role string

// The two roles. A stream holds ops of one role.
const (
	RoleCompute Role = "compute"
	RoleComm    Role = "comm"
)

// GraphOp is one op of an expanded graph, its shapes already cut into
// chunks when it is decomposed: every instance runs Compute (or Comm).
type GraphOp struct {
	// Name is the op's name ("compute" and "comm" for a one-pair scenario).
	Name string
	// Stream indexes Graph.Streams.
	Stream int
	Role   Role
	// Compute or Comm is one instance's work, by Role.
	Compute ComputeOp
	Comm    CommOp
	// Count is the number of instances.
	Count int
	// Chunks is the decomposition this op takes part in (1: whole).
	Chunks int
	// Feeds is the index of the op that reads this op's output buffer
	// (a gathered A operand, a GEMM result reduced and scattered), or -1.
	// Chunk i of the consumer reads chunk i of this op's output.
	Feeds int
	// FedBy is the index of the op whose output this op reads, or -1.
	FedBy int
	// Path is the op's field in the scenario file ("$.streams[1].ops[0]"),
	// empty for a one-pair scenario's ops.
	Path string
}

// Label is the op's human label with its name: "qkv: gemm 4096x... x4".
func (o GraphOp) Label() string {
	var s string
	if o.Role == RoleComm {
		s = o.Comm.String()
	} else {
		s = o.Compute.String()
	}
	if o.Count > 1 {
		s += fmt.Sprintf(" x%d", o.Count)
	}
	return o.Name + ": " + s
}

// GraphStream is one stream of an expanded graph.
type GraphStream struct {
	Name string
	Role Role
	// Ops indexes Graph.Ops, in stream order.
	Ops []int
}

// Instance is one run of one op.
type Instance struct {
	// Op indexes Graph.Ops; Index is the instance's number within it.
	Op, Index int
	// Prev is the instance before it on its stream, or -1.
	Prev int
	// Deps are the instances it waits for besides Prev (graph order).
	Deps []int
}

// Graph is a scenario expanded for a strategy: streams, ops and every op
// instance with its dependencies, in a topological order (an instance's
// Prev and Deps come before it).
type Graph struct {
	GPUs      int
	Streams   []GraphStream
	Ops       []GraphOp
	Instances []Instance
	// index[op][k] is the position in Instances of op's instance k.
	index [][]int
}

// InstanceOf returns the position in Instances of op's instance idx.
func (g *Graph) InstanceOf(op, idx int) int { return g.index[op][idx] }

// OpsOf returns the indexes of the ops of a role, in graph order.
func (g *Graph) OpsOf(r Role) []int {
	var out []int
	for i, o := range g.Ops {
		if o.Role == r {
			out = append(out, i)
		}
	}
	return out
}

// Graph expands the scenario for strategy st: a one-pair scenario becomes
// two streams ("compute", "comm") of one op each; a format-2 scenario its
// streams, with counts, dependencies and decomposition (the op's own, or
// st.Decompose when set) applied. Validate reports the same problems with
// their fields; Graph on a scenario that passed Validate does not fail.
func (s Scenario) Graph(st Strategy) (*Graph, error) {
	specs := s.Streams
	if !s.IsGraph() {
		specs = []StreamSpec{
			{Name: string(RoleCompute), Ops: []StreamOp{ComputeStreamOp(string(RoleCompute), s.Compute)}},
			{Name: string(RoleComm), Ops: []StreamOp{CommStreamOp(string(RoleComm), s.Comm)}},
		}
	}
	g, errs := expand(specs, s.GPUs, st.Decompose, s.IsGraph())
	if len(errs) > 0 {
		return nil, &ValidationError{Scenario: s.Name, Fields: errs}
	}
	return g, nil
}

// opRef is a parsed entry of an After list.
type opRef struct {
	name string
	// idx is the instance (>= 0), refAll or refSame.
	idx int
}

const (
	refAll  = -1
	refSame = -2
)

// parseRef reads "op", "op[3]" or "op[i]".
func parseRef(s string) (opRef, bool) {
	name, rest, bracket := strings.Cut(strings.TrimSpace(s), "[")
	name = strings.TrimSpace(name)
	if name == "" {
		return opRef{}, false
	}
	if !bracket {
		return opRef{name: name, idx: refAll}, true
	}
	inner, ok := strings.CutSuffix(rest, "]")
	if !ok {
		return opRef{}, false
	}
	inner = strings.TrimSpace(inner)
	if inner == "i" {
		return opRef{name: name, idx: refSame}, true
	}
	n, err := strconv.Atoi(inner)
	if err != nil || n < 0 {
		return opRef{}, false
	}
	return opRef{name: name, idx: n}, true
}

// expand builds the graph from stream specs, collecting every problem with
// its field path. paths says whether the specs came from the file (so
// problems name their fields).
func expand(specs []StreamSpec, gpus, decompose int, paths bool) (*Graph, []FieldError) {
	var errs []FieldError
	add := func(path, format string, a ...any) {
		if !paths {
			path = "$"
		}
		errs = append(errs, FieldError{Path: path, Msg: fmt.Sprintf(format, a...)})
	}
	g := &Graph{GPUs: gpus}
	if len(specs) > MaxStreams {
		add("$.streams", "the scenario has %d streams; allowed at most %d", len(specs), MaxStreams)
		return nil, errs
	}
	var ops []pendingOp
	byName := map[string]int{}
	streamNames := map[string]bool{}
	for si, ss := range specs {
		sp := fmt.Sprintf("$.streams[%d]", si)
		switch {
		case ss.Name == "":
			add(sp+".name", "streams[%d].name is missing; want a short name such as compute or tp", si)
		case !namePattern.MatchString(ss.Name):
			add(sp+".name", "stream name %q is not allowed; use lower-case letters, digits, '.', '_' or '-'", clip(ss.Name))
		case streamNames[ss.Name]:
			add(sp+".name", "stream name %q is used twice; each stream needs its own name", ss.Name)
		}
		streamNames[ss.Name] = true
		if len(ss.Ops) == 0 {
			add(sp+".ops", "stream %s has no ops; give it at least one, or remove it", ss.Name)
		}
		if len(ss.Ops) > MaxStreamOps {
			add(sp+".ops", "stream %s lists %d ops; allowed at most %d (use count for repeats)", ss.Name, len(ss.Ops), MaxStreamOps)
			continue
		}
		role := Role("")
		gs := GraphStream{Name: ss.Name}
		for oi, o := range ss.Ops {
			op := fmt.Sprintf("%s.ops[%d]", sp, oi)
			if o.Name == "" {
				o.Name = fmt.Sprintf("%s.%d", ss.Name, oi+1)
			} else if !namePattern.MatchString(o.Name) {
				add(op+".name", "op name %q is not allowed; use lower-case letters, digits, '.', '_' or '-'", clip(o.Name))
			}
			if _, dup := byName[o.Name]; dup {
				add(op+".name", "op name %q is used twice; each op needs its own name", o.Name)
			}
			r := RoleCompute
			if o.Kind.IsComm() {
				r = RoleComm
			}
			switch {
			case !o.Kind.IsComm() && !o.Kind.IsCompute():
				// validateOp reports the kind.
			case role == "":
				role = r
			case role != r:
				add(op+".kind", "stream %s holds %s ops and this op is %s (%s); put compute and communication ops on separate streams", ss.Name, role, r, o.Kind)
			}
			if o.Count < 0 || o.Count > MaxInstances {
				add(op+".count", "count is %d; allowed 1..%d, or leave it out for 1", o.Count, MaxInstances)
				o.Count = 1
			}
			if o.Decompose < 0 || o.Decompose > MaxChunks {
				add(op+".decompose", "decompose is %d; allowed 2..%d chunks, or 0 to keep the pair whole", o.Decompose, MaxChunks)
				o.Decompose = 0
			}
			byName[o.Name] = len(ops)
			gs.Ops = append(gs.Ops, len(ops))
			ops = append(ops, pendingOp{spec: o, path: op})
			g.Ops = append(g.Ops, GraphOp{Name: o.Name, Stream: si, Role: r, Count: o.CountOrOne(), Chunks: 1, Feeds: -1, FedBy: -1, Path: op})
		}
		gs.Role = role
		g.Streams = append(g.Streams, gs)
	}
	if len(errs) > 0 {
		return nil, errs
	}

	// Dependencies, by op.
	deps := make([][]opRef, len(ops))
	for i, p := range ops {
		if len(p.spec.After) > MaxAfter {
			add(p.path+".after", "op %s waits for %d ops; allowed at most %d", p.spec.Name, len(p.spec.After), MaxAfter)
			continue
		}
		for ai, a := range p.spec.After {
			ap := fmt.Sprintf("%s.after[%d]", p.path, ai)
			ref, ok := parseRef(a)
			if !ok {
				add(ap, "after entry %q is not an op reference; write op, op[3] or op[i]", clip(a))
				continue
			}
			j, found := byName[ref.name]
			switch {
			case !found:
				names := make([]string, 0, len(byName))
				for n := range byName {
					names = append(names, n)
				}
				slices.Sort(names)
				msg := fmt.Sprintf("after names op %q, which the scenario does not have", clip(ref.name))
				if near := Closest(ref.name, names, 1); len(near) > 0 {
					msg += fmt.Sprintf(" (did you mean %s?)", near[0])
				}
				add(ap, "%s; allowed %s", msg, strings.Join(names, ", "))
				continue
			case j == i:
				add(ap, "op %s waits for itself; an op runs after other ops", p.spec.Name)
				continue
			case ref.idx >= 0 && ref.idx >= ops[j].spec.CountOrOne():
				add(ap, "after %s asks for instance %d of %s, which has %d; allowed %s[0]..%s[%d]", clip(a), ref.idx, ref.name, ops[j].spec.CountOrOne(), ref.name, ref.name, ops[j].spec.CountOrOne()-1)
				continue
			case ref.idx == refSame && ops[j].spec.CountOrOne() != p.spec.CountOrOne():
				add(ap, "after %s pairs instances one to one, but %s has count %d and %s %d; give them the same count", a, ref.name, ops[j].spec.CountOrOne(), p.spec.Name, p.spec.CountOrOne())
				continue
			}
			deps[i] = append(deps[i], opRef{name: ref.name, idx: ref.idx})
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}

	// Decomposition: the op and the one whole op it waits for.
	for i, p := range ops {
		n, field := p.spec.Decompose, p.path+".decompose"
		if decompose > 0 && decomposable(p.spec, deps[i], ops, byName) == "" {
			n, field = decompose, "$.strategy.decompose"
		}
		if n <= 1 {
			continue
		}
		if why := decomposable(p.spec, deps[i], ops, byName); why != "" {
			add(field, "%s cannot be decomposed: %s", p.spec.Name, why)
			continue
		}
		j := byName[deps[i][0].name]
		prod, cons := ops[j].spec, p.spec
		if msg := chunkable(prod, cons, n, gpus); msg != "" {
			add(field, "decompose %d of %s -> %s: %s", n, prod.Name, cons.Name, msg)
			continue
		}
		g.Ops[j].Count, g.Ops[i].Count = n, n
		g.Ops[j].Chunks, g.Ops[i].Chunks = n, n
		ops[j].spec, ops[i].spec = chunk(prod, n), chunk(cons, n)
		ops[j].spec.Count, ops[i].spec.Count = n, n
		deps[i][0].idx = refSame
	}
	if len(errs) > 0 {
		return nil, errs
	}
	for i, p := range ops {
		if p.spec.Kind.IsComm() {
			g.Ops[i].Comm = p.spec.AsComm()
		} else {
			g.Ops[i].Compute = p.spec.AsCompute()
		}
	}
	// Data flow: a GEMM that waits for exactly one collective whose output
	// is its A operand reads it; a collective that waits for exactly one
	// GEMM whose output is its input reduces (or moves) it.
	for i := range ops {
		if len(deps[i]) != 1 {
			continue
		}
		j := byName[deps[i][0].name]
		ref := deps[i][0]
		oneToOne := ref.idx == refSame || (ref.idx == refAll && g.Ops[i].Count == 1 && g.Ops[j].Count == 1)
		if oneToOne && feeds(g.Ops[j], g.Ops[i], gpus) {
			g.Ops[j].Feeds, g.Ops[i].FedBy = i, j
		}
	}

	// The instance limit, reported at the op that takes the graph past it.
	total, past := 0, -1
	for i, o := range g.Ops {
		total += o.Count
		if total > MaxInstances && past < 0 {
			past = i
		}
	}
	if past >= 0 {
		add(ops[past].path, "the streams expand to %d op instances, past the limit at op %s (%d instances); allowed at most %d in all (lower counts or chunks)", total, g.Ops[past].Name, g.Ops[past].Count, MaxInstances)
		return nil, errs
	}

	// Instances in topological order (Kahn over instances, by stream).
	first := make([]int, len(g.Ops))
	type node struct {
		op, idx int
		prev    int   // node id
		deps    []int // node ids
	}
	var nodes []node
	for i, o := range g.Ops {
		first[i] = len(nodes)
		for k := range o.Count {
			nodes = append(nodes, node{op: i, idx: k, prev: -1})
		}
	}
	for _, gs := range g.Streams {
		last := -1
		for _, oi := range gs.Ops {
			for k := range g.Ops[oi].Count {
				id := first[oi] + k
				nodes[id].prev = last
				last = id
			}
		}
	}
	for i := range g.Ops {
		for _, ref := range deps[i] {
			j := byName[ref.name]
			for k := range g.Ops[i].Count {
				id := first[i] + k
				switch ref.idx {
				case refAll:
					nodes[id].deps = append(nodes[id].deps, first[j]+g.Ops[j].Count-1)
				case refSame:
					nodes[id].deps = append(nodes[id].deps, first[j]+k)
				default:
					nodes[id].deps = append(nodes[id].deps, first[j]+ref.idx)
				}
			}
		}
	}
	// In-degrees and successors, then Kahn's order.
	indeg := make([]int, len(nodes))
	succ := make([][]int, len(nodes))
	for id, n := range nodes {
		pre := n.deps
		if n.prev >= 0 {
			pre = append([]int{n.prev}, pre...)
		}
		for _, p := range pre {
			indeg[id]++
			succ[p] = append(succ[p], id)
		}
	}
	order := make([]int, 0, len(nodes))
	for id := range nodes {
		if indeg[id] == 0 {
			order = append(order, id)
		}
	}
	for h := 0; h < len(order); h++ {
		for _, s := range succ[order[h]] {
			if indeg[s]--; indeg[s] == 0 {
				order = append(order, s)
			}
		}
	}
	if len(order) < len(nodes) {
		// Name the ops on a cycle: those with instances left unordered.
		var stuck []string
		path := ""
		for i, o := range g.Ops {
			for k := range o.Count {
				if indeg[first[i]+k] > 0 {
					stuck = append(stuck, o.Name)
					if path == "" {
						path = ops[i].path + ".after"
					}
					break
				}
			}
		}
		add(path, "the dependencies form a cycle through %s; every op must be able to start once the ops it waits for end", strings.Join(stuck, ", "))
		return nil, errs
	}
	pos := make([]int, len(nodes))
	for p, id := range order {
		pos[id] = p
	}
	g.Instances = make([]Instance, len(nodes))
	for p, id := range order {
		n := nodes[id]
		in := Instance{Op: n.op, Index: n.idx, Prev: -1}
		if n.prev >= 0 {
			in.Prev = pos[n.prev]
		}
		for _, d := range n.deps {
			in.Deps = append(in.Deps, pos[d])
		}
		g.Instances[p] = in
	}
	// Instances of one op are in order (each follows the previous on its
	// stream), but need not be adjacent: keep a lookup by op and index.
	g.index = make([][]int, len(g.Ops))
	for p, in := range g.Instances {
		g.index[in.Op] = append(g.index[in.Op], p)
	}
	return g, nil
}

// pendingOp is a stream op read from the specs, with its field path.
type pendingOp struct {
	spec StreamOp
	path string
}

// decomposable says why the op cannot be decomposed with what it waits
// for, or "" when it can.
func decomposable(o StreamOp, deps []opRef, ops []pendingOp, byName map[string]int) string {
	if len(deps) != 1 || deps[0].idx != refAll {
		return "it must wait for exactly one whole op; write after: [op] naming the collective or GEMM it is paired with"
	}
	prod := ops[byName[deps[0].name]].spec
	if o.CountOrOne() != 1 || prod.CountOrOne() != 1 {
		return fmt.Sprintf("both ops of the pair need count 1 (%s has %d, %s %d); decomposition sets the counts", prod.Name, prod.CountOrOne(), o.Name, o.CountOrOne())
	}
	if pairKind(prod.Kind, o.Kind) == "" {
		return fmt.Sprintf("%s -> %s is not a pair decomposition splits; it splits a collective feeding a GEMM (all-gather, all-to-all or h2d -> gemm) or a GEMM feeding one (gemm -> reduce-scatter, all-reduce, all-to-all or d2h)", prod.Kind, o.Kind)
	}
	return ""
}

// pairKind names a decomposable producer -> consumer pair: "comm->gemm",
// "gemm->comm", or "" for any other.
func pairKind(prod, cons OpKind) string {
	switch {
	case cons == OpKind(GEMM) && slices.Contains([]Collective{AllGather, AllToAll, HostToDevice}, Collective(prod)):
		return "comm->gemm"
	case prod == OpKind(GEMM) && slices.Contains([]Collective{ReduceScatter, AllReduce, AllToAll, DeviceToHost}, Collective(cons)):
		return "gemm->comm"
	}
	return ""
}

// chunkable says why the pair cannot be cut into n chunks, or "".
func chunkable(prod, cons StreamOp, n, gpus int) string {
	gemm, comm := cons, prod
	if prod.Kind == OpKind(GEMM) {
		gemm, comm = prod, cons
	}
	if gemm.M%n != 0 {
		return fmt.Sprintf("the GEMM's m (%d) does not split into %d chunks; pick a chunk count that divides m", gemm.M, n)
	}
	if int64(comm.Bytes)%int64(n) != 0 {
		return fmt.Sprintf("the %s's %s per rank does not split into %d equal chunks; pick a chunk count that divides its bytes", comm.Kind, comm.Bytes, n)
	}
	if Collective(comm.Kind) == AllToAll && gpus > 0 && (int64(comm.Bytes)/int64(n))%int64(gpus) != 0 {
		return fmt.Sprintf("an all-to-all chunk of %d bytes does not split over %d GPUs; pick a chunk count that leaves each chunk a multiple of %d bytes", int64(comm.Bytes)/int64(n), gpus, gpus)
	}
	if want, have := pairBytes(prod, cons, gpus); want != have {
		return fmt.Sprintf("the %s moves %s per GPU but the GEMM's %s is %s; the chunks are slices of the data one op hands the other, so the sizes must match", comm.Kind, ByteSize(have), gemmSide(prod, cons), ByteSize(want))
	}
	return ""
}

// gemmSide names the GEMM operand a pair hands over.
func gemmSide(prod, cons StreamOp) string {
	if cons.Kind == OpKind(GEMM) {
		return "A operand (m x k)"
	}
	return "output (m x n)"
}

// pairBytes returns the bytes of the GEMM operand the pair hands over
// (want) and the bytes the communication op delivers to or takes from it
// on one GPU (have).
func pairBytes(prod, cons StreamOp, gpus int) (want, have int64) {
	if cons.Kind == OpKind(GEMM) {
		want = int64(cons.M) * int64(cons.K) * cons.DType.Size()
		have = int64(prod.Bytes)
		if Collective(prod.Kind) == AllGather {
			have *= int64(gpus)
		}
		return want, have
	}
	out := prod.DType.Size()
	if prod.DType == FP8 {
		out = BF16.Size()
	}
	want = int64(prod.M) * int64(prod.N) * out
	have = int64(cons.Bytes)
	if Collective(cons.Kind) == ReduceScatter {
		have *= int64(gpus)
	}
	return want, have
}

// chunk returns one of n chunks of the op: m/n rows of a GEMM, bytes/n of
// a communication op.
func chunk(o StreamOp, n int) StreamOp {
	if o.Kind == OpKind(GEMM) {
		o.M /= n
	} else {
		o.Bytes /= ByteSize(n)
	}
	o.Decompose = 0
	return o
}

// feeds reports whether one instance of prod hands its output to one
// instance of cons: a decomposable pair whose sizes match.
func feeds(prod, cons GraphOp, gpus int) bool {
	p, c := graphStreamOp(prod), graphStreamOp(cons)
	if pairKind(p.Kind, c.Kind) == "" {
		return false
	}
	want, have := pairBytes(p, c, gpus)
	return want == have
}

func graphStreamOp(o GraphOp) StreamOp {
	if o.Role == RoleComm {
		return CommStreamOp(o.Name, o.Comm)
	}
	return ComputeStreamOp(o.Name, o.Compute)
}

// Schedule places a graph's instances in time: Start and End per
// instance (Graph.Instances order), in the unit of the durations given.
type Schedule struct {
	Start, End []float64
	// Makespan is the latest End.
	Makespan float64
}

// ListSchedule is the graph run with nothing interfering: every instance
// of op i takes dur[i], each stream runs its instances in order, and an
// instance starts as soon as its stream predecessor and its dependencies
// have ended. Its makespan at isolated times is T_ideal.
func (g *Graph) ListSchedule(dur []float64) Schedule {
	sc := Schedule{Start: make([]float64, len(g.Instances)), End: make([]float64, len(g.Instances))}
	for p, in := range g.Instances {
		t := 0.0
		if in.Prev >= 0 {
			t = sc.End[in.Prev]
		}
		for _, d := range in.Deps {
			t = max(t, sc.End[d])
		}
		sc.Start[p] = t
		sc.End[p] = t + dur[in.Op]
		sc.Makespan = max(sc.Makespan, sc.End[p])
	}
	return sc
}

// Serial is every instance alone, one after another: the sum over ops of
// count x dur (T_serial at isolated times).
func (g *Graph) Serial(dur []float64) float64 {
	t := 0.0
	for i, o := range g.Ops {
		t += float64(o.Count) * dur[i]
	}
	return t
}

// EnqueueOrder is the order a host enqueues the instances, the way a
// framework walks its program: by step (an instance's place in the graph
// when every op takes one step), and within a step the role launch puts
// first (comm-first: communication), then stream order. It is a
// topological order.
func (g *Graph) EnqueueOrder(launch LaunchOrder) []int {
	unit := make([]float64, len(g.Ops))
	for i := range unit {
		unit[i] = 1
	}
	steps := g.ListSchedule(unit).Start
	first := RoleCompute
	if launch == CommFirst {
		first = RoleComm
	}
	order := make([]int, len(g.Instances))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if steps[a] != steps[b] {
			return cmp.Compare(steps[a], steps[b])
		}
		ra, rb := g.Ops[g.Instances[a].Op].Role == first, g.Ops[g.Instances[b].Op].Role == first
		if ra != rb {
			if ra {
				return -1
			}
			return 1
		}
		return g.Ops[g.Instances[a].Op].Stream - g.Ops[g.Instances[b].Op].Stream
	})
	return order
}
