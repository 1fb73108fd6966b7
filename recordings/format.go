package recordings

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"math"
	"strconv"
	"time"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
)

// SchemaVersion is the version of the format this package writes, and the
// newest it reads. Version 2 carries format-2 scenarios (streams of ops),
// per-op repetition times (backends.Rep.Ops), spans naming their graph op
// and instance, and results with the graph metrics, the serial default's
// repetitions and U; a version-1 recording reads with those figures
// filled from what it holds (profiler.Result.CompleteV1).
const SchemaVersion = 2

// MaxFrameSize bounds a frame's payload, both as stored and once
// decompressed. The reader treats a larger length as damage instead of
// allocating it; the recorder splits span and sample batches to stay below.
const MaxFrameSize = 64 << 20

// Layout constants; FORMAT.md has the details.
const (
	magic           = "C3LABREC"
	preambleSize    = 12 // magic, then the schema version (uint32)
	frameHeaderSize = 18
	// crcOffset is where the checksum sits in a frame header; it covers the
	// bytes before it and the payload.
	crcOffset = 14
)

// Frame types that carry no event of their own.
const (
	frameHeader byte = 0x01
	frameBatch  byte = 0x20
	frameEnd    byte = 0x21
)

// Frame flags.
const (
	// flagZstd: the payload is one zstd frame.
	flagZstd byte = 1 << 0
	// flagOptional: a reader that does not know the frame type skips the
	// frame instead of treating it as damage.
	flagOptional byte = 1 << 1
	knownFlags        = flagZstd | flagOptional
)

// Kind says what an event carries. Its value is the event's frame type.
type Kind uint8

// Event kinds.
const (
	// KindScenario: the session switched to a scenario (Event.Scenario).
	KindScenario Kind = 0x02
	// KindStrategy: the session switched strategy (Event.Strategy).
	KindStrategy Kind = 0x03
	// KindResult: one iteration's measurement (Event.Result).
	KindResult Kind = 0x04
	// KindSpans: a batch of timeline spans (Event.Spans).
	KindSpans Kind = 0x05
	// KindSamples: a batch of telemetry samples (Event.Samples).
	KindSamples Kind = 0x06
	// KindMarker: a note the user made (Event.Text).
	KindMarker Kind = 0x07
	// KindError: an error the session met (Event.Text).
	KindError Kind = 0x08
)

// String names the kind ("scenario", "result", ...).
func (k Kind) String() string {
	switch k {
	case KindScenario:
		return "scenario"
	case KindStrategy:
		return "strategy"
	case KindResult:
		return "result"
	case KindSpans:
		return "spans"
	case KindSamples:
		return "samples"
	case KindMarker:
		return "marker"
	case KindError:
		return "error"
	}
	return fmt.Sprintf("kind(0x%02x)", uint8(k))
}

// valid reports whether k is an event kind this version knows.
func (k Kind) valid() bool { return k >= KindScenario && k <= KindError }

// Header describes where and how a session was recorded. It is the first
// frame of every recording.
type Header struct {
	// Schema is the format's schema version; Create sets it.
	Schema int `json:"schema"`
	// Version is the c3lab version that recorded the session.
	Version string `json:"c3lab_version"`
	// Created is when the recording started (Create sets it): event times
	// count from it.
	Created time.Time `json:"created"`
	// Host is the machine's host name; Create fills it in when empty.
	Host string `json:"host"`
	// Backend is the backend's short name ("sim", "cuda").
	Backend string `json:"backend"`
	// Devices describes the devices the session ran on when the recording
	// started, indices 0..n-1 of the backend's (FORMAT.md); each result
	// lists the devices of its own run.
	Devices []Device `json:"devices"`
	// Profile is the device profile's name ("h200"), if any.
	Profile string `json:"profile,omitempty"`
	// Telemetry maps each telemetry metric the session may report to its
	// unit ("sm_util": "fraction").
	Telemetry map[string]string `json:"telemetry,omitempty"`
}

