package tui

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/c3lab/c3lab/scenarios"
)

// The stream composer edits a scenario written as streams (format 2): the
// scenario's name, GPUs and repetitions, then each stream with its ops in
// order. Every op shows as one summary row; the op holding the cursor
// opens into its fields (kind, shape, count, chunks, after). Ops are
// added, removed and moved within their stream, streams added and
// removed, and a kind or a dependency picked from a list (ctrl+o) or
// typed. Every change is validated as it is typed (scenarios.Validate and
// the graph's own checks, Scenario.Graph), each problem shown at its
// field.

// Fields of an op in the stream composer, in the order they show.
const (
	opName = iota
	opKind
	opShape
	opCount
	opChunks
	opAfter
	opFields
)

// opFieldLabels names the op fields on screen.
var opFieldLabels = [opFields]string{"name", "kind", "shape", "count", "chunks", "after"}

// formOp is one op of the stream composer, every field as typed.
type formOp struct {
	f [opFields]string
}

// formStream is one stream of the stream composer.
type formStream struct {
	name string
	ops  []formOp
}

// formFocus is a field of the stream composer: a top field (stream -1,
// field: 0 name, 1 gpus, 2 reps), a stream's name (op -1), or a field of
// an op.
type formFocus struct{ stream, op, field int }

// streamForm is the stream composer's content.
type streamForm struct {
	top     [3]string // name, gpus, reps
	streams []formStream
	focus   formFocus
	// strategy is the scenario's own strategy, kept as it was.
	strategy scenarios.Strategy
	desc     string
	source   string
	profile  string
	// from and fromGPUs are the scenario the form started from (its name
	// without -custom) and its GPU count, orig its streams: the
	// description, which says what those run, holds only while they
	// stand.
	from     string
	fromGPUs int
	orig     []scenarios.StreamSpec
}

// topLabels and topPaths name the top fields and their YAML paths.
var (
	topLabels = [3]string{"name", "gpus", "reps"}
	topPaths  = [3]string{"$.name", "$.gpus", "$.reps"}
)

// newStreamForm lays a format-2 scenario out for editing.
func newStreamForm(sc scenarios.Scenario) *streamForm {
	f := &streamForm{strategy: sc.Strategy, desc: sc.Description, source: sc.Source, profile: sc.Profile,
		from: strings.TrimSuffix(sc.Name, "-custom"), fromGPUs: sc.GPUs, orig: sc.Streams}
	f.top[0], f.top[1] = sc.Name, strconv.Itoa(sc.GPUs)
	if sc.Reps > 0 {
		f.top[2] = strconv.Itoa(sc.Reps)
	}
	for _, ss := range sc.Streams {
		fs := formStream{name: ss.Name}
		for _, o := range ss.Ops {
			fs.ops = append(fs.ops, opToForm(o))
		}
		f.streams = append(f.streams, fs)
	}
	f.focus = formFocus{stream: -1}
	return f
}

// opToForm writes an op's fields as the composer shows them.
func opToForm(o scenarios.StreamOp) formOp {
	var fo formOp
	fo.f[opName] = o.Name
	fo.f[opKind] = string(o.Kind)
	if o.Kind == scenarios.OpKind(scenarios.GEMM) {
		fo.f[opShape] = fmt.Sprintf("%dx%dx%d %s", o.M, o.N, o.K, o.DType)
	} else {
		fo.f[opShape] = o.Bytes.String()
	}
	if o.Count > 0 {
		fo.f[opCount] = strconv.Itoa(o.Count)
	}
	if o.Decompose > 0 {
		fo.f[opChunks] = strconv.Itoa(o.Decompose)
	}
	fo.f[opAfter] = strings.Join(o.After, ", ")
	return fo
}

