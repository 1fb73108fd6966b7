package scenarios

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// FieldError is one problem with one field of a scenario. Path is the
// field's YAML path ("$.strategy.comm_sms"); the decoder turns it into a
// file:line:col position.
type FieldError struct {
	Path string
	Msg  string
}

func (e FieldError) Error() string { return e.Path + ": " + e.Msg }

// ValidationError gathers every FieldError of a scenario.
type ValidationError struct {
	Scenario string
	Fields   []FieldError
}

func (e *ValidationError) Error() string {
	msgs := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		msgs[i] = f.Error()
	}
	name := e.Scenario
	if name == "" {
		name = "scenario"
	}
	return name + ": " + strings.Join(msgs, "; ")
}

var namePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)

// maxDim bounds GEMM dimensions so that sizes stay well inside int64 and a
// typo such as an extra digit is caught.
const maxDim = 1 << 20

// maxBytes bounds every byte size (1 TiB), far beyond any GPU's memory.
const maxBytes = 1 << 40

// Validate checks a scenario against the device limits and returns nil or a
// *ValidationError listing every problem with its field path. Its strategy
// is checked knob by knob (StrategyKnobs).
func Validate(sc Scenario, lim Limits) error { return StrategyKnobs().Validate(sc, lim) }

// Validate is the package's Validate with the strategy checked against
// this knob table.
func (ks Knobs) Validate(sc Scenario, lim Limits) error { return ks.validate(sc, lim, true) }

// validate is Validate; withGraph false leaves out what a format-2
// scenario's ops make together (the graph, the roles, the memory), for a
// file whose streams did not decode whole.
func (ks Knobs) validate(sc Scenario, lim Limits, withGraph bool) error {
	var errs []FieldError
	add := func(path, format string, a ...any) {
		errs = append(errs, FieldError{Path: path, Msg: fmt.Sprintf(format, a...)})
	}
	if sc.Name == "" {
		add("$.name", "name is missing; want lower-case letters, digits, '.', '_' or '-', such as llama3-70b-tp-qkv-ag-224m")
	} else if !namePattern.MatchString(sc.Name) {
		add("$.name", "name %q is not allowed; use lower-case letters, digits, '.', '_' or '-', starting with a letter or digit", sc.Name)
	}
	if sc.Profile != "" && !namePattern.MatchString(sc.Profile) {
		add("$.profile", "profile %q is not a device profile name; allowed lower-case letters, digits, '.', '_' or '-', such as h200", sc.Profile)
	}
	for _, f := range []struct{ path, name, text string }{
		{"$.description", "description", sc.Description}, {"$.source", "source", sc.Source},
	} {
		if r, bad := controlRune(f.text); bad {
			add(f.path, "%s holds the control character %U; allowed printable text, tabs and line breaks", f.name, r)
		}
	}
	if sc.IsGraph() {
		errs = append(errs, ks.validateGraph(sc, lim, withGraph)...)
	} else {
		errs = append(errs, ks.validatePair(sc, lim)...)
	}
	if len(errs) == 0 {
		return nil
	}
	return &ValidationError{Scenario: sc.Name, Fields: errs}
}

