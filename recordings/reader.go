package recordings

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"
)

// readChunk is how much of a payload the reader allocates ahead of the
// bytes actually there, so a corrupt length cannot make it allocate much.
const readChunk = 64 << 10

// Reader reads a recording frame by frame. It is not safe for concurrent
// use.
type Reader struct {
	in     input
	closer io.Closer
	header Header
	off    int64 // offset of the next frame
	// last is the time of the last intact frame: frames are written in
	// time order, so a resynchronization never lands on an older one.
	last time.Duration
	dec  *zstd.Decoder

	pending  []Event
	damage   *DamageError // returned once pending is empty; reading then goes on
	err      error        // returned once pending is empty, then forever
	complete bool
}

// input is the reader's source: bytes a resynchronization read ahead and
// gave back first, then the file.
type input struct {
	back []byte
	br   *bufio.Reader
}

// Read implements io.Reader.
func (in *input) Read(p []byte) (int, error) {
	if len(in.back) > 0 {
		n := copy(p, in.back)
		in.back = in.back[n:]
		return n, nil
	}
	return in.br.Read(p)
}

// Recording is a whole recording in memory.
type Recording struct {
	Header Header
	// Events are every event of every intact frame, in order: up to the
	// end, resuming after each damaged range.
	Events []Event
	// Damages are the damaged byte ranges, in order; empty when the
	// recording reads cleanly to its end.
	Damages []*DamageError
	// Damage is the first of Damages, nil when there is none.
	Damage *DamageError
	// Complete is true when the recorder closed the file cleanly (its end
	// frame was read).
	Complete bool
}

// ReadAll reads the recording at path. Damage (a crash's cut tail, a
// flipped bit) is not an error: the reader skips each damaged range to the
// next intact frame, and Damages says where they are and why. A file that
// is not a recording, or whose header cannot be read, is an error.
func ReadAll(path string) (*Recording, error) {
	r, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	rec, err := readAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rec, nil
}

// readAll reads every event of an open reader to its end, recording the
// damaged ranges on the way rather than returning them.
func readAll(r *Reader) (*Recording, error) {
	rec := &Recording{Header: r.Header()}
	for {
		ev, err := r.Next()
		if err == nil {
			rec.Events = append(rec.Events, ev)
			continue
		}
		var d *DamageError
		if errors.As(err, &d) {
			rec.Damages = append(rec.Damages, d)
			if rec.Damage == nil {
				rec.Damage = d
			}
			continue
		}
		if !errors.Is(err, io.EOF) {
			return nil, err
		}
		rec.Complete = r.Complete()
		return rec, nil
	}
}

// Open opens the recording at path and reads its header.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open recording: %w", err)
	}
	r, err := NewReader(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r.closer = f
	return r, nil
}

// NewReader reads a recording's preamble and header from src and returns
// a reader positioned at its first event.
func NewReader(src io.Reader) (*Reader, error) {
	r := &Reader{in: input{br: bufio.NewReaderSize(src, 64<<10)}}
	var pre [preambleSize]byte
	n, err := io.ReadFull(&r.in, pre[:])
	switch {
	case n == 0 && errors.Is(err, io.EOF):
		return nil, errors.New("not a c3lab recording: the file is empty")
	case n < len(magic) && !bytes.HasPrefix([]byte(magic), pre[:n]),
		n >= len(magic) && string(pre[:len(magic)]) != magic:
		return nil, errors.New("not a c3lab recording")
	case err != nil && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)):
		return nil, errors.New("truncated c3lab recording: it ends inside its preamble")
	case err != nil:
		return nil, fmt.Errorf("read recording: %w", err)
	}
	schema := binary.LittleEndian.Uint32(pre[len(magic):])
	if schema == 0 {
		return nil, errors.New("damaged c3lab recording: schema version 0")
	}
	if schema > SchemaVersion {
		return nil, fmt.Errorf("written by a newer c3lab (schema %d); this c3lab reads up to %d", schema, SchemaVersion)
	}
	r.off = int64(preambleSize)

	h, payload, err := r.readFrame()
	if err != nil {
		var d *frameDamage
		switch {
		case errors.Is(err, io.EOF):
			return nil, errors.New("truncated c3lab recording: it has no header")
		case errors.As(err, &d):
			return nil, fmt.Errorf("damaged c3lab recording header: %s", d.reason)
		}
		return nil, err
	}
	if h.typ != frameHeader {
		return nil, fmt.Errorf("damaged c3lab recording: first frame is type 0x%02x, not a header", h.typ)
	}
	if h.flags&flagZstd != 0 {
		if payload, err = r.decompress(payload); err != nil {
			return nil, fmt.Errorf("damaged c3lab recording header: %w", err)
		}
	}
	if err := json.Unmarshal(payload, &r.header); err != nil {
		return nil, fmt.Errorf("damaged c3lab recording header: %w", err)
	}
	if r.header.Schema != int(schema) {
		return nil, fmt.Errorf("damaged c3lab recording: header says schema %d, preamble %d", r.header.Schema, schema)
	}
	return r, nil
}

