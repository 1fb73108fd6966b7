// Package kineto reads PyTorch profiler (Kineto) traces, Chrome's trace
// JSON as torch.profiler writes it, and turns a rank's step into c3lab's
// figures (ARCHITECTURE.md's T_serial, T_ideal, S_real, F, exposed
// communication) and into a format-2 scenario.
//
// It lives under profiler/ because it measures: it is the reverse of
// profiler/export (which writes Chrome traces), its figures come from the
// profiler's metric code, and it imports scenarios (to write one) but no
// backend.
//
// A trace is read as a stream: the traceEvents array is decoded one event
// at a time and only what the analysis needs is kept (GPU activities,
// the shapes of the CPU ops that launched them, step annotations, launch
// times), so traces of hundreds of MB import in bounded memory.
package kineto

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// OpKind says what a GPU activity is.
type OpKind uint8

// GPU activity kinds, from the event's category.
const (
	// Kernel is a CUDA kernel (cat "kernel").
	Kernel OpKind = iota
	// Memcpy is a copy (cat "gpu_memcpy").
	Memcpy
	// Memset is a fill (cat "gpu_memset").
	Memset
)

func (k OpKind) String() string {
	switch k {
	case Memcpy:
		return "memcpy"
	case Memset:
		return "memset"
	}
	return "kernel"
}

// GPUOp is one GPU activity of a trace. Times are nanoseconds on the
// trace's clock.
type GPUOp struct {
	Kind   OpKind
	Name   string
	Start  int64
	Dur    int64
	Device int
	Stream int
	// Correlation links the op to the runtime call that launched it;
	// ExternalID to the CPU op (aten::mm, record_param_comms) around it.
	Correlation int64
	ExternalID  int64
	// Bytes is a memcpy's or memset's size.
	Bytes int64
	// Grid and Block are a kernel's launch dimensions (x*y*z).
	Grid, Block int64
	// Comm is what the trace says of a collective on the kernel itself
	// (recent torch versions copy record_param_comms' arguments there).
	Comm *CommArgs
}

// End is Start + Dur.
func (o GPUOp) End() int64 { return o.Start + o.Dur }

// CommArgs is a collective's description as torch records it
// ("Collective name", "In msg nelems", "Out msg nelems", "dtype",
// "Group size", "Process Group Name").
type CommArgs struct {
	Name      string
	InNelems  int64
	OutNelems int64
	DType     string
	GroupSize int
	Group     string
}

// CPUOp is what the analysis keeps of a CPU op: its name and what its
// arguments say of the work, parsed as it is read.
type CPUOp struct {
	Name string
	// GEMM is the shape when the op is a matrix multiply whose input
	// dimensions were recorded (record_shapes=True).
	GEMM *GEMMShape
	// InputBytes is the sum of its tensor inputs' sizes (0 when unknown).
	InputBytes int64
	// Comm is the collective's description on a record_param_comms op.
	Comm *CommArgs
}

// GEMMShape is C[M,N] = A[M,K] x B[K,N] in DType (c3lab's names), with
// batched products folded into M.
type GEMMShape struct {
	M, N, K int
	DType   string
}

// Span is an annotation: a ProfilerStep#N or a user's record_function.
type Span struct {
	Name       string
	Start, Dur int64
	// GPU is true for a gpu_user_annotation (the GPU time of the
	// annotated region), false for the CPU annotation.
	GPU bool
}

// Trace is what one trace file holds for the analysis.
type Trace struct {
	// File is the path it was read from.
	File string
	// Rank and WorldSize come from distributedInfo; -1 and 0 when absent.
	Rank, WorldSize int
	// Backend is distributedInfo's backend ("nccl").
	Backend string
	// Devices names the GPUs of deviceProperties, by id.
	Devices map[int]string
	// Ops are the GPU activities, in file order.
	Ops []GPUOp
	// CPU holds the CPU ops that carry shapes or collective arguments, by
	// External id.
	CPU map[int64]CPUOp
	// Launch is each runtime call's start, by correlation id (to place a
	// kernel in the step that launched it).
	Launch map[int64]int64
	// Steps are the ProfilerStep#N annotations, CPU and GPU.
	Steps []Span
	// Events counts the events read; Skipped counts events by category
	// that the analysis does not use (python functions, flows, ...).
	Events  int
	Skipped map[string]int
	// Gzip says the file was gzip-compressed (byte offsets in errors are
	// then of the decompressed text).
	Gzip bool
	// Bytes is the size of the JSON text read.
	Bytes int64
}

// Error is a trace that cannot be read: what was wrong and at which byte
// of the JSON text (of the decompressed text for a gzip file).
type Error struct {
	File   string
	Offset int64
	Gzip   bool
	Msg    string
	Err    error
}