// validatePair checks the fields of a one-pair scenario (format 1): its
// GPU count for the collective, the compute and comm ops, the strategy and
// the memory.
func (ks Knobs) validatePair(sc Scenario, lim Limits) []FieldError {
	var errs []FieldError
	add := func(path, format string, a ...any) {
		errs = append(errs, FieldError{Path: path, Msg: fmt.Sprintf(format, a...)})
	}
	minGPUs := sc.Comm.Collective.MinGPUs()
	switch {
	case sc.GPUs < minGPUs && sc.Comm.Collective.IsHostCopy():
		add("$.gpus", "gpus is %d; a host copy needs at least 1", sc.GPUs)
	case sc.GPUs < minGPUs:
		add("$.gpus", "gpus is %d; a collective needs at least 2 (host copies, h2d, d2h and swap, run on 1)", sc.GPUs)
	default:
		errs = append(errs, maxGPUs(sc.GPUs, minGPUs, lim)...)
	}
	errs = append(errs, validateReps(sc.Reps)...)
	sized := len(errs)
	errs = append(errs, validateCompute(sc.Compute, "$.compute", lim)...)
	errs = append(errs, validateComm(sc.Comm, "$.comm", "collective", sc.GPUs)...)
	// Only sizes that passed their own bounds are added up: the footprint
	// of nonsense is nonsense (and the sums saturate anyway).
	sizesOK := len(errs) == sized && sc.GPUs >= sc.Comm.Collective.MinGPUs() && (lim.MaxGPUs <= 0 || sc.GPUs <= lim.MaxGPUs)
	if sc.Strategy.CommEngine == EngineNCCLCE && !sc.Comm.Collective.NCCLCopyEngineCovers() && sc.Comm.Collective != "" {
		errs = append(errs, FieldError{"$.strategy.comm_engine", fmt.Sprintf("NCCL's copy-engine path covers all-gather and all-to-all, not %s; allowed sm or dma", sc.Comm.Collective)})
	}
	if sc.Strategy.CommEngine == EngineP2PLoad && !sc.Comm.Collective.P2PLoadCovers() && sc.Comm.Collective != "" {
		errs = append(errs, FieldError{"$.strategy.comm_engine", fmt.Sprintf("comm_engine p2p-load is a reduction that loads the peers' blocks; it runs reduce-scatter and all-reduce, not %s; allowed sm, dma or nccl-ce", sc.Comm.Collective)})
	}
	errs = append(errs, ks.strategyErrors(sc.Strategy, lim)...)
	if sizesOK {
		if e := checkMemory(sc, lim); e != nil {
			errs = append(errs, *e)
		}
	}
	return errs
}

// validateReps checks a repetition count.
func validateReps(reps int) []FieldError {
	if reps < 0 || reps > MaxReps {
		return []FieldError{{"$.reps", fmt.Sprintf("reps is %d; allowed 1..%d, or leave it out for %d", reps, MaxReps, DefaultReps)}}
	}
	return nil
}

// maxGPUs checks a GPU count against what the device has.
func maxGPUs(gpus, minGPUs int, lim Limits) []FieldError {
	switch {
	case lim.MaxGPUs > 0 && lim.MaxGPUs < minGPUs:
		return []FieldError{{"$.gpus", fmt.Sprintf("gpus is %d but %s has only %d GPU here, and a collective needs 2; host copies (h2d, d2h, swap) run on 1 GPU, and --backend sim runs collectives on a simulated node", gpus, deviceName(lim), lim.MaxGPUs)}}
	case lim.MaxGPUs > 0 && gpus > lim.MaxGPUs:
		return []FieldError{{"$.gpus", fmt.Sprintf("gpus is %d but %s allows at most %d; allowed %d..%d", gpus, deviceName(lim), lim.MaxGPUs, minGPUs, lim.MaxGPUs)}}
	}
	return nil
}

// strategyErrors checks the strategy knob by knob, at its fields' paths.
func (ks Knobs) strategyErrors(st Strategy, lim Limits) []FieldError {
	var errs []FieldError
	for _, e := range ks.ValidateStrategy(st, lim) {
		e.Path = "$.strategy" + strings.TrimPrefix(e.Path, "$")
		errs = append(errs, e)
	}
	return errs
}

