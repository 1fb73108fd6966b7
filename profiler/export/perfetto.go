package export

import (
	"fmt"
	"hash/fnv"
	"io"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// Perfetto's trace protobuf, the few fields c3lab writes (field numbers from
// perfetto's protos/perfetto/trace: trace_packet.proto, track_descriptor.proto,
// track_event.proto, process_descriptor.proto, counter_descriptor.proto).
const (
	fTracePacket = 1 // Trace.packet

	fPacketTimestamp     = 8
	fPacketSequenceID    = 10
	fPacketTrackEvent    = 11
	fPacketSequenceFlags = 13
	fPacketTrackDesc     = 60

	fDescUUID    = 1
	fDescName    = 2
	fDescProcess = 3
	fDescParent  = 5
	fDescCounter = 8

	fProcessPID  = 1
	fProcessName = 6

	fEventType          = 9
	fEventTrackUUID     = 11
	fEventName          = 23
	fEventDoubleCounter = 44

	eventSliceBegin = 1
	eventSliceEnd   = 2
	eventCounter    = 4

	seqIncrementalStateCleared = 1
	sequenceID                 = 0xc3
	// timeBase keeps timestamps away from zero, which some viewers treat as unset.
	timeBase = int64(1_000_000_000)
)

// trackUUID is a stable id for a named track of a device.
func trackUUID(dev int, kind, name string) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d\x00%s\x00%s", dev, kind, name)
	return h.Sum64() | 1 // never 0: the implicit global track
}

// WritePerfetto writes a native Perfetto trace: per GPU a process, under it
// one track per stream or copy engine holding the op slices, and one
// counter track per telemetry metric.
func WritePerfetto(w io.Writer, t Trace) error {
	if len(t.Spans) == 0 {
		return ErrEmpty
	}
	var out []byte
	first := true
	packet := func(body []byte) {
		var p []byte
		p = protowire.AppendTag(p, fPacketSequenceID, protowire.VarintType)
		p = protowire.AppendVarint(p, sequenceID)
		if first {
			p = protowire.AppendTag(p, fPacketSequenceFlags, protowire.VarintType)
			p = protowire.AppendVarint(p, seqIncrementalStateCleared)
			first = false
		}
		p = append(p, body...)
		out = protowire.AppendTag(out, fTracePacket, protowire.BytesType)
		out = protowire.AppendBytes(out, p)
	}
	descriptor := func(uuid, parent uint64, name string, pid int, counter bool) {
		var d []byte
		d = protowire.AppendTag(d, fDescUUID, protowire.VarintType)
		d = protowire.AppendVarint(d, uuid)
		if parent != 0 {
			d = protowire.AppendTag(d, fDescParent, protowire.VarintType)
			d = protowire.AppendVarint(d, parent)
		}
		d = protowire.AppendTag(d, fDescName, protowire.BytesType)
		d = protowire.AppendString(d, name)
		if pid > 0 {
			var pr []byte
			pr = protowire.AppendTag(pr, fProcessPID, protowire.VarintType)
			pr = protowire.AppendVarint(pr, uint64(pid))
			pr = protowire.AppendTag(pr, fProcessName, protowire.BytesType)
			pr = protowire.AppendString(pr, name)
			d = protowire.AppendTag(d, fDescProcess, protowire.BytesType)
			d = protowire.AppendBytes(d, pr)
		}
		if counter {
			d = protowire.AppendTag(d, fDescCounter, protowire.BytesType)
			d = protowire.AppendBytes(d, nil)
		}
		var b []byte
		b = protowire.AppendTag(b, fPacketTrackDesc, protowire.BytesType)
		b = protowire.AppendBytes(b, d)
		packet(b)
	}
	event := func(ts int64, typ int, track uint64, name string, value *float64) {
		var e []byte
		e = protowire.AppendTag(e, fEventType, protowire.VarintType)
		e = protowire.AppendVarint(e, uint64(typ))
		e = protowire.AppendTag(e, fEventTrackUUID, protowire.VarintType)
		e = protowire.AppendVarint(e, track)
		if name != "" {
			e = protowire.AppendTag(e, fEventName, protowire.BytesType)
			e = protowire.AppendString(e, name)
		}
		if value != nil {
			e = protowire.AppendTag(e, fEventDoubleCounter, protowire.Fixed64Type)
			e = protowire.AppendFixed64(e, math.Float64bits(*value))
		}
		var b []byte
		b = protowire.AppendTag(b, fPacketTimestamp, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(timeBase+ts))
		b = protowire.AppendTag(b, fPacketTrackEvent, protowire.BytesType)
		b = protowire.AppendBytes(b, e)
		packet(b)
	}

	procs := map[int]uint64{}
	proc := func(dev int) uint64 {
		if u, ok := procs[dev]; ok {
			return u
		}
		u := trackUUID(dev, "process", "")
		procs[dev] = u
		descriptor(u, 0, fmt.Sprintf("%s (%s, %s)", t.deviceName(dev), t.Scenario, t.Strategy), dev+1, false)
		return u
	}
	tracks := map[uint64]bool{}
	for _, s := range t.Spans {
		u := trackUUID(s.Device, "stream", s.Track)
		if !tracks[u] {
			tracks[u] = true
			descriptor(u, proc(s.Device), s.Track, 0, false)
		}
		event(s.Start, eventSliceBegin, u, s.Name, nil)
		event(max(s.End, s.Start), eventSliceEnd, u, "", nil)
	}
	for _, s := range t.Samples {
		scale, unit := t.metricUnit(s.Metric)
		name := fmt.Sprintf("%s (%s)", metricLabel(s.Metric), unit)
		u := trackUUID(s.Device, "counter", name)
		if !tracks[u] {
			tracks[u] = true
			descriptor(u, proc(s.Device), name, 0, true)
		}
		v := s.Value * scale
		event(s.Time, eventCounter, u, "", &v)
	}
	_, err := w.Write(out)
	return err
}