func (e *Error) Error() string {
	where := fmt.Sprintf("byte %d", e.Offset)
	if e.Gzip {
		where += " of the decompressed text"
	}
	return fmt.Sprintf("%s: %s at %s: %s", e.File, e.Msg, where, e.hint())
}

func (e *Error) hint() string {
	switch {
	case errors.Is(e.Err, io.ErrUnexpectedEOF), errors.Is(e.Err, io.EOF):
		return "the file ends early (truncated? let torch.profiler finish writing it)"
	case e.Err != nil:
		return e.Err.Error()
	}
	return "not a Kineto trace (torch.profiler's Chrome trace JSON)"
}

func (e *Error) Unwrap() error { return e.Err }

// ReadFile reads the trace at path, gzip or plain.
func ReadFile(path string) (*Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("trace: %s is not a regular file", path)
	}
	return Read(f, path)
}

// Read reads one trace from r, gzip-compressed (by its magic bytes) or
// plain. name labels errors.
func Read(r io.Reader, name string) (*Trace, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	t := &Trace{File: name, Rank: -1, CPU: map[int64]CPUOp{}, Launch: map[int64]int64{}, Skipped: map[string]int{}, Devices: map[int]string{}}
	var src io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, &Error{File: name, Msg: "cannot read the gzip header", Err: err}
		}
		defer zr.Close()
		t.Gzip = true
		src = bufio.NewReaderSize(zr, 1<<20)
	}
	p := parser{t: t, names: map[string]string{}}
	p.dec = json.NewDecoder(src)
	p.dec.UseNumber()
	if err := p.top(); err != nil {
		return nil, err
	}
	t.Bytes = p.dec.InputOffset()
	return t, nil
}

type parser struct {
	t     *Trace
	dec   *json.Decoder
	names map[string]string
	sawEv bool
}

func (p *parser) fail(msg string, err error) error {
	var se *json.SyntaxError
	off := p.dec.InputOffset()
	if errors.As(err, &se) {
		off = se.Offset
		msg = "invalid JSON"
	}
	if err != nil && errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return &Error{File: p.t.File, Offset: off, Gzip: p.t.Gzip, Msg: msg, Err: err}
}

// intern returns one copy of each name, so a million launches of one
// kernel hold its (often long) name once.
func (p *parser) intern(s string) string {
	if v, ok := p.names[s]; ok {
		return v
	}
	if len(p.names) < 1<<16 {
		p.names[s] = s
	}
	return s
}

func (p *parser) top() error {
	tok, err := p.dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return &Error{File: p.t.File, Gzip: p.t.Gzip, Msg: "the file is empty"}
		}
		return p.fail("cannot read the trace", err)
	}
	switch tok {
	case json.Delim('['):
		// The array form of Chrome's format: the events alone.
		if err := p.events(); err != nil {
			return err
		}
		return p.end()
	case json.Delim('{'):
	default:
		return p.fail("the trace is not a JSON object", nil)
	}
	for p.dec.More() {
		tok, err := p.dec.Token()
		if err != nil {
			return p.fail("cannot read a key of the trace object", err)
		}
		key, _ := tok.(string)
		switch key {
		case "traceEvents":
			tok, err := p.dec.Token()
			if err != nil {
				return p.fail("cannot read traceEvents", err)
			}
			if tok != json.Delim('[') {
				return p.fail("traceEvents is not an array", nil)
			}
			if err := p.events(); err != nil {
				return err
			}
		case "distributedInfo":
			var di struct {
				Rank      *int   `json:"rank"`
				WorldSize int    `json:"world_size"`
				Backend   string `json:"backend"`
			}
			if err := p.dec.Decode(&di); err != nil && !isTypeErr(err) {
				return p.fail("cannot read distributedInfo", err)
			}
			if di.Rank != nil {
				p.t.Rank = *di.Rank
			}
			p.t.WorldSize, p.t.Backend = di.WorldSize, di.Backend
		case "deviceProperties":
			var dp []struct {
				ID   int    `json:"id"`
				Name string `json:"name"`
			}
			if err := p.dec.Decode(&dp); err != nil && !isTypeErr(err) {
				return p.fail("cannot read deviceProperties", err)
			}
			for _, d := range dp {
				p.t.Devices[d.ID] = d.Name
			}
		default:
			if err := p.skip(); err != nil {
				return p.fail(fmt.Sprintf("cannot read the trace's %q", key), err)
			}
		}
	}
	if _, err := p.dec.Token(); err != nil {
		return p.fail("the trace object does not end", err)
	}
	if !p.sawEv {
		return &Error{File: p.t.File, Offset: p.dec.InputOffset(), Gzip: p.t.Gzip, Msg: "the trace has no traceEvents array"}
	}
	return p.end()
}