// validateGraph checks the fields of a format-2 scenario: compute and comm
// left out (or holding the lead ops), the GPU count for its ops, every op
// by its kind, the graph the streams and the strategy's decomposition make
// (names, dependencies, chunks, sizes), the strategy, and the memory of
// every op's buffers.
func (ks Knobs) validateGraph(sc Scenario, lim Limits, withGraph bool) []FieldError {
	var errs []FieldError
	add := func(path, format string, a ...any) {
		errs = append(errs, FieldError{Path: path, Msg: fmt.Sprintf(format, a...)})
	}
	lead := sc.WithLead()
	switch {
	case sc.Compute != (ComputeOp{}) && sc.Compute != lead.Compute:
		add("$.compute", "compute belongs to a one-pair scenario (format 1) and this scenario also has streams (format 2); a scenario has either compute and comm or streams, never both: move the op into a stream, or remove streams")
	case sc.Comm != (CommOp{}) && sc.Comm != lead.Comm:
		add("$.comm", "comm belongs to a one-pair scenario (format 1) and this scenario also has streams (format 2); a scenario has either compute and comm or streams, never both: move the op into a stream, or remove streams")
	}

	// The GPU count: 2 or more for a collective, 1 or more for host copies.
	var collective, compute, comm *StreamOp
	for si := range sc.Streams {
		for oi := range sc.Streams[si].Ops {
			o := &sc.Streams[si].Ops[oi]
			switch {
			case o.Kind.IsCompute() && compute == nil:
				compute = o
			case o.Kind.IsComm() && comm == nil:
				comm = o
			}
			if o.Kind.IsComm() && !Collective(o.Kind).IsHostCopy() && collective == nil {
				collective = o
			}
		}
	}
	minGPUs, before := 1, len(errs)
	switch {
	case collective != nil:
		minGPUs = 2
		if sc.GPUs < 2 {
			add("$.gpus", "gpus is %d; op %s is a collective (%s), which needs at least 2 (host copies, h2d, d2h and swap, run on 1)", sc.GPUs, opName(*collective), collective.Kind)
		}
	case sc.GPUs < 1:
		add("$.gpus", "gpus is %d; host copies need at least 1", sc.GPUs)
	}
	if len(errs) == before {
		errs = append(errs, maxGPUs(sc.GPUs, minGPUs, lim)...)
	}
	gpusOK := len(errs) == before
	errs = append(errs, validateReps(sc.Reps)...)

	// Every op by its kind.
	opsOK := true
	for si, ss := range sc.Streams {
		for oi, o := range ss.Ops {
			e := validateOp(o, fmt.Sprintf("$.streams[%d].ops[%d]", si, oi), sc.GPUs, lim)
			opsOK = opsOK && len(e) == 0
			errs = append(errs, e...)
		}
	}
	if sc.Strategy.CommEngine == EngineNCCLCE {
		for _, ss := range sc.Streams {
			if o, found := firstOp(ss.Ops, func(o StreamOp) bool { return o.Kind.IsComm() && !Collective(o.Kind).NCCLCopyEngineCovers() }); found {
				add("$.strategy.comm_engine", "NCCL's copy-engine path covers all-gather and all-to-all, not %s (op %s); allowed sm or dma", o.Kind, opName(o))
				break
			}
		}
	}
	if sc.Strategy.CommEngine == EngineP2PLoad {
		add("$.strategy.comm_engine", "comm_engine p2p-load runs the one reduction of a format-1 scenario (compute: and comm:), not a format-2 scenario's streams; allowed sm, dma or nccl-ce")
	}
	if !withGraph {
		return append(errs, ks.strategyErrors(sc.Strategy, lim)...)
	}

	// The graph: names, dependencies, decomposition, size. The strategy's
	// decompose takes part only when its own bounds hold (the knob reports
	// it otherwise); and decomposition only when the ops and the GPU count
	// are valid, since it checks their sizes against each other.
	gs := sc
	st := sc.Strategy
	if st.Decompose < 0 || st.Decompose > MaxChunks {
		st.Decompose = 0
	}
	if !opsOK || !gpusOK {
		st.Decompose = 0
		gs.Streams = wholeOps(sc.Streams)
	}
	graphOK := true
	if _, err := gs.Graph(st); err != nil {
		graphOK = false
		var ve *ValidationError
		if errors.As(err, &ve) {
			errs = append(errs, ve.Fields...)
		} else {
			add("$.streams", "%v", err)
		}
	}
	everyStreamHasOps := !slices.ContainsFunc(sc.Streams, func(ss StreamSpec) bool { return len(ss.Ops) == 0 })
	if opsOK && everyStreamHasOps && (compute == nil || comm == nil) {
		missing, want := "compute op (gemm or stream)", "a compute stream"
		if compute != nil {
			missing, want = "communication op (a collective or a host copy)", "a communication stream"
		}
		add("$.streams", "the streams hold no %s; a scenario runs compute next to communication, so add %s", missing, want)
	}

	errs = append(errs, ks.strategyErrors(sc.Strategy, lim)...)
	if gpusOK && opsOK && graphOK {
		if e := checkMemory(sc, lim); e != nil {
			errs = append(errs, *e)
		}
	}
	return errs
}

