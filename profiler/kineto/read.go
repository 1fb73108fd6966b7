package kineto

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/klauspost/compress/gzip"
)

// Read reads one trace from r, gzip-compressed (by its magic bytes) or
// plain. name labels errors.
//
// The text is read once, through a window of a few hundred KB: each
// event's fields are found by a byte scanner that checks JSON's syntax as
// it goes, and only the fields the analysis uses are converted (keys are
// matched exactly as torch writes them; others are skipped). Memory is
// the window plus what the Trace keeps.
func Read(r io.Reader, name string) (*Trace, error) {
	return readProgress(r, name, nil)
}

// readProgress is Read, calling progress (when not nil) with the number
// of bytes taken from r so far, every few MB.
func readProgress(r io.Reader, name string, progress func(int64)) (*Trace, error) {
	var src io.Reader = r
	if progress != nil {
		src = &countReader{r: r, f: progress}
	}
	br := bufio.NewReaderSize(src, 64<<10)
	t := &Trace{File: name, Rank: -1, CPU: map[int64]CPUOp{}, Launch: map[int64]int64{}, Skipped: map[string]int{}, Devices: map[int]string{}}
	var text io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, &Error{File: name, Msg: "cannot read the gzip header", Err: err}
		}
		defer zr.Close()
		t.Gzip = true
		text = zr
	}
	p := reader{t: t, s: newScanner(text, 256<<10), names: map[string]string{}, phKeys: map[string]string{}}
	if err := p.top(); err != nil {
		return nil, err
	}
	return t, nil
}

// countReader reports the bytes read through it every 4 MB.
type countReader struct {
	r       io.Reader
	n, last int64
	f       func(int64)
}

func (c *countReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += int64(n)
	if c.n-c.last >= 4<<20 || err != nil {
		c.last = c.n
		c.f(c.n)
	}
	return n, err
}

// reader turns the scanner's spans into a Trace.
type reader struct {
	t      *Trace
	s      *scanner
	names  map[string]string
	phKeys map[string]string
	sawEv  bool
	ev     event
	// scratch for Input Dims and Input type, reused from one op to the next
	flat    []int64
	starts  []int
	dimsOut [][]int64
	types   []string
	foldBuf [18]byte
}

// field is the raw text of one value of an event (quotes included), by
// stream offsets; first is its first byte, 0 when the event has none.
type field struct {
	from, to int64
	first    byte
	plain    bool // a string with no escape and no non-ASCII byte
}

// event holds the fields of one trace event that the analysis uses.
type event struct {
	ph, cat, name, tid, ts, dur field
	// args
	stream, device, correlation, extID, bytes, grid, block field
	dims, types, coll, inN, outN, dtype, gsize, group      field
}

// notObject is an event that is valid JSON but not an object.
type notObject struct{ kind string }

func (e *notObject) Error() string { return "an event is a JSON object, not a " + e.kind }

func (p *reader) fail(msg string, err error) error {
	off := p.s.off()
	var se *scanError
	if errors.As(err, &se) {
		off, err = se.off, se.err
		if !errors.Is(err, io.ErrUnexpectedEOF) && err != p.s.rerr {
			msg = "invalid JSON"
		}
	}
	return &Error{File: p.t.File, Offset: off, Gzip: p.t.Gzip, Msg: msg, Err: err}
}

// intern returns one copy of each name, so a million launches of one
// kernel hold its (often long) name once.
func (p *reader) intern(b []byte) string {
	if v, ok := p.names[string(b)]; ok {
		return v
	}
	s := string(b)
	if len(p.names) < 1<<16 {
		p.names[s] = s
	}
	return s
}

// text is a string field's content, unescaped; nil when the field is
// absent (or not a string).
func (p *reader) text(f field) []byte {
	if f.first != '"' {
		return nil
	}
	if f.plain {
		return p.s.span(f.from+1, f.to-1)
	}
	var s string
	_ = json.Unmarshal(p.s.span(f.from, f.to), &s) // the scanner checked it
	return []byte(s)
}