// rows lists the fields on screen, in order: the top fields, then per
// stream its name and its ops' name rows, the op under the cursor opened
// into its fields.
func (f *streamForm) rows() []formFocus {
	var out []formFocus
	for i := range f.top {
		out = append(out, formFocus{stream: -1, field: i})
	}
	for s, fs := range f.streams {
		out = append(out, formFocus{stream: s, op: -1})
		for o := range fs.ops {
			out = append(out, formFocus{stream: s, op: o, field: opName})
			if f.focus.stream == s && f.focus.op == o {
				for k := opKind; k < opFields; k++ {
					out = append(out, formFocus{stream: s, op: o, field: k})
				}
			}
		}
	}
	return out
}

// value points at a field's text.
func (f *streamForm) value(at formFocus) *string {
	switch {
	case at.stream < 0:
		return &f.top[at.field]
	case at.op < 0:
		return &f.streams[at.stream].name
	}
	return &f.streams[at.stream].ops[at.op].f[at.field]
}

// move moves the cursor d rows, wrapping.
func (f *streamForm) move(d int) {
	rows := f.rows()
	i := max(slices.Index(rows, f.focus), 0)
	f.focus = rows[(i+d+len(rows))%len(rows)]
}

// opNames lists every op's name, in stream order (unnamed ops by the name
// the graph gives them, "<stream>.<n>").
func (f *streamForm) opNames() []string {
	var out []string
	for _, fs := range f.streams {
		for o, op := range fs.ops {
			out = append(out, opNameOr(fs.name, o, op))
		}
	}
	return out
}

func opNameOr(stream string, o int, op formOp) string {
	if n := strings.TrimSpace(op.f[opName]); n != "" {
		return n
	}
	return fmt.Sprintf("%s.%d", stream, o+1)
}

// freshName is a name no op or stream has yet: base, else base2, base3...
func (f *streamForm) freshName(base string, taken []string) string {
	for i := 1; ; i++ {
		n := base
		if i > 1 {
			n += strconv.Itoa(i)
		}
		if !slices.Contains(taken, n) {
			return n
		}
	}
}

// streamRole is the role of a stream's ops as typed: comm when its first
// op with a known kind is a communication op.
func (fs formStream) streamRole() scenarios.Role {
	for _, o := range fs.ops {
		k := scenarios.OpKind(strings.TrimSpace(o.f[opKind]))
		if k.IsComm() {
			return scenarios.RoleComm
		}
		if k.IsCompute() {
			return scenarios.RoleCompute
		}
	}
	return ""
}

// newOp is a fresh op for stream s: a GEMM on a compute stream, an
// all-gather on a communication stream.
func (f *streamForm) newOp(s int) formOp {
	var o formOp
	if f.streams[s].streamRole() == scenarios.RoleComm {
		o = opToForm(scenarios.StreamOp{Kind: scenarios.OpKind(scenarios.AllGather), Bytes: 16 << 20})
		o.f[opName] = f.freshName("ag", f.opNames())
	} else {
		o = opToForm(scenarios.StreamOp{Kind: scenarios.OpKind(scenarios.GEMM), M: 4096, N: 4096, K: 4096, DType: scenarios.BF16})
		o.f[opName] = f.freshName("gemm", f.opNames())
	}
	return o
}

// addOp adds an op after the one under the cursor (at the end of the
// stream under the cursor, or of the first stream), and puts the cursor
// on its name. It returns a note.
func (f *streamForm) addOp() string {
	if len(f.streams) == 0 {
		return f.addStream()
	}
	s, at := max(f.focus.stream, 0), len(f.streams[max(f.focus.stream, 0)].ops)
	if f.focus.stream >= 0 && f.focus.op >= 0 {
		at = f.focus.op + 1
	}
	if len(f.streams[s].ops) >= scenarios.MaxStreamOps {
		return fmt.Sprintf("stream %s already has %d ops, the most a stream may list (use count for repeats)", f.streams[s].name, scenarios.MaxStreamOps)
	}
	op := f.newOp(s)
	f.streams[s].ops = slices.Insert(f.streams[s].ops, at, op)
	f.focus = formFocus{stream: s, op: at, field: opName}
	return "added op " + op.f[opName] + " to stream " + f.streams[s].name
}