// wholeOps returns a copy of streams with no op decomposed.
func wholeOps(streams []StreamSpec) []StreamSpec {
	out := make([]StreamSpec, len(streams))
	for i, ss := range streams {
		ss.Ops = slices.Clone(ss.Ops)
		for j := range ss.Ops {
			ss.Ops[j].Decompose = 0
		}
		out[i] = ss
	}
	return out
}

// firstOp returns the first op of ops for which f holds.
func firstOp(ops []StreamOp, f func(StreamOp) bool) (StreamOp, bool) {
	for _, o := range ops {
		if f(o) {
			return o, true
		}
	}
	return StreamOp{}, false
}

// opName names an op for messages: its name, or its kind when unnamed.
func opName(o StreamOp) string {
	if o.Name != "" {
		return o.Name
	}
	return string(o.Kind)
}

// validateOp checks one op of a stream at path ("$.streams[0].ops[1]"):
// its kind, and the fields of that kind as validateCompute and
// validateComm check them. Names, counts, dependencies and decomposition
// are the graph's (Scenario.Graph).
func validateOp(o StreamOp, path string, gpus int, lim Limits) []FieldError {
	kinds := OpKinds()
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = string(k)
	}
	allowed := strings.Join(names, ", ")
	switch {
	case o.Kind == "":
		return []FieldError{{path + ".kind", label(path) + ".kind is missing; allowed " + allowed}}
	case o.Kind.IsCompute():
		return validateCompute(o.AsCompute(), path, lim)
	case o.Kind.IsComm():
		errs := validateComm(o.AsComm(), path, "kind", gpus)
		if o.M != 0 || o.N != 0 || o.K != 0 || o.DType != "" {
			errs = append(errs, FieldError{path, fmt.Sprintf("m, n, k and dtype belong to a gemm; a %s op takes only bytes", o.Kind)})
		}
		return errs
	}
	msg := fmt.Sprintf("%s.kind %q is unknown", label(path), clip(string(o.Kind)))
	if near := Closest(string(o.Kind), names, 1); len(near) > 0 {
		msg += fmt.Sprintf(" (did you mean %s?)", near[0])
	}
	return []FieldError{{path + ".kind", msg + "; allowed " + allowed}}
}