// Device is one device of a recording: what the backend reports, and what
// the driver adds when it is there.
type Device struct {
	backends.DeviceInfo
	// Driver is the driver version.
	Driver string `json:"driver,omitempty"`
	// UUID is the device's UUID.
	UUID string `json:"uuid,omitempty"`
	// Libraries maps library names to versions ("nccl": "2.27.3").
	Libraries map[string]string `json:"libraries,omitempty"`
	// NVLink describes the device's links, free form (peers, link counts,
	// bandwidths).
	NVLink map[string]any `json:"nvlink,omitempty"`
}

// DevicesFromInfo wraps a backend's device list for a Header.
func DevicesFromInfo(infos []backends.DeviceInfo) []Device {
	out := make([]Device, len(infos))
	for i, d := range infos {
		out[i] = Device{DeviceInfo: d}
	}
	return out
}

// DeviceInfos returns the header's devices as the backend described them.
func (h Header) DeviceInfos() []backends.DeviceInfo {
	out := make([]backends.DeviceInfo, len(h.Devices))
	for i, d := range h.Devices {
		out[i] = d.DeviceInfo
	}
	return out
}

// Event is one recorded event: Kind says which payload field is set.
type Event struct {
	Kind Kind
	// Time is when the event was recorded, from the start of the recording.
	Time time.Duration

	Scenario *scenarios.Scenario // KindScenario
	Strategy *scenarios.Strategy // KindStrategy
	Result   *profiler.Result    // KindResult
	Spans    []backends.Span     // KindSpans
	Samples  []backends.Sample   // KindSamples
	Text     string              // KindMarker, KindError
}

// DamageError is a damaged byte range of a recording: where it starts and
// ends, and why. The reader delivers every event before it, then goes on
// with the next intact frame.
type DamageError struct {
	// Offset is the byte offset of the first frame that could not be read.
	Offset int64
	// End is the offset where reading resumed, at the next intact frame,
	// or the file's size when none follows: the range is [Offset, End).
	End int64
	// Frames is how many frames the range held, when the reader can tell
	// (1: the damaged frame's own length led to the next intact one); 0
	// when the damage hid where its frames ended.
	Frames int
	// Reason says what is wrong with the first frame, in words.
	Reason string
}

// Error implements error.
func (e *DamageError) Error() string {
	lost := "an unknown number of frames lost"
	if e.Frames > 0 {
		lost = fmt.Sprintf("%d frame", e.Frames)
		if e.Frames > 1 {
			lost += "s"
		}
		lost += " lost"
	}
	return fmt.Sprintf("recording damaged at bytes %d..%d (%d bytes, %s): %s", e.Offset, e.End, e.End-e.Offset, lost, e.Reason)
}

// crcTable returns the CRC-32C (Castagnoli) table; the standard library
// builds it once.
func crcTable() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) }

// frameCRC is the checksum of a frame: its header up to the checksum field,
// then its payload.
func frameCRC(head []byte, payload []byte) uint32 {
	tab := crcTable()
	return crc32.Update(crc32.Update(0, tab, head[:crcOffset]), tab, payload)
}

// appendFrame appends one frame to dst.
func appendFrame(dst []byte, typ, flags byte, t time.Duration, payload []byte) []byte {
	var h [frameHeaderSize]byte
	h[0], h[1] = typ, flags
	binary.LittleEndian.PutUint32(h[2:], uint32(len(payload)))
	binary.LittleEndian.PutUint64(h[6:], uint64(t))
	binary.LittleEndian.PutUint32(h[crcOffset:], frameCRC(h[:], payload))
	dst = append(dst, h[:]...)
	return append(dst, payload...)
}

// frameHead is a decoded frame header.
type frameHead struct {
	typ, flags byte
	length     uint32
	time       time.Duration
	crc        uint32
}

func parseHead(b []byte) frameHead {
	return frameHead{
		typ:    b[0],
		flags:  b[1],
		length: binary.LittleEndian.Uint32(b[2:]),
		time:   time.Duration(binary.LittleEndian.Uint64(b[6:])),
		crc:    binary.LittleEndian.Uint32(b[crcOffset:]),
	}
}

// sane reports whether a header passes check, without saying why not.
func (h frameHead) sane() bool {
	return h.flags&^knownFlags == 0 && h.length <= MaxFrameSize
}

