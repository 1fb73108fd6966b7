package export

import (
	"encoding/json"
	"io"
	"math"
)

// chromeEvent is one event of Chrome's trace JSON (times in microseconds).
type chromeEvent struct {
	Name string         `json:"name"`
	Ph   string         `json:"ph"`
	Ts   float64        `json:"ts"`
	Dur  float64        `json:"dur,omitempty"`
	PID  int            `json:"pid"`
	TID  string         `json:"tid,omitempty"`
	Args map[string]any `json:"args,omitempty"`
	Cat  string         `json:"cat,omitempty"`
}

// WriteChrome writes Chrome's JSON trace: one process per GPU, one thread
// per stream or copy engine with complete ("X") events, and counter ("C")
// events per telemetry metric. Perfetto and chrome://tracing open it.
func WriteChrome(w io.Writer, t Trace) error {
	if len(t.Spans) == 0 {
		return ErrEmpty
	}
	var ev []chromeEvent
	named := map[int]bool{}
	for _, s := range t.Spans {
		if !named[s.Device] {
			named[s.Device] = true
			ev = append(ev, chromeEvent{Name: "process_name", Ph: "M", PID: s.Device, Args: map[string]any{"name": t.deviceName(s.Device)}})
		}
		ev = append(ev, chromeEvent{Name: s.Name, Ph: "X", Ts: float64(s.Start) / 1e3, Dur: float64(s.End-s.Start) / 1e3,
			PID: s.Device, TID: s.Track, Cat: string(s.Op), Args: map[string]any{"kind": s.Kind, "strategy": t.Strategy}})
	}
	for _, s := range t.Samples {
		scale, unit := t.metricUnit(s.Metric)
		v := s.Value * scale
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		ev = append(ev, chromeEvent{Name: metricLabel(s.Metric) + " (" + unit + ")", Ph: "C", Ts: float64(s.Time) / 1e3, PID: s.Device, Args: map[string]any{"value": v}})
	}
	enc := json.NewEncoder(w)
	return enc.Encode(map[string]any{"traceEvents": ev, "displayTimeUnit": "ns",
		"otherData": map[string]string{"scenario": t.Scenario, "strategy": t.Strategy, "backend": t.Backend}})
}