// addStream adds a communication stream with one all-gather after the
// stream under the cursor.
func (f *streamForm) addStream() string {
	if len(f.streams) >= scenarios.MaxStreams {
		return fmt.Sprintf("the scenario has %d streams, the most allowed", scenarios.MaxStreams)
	}
	var names []string
	for _, fs := range f.streams {
		names = append(names, fs.name)
	}
	at := len(f.streams)
	if f.focus.stream >= 0 {
		at = f.focus.stream + 1
	}
	fs := formStream{name: f.freshName("comm", names)}
	op := opToForm(scenarios.StreamOp{Kind: scenarios.OpKind(scenarios.AllGather), Bytes: 16 << 20})
	op.f[opName] = f.freshName("ag", f.opNames())
	fs.ops = []formOp{op}
	f.streams = slices.Insert(f.streams, at, fs)
	f.focus = formFocus{stream: at, op: -1}
	return "added stream " + fs.name
}

// remove removes the op under the cursor, or the stream whose name is
// under it. It returns a note.
func (f *streamForm) remove() string {
	at := f.focus
	switch {
	case at.stream < 0:
		return "the cursor is on no op or stream; move to one to remove it"
	case at.op < 0:
		if len(f.streams) <= 1 {
			return "a scenario needs a stream; add another before removing this one"
		}
		name := f.streams[at.stream].name
		f.streams = slices.Delete(f.streams, at.stream, at.stream+1)
		f.focus = formFocus{stream: min(at.stream, len(f.streams)-1), op: -1}
		return "removed stream " + name
	}
	fs := &f.streams[at.stream]
	name := opNameOr(fs.name, at.op, fs.ops[at.op])
	fs.ops = slices.Delete(fs.ops, at.op, at.op+1)
	if len(fs.ops) == 0 {
		f.focus = formFocus{stream: at.stream, op: -1}
	} else {
		f.focus = formFocus{stream: at.stream, op: min(at.op, len(fs.ops)-1), field: opName}
	}
	return "removed op " + name
}

// shift moves the op under the cursor d places within its stream.
func (f *streamForm) shift(d int) string {
	at := f.focus
	if at.stream < 0 || at.op < 0 {
		return "move the cursor to an op to reorder it"
	}
	ops := f.streams[at.stream].ops
	to := at.op + d
	if to < 0 || to >= len(ops) {
		return "the op is already at the stream's " + map[bool]string{true: "start", false: "end"}[d < 0]
	}
	ops[at.op], ops[to] = ops[to], ops[at.op]
	f.focus.op = to
	return fmt.Sprintf("moved %s to place %d of stream %s", opNameOr(f.streams[at.stream].name, to, ops[to]), to+1, f.streams[at.stream].name)
}

// pick cycles the field under the cursor through its choices: an op's
// kind through every kind, its after through none and each other op. It
// returns a note.
func (f *streamForm) pick() string {
	at := f.focus
	if at.stream < 0 || at.op < 0 || (at.field != opKind && at.field != opAfter) {
		return "ctrl+o picks an op's kind or what it runs after; move to one of those fields"
	}
	v := f.value(at)
	var choices []string
	if at.field == opKind {
		for _, k := range scenarios.OpKinds() {
			choices = append(choices, string(k))
		}
	} else {
		self := opNameOr(f.streams[at.stream].name, at.op, f.streams[at.stream].ops[at.op])
		choices = append(choices, "")
		for _, n := range f.opNames() {
			if n != self {
				choices = append(choices, n)
			}
		}
	}
	i := slices.Index(choices, strings.TrimSpace(*v))
	*v = choices[(i+1)%len(choices)]
	if at.field == opKind {
		// A new kind takes the shape form of its kind.
		op := &f.streams[at.stream].ops[at.op]
		k := scenarios.OpKind(*v)
		isGEMM := k == scenarios.OpKind(scenarios.GEMM)
		if _, err := scenarios.ParseByteSize(op.f[opShape]); isGEMM == (err == nil) {
			op.f[opShape] = opToForm(f.newOpOfKind(k)).f[opShape]
		}
	}
	if *v == "" {
		return "after: none"
	}
	return opFieldLabels[at.field] + ": " + *v
}