// validateCompute checks a compute op written at path ("$.compute" or an
// op of a stream).
func validateCompute(c ComputeOp, path string, lim Limits) []FieldError {
	var errs []FieldError
	add := func(path, format string, a ...any) {
		errs = append(errs, FieldError{Path: path, Msg: fmt.Sprintf(format, a...)})
	}
	switch c.Kind {
	case GEMM:
		for _, d := range []struct {
			name string
			v    int
		}{{"m", c.M}, {"n", c.N}, {"k", c.K}} {
			if d.v < 1 || d.v > maxDim {
				add(path+"."+d.name, "%s is %d; allowed 1..%d", d.name, d.v, maxDim)
			}
		}
		if c.DType == "" {
			add(path+".dtype", "%s.dtype is missing; allowed %s", label(path), joinDTypes(DTypes))
		} else if c.DType.Size() == 0 {
			add(path+".dtype", "dtype %q is unknown; allowed %s", c.DType, joinDTypes(DTypes))
		} else if len(lim.DTypes) > 0 && !containsDType(lim.DTypes, c.DType) {
			add(path+".dtype", "dtype %s is not supported on %s; allowed %s", c.DType, lim.Device, joinDTypes(lim.DTypes))
		}
		if c.Bytes != 0 {
			add(path+".bytes", "bytes belongs to a stream op; a gemm's size comes from m, n, k and dtype")
		}
	case Stream:
		if c.Bytes < 1 || c.Bytes > maxBytes {
			add(path+".bytes", "bytes is %d; allowed 1B..1TiB", int64(c.Bytes))
		}
		if c.M != 0 || c.N != 0 || c.K != 0 || c.DType != "" {
			add(path, "m, n, k and dtype belong to a gemm; a stream op takes only bytes")
		}
	case "":
		add(path+".kind", "%s.kind is missing; allowed gemm, stream", label(path))
	default:
		add(path+".kind", "%s.kind %q is unknown; allowed gemm, stream", label(path), c.Kind)
	}
	return errs
}

// validateComm checks a communication op written at path ("$.comm" or an
// op of a stream), whose kind is in the field kindField.
func validateComm(c CommOp, path, kindField string, gpus int) []FieldError {
	var errs []FieldError
	known := false
	for _, k := range CommKinds {
		known = known || c.Collective == k
	}
	if !known {
		names := make([]string, len(CommKinds))
		for i, k := range CommKinds {
			names[i] = string(k)
		}
		msg := fmt.Sprintf("%s %q is unknown; allowed %s", kindField, c.Collective, strings.Join(names, ", "))
		if c.Collective == "" {
			msg = label(path) + "." + kindField + " is missing; allowed " + strings.Join(names, ", ")
		}
		errs = append(errs, FieldError{path + "." + kindField, msg})
	}
	if c.Bytes < 1 || c.Bytes > maxBytes {
		errs = append(errs, FieldError{path + ".bytes", fmt.Sprintf("bytes is %d; allowed 1B..1TiB per rank", int64(c.Bytes))})
	} else if c.Collective == AllToAll && gpus > 1 && int64(c.Bytes)%int64(gpus) != 0 {
		errs = append(errs, FieldError{path + ".bytes", fmt.Sprintf("bytes is %d, not a multiple of gpus (%d); an all-to-all sends bytes/gpus to every rank, so allowed multiples of %d", int64(c.Bytes), gpus, gpus)})
	}
	return errs
}

// ValidateStrategy checks a strategy against the device limits, knob by
// knob (StrategyKnobs). Paths are relative to the strategy ("$.comm_sms").
func ValidateStrategy(s Strategy, lim Limits) []FieldError {
	return StrategyKnobs().ValidateStrategy(s, lim)
}

// controlRune returns the first rune of s that a terminal could act on
// (escape sequences, carriage returns and other control or invalid
// characters, bidirectional overrides), and whether there is one. Tabs,
// newlines and the zero-width joiner of emoji sequences are fine.
func controlRune(s string) (rune, bool) {
	for _, r := range s {
		if r == '\n' || r == '\t' {
			continue
		}
		if r == utf8.RuneError || unicode.IsControl(r) || unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r) || (unicode.Is(unicode.Cf, r) && r != '\u200d') {
			return r, true
		}
	}
	return 0, false
}

// deviceName names the device for messages, or "the device" when unknown.
func deviceName(lim Limits) string {
	if lim.Device == "" {
		return "the device"
	}
	return lim.Device
}

func containsDType(list []DType, d DType) bool {
	for _, x := range list {
		if x == d {
			return true
		}
	}
	return false
}

func joinDTypes(list []DType) string {
	s := make([]string, len(list))
	for i, d := range list {
		s[i] = string(d)
	}
	return strings.Join(s, ", ")
}