// Header returns the recording's header.
func (r *Reader) Header() Header { return r.header }

// Complete reports whether the reader met the end frame a clean Close
// writes (so far: it is final once Next returned io.EOF).
func (r *Reader) Complete() bool { return r.complete }

// Next returns the next event. Where the recording is damaged it returns a
// *DamageError, once, after every event before it, and then goes on with
// the next intact frame. At the end it returns io.EOF, and so on every
// later call; so too an error reading the file.
func (r *Reader) Next() (Event, error) {
	for {
		if len(r.pending) > 0 {
			ev := r.pending[0]
			r.pending[0] = Event{}
			r.pending = r.pending[1:]
			if ev.Result != nil && r.header.Schema < 2 {
				// Recorded before graphs: fill the figures it lacks.
				ev.Result.CompleteV1()
			}
			return ev, nil
		}
		if d := r.damage; d != nil {
			r.damage = nil
			return Event{}, d
		}
		if r.err != nil {
			return Event{}, r.err
		}
		evs, err := r.advance()
		r.pending = evs
		var d *DamageError
		if errors.As(err, &d) {
			r.damage = d
		} else {
			r.err = err
		}
	}
}

// Close releases the file (when the reader opened it) and the decoder.
func (r *Reader) Close() error {
	if r.dec != nil {
		r.dec.Close()
		r.dec = nil
	}
	if r.closer != nil {
		c := r.closer
		r.closer = nil
		return c.Close()
	}
	return nil
}

// advance reads the next frame and returns its events and what follows
// them: nil when reading goes on, a *DamageError for a damaged range
// (reading goes on after it), io.EOF, or a read error.
func (r *Reader) advance() ([]Event, error) {
	at := r.off
	if r.complete {
		// Nothing may follow the end frame: whatever does is one damaged
		// range, to the end of the file.
		n, err := io.Copy(io.Discard, &r.in)
		r.off += n
		switch {
		case err != nil:
			return nil, fmt.Errorf("read recording at byte %d: %w", r.off, err)
		case n == 0:
			return nil, io.EOF
		}
		return nil, &DamageError{Offset: at, End: r.off, Reason: "data after the end frame"}
	}
	h, payload, err := r.readFrame()
	var fd *frameDamage
	if errors.As(err, &fd) {
		return nil, r.skip(at, fd)
	}
	if err != nil {
		return nil, err
	}
	// The frame is intact (whole, its checksum holds); a problem with its
	// content loses this frame only.
	bad := func(format string, a ...any) error {
		return &DamageError{Offset: at, End: r.off, Frames: 1, Reason: fmt.Sprintf(format, a...)}
	}
	r.last = max(r.last, h.time)
	if h.typ == frameHeader {
		return nil, bad("a second header frame")
	}
	if !knownType(h.typ, false) {
		if h.flags&flagOptional != 0 {
			return nil, nil // an optional frame of a type this version does not know
		}
		return nil, bad("unknown frame type 0x%02x", h.typ)
	}
	if h.flags&flagZstd != 0 {
		if payload, err = r.decompress(payload); err != nil {
			return nil, bad("%v", err)
		}
	}
	switch {
	case h.typ == frameEnd:
		var end endPayload
		if err := json.Unmarshal(payload, &end); err != nil {
			return nil, bad("undecodable end payload: %v", err)
		}
		r.complete = true
		return nil, nil
	case h.typ == frameBatch:
		evs, reason := r.decodeBatch(payload)
		if reason != "" {
			return evs, bad("%s", reason)
		}
		return evs, nil
	}
	ev, err := decodeEvent(Kind(h.typ), h.time, payload)
	if err != nil {
		return nil, bad("%v", err)
	}
	return []Event{ev}, nil
}

// skip steps over a broken frame that starts at at: it resynchronizes on
// the next intact frame and returns the damaged range, or a read error.
func (r *Reader) skip(at int64, fd *frameDamage) error {
	end, err := r.resync(at, fd.raw)
	if err != nil {
		return err
	}
	d := &DamageError{Offset: at, End: end, Reason: fd.reason}
	// When the broken frame's own length leads to the intact frame, the
	// range is that one frame.
	if len(fd.raw) >= frameHeaderSize {
		h := parseHead(fd.raw)
		if h.sane() && at+frameHeaderSize+int64(h.length) == end {
			d.Frames = 1
		}
	}
	return d
}

