package export

import (
	"fmt"
	"io"

	"github.com/google/pprof/profile"
)

// Sample types of the pprof profile: each of the backend's own spans
// counts once and adds its GPU time; a span CUPTI recorded
// (backends.Span.FromCUPTI: the same work seen kernel by kernel) counts in
// types of its own, so GPU time is never counted twice.
const (
	sampleCUPTIRecords = iota
	sampleCUPTITime
	sampleSpans
	sampleGPUTime
	sampleTypes
)

// Profile builds a pprof profile of GPU time: one sample per span, valued in
// nanoseconds, whose stack is the op's name (leaf) above its stream or
// engine and its device, labelled with device, stream, engine kind,
// scenario and strategy. GPU time is the default sample type (and the last,
// which readers that ignore the default show), so `go tool pprof -top`
// ranks ops by GPU time; `-sample_index=spans` counts spans instead, and
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
	var end int64
	for _, s := range t.Spans {
		if s.End <= s.Start {
			continue
		}
		end = max(end, s.End)
		value := make([]int64, len(types))
		if s.FromCUPTI() {
			value[sampleCUPTIRecords], value[sampleCUPTITime] = 1, s.End-s.Start
		} else {
			value[sampleSpans], value[sampleGPUTime] = 1, s.End-s.Start
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