// end checks that nothing but white space follows the trace.
func (p *parser) end() error {
	if _, err := p.dec.Token(); !errors.Is(err, io.EOF) {
		if err == nil {
			return p.fail("text follows the end of the trace", nil)
		}
		return p.fail("text follows the end of the trace", err)
	}
	return nil
}

// skip reads one value of any kind and drops it without keeping it.
func (p *parser) skip() error {
	depth := 0
	for {
		tok, err := p.dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('['), json.Delim('{'):
			depth++
		case json.Delim(']'), json.Delim('}'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}

func isTypeErr(err error) bool {
	var te *json.UnmarshalTypeError
	return errors.As(err, &te)
}

// rawEvent is one trace event as decoded; only the fields used are named.
type rawEvent struct {
	Ph   string  `json:"ph"`
	Cat  string  `json:"cat"`
	Name string  `json:"name"`
	Tid  flexInt `json:"tid"`
	Ts   rawNum  `json:"ts"`
	Dur  rawNum  `json:"dur"`
	Args rawArgs `json:"args"`
}

type rawArgs struct {
	Stream      *flexInt        `json:"stream"`
	Device      *flexInt        `json:"device"`
	Correlation flexInt         `json:"correlation"`
	ExternalID  flexInt         `json:"External id"`
	Bytes       flexInt         `json:"bytes"`
	Grid        []int64         `json:"grid"`
	Block       []int64         `json:"block"`
	InputDims   json.RawMessage `json:"Input Dims"`
	InputType   []string        `json:"Input type"`
	CollName    string          `json:"Collective name"`
	InNelems    flexInt         `json:"In msg nelems"`
	OutNelems   flexInt         `json:"Out msg nelems"`
	DType       string          `json:"dtype"`
	GroupSize   flexInt         `json:"Group size"`
	Group       string          `json:"Process Group Name"`
}

// flexInt reads an integer written as a number or a string ("stream 7",
// "12"), and anything else as 0, so that a field of an unexpected type
// does not stop the import.
type flexInt struct {
	V  int64
	OK bool
}

func (f *flexInt) UnmarshalJSON(b []byte) error {
	*f = flexInt{}
	s := string(b)
	if len(b) > 0 && b[0] == '"' {
		u, err := strconv.Unquote(s)
		if err != nil {
			return nil
		}
		if i := strings.LastIndexByte(u, ' '); i >= 0 {
			u = u[i+1:]
		}
		s = u
	}
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		*f = flexInt{V: v, OK: true}
	} else if x, err := strconv.ParseFloat(s, 64); err == nil && x == math.Trunc(x) && math.Abs(x) < 1<<62 {
		*f = flexInt{V: int64(x), OK: true}
	}
	return nil
}

// rawNum keeps a number's text (a quoted one's too) for micros.
type rawNum string

func (n *rawNum) UnmarshalJSON(b []byte) error {
	if len(b) > 1 && b[0] == '"' {
		b = b[1 : len(b)-1]
	}
	*n = rawNum(b)
	return nil
}

// micros converts a Chrome trace time in microseconds ("1700000000123.456")
// to nanoseconds, exactly for decimal text.
func micros(n rawNum) (int64, bool) {
	s := string(n)
	if s == "" {
		return 0, false
	}
	whole, frac, dot := strings.Cut(s, ".")
	if dot && !strings.ContainsAny(s, "eE") && len(frac) <= 3 && whole != "" && whole != "-" {
		w, err := strconv.ParseInt(whole, 10, 64)
		if err != nil || w > math.MaxInt64/1000 || w < math.MinInt64/1000 {
			return 0, false
		}
		f := int64(0)
		if frac != "" {
			fv, err := strconv.ParseInt(frac, 10, 64)
			if err != nil || fv < 0 {
				return 0, false
			}
			f = fv
			for i := len(frac); i < 3; i++ {
				f *= 10
			}
		}
		if strings.HasPrefix(whole, "-") {
			f = -f
		}
		return w*1000 + f, true
	}
	if !dot && !strings.ContainsAny(s, "eE") {
		w, err := strconv.ParseInt(s, 10, 64)
		if err != nil || w > math.MaxInt64/1000 || w < math.MinInt64/1000 {
			return 0, false
		}
		return w * 1000, true
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(x) || math.Abs(x*1000) > 9e18 {
		return 0, false
	}
	return int64(math.Round(x * 1000)), true
}

func (p *parser) events() error {
	p.sawEv = true
	for p.dec.More() {
		off := p.dec.InputOffset()
		var ev rawEvent
		if err := p.dec.Decode(&ev); err != nil {
			var te *json.UnmarshalTypeError
			if !errors.As(err, &te) {
				return p.fail(fmt.Sprintf("cannot read event %d (it starts near byte %d)", p.t.Events+1, off), err)
			}
			if te.Field == "" {
				return &Error{File: p.t.File, Offset: off, Gzip: p.t.Gzip, Msg: fmt.Sprintf("cannot read event %d", p.t.Events+1),
					Err: fmt.Errorf("an event is a JSON object, not a %s", te.Value)}
			}
		}
		p.t.Events++
		if err := p.keep(&ev, off); err != nil {
			return err
		}
	}
	if _, err := p.dec.Token(); err != nil {
		return p.fail("traceEvents does not end", err)
	}
	return nil
}

// keep files one event away.
func (p *parser) keep(ev *rawEvent, off int64) error {
	if ev.Ph != "X" {
		p.t.Skipped["ph "+ev.Ph]++
		return nil
	}
	bad := func(what string) error {
		return &Error{File: p.t.File, Offset: off, Gzip: p.t.Gzip,
			Msg: fmt.Sprintf("event %d (%s %q) has %s", p.t.Events, ev.Cat, clip(ev.Name, 60), what)}
	}
	switch ev.Cat {
	case "kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset":
		ts, ok := micros(ev.Ts)
		if !ok {
			return bad("no valid ts")
		}
		dur, ok := micros(ev.Dur)
		if !ok || dur < 0 {
			return bad("no valid dur")
		}
		op := GPUOp{Name: p.intern(ev.Name), Start: ts, Dur: dur, Correlation: ev.Args.Correlation.V,
			ExternalID: ev.Args.ExternalID.V, Bytes: ev.Args.Bytes.V, Grid: prod(ev.Args.Grid), Block: prod(ev.Args.Block)}
		switch strings.ToLower(ev.Cat) {
		case "gpu_memcpy", "memcpy":
			op.Kind = Memcpy
		case "gpu_memset", "memset":
			op.Kind = Memset
		}
		if ev.Args.Stream != nil {
			op.Stream = int(ev.Args.Stream.V)
		} else {
			op.Stream = int(ev.Tid.V)
		}
		if ev.Args.Device != nil {
			op.Device = int(ev.Args.Device.V)
		}
		op.Comm = p.commArgs(&ev.Args)
		p.t.Ops = append(p.t.Ops, op)
	case "cpu_op", "Operator":
		if !ev.Args.ExternalID.OK {
			return nil
		}
		c := CPUOp{Name: p.intern(ev.Name), Comm: p.commArgs(&ev.Args)}
		if len(ev.Args.InputDims) > 0 {
			dims := parseDims(ev.Args.InputDims)
			c.GEMM = gemmFromOp(ev.Name, dims, ev.Args.InputType)
			c.InputBytes = inputBytes(dims, ev.Args.InputType)
		}
		if c.GEMM != nil || c.InputBytes > 0 || c.Comm != nil {
			p.t.CPU[ev.Args.ExternalID.V] = c
		}
	case "cuda_runtime", "cuda_driver", "Runtime", "Driver":
		if ts, ok := micros(ev.Ts); ok && ev.Args.Correlation.OK {
			p.t.Launch[ev.Args.Correlation.V] = ts
		}
	case "user_annotation", "gpu_user_annotation":
		if !strings.HasPrefix(ev.Name, "ProfilerStep#") {
			p.t.Skipped[ev.Cat]++
			return nil
		}
		ts, ok1 := micros(ev.Ts)
		dur, ok2 := micros(ev.Dur)
		if !ok1 || !ok2 || dur < 0 {
			return bad("no valid ts or dur")
		}
		p.t.Steps = append(p.t.Steps, Span{Name: ev.Name, Start: ts, Dur: dur, GPU: ev.Cat == "gpu_user_annotation"})
	default:
		p.t.Skipped[p.intern(ev.Cat)]++
	}
	return nil
}

func (p *parser) commArgs(a *rawArgs) *CommArgs {
	if a.CollName == "" {
		return nil
	}
	return &CommArgs{Name: p.intern(a.CollName), InNelems: a.InNelems.V, OutNelems: a.OutNelems.V,
		DType: p.intern(a.DType), GroupSize: int(a.GroupSize.V), Group: p.intern(a.Group)}
}

func prod(v []int64) int64 {
	if len(v) == 0 {
		return 0
	}
	n := int64(1)
	for _, x := range v {
		if x < 0 || (x > 0 && n > math.MaxInt64/x) {
			return 0
		}
		n *= x
	}
	return n
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// parseDims reads "Input Dims": one entry per input, a list of sizes for
// a tensor, [] for a scalar or None; a tensor list is nested one deeper
// and is kept as nil (it has no one shape).
func parseDims(raw json.RawMessage) [][]int64 {
	var entries []json.RawMessage
	if json.Unmarshal(raw, &entries) != nil {
		return nil
	}
	out := make([][]int64, len(entries))
	for i, e := range entries {
		var d []int64
		if json.Unmarshal(bytes.TrimSpace(e), &d) == nil {
			out[i] = d
		}
	}
	return out
}