// newOpOfKind is a default op of kind k.
func (f *streamForm) newOpOfKind(k scenarios.OpKind) scenarios.StreamOp {
	if k == scenarios.OpKind(scenarios.GEMM) {
		return scenarios.StreamOp{Kind: k, M: 4096, N: 4096, K: 4096, DType: scenarios.BF16}
	}
	return scenarios.StreamOp{Kind: k, Bytes: 16 << 20}
}

// opPath is the YAML path of op o of stream s.
func opPath(s, o int) string { return fmt.Sprintf("$.streams[%d].ops[%d]", s, o) }

// scenario builds the scenario the form describes, with its lead ops set
// (withLead), and every problem by YAML path: fields that do not parse,
// then scenarios.Validate's and the graph's (Scenario.Graph), the first
// message of a path kept.
func (f *streamForm) scenario(lim scenarios.Limits) (scenarios.Scenario, map[string]string) {
	errs := map[string]string{}
	atoi := func(path, v string) int {
		v = strings.TrimSpace(v)
		if v == "" {
			return 0
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			errs[path] = fmt.Sprintf("%q is not a whole number", v)
		}
		return n
	}
	sc := scenarios.Scenario{
		Name: strings.TrimSpace(f.top[0]), GPUs: atoi("$.gpus", f.top[1]), Reps: atoi("$.reps", f.top[2]),
		Description: f.desc, Source: f.source, Profile: f.profile, Strategy: f.strategy,
	}
	for s, fs := range f.streams {
		ss := scenarios.StreamSpec{Name: strings.TrimSpace(fs.name)}
		for o, fo := range fs.ops {
			p := opPath(s, o)
			op := scenarios.StreamOp{Name: strings.TrimSpace(fo.f[opName]), Kind: scenarios.OpKind(strings.TrimSpace(fo.f[opKind]))}
			op.Count = atoi(p+".count", fo.f[opCount])
			op.Decompose = atoi(p+".decompose", fo.f[opChunks])
			for _, a := range strings.Split(fo.f[opAfter], ",") {
				if a = strings.TrimSpace(a); a != "" {
					op.After = append(op.After, a)
				}
			}
			if msg := kindProblem(op.Kind); msg != "" {
				errs[p+".kind"] = msg
			}
			if msg := parseShape(&op, fo.f[opShape], lim); msg != "" {
				errs[p+".shape"] = msg
			}
			ss.Ops = append(ss.Ops, op)
		}
		sc.Streams = append(sc.Streams, ss)
	}
	if sc.Description != "" && (sc.GPUs != f.fromGPUs || !sameStreams(sc.Streams, f.orig)) {
		// The description says what the original runs; the edited
		// scenario runs something else.
		sc.Description = "Composed in the lab from " + f.from + ", its streams edited."
	}
	sc = withLead(sc)
	add := func(err error) {
		var ve *scenarios.ValidationError
		if errors.As(err, &ve) {
			for _, fe := range ve.Fields {
				path := f.leadPath(sc, fe.Path)
				if _, taken := errs[path]; !taken {
					errs[path] = fe.Msg
				}
			}
		}
	}
	add(scenarios.Validate(sc, lim))
	if len(errs) == 0 {
		_, err := sc.Graph(sc.Strategy)
		add(err)
	}
	return sc, errs
}

