package export

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// The Perfetto trace format as Perfetto publishes it: its one-file proto
// definitions (testdata/perfetto; README.md there says where they come
// from). The tests decode what WritePerfetto writes with these, not with
// the field numbers the writer uses, so a wrong number or wire type shows.
const (
	perfettoProtos = "testdata/perfetto"
	perfettoProto  = "protos/perfetto/trace/perfetto_trace.proto"
)

// traceDescriptor compiles Perfetto's protos and returns the Trace message.
func traceDescriptor(t *testing.T) protoreflect.MessageDescriptor {
	t.Helper()
	c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{ImportPaths: []string{perfettoProtos}})}
	files, err := c.Compile(context.Background(), perfettoProto)
	if err != nil {
		t.Fatalf("compiling Perfetto's protos: %v", err)
	}
	md := files[0].Messages().ByName("Trace")
	if md == nil {
		t.Fatal("Perfetto's protos define no Trace message")
	}
	return md
}

// process is a track's process descriptor.
type process struct {
	pid  int
	name string
}

// decodedTrace is a Perfetto trace as Perfetto's protos read it.
type decodedTrace struct {
	names   map[uint64]string
	parent  map[uint64]uint64
	process map[uint64]process
	counter map[uint64]bool
	begins  map[uint64]int
	ends    map[uint64]int
	values  map[uint64][]float64
	// slices are the names of the slices begun on each track, in order.
	slices map[uint64][]string
	seq    int
	// cleared is whether the first packet clears the incremental state.
	cleared bool
}

// decodePerfetto decodes data as a Perfetto Trace, failing the test on
// anything Perfetto's protos do not define.
func decodePerfetto(t *testing.T, data []byte) decodedTrace {
	t.Helper()
	d, err := readPerfetto(traceDescriptor(t), data)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// readPerfetto decodes data as the Trace message md and reads back the
// tracks and events c3lab writes. Fields the protos do not define (a
// wrong field number, or a wire type other than the field's) are errors,
// as are packets of several sequences.
func readPerfetto(md protoreflect.MessageDescriptor, data []byte) (decodedTrace, error) {
	d := decodedTrace{names: map[uint64]string{}, parent: map[uint64]uint64{}, process: map[uint64]process{},
		counter: map[uint64]bool{}, begins: map[uint64]int{}, ends: map[uint64]int{}, values: map[uint64][]float64{},
		slices: map[uint64][]string{}}
	msg := dynamicpb.NewMessage(md)
	if err := proto.Unmarshal(data, msg); err != nil {
		return d, fmt.Errorf("not a Perfetto trace: %w", err)
	}
	var errs []error
	checkKnown(msg, "Trace", &errs)
	// field reads the field called name; a name the protos lack is an error.
	field := func(m protoreflect.Message, name string) (protoreflect.Value, bool) {
		fd := m.Descriptor().Fields().ByName(protoreflect.Name(name))
		if fd == nil {
			errs = append(errs, fmt.Errorf("%s has no field %s", m.Descriptor().FullName(), name))
			return protoreflect.Value{}, false
		}
		return m.Get(fd), m.Has(fd)
	}
	enumName := func(m protoreflect.Message, name string) string {
		v, ok := field(m, name)
		if !ok {
			return ""
		}
		fd := m.Descriptor().Fields().ByName(protoreflect.Name(name))
		if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
			return string(ev.Name())
		}
		return fmt.Sprint(v.Enum())
	}
	packets, _ := field(msg, "packet")
	for i := range packets.List().Len() {
		p := packets.List().Get(i).Message()
		if seq, ok := field(p, "trusted_packet_sequence_id"); ok {
			if d.seq != 0 && int(seq.Uint()) != d.seq {
				errs = append(errs, fmt.Errorf("packet %d is on sequence %d, the others on %d", i, seq.Uint(), d.seq))
			}
			d.seq = int(seq.Uint())
		}
		if flags, ok := field(p, "sequence_flags"); ok && i == 0 {
			d.cleared = flags.Uint()&uint64(tracePacketFlag(p, "SEQ_INCREMENTAL_STATE_CLEARED")) != 0
		}
		if v, ok := field(p, "track_descriptor"); ok {
			td := v.Message()
			uuid, _ := field(td, "uuid")
			u := uuid.Uint()
			name, _ := field(td, "name")
			d.names[u] = name.String()
			if parent, ok := field(td, "parent_uuid"); ok {
				d.parent[u] = parent.Uint()
			}
			if pr, ok := field(td, "process"); ok {
				pid, _ := field(pr.Message(), "pid")
				pname, _ := field(pr.Message(), "process_name")
				d.process[u] = process{pid: int(pid.Int()), name: pname.String()}
			}
			_, d.counter[u] = field(td, "counter")
		}
		if v, ok := field(p, "track_event"); ok {
			ev := v.Message()
			if _, ok := field(p, "timestamp"); !ok {
				errs = append(errs, fmt.Errorf("packet %d: a track event without a timestamp", i))
			}
			track, _ := field(ev, "track_uuid")
			switch typ := enumName(ev, "type"); typ {
			case "TYPE_SLICE_BEGIN":
				d.begins[track.Uint()]++
				name, _ := field(ev, "name")
				d.slices[track.Uint()] = append(d.slices[track.Uint()], name.String())
			case "TYPE_SLICE_END":
				d.ends[track.Uint()]++
			case "TYPE_COUNTER":
				value, ok := field(ev, "double_counter_value")
				if !ok {
					errs = append(errs, fmt.Errorf("packet %d: a counter event without a double value", i))
				}
				d.values[track.Uint()] = append(d.values[track.Uint()], value.Float())
			default:
				errs = append(errs, fmt.Errorf("packet %d: track event of type %s", i, typ))
			}
		}
	}
	return d, errors.Join(errs...)
}

