package scenarios

import (
	"fmt"
	"regexp"
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
func (ks Knobs) Validate(sc Scenario, lim Limits) error {
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
	minGPUs := sc.Comm.Collective.MinGPUs()
	switch {
	case sc.GPUs < minGPUs && sc.Comm.Collective.IsHostCopy():
		add("$.gpus", "gpus is %d; a host copy needs at least 1", sc.GPUs)
	case sc.GPUs < minGPUs:
		add("$.gpus", "gpus is %d; a collective needs at least 2 (host copies, h2d, d2h and swap, run on 1)", sc.GPUs)
	case lim.MaxGPUs > 0 && lim.MaxGPUs < minGPUs:
		add("$.gpus", "gpus is %d but %s has only %d GPU here, and a collective needs 2; host copies (h2d, d2h, swap) run on 1 GPU, and --backend sim runs collectives on a simulated node", sc.GPUs, deviceName(lim), lim.MaxGPUs)
	case lim.MaxGPUs > 0 && sc.GPUs > lim.MaxGPUs:
		add("$.gpus", "gpus is %d but %s allows at most %d; allowed %d..%d", sc.GPUs, deviceName(lim), lim.MaxGPUs, minGPUs, lim.MaxGPUs)
	}
	if sc.Reps < 0 || sc.Reps > MaxReps {
		add("$.reps", "reps is %d; allowed 1..%d, or leave it out for %d", sc.Reps, MaxReps, DefaultReps)
	}
	sized := len(errs)
	errs = append(errs, validateCompute(sc.Compute, lim)...)
	errs = append(errs, validateComm(sc.Comm, sc.GPUs)...)
	// Only sizes that passed their own bounds are added up: the footprint
	// of nonsense is nonsense (and the sums saturate anyway).
	sizesOK := len(errs) == sized && sc.GPUs >= sc.Comm.Collective.MinGPUs() && (lim.MaxGPUs <= 0 || sc.GPUs <= lim.MaxGPUs)
	if sc.Strategy.CommEngine == EngineNCCLCE && !sc.Comm.Collective.NCCLCopyEngineCovers() && sc.Comm.Collective != "" {
		errs = append(errs, FieldError{"$.strategy.comm_engine", fmt.Sprintf("NCCL's copy-engine path covers all-gather and all-to-all, not %s; allowed sm or dma", sc.Comm.Collective)})
	}
	for _, e := range ks.ValidateStrategy(sc.Strategy, lim) {
		e.Path = "$.strategy" + strings.TrimPrefix(e.Path, "$")
		errs = append(errs, e)
	}
	if sizesOK {
		if e := checkMemory(sc, lim); e != nil {
			errs = append(errs, *e)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return &ValidationError{Scenario: sc.Name, Fields: errs}
}

func validateCompute(c ComputeOp, lim Limits) []FieldError {
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
				add("$.compute."+d.name, "%s is %d; allowed 1..%d", d.name, d.v, maxDim)
			}
		}
		if c.DType == "" {
			add("$.compute.dtype", "compute.dtype is missing; allowed %s", joinDTypes(DTypes))
		} else if c.DType.Size() == 0 {
			add("$.compute.dtype", "dtype %q is unknown; allowed %s", c.DType, joinDTypes(DTypes))
		} else if len(lim.DTypes) > 0 && !containsDType(lim.DTypes, c.DType) {
			add("$.compute.dtype", "dtype %s is not supported on %s; allowed %s", c.DType, lim.Device, joinDTypes(lim.DTypes))
		}
		if c.Bytes != 0 {
			add("$.compute.bytes", "bytes belongs to a stream op; a gemm's size comes from m, n, k and dtype")
		}
	case Stream:
		if c.Bytes < 1 || c.Bytes > maxBytes {
			add("$.compute.bytes", "bytes is %d; allowed 1B..1TiB", int64(c.Bytes))
		}
		if c.M != 0 || c.N != 0 || c.K != 0 || c.DType != "" {
			add("$.compute", "m, n, k and dtype belong to a gemm; a stream op takes only bytes")
		}
	case "":
		add("$.compute.kind", "compute.kind is missing; allowed gemm, stream")
	default:
		add("$.compute.kind", "compute.kind %q is unknown; allowed gemm, stream", c.Kind)
	}
	return errs
}

func validateComm(c CommOp, gpus int) []FieldError {
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
		msg := fmt.Sprintf("collective %q is unknown; allowed %s", c.Collective, strings.Join(names, ", "))
		if c.Collective == "" {
			msg = "comm.collective is missing; allowed " + strings.Join(names, ", ")
		}
		errs = append(errs, FieldError{"$.comm.collective", msg})
	}
	if c.Bytes < 1 || c.Bytes > maxBytes {
		errs = append(errs, FieldError{"$.comm.bytes", fmt.Sprintf("bytes is %d; allowed 1B..1TiB per rank", int64(c.Bytes))})
	} else if c.Collective == AllToAll && gpus > 1 && int64(c.Bytes)%int64(gpus) != 0 {
		errs = append(errs, FieldError{"$.comm.bytes", fmt.Sprintf("bytes is %d, not a multiple of gpus (%d); an all-to-all sends bytes/gpus to every rank, so allowed multiples of %d", int64(c.Bytes), gpus, gpus)})
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