// check validates a header before its payload is read; it returns the
// reason it is damaged, or "".
func (h frameHead) check() string {
	if h.flags&^knownFlags != 0 {
		return fmt.Sprintf("unknown frame flags 0x%02x", h.flags)
	}
	if h.length > MaxFrameSize {
		return fmt.Sprintf("frame length %d exceeds the %d-byte limit", h.length, MaxFrameSize)
	}
	return ""
}

// knownType reports whether a frame type may appear in the event stream
// (inside a batch, only event kinds may).
func knownType(typ byte, inBatch bool) bool {
	if Kind(typ).valid() {
		return true
	}
	return !inBatch && (typ == frameBatch || typ == frameEnd)
}

// textPayload is the payload of marker and error events.
type textPayload struct {
	Text string `json:"text"`
}

// endPayload is the payload of the end frame a clean Close writes.
type endPayload struct {
	Events  int64 `json:"events"`
	Dropped int64 `json:"dropped"`
}

// resultPayload is a result event's payload: the result as profiler writes
// it, without its samples, which follow in the wire form that keeps
// non-finite values.
type resultPayload struct {
	Result  json.RawMessage `json:"result"`
	Samples []wireSample    `json:"samples,omitempty"`
}

// wireSample is a backends.Sample whose value survives JSON when it is NaN
// or infinite.
type wireSample struct {
	backends.Sample
	Value jsonFloat `json:"value"`
}

func toWire(s []backends.Sample) []wireSample {
	out := make([]wireSample, len(s))
	for i, x := range s {
		out[i] = wireSample{Sample: x, Value: jsonFloat(x.Value)}
	}
	return out
}

func fromWire(w []wireSample) []backends.Sample {
	if w == nil {
		return nil
	}
	out := make([]backends.Sample, len(w))
	for i, x := range w {
		out[i] = x.Sample
		out[i].Value = float64(x.Value)
	}
	return out
}

// jsonFloat is a float64 written as a JSON number when finite, null when
// NaN, and "+Inf" or "-Inf" when infinite.
type jsonFloat float64

// MarshalJSON implements json.Marshaler.
func (f jsonFloat) MarshalJSON() ([]byte, error) {
	x := float64(f)
	switch {
	case math.IsNaN(x):
		return []byte("null"), nil
	case math.IsInf(x, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(x, -1):
		return []byte(`"-Inf"`), nil
	}
	return strconv.AppendFloat(nil, x, 'g', -1, 64), nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (f *jsonFloat) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case "null", `"NaN"`:
		*f = jsonFloat(math.NaN())
		return nil
	case `"+Inf"`, `"Inf"`:
		*f = jsonFloat(math.Inf(1))
		return nil
	case `"-Inf"`:
		*f = jsonFloat(math.Inf(-1))
		return nil
	}
	x, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("bad number %.40q", b)
	}
	*f = jsonFloat(x)
	return nil
}

// decodeEvent turns a frame's (decompressed) payload into an event.
func decodeEvent(k Kind, t time.Duration, payload []byte) (Event, error) {
	ev := Event{Kind: k, Time: t}
	var err error
	switch k {
	case KindScenario:
		ev.Scenario = new(scenarios.Scenario)
		err = json.Unmarshal(payload, ev.Scenario)
	case KindStrategy:
		ev.Strategy = new(scenarios.Strategy)
		err = json.Unmarshal(payload, ev.Strategy)
	case KindResult:
		var p resultPayload
		if err = json.Unmarshal(payload, &p); err != nil {
			break
		}
		if len(p.Result) == 0 {
			err = fmt.Errorf("result missing")
			break
		}
		ev.Result = new(profiler.Result)
		if err = json.Unmarshal(p.Result, ev.Result); err != nil {
			break
		}
		ev.Result.Samples = fromWire(p.Samples)
	case KindSpans:
		err = json.Unmarshal(payload, &ev.Spans)
	case KindSamples:
		var w []wireSample
		err = json.Unmarshal(payload, &w)
		ev.Samples = fromWire(w)
	case KindMarker, KindError:
		var p textPayload
		err = json.Unmarshal(payload, &p)
		ev.Text = p.Text
	default:
		err = fmt.Errorf("unknown event kind 0x%02x", uint8(k))
	}
	if err != nil {
		return Event{}, fmt.Errorf("undecodable %s payload: %w", k, err)
	}
	return ev, nil
}