// parseShape reads an op's shape field into op: "MxNxK dtype" for a GEMM,
// a byte size for every other kind. It returns what is wrong, or "".
func parseShape(op *scenarios.StreamOp, text string, lim scenarios.Limits) string {
	text = strings.TrimSpace(text)
	switch {
	case op.Kind == scenarios.OpKind(scenarios.GEMM):
		dims, dt, _ := strings.Cut(text, " ")
		parts := strings.Split(strings.TrimSpace(dims), "x")
		if len(parts) != 3 {
			return fmt.Sprintf("shape %q is not a GEMM's; write MxNxK dtype, such as 8192x8192x8192 bf16", text)
		}
		var v [3]int
		for i, p := range parts {
			n, err := strconv.Atoi(strings.TrimSpace(p))
			if err != nil || n < 1 || n > 1<<20 {
				return fmt.Sprintf("%s is %q; allowed 1..%d", [3]string{"m", "n", "k"}[i], p, 1<<20)
			}
			v[i] = n
		}
		op.M, op.N, op.K, op.DType = v[0], v[1], v[2], scenarios.DType(strings.TrimSpace(dt))
		if op.DType.Size() == 0 {
			names := make([]string, len(scenarios.DTypes))
			for i, d := range scenarios.DTypes {
				names[i] = string(d)
			}
			return fmt.Sprintf("dtype %q is unknown; allowed %s", op.DType, strings.Join(names, ", "))
		}
		if len(lim.DTypes) > 0 && !slices.Contains(lim.DTypes, op.DType) {
			return fmt.Sprintf("dtype %s is not supported on %s", op.DType, lim.Device)
		}
	case op.Kind.IsComm() || op.Kind.IsCompute():
		b, err := scenarios.ParseByteSize(text)
		if err != nil {
			return err.Error()
		}
		if b < 1 || b > 1<<40 {
			return fmt.Sprintf("bytes is %d; allowed 1B..1TiB", int64(b))
		}
		op.Bytes = b
	}
	return "" // an unknown kind: its own field says so
}

// kindProblem says what is wrong with an op's kind, or "".
func kindProblem(k scenarios.OpKind) string {
	if k.IsComm() || k.IsCompute() {
		return ""
	}
	kinds := make([]string, 0, 9)
	for _, k := range scenarios.OpKinds() {
		kinds = append(kinds, string(k))
	}
	if k == "" {
		return "kind is missing; allowed " + strings.Join(kinds, ", ") + " (ctrl+o picks)"
	}
	return fmt.Sprintf("kind %q is unknown; allowed %s (ctrl+o picks)", k, strings.Join(kinds, ", "))
}

// leadPath maps a path of the lead ops ("$.compute.m", "$.comm.bytes",
// which scenarios.Validate checks) to the op's field it came from.
func (f *streamForm) leadPath(sc scenarios.Scenario, path string) string {
	role := ""
	switch {
	case strings.HasPrefix(path, "$.compute"):
		role = "compute"
	case strings.HasPrefix(path, "$.comm"):
		role = "comm"
	default:
		return path
	}
	for s, ss := range sc.Streams {
		for o, op := range ss.Ops {
			if (role == "compute" && op.Kind.IsCompute()) || (role == "comm" && op.Kind.IsComm()) {
				rest := path[strings.Index(path, role)+len(role):]
				switch rest {
				case ".m", ".n", ".k", ".dtype", ".bytes", "":
					return opPath(s, o) + ".shape"
				case ".kind", ".collective":
					return opPath(s, o) + ".kind"
				}
				return opPath(s, o) + rest
			}
		}
	}
	return path
}

// fieldPathRE reads a stream composer path: stream, op, and the op's field.
var fieldPathRE = regexp.MustCompile(`^\$\.streams\[(\d+)\](?:\.ops(?:\[(\d+)\](?:\.(\w+))?)?|\.name)?`)

// placeOf says which field a problem at path is shown at; ok is false for
// a problem of no field on screen (the strategy's, the whole scenario's).
func placeOf(path string) (formFocus, bool) {
	if i := slices.Index(topPaths[:], path); i >= 0 {
		return formFocus{stream: -1, field: i}, true
	}
	m := fieldPathRE.FindStringSubmatch(path)
	if m == nil {
		return formFocus{}, false
	}
	s, _ := strconv.Atoi(m[1])
	if m[2] == "" {
		return formFocus{stream: s, op: -1}, true
	}
	o, _ := strconv.Atoi(m[2])
	field := opName
	switch m[3] {
	case "kind":
		field = opKind
	case "shape", "m", "n", "k", "dtype", "bytes":
		field = opShape
	case "count":
		field = opCount
	case "decompose":
		field = opChunks
	case "after":
		field = opAfter
	}
	return formFocus{stream: s, op: o, field: field}, true
}

