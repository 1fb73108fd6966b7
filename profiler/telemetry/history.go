package telemetry

import "github.com/c3lab/c3lab/backends"

// History keeps the last samples of every (device, metric) in ring
// buffers, for history charts that append one column per sample.
type History struct {
	capacity int
	rings    map[seriesKey]*ring
}

type seriesKey struct {
	device int
	metric string
}

type ring struct {
	buf  []backends.Sample
	next int
	full bool
}

// NewHistory keeps up to capacity samples per series (at least 1).
func NewHistory(capacity int) *History {
	return &History{capacity: max(capacity, 1), rings: map[seriesKey]*ring{}}
}

// Add appends a batch's samples.
func (h *History) Add(b Batch) {
	for _, s := range b.Samples {
		k := seriesKey{s.Device, s.Metric}
		r := h.rings[k]
		if r == nil {
			r = &ring{buf: make([]backends.Sample, h.capacity)}
			h.rings[k] = r
		}
		r.buf[r.next] = s
		r.next = (r.next + 1) % h.capacity
		r.full = r.full || r.next == 0
	}
}

// Series returns a series' samples, oldest first.
func (h *History) Series(device int, metric string) []backends.Sample {
	r := h.rings[seriesKey{device, metric}]
	if r == nil {
		return nil
	}
	if !r.full {
		return append([]backends.Sample(nil), r.buf[:r.next]...)
	}
	return append(append([]backends.Sample(nil), r.buf[r.next:]...), r.buf[:r.next]...)
}

// Last returns a series' newest sample.
func (h *History) Last(device int, metric string) (backends.Sample, bool) {
	r := h.rings[seriesKey{device, metric}]
	if r == nil || (!r.full && r.next == 0) {
		return backends.Sample{}, false
	}
	return r.buf[(r.next-1+h.capacity)%h.capacity], true
}
