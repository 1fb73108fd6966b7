package export

import (
	"cmp"
	"fmt"
	"io"
	"slices"

	"github.com/c3lab/c3lab/backends"
	"github.com/google/pprof/profile"
)

// Sample types of the pprof profile. gpu_time counts each op's time on
// the GPU once (opShares); span_time is every span's own length, so an op
// seen on its stream and on each copy engine it kept busy counts once per
// engine there; a span CUPTI recorded (backends.Span.FromCUPTI: the same
// work seen kernel by kernel) counts in types of its own.
const (
	sampleCUPTIRecords = iota
	sampleCUPTITime
	sampleSpans
	sampleSpanTime
	sampleGPUTime
	sampleTypes
)

// Profile builds a pprof profile of GPU time: one sample per span, valued in
// nanoseconds, whose stack is the op's name (leaf) above its stream or
// engine and its device, labelled with device, stream, engine kind,
// scenario and strategy. GPU time is the default sample type (and the last,
// which readers that ignore the default show), so `go tool pprof -top`
// ranks ops by GPU time; `-sample_index=span_time` sums the spans' lengths
// instead (engine-busy time), `-sample_index=spans` counts them, and
// `-tagfocus=stream=comm` keeps one stream. CUPTI's kernel and copy
// records, when the measurement took them, are in cupti_time and
// cupti_records (`-sample_index=cupti_time` ranks kernels by their time).
func Profile(t Trace) (*profile.Profile, error) {
	if len(t.Spans) == 0 {
		return nil, ErrEmpty
	}
	types := make([]*profile.ValueType, sampleTypes)
	types[sampleCUPTIRecords] = &profile.ValueType{Type: "cupti_records", Unit: "count"}
	types[sampleCUPTITime] = &profile.ValueType{Type: "cupti_time", Unit: "nanoseconds"}
	types[sampleSpans] = &profile.ValueType{Type: "spans", Unit: "count"}
	types[sampleSpanTime] = &profile.ValueType{Type: "span_time", Unit: "nanoseconds"}
	types[sampleGPUTime] = &profile.ValueType{Type: "gpu_time", Unit: "nanoseconds"}
	p := &profile.Profile{
		SampleType:        types,
		DefaultSampleType: types[sampleGPUTime].Type,
		PeriodType:        &profile.ValueType{Type: "gpu_time", Unit: "nanoseconds"},
		Period:            1,
		Comments:          []string{fmt.Sprintf("c3lab: %s under %s on %s", t.Scenario, t.Strategy, t.Backend)},
	}
	funcs := map[string]*profile.Function{}
	locs := map[string]*profile.Location{}
	loc := func(name string) *profile.Location {
		if l, ok := locs[name]; ok {
			return l
		}
		f := &profile.Function{ID: uint64(len(funcs) + 1), Name: name, SystemName: name}
		funcs[name] = f
		p.Function = append(p.Function, f)
		l := &profile.Location{ID: uint64(len(locs) + 1), Line: []profile.Line{{Function: f}}}
		locs[name] = l
		p.Location = append(p.Location, l)
		return l
	}
	shares := opShares(t.Spans)
	var end int64
	for i, s := range t.Spans {
		if s.End <= s.Start {
			continue
		}
		end = max(end, s.End)
		value := make([]int64, len(types))
		if s.FromCUPTI() {
			value[sampleCUPTIRecords], value[sampleCUPTITime] = 1, s.End-s.Start
		} else {
			value[sampleSpans], value[sampleSpanTime], value[sampleGPUTime] = 1, s.End-s.Start, shares[i]
		}
		p.Sample = append(p.Sample, &profile.Sample{
			Location: []*profile.Location{loc(s.Name), loc("stream " + s.Track), loc(t.deviceName(s.Device))},
			Value:    value,
			Label: map[string][]string{
				"device": {fmt.Sprint(s.Device)}, "stream": {s.Track}, "engine": {s.Kind},
				"op": {string(s.Op)}, "scenario": {t.Scenario}, "strategy": {t.Strategy},
			},
		})
	}
	if len(p.Sample) == 0 {
		return nil, ErrEmpty
	}
	p.DurationNanos = end
	return p, p.CheckValid()
}

// WritePprof writes the pprof profile (gzipped profile.proto).
func WritePprof(w io.Writer, t Trace) error {
	p, err := Profile(t)
	if err != nil {
		return err
	}
	return p.Write(w)
}

// opShares gives each of the backend's spans its share of its op's GPU
// time: the part of it that no earlier span of the same op instance (same
// repetition, device, graph op or role, instance) covers, the spans of an
// op taken by start, the longer first. A collective on the copy engines
// shows on its stream and again on each copy stream and its reduction
// kernel's track, inside the stream's span (the cuda backend), or as one
// span per engine it kept busy (the simulator): either way its shares sum
// to the time the op ran. CUPTI's records get no share.
func opShares(spans []backends.Span) []int64 {
	type opKey struct {
		rep, dev int
		op       string
		instance int
	}
	byOp := map[opKey][]int{}
	for i, s := range spans {
		if s.FromCUPTI() || s.End <= s.Start {
			continue
		}
		op := s.GraphOp
		if op == "" {
			op = string(s.Op)
		}
		k := opKey{s.Rep, s.Device, op, s.Instance}
		byOp[k] = append(byOp[k], i)
	}
	shares := make([]int64, len(spans))
	for _, idx := range byOp {
		slices.SortStableFunc(idx, func(a, b int) int {
			return cmp.Or(cmp.Compare(spans[a].Start, spans[b].Start), cmp.Compare(spans[b].End, spans[a].End))
		})
		reach := spans[idx[0]].Start
		for _, i := range idx {
			s := spans[i]
			shares[i] = max(0, s.End-max(s.Start, reach))
			reach = max(reach, s.End)
		}
	}
	return shares
}