// maxResyncChunk is how much the scan for an intact frame reads at a time.
const maxResyncChunk = readChunk

// resync looks for the next intact frame after a broken one that starts
// at at, whose bytes read so far are raw. It scans byte by byte for a
// frame head that could be one (see candidate) and whose checksum holds
// over the head and the payload, then resumes reading there. It returns
// the offset it resumes at: that frame's, or the end of the file when no
// intact frame follows.
func (r *Reader) resync(at int64, raw []byte) (int64, error) {
	buf := raw[min(len(raw), 1):] // the scan owns raw
	base := at + 1                // the offset of buf[0]
	eof := false
	// fill reads until buf holds n bytes or the file ends.
	fill := func(n int) error {
		for len(buf) < n && !eof {
			if cap(buf)-len(buf) < maxResyncChunk {
				buf = slices.Grow(buf, max(maxResyncChunk, min(n-len(buf), len(buf))))
			}
			m, err := r.in.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+m]
			switch {
			case errors.Is(err, io.EOF):
				eof = true
			case err != nil:
				return fmt.Errorf("read recording at byte %d: %w", base+int64(len(buf)), err)
			}
		}
		return nil
	}
	for p := 0; ; p++ {
		if p >= maxResyncChunk && p >= len(buf)/2 {
			// Drop what was scanned, in place, so a long damaged range
			// costs no memory (at least half the buffer at a time, so the
			// copying stays linear).
			buf = buf[:copy(buf, buf[p:])]
			base += int64(p)
			p = 0
		}
		if err := fill(p + frameHeaderSize + len(zstdMagic)); err != nil {
			return 0, err
		}
		if len(buf)-p < frameHeaderSize {
			r.off = base + int64(len(buf))
			return r.off, nil
		}
		h := parseHead(buf[p:])
		if !r.candidate(h, buf[p+frameHeaderSize:]) {
			continue
		}
		n := frameHeaderSize + int(h.length)
		if err := fill(p + n); err != nil {
			return 0, err
		}
		if len(buf)-p < n || frameCRC(buf[p:], buf[p+frameHeaderSize:p+n]) != h.crc {
			continue
		}
		r.in.back = append(buf[p:len(buf):len(buf)], r.in.back...)
		r.off = base + int64(p)
		return r.off, nil
	}
}

// zstdMagic starts every zstd frame.
const zstdMagic = "\x28\xb5\x2f\xfd"

// candidate reports whether a frame head, followed by the bytes after it
// (as many as are there, at least the first few of the payload), could
// start an intact frame where the reader resynchronizes: an event, batch
// or end frame with known flags and a length within the limit, no older
// than the last intact frame, whose payload starts as that frame's
// payloads do (a zstd frame, a JSON value, or a batch's first record).
// Optional frames of unknown types are not candidates; the reader skips
// them anyway.
func (r *Reader) candidate(h frameHead, payload []byte) bool {
	if !h.sane() || !knownType(h.typ, false) || h.time < r.last || h.length < 2 {
		return false
	}
	if len(payload) > int(h.length) {
		payload = payload[:h.length]
	}
	switch {
	case len(payload) < min(int(h.length), len(zstdMagic)):
		return false // the file ends inside it
	case h.flags&flagZstd != 0:
		return string(payload[:min(len(payload), len(zstdMagic))]) == zstdMagic
	case h.typ == frameBatch:
		return len(payload) >= 2 && payload[1]&^knownFlags == 0 &&
			(Kind(payload[0]).valid() || payload[1]&flagOptional != 0)
	}
	// JSON: an object, an array, null, or (from another writer) leading
	// white space.
	return strings.IndexByte("{[n \t\r\n", payload[0]) >= 0
}

