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

	"github.com/klauspost/compress/zstd"
)

// readChunk is how much of a payload the reader allocates ahead of the
// bytes actually there, so a corrupt length cannot make it allocate much.
const readChunk = 64 << 10

// Reader reads a recording frame by frame. It is not safe for concurrent
// use.
type Reader struct {
	br     *bufio.Reader
	closer io.Closer
	header Header
	off    int64 // offset of the next frame
	dec    *zstd.Decoder

	pending  []Event
	err      error // returned once pending is empty, then forever
	complete bool
}

// Recording is a whole recording in memory.
type Recording struct {
	Header Header
	// Events are every event before the end or the damage, in order.
	Events []Event
	// Damage says where the recording stops being readable; nil when it
	// reads to its end.
	Damage *DamageError
	// Complete is true when the recorder closed the file cleanly.
	Complete bool
}

// ReadAll reads the recording at path. A damaged tail (a crash, a cut
// copy) is not an error: the events before it are returned, with Damage
// saying where and why. A file that is not a recording, or whose header
// cannot be read, is an error.
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

// readAll reads every event of an open reader: up to its end, or up to the
// damage, which it records in the result rather than returning.
func readAll(r *Reader) (*Recording, error) {
	rec := &Recording{Header: r.Header()}
	for {
		ev, err := r.Next()
		if err == nil {
			rec.Events = append(rec.Events, ev)
			continue
		}
		var d *DamageError
		switch {
		case errors.Is(err, io.EOF):
		case errors.As(err, &d):
			rec.Damage = d
		default:
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
	r := &Reader{br: bufio.NewReaderSize(src, 64<<10)}
	var pre [preambleSize]byte
	n, err := io.ReadFull(r.br, pre[:])
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
		var d *DamageError
		switch {
		case errors.Is(err, io.EOF):
			return nil, errors.New("truncated c3lab recording: it has no header")
		case errors.As(err, &d):
			return nil, fmt.Errorf("damaged c3lab recording header: %s", d.Reason)
		}
		return nil, err
	}
	if h.typ != frameHeader {
		return nil, fmt.Errorf("damaged c3lab recording: first frame is type 0x%02x, not a header", h.typ)
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

// Next returns the next event. At a clean end it returns io.EOF; where the
// recording is damaged it returns a *DamageError, after every complete
// event before it. Either is returned again on later calls.
func (r *Reader) Next() (Event, error) {
	for {
		if len(r.pending) > 0 {
			ev := r.pending[0]
			r.pending[0] = Event{}
			r.pending = r.pending[1:]
			return ev, nil
		}
		if r.err != nil {
			return Event{}, r.err
		}
		r.pending, r.err = r.advance()
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

// advance reads the next frame and returns its events, and the error that
// follows them (nil when reading can go on).
func (r *Reader) advance() ([]Event, error) {
	at := r.off
	damage := func(format string, a ...any) error {
		return &DamageError{Offset: at, Reason: fmt.Sprintf(format, a...)}
	}
	h, payload, err := r.readFrame()
	if r.complete && !errors.Is(err, io.EOF) {
		return nil, damage("data after the end frame")
	}
	if err != nil {
		return nil, err
	}
	switch {
	case h.typ == frameEnd:
		var end endPayload
		if err := json.Unmarshal(payload, &end); err != nil {
			return nil, damage("undecodable end payload: %v", err)
		}
		r.complete = true
		return nil, nil
	case h.typ == frameBatch:
		evs, reason := r.decodeBatch(payload)
		if reason != "" {
			return evs, damage("%s", reason)
		}
		return evs, nil
	case Kind(h.typ).valid():
		ev, err := decodeEvent(Kind(h.typ), h.time, payload)
		if err != nil {
			return nil, damage("%v", err)
		}
		return []Event{ev}, nil
	}
	return nil, nil // an optional frame of a type this version does not know
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

// readFrame reads the frame at r.off, checks it and returns its header and
// (decompressed) payload. At a clean end it returns io.EOF; damage is a
// *DamageError; other read errors are returned wrapped.
func (r *Reader) readFrame() (frameHead, []byte, error) {
	at := r.off
	damage := func(format string, a ...any) error {
		return &DamageError{Offset: at, Reason: fmt.Sprintf(format, a...)}
	}
	var hb [frameHeaderSize]byte
	n, err := io.ReadFull(r.br, hb[:])
	switch {
	case n == 0 && errors.Is(err, io.EOF):
		return frameHead{}, nil, io.EOF
	case errors.Is(err, io.ErrUnexpectedEOF):
		return frameHead{}, nil, damage("truncated frame header (%d of %d bytes)", n, frameHeaderSize)
	case err != nil:
		return frameHead{}, nil, fmt.Errorf("read recording at byte %d: %w", at, err)
	}
	h := parseHead(hb[:])
	if reason := h.check(); reason != "" {
		return frameHead{}, nil, damage("%s", reason)
	}
	if !knownType(h.typ, false) && h.typ != frameHeader && h.flags&flagOptional == 0 {
		return frameHead{}, nil, damage("unknown frame type 0x%02x", h.typ)
	}
	payload, err := readPayload(r.br, int(h.length))
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return frameHead{}, nil, damage("truncated frame: %d of %d payload bytes", len(payload), h.length)
	}
	if err != nil {
		return frameHead{}, nil, fmt.Errorf("read recording at byte %d: %w", at, err)
	}
	if frameCRC(hb[:], payload) != h.crc {
		return frameHead{}, nil, damage("checksum mismatch")
	}
	if at != int64(preambleSize) && h.typ == frameHeader {
		return frameHead{}, nil, damage("a second header frame")
	}
	if h.flags&flagZstd != 0 {
		if payload, err = r.decompress(payload); err != nil {
			return frameHead{}, nil, damage("%v", err)
		}
	}
	r.off = at + frameHeaderSize + int64(h.length)
	return h, payload, nil
}

// readPayload reads n bytes, allocating as they arrive rather than all at
// once. On a short read it returns what it got and the error.
func readPayload(src io.Reader, n int) ([]byte, error) {
	buf := make([]byte, 0, min(n, readChunk))
	for len(buf) < n {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(n-len(buf), len(buf)))
		}
		m, err := io.ReadFull(src, buf[len(buf):min(n, cap(buf))])
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