// str is a string field's content, interned.
func (p *reader) str(f field) string {
	if f.first != '"' {
		return ""
	}
	return p.intern(p.text(f))
}

// raw is a field's text; nil when absent.
func (p *reader) raw(f field) []byte {
	if f.first == 0 {
		return nil
	}
	return p.s.span(f.from, f.to)
}

// flex reads an integer written as a number or a string ("stream 7",
// "12"), and anything else as not ok, so that a field of an unexpected
// type does not stop the import.
func (p *reader) flex(f field) (int64, bool) {
	if f.first == 0 {
		return 0, false
	}
	b := p.s.span(f.from, f.to)
	if v, ok := smallInt(b); ok {
		return v, true
	}
	s := string(b)
	if b[0] == '"' {
		u, err := strconv.Unquote(s)
		if err != nil {
			return 0, false
		}
		if i := strings.LastIndexByte(u, ' '); i >= 0 {
			u = u[i+1:]
		}
		s = u
	}
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return v, true
	} else if x, err := strconv.ParseFloat(s, 64); err == nil && x == math.Trunc(x) && math.Abs(x) < 1<<62 {
		return int64(x), true
	}
	return 0, false
}

// smallInt reads -?[0-9]{1,18}, the common case, without allocating.
func smallInt(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if !isDigit(c) {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

// micros is a time field in nanoseconds (see micros).
func (p *reader) micros(f field) (int64, bool) {
	if f.first == 0 {
		return 0, false
	}
	b := p.s.span(f.from, f.to)
	if len(b) > 1 && b[0] == '"' {
		b = b[1 : len(b)-1]
	}
	if v, ok := fastMicros(b); ok {
		return v, true
	}
	return micros(rawNum(b))
}

// fastMicros is micros for the common text -?[0-9]{1,14}(\.[0-9]{0,3})?;
// ok is false for anything else (micros decides then).
func fastMicros(b []byte) (int64, bool) {
	i, neg := 0, len(b) > 0 && b[0] == '-'
	if neg {
		i = 1
	}
	start := i
	var w int64
	for i < len(b) && isDigit(b[i]) {
		w = w*10 + int64(b[i]-'0')
		i++
	}
	if n := i - start; n == 0 || n > 14 {
		return 0, false
	}
	var f int64
	if i < len(b) {
		if b[i] != '.' {
			return 0, false
		}
		i++
		fs := i
		for i < len(b) && isDigit(b[i]) {
			f = f*10 + int64(b[i]-'0')
			i++
		}
		if i != len(b) || i-fs > 3 {
			return 0, false
		}
		for k := i - fs; k < 3; k++ {
			f *= 10
		}
	}
	v := w*1000 + f
	if neg {
		v = -v
	}
	return v, true
}

// prod is the product of a list of integers ("grid": [16, 32, 1]), as
// prod(ints(f)) but without a slice in the common case.
func (p *reader) prod(f field) int64 {
	if f.first != '[' {
		return 0
	}
	b := trimWS(p.s.span(f.from+1, f.to-1))
	if len(b) == 0 {
		return 0
	}
	n := int64(1)
	for len(b) > 0 {
		e := b
		if i := bytes.IndexByte(b, ','); i >= 0 {
			e, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		x, ok := smallInt(trimWS(e))
		if !ok {
			return prod(p.ints(f))
		}
		if x < 0 || (x > 0 && n > math.MaxInt64/x) {
			return 0
		}
		n *= x
	}
	return n
}

// ints reads a list of integers ("grid": [16, 32, 1]) as encoding/json
// reads it into []int64.
func (p *reader) ints(f field) []int64 {
	if f.first != '[' {
		return nil
	}
	var out []int64
	b := p.s.span(f.from+1, f.to-1)
	for len(trimWS(b)) > 0 {
		e := b
		if i := bytes.IndexByte(b, ','); i >= 0 {
			e, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		v, ok := smallInt(trimWS(e))
		if !ok {
			out = nil
			_ = json.Unmarshal(p.s.span(f.from, f.to), &out) // an element of another kind stays 0
			return out
		}
		out = append(out, v)
	}
	if out == nil {
		out = []int64{}
	}
	return out
}

func trimWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\n' || b[0] == '\r' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\n' || b[len(b)-1] == '\r' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// top reads the trace: an object holding traceEvents, or the array form
// of Chrome's format (the events alone).
func (p *reader) top() error {
	s := p.s
	c, ok := s.ws()
	if !ok {
		if s.rerr != nil {
			return p.fail("cannot read the trace", s.endErr())
		}
		return &Error{File: p.t.File, Gzip: p.t.Gzip, Msg: "the file is empty"}
	}
	switch c {
	case '[':
		s.pos++
		if err := p.events(); err != nil {
			return err
		}
		return p.end()
	case '{':
		s.pos++
	default:
		if _, _, _, err := s.value(); err != nil {
			return p.fail("cannot read the trace", err)
		}
		return p.fail("the trace is not a JSON object", nil)
	}
	c, ok = s.ws()
	if !ok {
		return p.fail("the trace object does not end", s.endErr())
	}
	for c != '}' {
		if c != '"' {
			return p.fail("", s.synErr(s.off(), "invalid character %s looking for beginning of object key string", quoteChar(c)))
		}
		s.mark = s.off()
		from, to, plain, err := s.str()
		if err != nil {
			return p.fail("cannot read a key of the trace object", err)
		}
		key := string(p.text(field{from - 1, to + 1, '"', plain}))
		s.mark = -1
		if err := s.expect(':', "after object key"); err != nil {
			return p.fail("cannot read a key of the trace object", err)
		}
		switch key {
		case "traceEvents":
			c, ok := s.ws()
			if !ok {
				return p.fail("cannot read traceEvents", s.endErr())
			}
			if c != '[' {
				if _, _, _, err := s.value(); err != nil {
					return p.fail("cannot read traceEvents", err)
				}
				return p.fail("traceEvents is not an array", nil)
			}
			s.pos++
			if err := p.events(); err != nil {
				return err
			}
		case "distributedInfo", "deviceProperties":
			if err := p.header(key); err != nil {
				return err
			}
		default:
			if _, _, _, err := s.value(); err != nil {
				return p.fail(fmt.Sprintf("cannot read the trace's %q", key), err)
			}
		}
		if c, ok = s.ws(); !ok {
			return p.fail("the trace object does not end", s.endErr())
		}
		switch c {
		case ',':
			s.pos++
			if c, ok = s.ws(); !ok {
				return p.fail("the trace object does not end", s.endErr())
			}
			if c == '}' {
				return p.fail("", s.synErr(s.off(), "invalid character '}' looking for beginning of object key string"))
			}
		case '}':
		default:
			return p.fail("", s.synErr(s.off(), "invalid character %s after object key:value pair", quoteChar(c)))
		}
	}
	s.pos++
	if !p.sawEv {
		return &Error{File: p.t.File, Offset: s.off(), Gzip: p.t.Gzip, Msg: "the trace has no traceEvents array"}
	}
	return p.end()
}

// header reads distributedInfo or deviceProperties; a field of another
// type than expected is left out.
func (p *reader) header(key string) error {
	s := p.s
	if _, ok := s.ws(); !ok {
		return p.fail(fmt.Sprintf("cannot read %s", key), s.endErr())
	}
	s.mark = s.off()
	defer func() { s.mark = -1 }()
	_, from, to, err := s.value()
	if err != nil {
		return p.fail(fmt.Sprintf("cannot read %s", key), err)
	}
	raw := s.span(from, to)
	if key == "distributedInfo" {
		var di struct {
			Rank      *int   `json:"rank"`
			WorldSize int    `json:"world_size"`
			Backend   string `json:"backend"`
		}
		_ = json.Unmarshal(raw, &di) // type errors leave the field out
		if di.Rank != nil {
			p.t.Rank = *di.Rank
		}
		p.t.WorldSize, p.t.Backend = di.WorldSize, di.Backend
		return nil
	}
	var dp []struct {
		ID   int    `json:"id"`
		Name string `json:"name"`
	}
	_ = json.Unmarshal(raw, &dp)
	for _, d := range dp {
		p.t.Devices[d.ID] = d.Name
	}
	return nil
}

// end checks that nothing but white space follows the trace.
func (p *reader) end() error {
	s := p.s
	p.t.Bytes = s.off()
	c, ok := s.ws()
	if !ok {
		if s.rerr != nil {
			return p.fail("cannot read the trace", s.endErr())
		}
		return nil
	}
	if c != '{' && c != '[' {
		if err := s.scalar(c); err != nil {
			return p.fail("text follows the end of the trace", err)
		}
	}
	return p.fail("text follows the end of the trace", nil)
}

// events reads the traceEvents array, its '[' read.
func (p *reader) events() error {
	p.sawEv = true
	s := p.s
	c, ok := s.ws()
	if !ok {
		return p.fail("traceEvents does not end", s.endErr())
	}
	if c == ']' {
		s.pos++
		return nil
	}
	for {
		off := s.off()
		s.mark = off
		if err := p.event(); err != nil {
			var no *notObject
			if errors.As(err, &no) {
				return &Error{File: p.t.File, Offset: off, Gzip: p.t.Gzip, Msg: fmt.Sprintf("cannot read event %d", p.t.Events+1), Err: err}
			}
			return p.fail(fmt.Sprintf("cannot read event %d (it starts near byte %d)", p.t.Events+1, off), err)
		}
		p.t.Events++
		if err := p.keep(off); err != nil {
			return err
		}
		s.mark = -1
		if c, ok = s.ws(); !ok {
			return p.fail("traceEvents does not end", s.endErr())
		}
		switch c {
		case ',':
			s.pos++
		case ']':
			s.pos++
			return nil
		default:
			return p.fail("", s.synErr(s.off(), "invalid character %s after array element", quoteChar(c)))
		}
	}
}

// Value kinds a field accepts: any, strings, lists (and null).
const (
	anyKind  = ""
	strKind  = `"`
	listKind = "[n"
)

// field reads one value into f when its first byte is of kinds (a value
// of another kind is checked and skipped, as encoding/json leaves a field
// of another type alone).
func (p *reader) field(f *field, kinds string) error {
	s := p.s
	c, ok := s.ws()
	if !ok {
		return s.endErr()
	}
	from, plain := s.off(), false
	var err error
	if c == '"' {
		_, _, plain, err = s.str()
	} else {
		_, _, _, err = s.value()
	}
	if err != nil {
		return err
	}
	if kinds == anyKind || strings.IndexByte(kinds, c) >= 0 {
		*f = field{from: from, to: s.off(), first: c, plain: plain}
	}
	return nil
}

// event reads one event into p.ev.
func (p *reader) event() error {
	s := p.s
	p.ev = event{}
	c, ok := s.ws()
	if !ok {
		return s.endErr()
	}
	switch c {
	case '{':
	case 'n':
		return s.literal("null")
	default:
		if _, _, _, err := s.value(); err != nil {
			return err
		}
		kind := map[byte]string{'"': "string", '[': "array", 't': "bool", 'f': "bool"}[c]
		if kind == "" {
			kind = "number"
		}
		return &notObject{kind}
	}
	return p.object(false)
}

// eventKey reads the value of one key of an event.
func (p *reader) eventKey(key []byte) error {
	s, ev := p.s, &p.ev
	switch string(key) {
	case "ph":
		return p.field(&ev.ph, strKind)
	case "cat":
		return p.field(&ev.cat, strKind)
	case "name":
		return p.field(&ev.name, strKind)
	case "tid":
		return p.field(&ev.tid, anyKind)
	case "ts":
		return p.field(&ev.ts, anyKind)
	case "dur":
		return p.field(&ev.dur, anyKind)
	case "args":
		c, ok := s.ws()
		if !ok {
			return s.endErr()
		}
		if c != '{' {
			_, _, _, err := s.value()
			return err
		}
		return p.object(true)
	}
	if k := eventKeys(p.fold(key, 4)); k != "" {
		return p.eventKey([]byte(k))
	}
	_, _, _, err := s.value()
	return err
}

// eventKeys and argKeys give the key read for its upper-case fold, or
// "": encoding/json (the reader before this one) matched keys ignoring
// case, and so does this one.
func eventKeys(up []byte) string {
	switch string(up) {
	case "PH", "CAT", "NAME", "TID", "TS", "DUR", "ARGS":
		return strings.ToLower(string(up))
	}
	return ""
}

func argKeys(up []byte) string {
	switch string(up) {
	case "STREAM", "DEVICE", "CORRELATION", "BYTES", "GRID", "BLOCK", "DTYPE":
		return strings.ToLower(string(up))
	case "EXTERNAL ID":
		return "External id"
	case "INPUT DIMS":
		return "Input Dims"
	case "INPUT TYPE":
		return "Input type"
	case "COLLECTIVE NAME":
		return "Collective name"
	case "IN MSG NELEMS":
		return "In msg nelems"
	case "OUT MSG NELEMS":
		return "Out msg nelems"
	case "GROUP SIZE":
		return "Group size"
	case "PROCESS GROUP NAME":
		return "Process Group Name"
	}
	return ""
}

// fold returns key in upper case as bytes.EqualFold folds it, in a
// buffer of p's, or nil when it is longer than maxLen (the longest key
// looked up) or holds a letter that folds to no ASCII one.
func (p *reader) fold(key []byte, maxLen int) []byte {
	if len(key) > 3*maxLen {
		return nil
	}
	up := p.foldBuf[:0]
	for i := 0; i < len(key); {
		if len(up) == maxLen {
			return nil
		}
		c := key[i]
		if c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			up = append(up, c)
			i++
			continue
		}
		// The only non-ASCII letters that fold to ASCII ones: the
		// Kelvin sign and the long s.
		r, n := utf8.DecodeRune(key[i:])
		switch r {
		case '\u212a':
			up = append(up, 'K')
		case '\u017f':
			up = append(up, 'S')
		default:
			return nil
		}
		i += n
	}
	return up
}

// arg reads the value of one key of an event's args.
func (p *reader) arg(key []byte) error {
	ev := &p.ev
	switch string(key) {
	case "stream":
		return p.field(&ev.stream, anyKind)
	case "device":
		return p.field(&ev.device, anyKind)
	case "correlation":
		return p.field(&ev.correlation, anyKind)
	case "External id":
		return p.field(&ev.extID, anyKind)
	case "bytes":
		return p.field(&ev.bytes, anyKind)
	case "grid":
		return p.field(&ev.grid, listKind)
	case "block":
		return p.field(&ev.block, listKind)
	case "Input Dims":
		return p.field(&ev.dims, anyKind)
	case "Input type":
		return p.field(&ev.types, listKind)
	case "Collective name":
		return p.field(&ev.coll, strKind)
	case "In msg nelems":
		return p.field(&ev.inN, anyKind)
	case "Out msg nelems":
		return p.field(&ev.outN, anyKind)
	case "dtype":
		return p.field(&ev.dtype, strKind)
	case "Group size":
		return p.field(&ev.gsize, anyKind)
	case "Process Group Name":
		return p.field(&ev.group, strKind)
	}
	if k := argKeys(p.fold(key, 18)); k != "" {
		return p.arg([]byte(k))
	}
	_, _, _, err := p.s.value()
	return err
}

// object reads an event (or, with args, an event's args) whose '{' is
// next, reading the value of each key with eventKey (or arg).
func (p *reader) object(args bool) error {
	s := p.s
	s.pos++
	c, ok := s.ws()
	if !ok {
		return s.endErr()
	}
	if c == '}' {
		s.pos++
		return nil
	}
	for {
		if c != '"' {
			return s.synErr(s.off(), "invalid character %s looking for beginning of object key string", quoteChar(c))
		}
		from, to, plain, err := s.str()
		if err != nil {
			return err
		}
		if err := s.expect(':', "after object key"); err != nil {
			return err
		}
		// The key's bytes are taken after the colon is read: reading it
		// may refill the window, which moves what it holds.
		key := p.text(field{from - 1, to + 1, '"', plain})
		if args {
			err = p.arg(key)
		} else {
			err = p.eventKey(key)
		}
		if err != nil {
			return err
		}
		if c, ok = s.ws(); !ok {
			return s.endErr()
		}
		switch c {
		case ',':
			s.pos++
			if c, ok = s.ws(); !ok {
				return s.endErr()
			}
		case '}':
			s.pos++
			return nil
		default:
			return s.synErr(s.off(), "invalid character %s after object key:value pair", quoteChar(c))
		}
	}
}

// keep files the event just read away.
func (p *reader) keep(off int64) error {
	ev := &p.ev
	ph := p.text(ev.ph)
	if string(ph) != "X" {
		k, ok := p.phKeys[string(ph)]
		if !ok {
			k = "ph " + string(ph)
			p.phKeys[string(ph)] = k
		}
		p.t.Skipped[k]++
		return nil
	}
	cat := p.text(ev.cat)
	bad := func(what string) error {
		return &Error{File: p.t.File, Offset: off, Gzip: p.t.Gzip,
			Msg: fmt.Sprintf("event %d (%s %q) has %s", p.t.Events, cat, clip(string(p.text(ev.name)), 60), what)}
	}
	switch string(cat) {
	case "kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset":
		ts, ok := p.micros(ev.ts)
		if !ok {
			return bad("no valid ts")
		}
		dur, ok := p.micros(ev.dur)
		if !ok || dur < 0 {
			return bad("no valid dur")
		}
		corr, _ := p.flex(ev.correlation)
		ext, _ := p.flex(ev.extID)
		nb, _ := p.flex(ev.bytes)
		op := GPUOp{Name: p.str(ev.name), Start: ts, Dur: dur, Correlation: corr,
			ExternalID: ext, Bytes: nb, Grid: p.prod(ev.grid), Block: p.prod(ev.block)}
		switch string(cat) {
		case "gpu_memcpy", "Memcpy":
			op.Kind = Memcpy
		case "gpu_memset", "Memset":
			op.Kind = Memset
		}
		if ev.stream.first != 0 && ev.stream.first != 'n' {
			v, _ := p.flex(ev.stream)
			op.Stream = int(v)
		} else {
			v, _ := p.flex(ev.tid)
			op.Stream = int(v)
		}
		if ev.device.first != 0 && ev.device.first != 'n' {
			v, _ := p.flex(ev.device)
			op.Device = int(v)
		}
		op.Comm = p.commArgs()
		p.t.Ops = append(p.t.Ops, op)
	case "cpu_op", "Operator":
		ext, ok := p.flex(ev.extID)
		if !ok {
			return nil
		}
		c := CPUOp{Name: p.str(ev.name), Comm: p.commArgs()}
		if rawDims := p.raw(ev.dims); len(rawDims) > 0 {
			var types []string
			if raw := p.raw(ev.types); raw != nil {
				types = p.strs(raw)
			}
			d := p.dims(rawDims)
			c.GEMM = gemmFromOp(c.Name, d, types)
			c.InputBytes = inputBytes(d, types)
		}
		if c.GEMM != nil || c.InputBytes > 0 || c.Comm != nil {
			p.t.CPU[ext] = c
		}
	case "cuda_runtime", "cuda_driver", "Runtime", "Driver":
		corr, ok := p.flex(ev.correlation)
		if ts, ok2 := p.micros(ev.ts); ok2 && ok {
			p.t.Launch[corr] = ts
		}
	case "user_annotation", "gpu_user_annotation":
		name := p.text(ev.name)
		if !strings.HasPrefix(string(name), "ProfilerStep#") {
			p.t.Skipped[p.intern(cat)]++
			return nil
		}
		ts, ok1 := p.micros(ev.ts)
		dur, ok2 := p.micros(ev.dur)
		if !ok1 || !ok2 || dur < 0 {
			return bad("no valid ts or dur")
		}
		p.t.Steps = append(p.t.Steps, Span{Name: string(name), Start: ts, Dur: dur, GPU: string(cat) == "gpu_user_annotation"})
	default:
		p.t.Skipped[p.intern(cat)]++
	}
	return nil
}

func (p *reader) commArgs() *CommArgs {
	ev := &p.ev
	name := p.text(ev.coll)
	if len(name) == 0 {
		return nil
	}
	in, _ := p.flex(ev.inN)
	out, _ := p.flex(ev.outN)
	gs, _ := p.flex(ev.gsize)
	return &CommArgs{Name: p.intern(name), InNelems: in, OutNelems: out,
		DType: p.str(ev.dtype), GroupSize: int(gs), Group: p.str(ev.group)}
}

// dims is parseDims for the common text, lists of integers in a list
// ([[4096, 8192], [8192, 4096], []]), without encoding/json; anything
// else goes to parseDims.
// The slices it returns are reused by the next call.
func (p *reader) dims(raw []byte) [][]int64 {
	b := trimWS(raw)
	if len(b) < 2 || b[0] != '[' || b[len(b)-1] != ']' {
		return parseDims(raw)
	}
	b = trimWS(b[1 : len(b)-1])
	flat, starts := p.flat[:0], p.starts[:0]
	defer func() { p.flat, p.starts = flat, starts }()
	for len(b) > 0 {
		if b[0] != '[' {
			return parseDims(raw)
		}
		end := bytes.IndexByte(b, ']')
		if end < 0 {
			return parseDims(raw)
		}
		in := trimWS(b[1:end])
		starts = append(starts, len(flat))
		for len(in) > 0 {
			e := in
			if i := bytes.IndexByte(in, ','); i >= 0 {
				e, in = in[:i], in[i+1:]
				if len(trimWS(in)) == 0 {
					return parseDims(raw)
				}
			} else {
				in = nil
			}
			v, ok := smallInt(trimWS(e))
			if !ok {
				return parseDims(raw)
			}
			flat = append(flat, v)
		}
		b = trimWS(b[end+1:])
		if len(b) > 0 {
			if b[0] != ',' {
				return parseDims(raw)
			}
			b = trimWS(b[1:])
			if len(b) == 0 {
				return parseDims(raw)
			}
		}
	}
	out := p.dimsOut[:0]
	for range starts {
		out = append(out, nil)
	}
	p.dimsOut = out
	for i, s := range starts {
		e := len(flat)
		if i+1 < len(starts) {
			e = starts[i+1]
		}
		out[i] = flat[s:e:e]
	}
	return out
}

// strs reads a list of strings ("Input type") as encoding/json reads it
// into []string, with the common case (plain strings) interned.
func (p *reader) strs(raw []byte) []string {
	b := trimWS(raw)
	if len(b) >= 2 && b[0] == '[' && b[len(b)-1] == ']' {
		out := p.types[:0]
		defer func() { p.types = out }()
		b = trimWS(b[1 : len(b)-1])
		for len(b) > 0 {
			if b[0] != '"' {
				break
			}
			end := bytes.IndexByte(b[1:], '"') + 1
			if end == 0 {
				break
			}
			s := b[1:end]
			if bytes.IndexByte(s, '\\') >= 0 || !ascii(s) {
				break
			}
			out = append(out, p.intern(s))
			b = trimWS(b[end+1:])
			if len(b) == 0 {
				if out == nil {
					out = []string{}
				}
				return out
			}
			if b[0] != ',' {
				break
			}
			if b = trimWS(b[1:]); len(b) == 0 {
				break
			}
		}
		if len(b) == 0 && out == nil {
			return []string{}
		}
	}
	var out []string
	_ = json.Unmarshal(raw, &out) // an element of another type stays ""
	return out
}

func ascii(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 || c < 0x20 {
			return false
		}
	}
	return true
}