// decodeBatch splits a batch payload into events; on damage it returns the
// events before it and the reason.
func (r *Reader) decodeBatch(b []byte) ([]Event, string) {
	var evs []Event
	for pos := 0; pos < len(b); {
		if len(b)-pos < frameHeaderSize {
			return evs, fmt.Sprintf("batch record at byte %d: truncated header", pos)
		}
		h := parseHead(b[pos:])
		if reason := h.check(); reason != "" {
			return evs, fmt.Sprintf("batch record at byte %d: %s", pos, reason)
		}
		if !knownType(h.typ, true) && h.flags&flagOptional == 0 {
			return evs, fmt.Sprintf("batch record at byte %d: unknown type 0x%02x", pos, h.typ)
		}
		if uint64(len(b)-pos-frameHeaderSize) < uint64(h.length) {
			return evs, fmt.Sprintf("batch record at byte %d: truncated payload", pos)
		}
		head := b[pos : pos+frameHeaderSize]
		payload := b[pos+frameHeaderSize : pos+frameHeaderSize+int(h.length)]
		if frameCRC(head, payload) != h.crc {
			return evs, fmt.Sprintf("batch record at byte %d: checksum mismatch", pos)
		}
		if h.flags&flagZstd != 0 {
			var err error
			if payload, err = r.decompress(payload); err != nil {
				return evs, fmt.Sprintf("batch record at byte %d: %v", pos, err)
			}
		}
		if Kind(h.typ).valid() {
			ev, err := decodeEvent(Kind(h.typ), h.time, payload)
			if err != nil {
				return evs, fmt.Sprintf("batch record at byte %d: %v", pos, err)
			}
			evs = append(evs, ev)
		}
		pos += frameHeaderSize + int(h.length)
	}
	return evs, ""
}

// frameDamage says that the frame at r.off is broken: cut short, or its
// head or checksum wrong. raw holds its bytes read so far, where the
// search for the next intact frame starts.
type frameDamage struct {
	reason string
	raw    []byte
}

// Error implements error.
func (d *frameDamage) Error() string { return d.reason }

// readFrame reads the frame at r.off and checks that it is whole and that
// its checksum holds; it returns its header and payload, as stored, and
// moves r.off past it. At a clean end it returns io.EOF; a broken frame
// is a *frameDamage; other read errors are returned wrapped.
func (r *Reader) readFrame() (frameHead, []byte, error) {
	at := r.off
	var hb [frameHeaderSize]byte
	n, err := io.ReadFull(&r.in, hb[:])
	broken := func(raw []byte, format string, a ...any) error {
		return &frameDamage{reason: fmt.Sprintf(format, a...), raw: raw}
	}
	switch {
	case n == 0 && errors.Is(err, io.EOF):
		return frameHead{}, nil, io.EOF
	case errors.Is(err, io.ErrUnexpectedEOF):
		return frameHead{}, nil, broken(hb[:n], "truncated frame header (%d of %d bytes)", n, frameHeaderSize)
	case err != nil:
		return frameHead{}, nil, fmt.Errorf("read recording at byte %d: %w", at, err)
	}
	h := parseHead(hb[:])
	if reason := h.check(); reason != "" {
		return frameHead{}, nil, broken(hb[:], "%s", reason)
	}
	// The frame's bytes, head then payload: all of them are where a
	// resynchronization starts should the frame be broken.
	raw, err := readPayload(&r.in, hb[:], int(h.length))
	payload := raw[frameHeaderSize:]
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return frameHead{}, nil, broken(raw, "truncated frame: %d of %d payload bytes", len(payload), h.length)
	}
	if err != nil {
		return frameHead{}, nil, fmt.Errorf("read recording at byte %d: %w", at, err)
	}
	if frameCRC(hb[:], payload) != h.crc {
		return frameHead{}, nil, broken(raw, "checksum mismatch")
	}
	r.off = at + frameHeaderSize + int64(h.length)
	return h, payload, nil
}

// readPayload reads n bytes after prefix into a new slice that starts with
// a copy of prefix, allocating as they arrive rather than all at once. On
// a short read it returns what it got and the error.
func readPayload(src io.Reader, prefix []byte, n int) ([]byte, error) {
	end := len(prefix) + n
	buf := append(make([]byte, 0, len(prefix)+min(n, readChunk)), prefix...)
	for len(buf) < end {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(end-len(buf), len(buf)))
		}
		m, err := io.ReadFull(src, buf[len(buf):min(end, cap(buf))])
		buf = buf[:len(buf)+m]
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// decompress undoes zstd, refusing output larger than MaxFrameSize.
func (r *Reader) decompress(p []byte) ([]byte, error) {
	if r.dec == nil {
		d, err := zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderMaxMemory(MaxFrameSize),
			zstd.WithDecoderMaxWindow(MaxFrameSize))
		if err != nil {
			return nil, fmt.Errorf("zstd: %w", err)
		}
		r.dec = d
	}
	out, err := r.dec.DecodeAll(p, nil)
	if err != nil {
		return nil, fmt.Errorf("undecodable compressed payload: %w", err)
	}
	return out, nil
}