// streamKeys are the stream composer's own keys, besides the composer's.
type streamKeys struct {
	addOp, remove, up, down, addStream, pick key.Binding
}

func defaultStreamKeys() streamKeys {
	return streamKeys{
		addOp:     key.NewBinding(key.WithKeys("ctrl+n"), key.WithHelp("ctrl+n", "add op")),
		remove:    key.NewBinding(key.WithKeys("ctrl+x"), key.WithHelp("ctrl+x", "remove op/stream")),
		up:        key.NewBinding(key.WithKeys("alt+up"), key.WithHelp("alt+↑/↓", "reorder")),
		down:      key.NewBinding(key.WithKeys("alt+down")),
		addStream: key.NewBinding(key.WithKeys("ctrl+t"), key.WithHelp("ctrl+t", "add stream")),
		pick:      key.NewBinding(key.WithKeys("ctrl+o"), key.WithHelp("ctrl+o", "pick kind/after")),
	}
}

// onStreamKey handles a key of the stream composer that is not the
// composer's own (move, add, save, close): its structure keys, else the
// key edits the field under the cursor. It reports whether the key
// changed the form's structure (the text input then reloads).
func (cp *composer) onStreamKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	f, k := cp.graph, cp.skeys
	switch {
	case key.Matches(msg, k.addOp):
		cp.note = f.addOp()
	case key.Matches(msg, k.remove):
		cp.note = f.remove()
	case key.Matches(msg, k.up):
		cp.note = f.shift(-1)
	case key.Matches(msg, k.down):
		cp.note = f.shift(+1)
	case key.Matches(msg, k.addStream):
		cp.note = f.addStream()
	case key.Matches(msg, k.pick):
		cp.note = f.pick()
	default:
		var cmd tea.Cmd
		cp.input, cmd = cp.input.Update(msg)
		*f.value(f.focus) = cp.input.Value()
		cp.note = ""
		return cmd, false
	}
	return nil, true
}

// streamLines renders the stream composer: one row per field on screen
// (rows), each error beside its field or wrapped below it, the problems of
// no field after them, then the hint or the last note. focusLine is the
// line of the cursor, for scrolling.
func streamLines(st Styles, cp *composer, w int) (out []string, focusLine int) {
	f := cp.graph
	errAt := map[formFocus][]string{}
	var loose []string
	paths := make([]string, 0, len(cp.errs))
	for p := range cp.errs {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		if at, ok := placeOf(p); ok && validFocus(f, at) {
			errAt[at] = append(errAt[at], cp.errs[p])
		} else {
			loose = append(loose, cp.errs[p])
		}
	}
	// An error of a closed op's field shows at its name row.
	for at, msgs := range errAt {
		if at.stream >= 0 && at.op >= 0 && at.field != opName && !(f.focus.stream == at.stream && f.focus.op == at.op) {
			name := formFocus{stream: at.stream, op: at.op, field: opName}
			errAt[name] = append(errAt[name], msgs...)
			delete(errAt, at)
		}
	}
	const labelW = 14
	for _, at := range f.rows() {
		mark := "  "
		val := st.Value.Render(*f.value(at))
		if at == f.focus {
			mark, val = "▸ ", cp.input.View()
			focusLine = len(out)
		}
		var label, tail string
		switch {
		case at.stream < 0:
			label = topLabels[at.field]
		case at.op < 0:
			fs := f.streams[at.stream]
			label = "stream"
			role := string(fs.streamRole())
			if role == "" {
				role = "?"
			}
			tail = fmt.Sprintf("  %s · %d op", role, len(fs.ops))
			if len(fs.ops) != 1 {
				tail += "s"
			}
		case at.field == opName:
			label = fmt.Sprintf("  op %d", at.op+1)
			tail = "  " + opSummary(f.streams[at.stream].ops[at.op])
		default:
			label = "    " + opFieldLabels[at.field]
			if at.field == opShape {
				tail = "  " + shapeHint(f.streams[at.stream].ops[at.op])
			}
		}
		line := mark + st.Label.Render(fit(label, labelW)) + val
		if tail != "" && ansiWidth(line)+ansiWidth(tail) <= w {
			line += st.Dim.Render(tail)
		}
		msgs := errAt[at]
		if len(msgs) == 1 && ansiWidth(line)+4+ansiWidth(msgs[0]) <= w {
			line += "  " + st.Error.Render("! "+msgs[0])
			msgs = nil
		}
		out = append(out, fitWidth(line, w))
		for _, e := range msgs {
			for _, l := range wrapWords("! "+e, max(w-2-labelW, 1)) {
				out = append(out, strings.Repeat(" ", 2+labelW)+st.Error.Render(l))
			}
		}
	}
	return append(out, cp.footer(st, loose, w)...), focusLine
}