// tracePacketFlag is the value of one of TracePacket's SequenceFlags.
func tracePacketFlag(p protoreflect.Message, name string) protoreflect.EnumNumber {
	ed := p.Descriptor().Enums().ByName("SequenceFlags")
	if ed == nil {
		return 0
	}
	if v := ed.Values().ByName(protoreflect.Name(name)); v != nil {
		return v.Number()
	}
	return 0
}

// checkKnown adds an error for every message under m holding fields its
// definition lacks (proto.Unmarshal keeps those as unknown bytes).
func checkKnown(m protoreflect.Message, path string, errs *[]error) {
	if u := m.GetUnknown(); len(u) > 0 {
		num, typ, _ := protowire.ConsumeTag(u)
		*errs = append(*errs, fmt.Errorf("%s holds field %d (wire type %d) that %s does not define", path, num, typ, m.Descriptor().FullName()))
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsMap() || fd.Message() == nil:
		case fd.IsList():
			for i := range v.List().Len() {
				checkKnown(v.List().Get(i).Message(), fmt.Sprintf("%s.%s[%d]", path, fd.Name(), i), errs)
			}
		default:
			checkKnown(v.Message(), path+"."+string(fd.Name()), errs)
		}
		return true
	})
}

// The decoder catches what it is there to catch: a field Perfetto does
// not define where c3lab writes one (a wrong number), a field with a wire
// type other than its definition's, and a counter without its value.
func TestPerfettoDecoderCatchesMistakes(t *testing.T) {
	md := traceDescriptor(t)
	packet := func(body ...[]byte) []byte {
		var p []byte
		p = protowire.AppendTag(p, 10, protowire.VarintType) // trusted_packet_sequence_id
		p = protowire.AppendVarint(p, 7)
		for _, b := range body {
			p = append(p, b...)
		}
		var out []byte
		out = protowire.AppendTag(out, 1, protowire.BytesType) // Trace.packet
		return protowire.AppendBytes(out, p)
	}
	event := func(e []byte) []byte {
		var b []byte
		b = protowire.AppendTag(b, 8, protowire.VarintType) // timestamp
		b = protowire.AppendVarint(b, 1000)
		b = protowire.AppendTag(b, 11, protowire.BytesType) // track_event
		return protowire.AppendBytes(b, e)
	}
	typed := func(typ uint64, more ...func([]byte) []byte) []byte {
		var e []byte
		e = protowire.AppendTag(e, 9, protowire.VarintType) // type
		e = protowire.AppendVarint(e, typ)
		e = protowire.AppendTag(e, 11, protowire.VarintType) // track_uuid
		e = protowire.AppendVarint(e, 42)
		for _, f := range more {
			e = f(e)
		}
		return e
	}
	for _, tc := range []struct {
		name  string
		data  []byte
		valid bool
	}{
		{"a slice begin", packet(event(typed(1))), true},
		{"a counter", packet(event(typed(4, func(e []byte) []byte {
			e = protowire.AppendTag(e, 44, protowire.Fixed64Type) // double_counter_value
			return protowire.AppendFixed64(e, math.Float64bits(2.5))
		}))), true},
		{"an undefined field number", packet(event(typed(1, func(e []byte) []byte {
			e = protowire.AppendTag(e, 9999, protowire.VarintType)
			return protowire.AppendVarint(e, 1)
		}))), false},
		{"the double counter as a varint", packet(event(typed(4, func(e []byte) []byte {
			e = protowire.AppendTag(e, 44, protowire.VarintType)
			return protowire.AppendVarint(e, 3)
		}))), false},
		{"a counter without a value", packet(event(typed(4))), false},
		{"not a trace", []byte{0xff, 0xff}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readPerfetto(md, tc.data)
			if (err == nil) != tc.valid {
				t.Errorf("error %v; want one: %v", err, !tc.valid)
			}
		})
	}
}
