package kineto

// The reader as it was before the byte scanner (scan.go): events decoded
// one by one with encoding/json. It is kept here, in a test file, as the
// oracle that the fast reader must agree with (TestReaderMatchesLegacy)
// and as the "before" of BenchmarkReadLargeTrace.

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
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func readLegacy(r io.Reader, name string) (*Trace, error) {
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
	p := legacyParser{t: t, names: map[string]string{}}
	p.dec = json.NewDecoder(src)
	p.dec.UseNumber()
	if err := p.top(); err != nil {
		return nil, err
	}
	t.Bytes = p.dec.InputOffset()
	return t, nil
}

type legacyParser struct {
	t     *Trace
	dec   *json.Decoder
	names map[string]string
	sawEv bool
}

func (p *legacyParser) fail(msg string, err error) error {
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
func (p *legacyParser) intern(s string) string {
	if v, ok := p.names[s]; ok {
		return v
	}
	if len(p.names) < 1<<16 {
		p.names[s] = s
	}
	return s
}

func (p *legacyParser) top() error {
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
			if err := p.dec.Decode(&di); err != nil && !legacyTypeErr(err) {
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
			if err := p.dec.Decode(&dp); err != nil && !legacyTypeErr(err) {
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
func (p *legacyParser) end() error {
	if _, err := p.dec.Token(); !errors.Is(err, io.EOF) {
		if err == nil {
			return p.fail("text follows the end of the trace", nil)
		}
		return p.fail("text follows the end of the trace", err)
	}
	return nil
}

// skip reads one value of any kind and drops it without keeping it.
func (p *legacyParser) skip() error {
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

func legacyTypeErr(err error) bool {
	var te *json.UnmarshalTypeError
	return errors.As(err, &te)
}

// legacyEvent is one trace event as decoded; only the fields used are named.
type legacyEvent struct {
	Ph   string     `json:"ph"`
	Cat  string     `json:"cat"`
	Name string     `json:"name"`
	Tid  legacyInt  `json:"tid"`
	Ts   rawNum     `json:"ts"`
	Dur  rawNum     `json:"dur"`
	Args legacyArgs `json:"args"`
}

type legacyArgs struct {
	Stream      *legacyInt      `json:"stream"`
	Device      *legacyInt      `json:"device"`
	Correlation legacyInt       `json:"correlation"`
	ExternalID  legacyInt       `json:"External id"`
	Bytes       legacyInt       `json:"bytes"`
	Grid        []int64         `json:"grid"`
	Block       []int64         `json:"block"`
	InputDims   json.RawMessage `json:"Input Dims"`
	InputType   []string        `json:"Input type"`
	CollName    string          `json:"Collective name"`
	InNelems    legacyInt       `json:"In msg nelems"`
	OutNelems   legacyInt       `json:"Out msg nelems"`
	DType       string          `json:"dtype"`
	GroupSize   legacyInt       `json:"Group size"`
	Group       string          `json:"Process Group Name"`
}

// legacyInt reads an integer written as a number or a string ("stream 7",
// "12"), and anything else as 0, so that a field of an unexpected type
// does not stop the import.
type legacyInt struct {
	V  int64
	OK bool
}

func (f *legacyInt) UnmarshalJSON(b []byte) error {
	*f = legacyInt{}
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
		*f = legacyInt{V: v, OK: true}
	} else if x, err := strconv.ParseFloat(s, 64); err == nil && x == math.Trunc(x) && math.Abs(x) < 1<<62 {
		*f = legacyInt{V: int64(x), OK: true}
	}
	return nil
}

func (p *legacyParser) events() error {
	p.sawEv = true
	for p.dec.More() {
		off := p.dec.InputOffset()
		var ev legacyEvent
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
func (p *legacyParser) keep(ev *legacyEvent, off int64) error {
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

func (p *legacyParser) commArgs(a *legacyArgs) *CommArgs {
	if a.CollName == "" {
		return nil
	}
	return &CommArgs{Name: p.intern(a.CollName), InNelems: a.InNelems.V, OutNelems: a.OutNelems.V,
		DType: p.intern(a.DType), GroupSize: int(a.GroupSize.V), Group: p.intern(a.Group)}
}

func (n *rawNum) UnmarshalJSON(b []byte) error {
	if len(b) > 1 && b[0] == '"' {
		b = b[1 : len(b)-1]
	}
	*n = rawNum(b)
	return nil
}

// TestReaderMatchesLegacy: the byte-scanner reader gives the same Trace
// as the encoding/json one on every trace under testdata (the real H200
// ones too), gzip and plain, on a generated trace, on every cut of a
// trace (both fail, or both read the same), and on the fuzz seeds.
func TestReaderMatchesLegacy(t *testing.T) {
	var inputs []struct {
		name string
		data []byte
	}
	add := func(name string, data []byte) {
		inputs = append(inputs, struct {
			name string
			data []byte
		}{name, data})
	}
	files, err := filepath.Glob(filepath.Join("testdata", "*.json*"))
	if err != nil || len(files) < 4 {
		t.Fatalf("testdata traces: %v %v", files, err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		add(f, data)
		if strings.HasSuffix(f, ".gz") {
			zr, err := gzip.NewReader(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			plain, err := io.ReadAll(zr)
			if err != nil {
				t.Fatal(err)
			}
			add(f+" (decompressed)", plain)
			data = plain
		}
		for cut := 0; cut < len(data); cut += 1 + len(data)/157 {
			add(fmt.Sprintf("%s cut at %d", f, cut), data[:cut])
		}
	}
	gen, err := io.ReadAll(newGenTrace(1 << 20))
	if err != nil {
		t.Fatal(err)
	}
	add("generated", gen)
	for _, s := range []string{
		`[{"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pinned -> Device)","ts":"1.5","dur":2,"args":{"bytes":"64","stream":"stream 3"}}]`,
		`{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"aten::mm","ts":1,"dur":1,"args":{"External id":3,"Input Dims":[[2,3],[3,4]],"Input type":["float","float"]}},{"ph":"X","cat":"kernel","name":"gemm","ts":2,"dur":1,"args":{"External id":3}}]}`,
		`{"traceEvents":[{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","ts":0,"dur":5}],"distributedInfo":{"rank":"x"}}`,
		`{"traceEvents":[null,{"ph":5,"cat":"kernel"},{"ph":"X","cat":"kernel","name":"k\u00e9\n","ts":-1.5,"dur":"2e3","tid":"7","args":{"grid":[1,2.0,"x"],"block":null,"stream":null,"device":"dev 3","correlation":1e2}}]}`,
		`{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":1,"args":{"Collective name":"allreduce","In msg nelems":"12","Out msg nelems":12.0,"dtype":"Float","Group size":2,"Process Group Name":"0"}}]}`,
		`{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":1,"args":[]}],"deviceProperties":[{"id":0,"name":"H200"},{"id":"1"}]}`,
		`{"traceEvents":[{"PH":"X","Cat":"kernel","NAME":"k","Ts":1,"dUR":1,"args":{"\u017ftream":7,"EXTERNAL ID":2,"correlation":1,"\u212a":1}}]}`,
		`{}`, `[]`, `[1,2`, `"x"`, `{"traceEvents": {}}`, `{"traceEvents": []} x`, `{"traceEvents": []} {}`,
		`{"traceEvents": [{}, ]}`, `{"traceEvents": [{} {}]}`, `{"a":1,}`, ` [ ] `, "[\"\\x\"]", `[{"name":"\ud800"}]`,
		"\x1f\x8b\x00\x00",
	} {
		add(s, []byte(s))
	}
	for _, in := range inputs {
		want, werr := readLegacy(bytes.NewReader(in.data), "t.json")
		got, gerr := Read(bytes.NewReader(in.data), "t.json")
		if (werr == nil) != (gerr == nil) {
			t.Errorf("%s: error %v, the legacy reader's %v", in.name, gerr, werr)
			continue
		}
		if werr != nil {
			var ke *Error
			if !errors.As(gerr, &ke) || strings.Contains(gerr.Error(), "\n") {
				t.Errorf("%s: error %q is not one *kineto.Error line", in.name, gerr)
			}
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the traces differ:\n got %+v\nwant %+v", in.name, summary(got), summary(want))
		}
	}
}

// summary is a Trace short enough to print.
func summary(t *Trace) string {
	return fmt.Sprintf("rank %d/%d %q devices %v, %d ops, %d cpu, %d launches, steps %v, %d events, skipped %v, gzip %v, %d bytes",
		t.Rank, t.WorldSize, t.Backend, t.Devices, len(t.Ops), len(t.CPU), len(t.Launch), t.Steps, t.Events, t.Skipped, t.Gzip, t.Bytes)
}

// TestFastPathsMatchEncodingJSON: the reader's shortcuts for Input Dims,
// Input type and time fields give what encoding/json and micros give.
func TestFastPathsMatchEncodingJSON(t *testing.T) {
	p := reader{names: map[string]string{}}
	for _, raw := range []string{
		`[[4096,8192],[8192,4096]]`, ` [ [1, 2] , [] , [3] ] `, `[]`, `null`, `[[]]`, `[[1,2],null]`, `[[[1]],[2]]`,
		`[[1.5]]`, `[["a]"]]`, `[[-3, 9223372036854775807]]`, `[[1,],[2]]`, `{"a":1}`, `[1,[2]]`, `[[1]`, `[[1],]`,
	} {
		if got, want := p.dims([]byte(raw)), parseDims([]byte(raw)); !reflect.DeepEqual(got, want) {
			t.Errorf("dims(%s) = %#v, parseDims %#v", raw, got, want)
		}
	}
	for _, raw := range []string{
		`["c10::BFloat16","float"]`, `[]`, ` [ "a" , "" ] `, `null`, `["a\"b"]`, `["é"]`, `[1,"a"]`, `["a",]`, `["a" "b"]`, `"a"`,
	} {
		var want []string
		_ = json.Unmarshal([]byte(raw), &want)
		if got := p.strs([]byte(raw)); !reflect.DeepEqual(got, want) {
			t.Errorf("strs(%s) = %#v, encoding/json %#v", raw, got, want)
		}
	}
	for _, raw := range []string{`[16,32,1]`, `[ 2 ]`, `[]`, `[1,-2,"x"]`, `[1,2.0,3]`, `[4294967296,4294967296]`, `[0,"x"]`, `[3,"x",2]`, `[9999999999999999999]`} {
		p.s = newScanner(strings.NewReader(raw), 64)
		p.s.fill()
		f := field{from: 0, to: int64(len(raw)), first: '['}
		var all []int64
		_ = json.Unmarshal([]byte(raw), &all)
		if got, want := p.prod(f), prod(all); got != want {
			t.Errorf("prod(%s) = %d, want %d", raw, got, want)
		}
	}
	for _, s := range []string{"1700000000123.456", "-0.5", "-3.25", "1.", "12", "-7", "0.0001", "1e3", "+1.5", ".5", "-", "", "99999999999999.9", "999999999999999.9", "1.2.3"} {
		got, gok := fastMicros([]byte(s))
		want, wok := micros(rawNum(s))
		if gok && (got != want || !wok) {
			t.Errorf("fastMicros(%q) = %d, micros %d %v", s, got, want, wok)
		}
	}
}

// FuzzReadMatchesLegacy: on any text, the reader and the legacy one both
// fail (the reader with one *Error line) or read the same Trace.
func FuzzReadMatchesLegacy(f *testing.F) {
	data, err := os.ReadFile(fixture(f, "synthetic-tp2-rank0.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data[:min(len(data), 4000)])
	for _, s := range []string{
		`{"traceEvents":[null,{"PH":"X","Cat":"kernel","name":"k\u00e9","ts":"-1.5","dur":2e3,"args":{"grid":[1,2.0],"STREAM":"s 3","correlation":1e2}}],"distributedInfo":{"rank":1}}`,
		`[{"ph":"X","cat":"cpu_op","name":"aten::mm","ts":1,"dur":1,"args":{"External id":"3","Input Dims":[[2,3],[3,4]],"Input type":["float","float"]}}]`,
		`{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":1,"args":{"Collective name":"allreduce","In msg nelems":"12","Group size":2}}]} `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want, werr := readLegacy(bytes.NewReader(data), "f.json")
		// In small pieces, so that the reader's window is refilled
		// inside events.
		got, gerr := Read(&chunkReader{bytes.NewReader(data), 1 + len(data)%61}, "f.json")
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("error %v, the legacy reader's %v", gerr, werr)
		}
		if gerr != nil {
			var ke *Error
			if !errors.As(gerr, &ke) || strings.Contains(gerr.Error(), "\n") {
				t.Fatalf("error %q is not one *kineto.Error line", gerr)
			}
			return
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("the traces differ:\n got %+v\nwant %+v", summary(got), summary(want))
		}
	})
}