// validFocus reports whether at names a field the form has.
func validFocus(f *streamForm, at formFocus) bool {
	switch {
	case at.stream < 0:
		return at.field >= 0 && at.field < len(f.top)
	case at.stream >= len(f.streams):
		return false
	case at.op < 0:
		return true
	}
	return at.op < len(f.streams[at.stream].ops) && at.field >= 0 && at.field < opFields
}

// opSummary is an op's one-line summary: "all-gather 64MiB x4 after ag,
// 4 chunks".
func opSummary(o formOp) string {
	s := strings.TrimSpace(o.f[opKind] + " " + o.f[opShape])
	if c := strings.TrimSpace(o.f[opCount]); c != "" && c != "1" && c != "0" {
		s += " x" + c
	}
	if a := strings.TrimSpace(o.f[opAfter]); a != "" {
		s += " after " + a
	}
	if c := strings.TrimSpace(o.f[opChunks]); c != "" && c != "0" && c != "1" {
		s += ", " + c + " chunks"
	}
	return s
}

// shapeHint says what the shape field takes for the op's kind.
func shapeHint(o formOp) string {
	if scenarios.OpKind(strings.TrimSpace(o.f[opKind])) == scenarios.OpKind(scenarios.GEMM) {
		return "MxNxK dtype"
	}
	return "bytes per rank"
}

// scrollTo cuts lines to at most h, keeping line at in view (a third from
// the top where it can) and saying how many lines are above and below.
func scrollTo(st Styles, lines []string, at, h int) []string {
	if h <= 0 || len(lines) <= h {
		return lines
	}
	if h < 3 {
		return lines[:h]
	}
	start := min(max(at-h/3, 0), len(lines)-h)
	out := slices.Clone(lines[start : start+h])
	if start > 0 {
		out[0] = st.Dim.Render(fmt.Sprintf("↑ %d more", start))
	}
	if below := len(lines) - start - h; below > 0 {
		out[h-1] = st.Dim.Render(fmt.Sprintf("↓ %d more", below+1))
	}
	return out
}

// sameStreams reports whether two scenarios' streams run the same ops: the
// same names, kinds, shapes, counts, dependencies and decompositions, in
// the same order.
func sameStreams(a, b []scenarios.StreamSpec) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || len(a[i].Ops) != len(b[i].Ops) {
			return false
		}
		for j, x := range a[i].Ops {
			y := b[i].Ops[j]
			if x.Name != y.Name || x.String() != y.String() || x.CountOrOne() != y.CountOrOne() ||
				!slices.Equal(x.After, y.After) || max(x.Decompose, 1) != max(y.Decompose, 1) {
				return false
			}
		}
	}
	return true
}
