package tui

import (
	"cmp"
	"math"
	"slices"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	nvtel "github.com/c3lab/c3lab/profiler/telemetry"
)

// series is one telemetry metric of one device as a step function: each
// sample's value holds from its time until the next sample; the first value
// also covers the time before it and the last the time after it.
type series struct {
	t []int64
	v []float64
}

// mean is the time-weighted average of the series over [a, b); NaN when the
// series is empty or the interval is.
func (s series) mean(a, b int64) float64 {
	if len(s.t) == 0 || b <= a {
		return math.NaN()
	}
	var sum float64
	for i := range s.t {
		lo, hi := s.t[i], b
		if i == 0 {
			lo = min(lo, a)
		}
		if i+1 < len(s.t) {
			hi = s.t[i+1]
		}
		lo, hi = max(lo, a), min(hi, b)
		if hi > lo {
			sum += s.v[i] * float64(hi-lo)
		}
	}
	return sum / float64(b-a)
}

// resample averages the series over n equal slices of [0, end).
func (s series) resample(end int64, n int) []float64 {
	out := make([]float64, max(n, 0))
	for i := range out {
		a := end * int64(i) / int64(n)
		b := end * int64(i+1) / int64(n)
		if b <= a {
			b = a + 1
		}
		out[i] = s.mean(a, b)
	}
	return out
}

// telemetry is the concurrent repetition's samples of one device, by metric,
// with the repetition's end time.
type telemetry struct {
	end    int64
	series map[string]series
	// live is set when the series are live NVML telemetry, not the run's
	// own; recorded, when that telemetry is played back from a recording.
	live, recorded bool
	// run, with live telemetry, is the run's own telemetry, for the metrics
	// NVML cannot see (busy copy streams, from the run's copy spans).
	run *telemetry
	// window is set when the live series hold only the samples taken
	// during the last measurement; busy is then the share of that window
	// the GPUs spent in timed repetitions (NVML averages over its whole
	// sampling interval, so its readings are diluted by the rest).
	window bool
	busy   float64
	// timed is, per metric, the device's NVML use during the concurrent
	// run's timed repetitions only (Result.TimedUse), beside the series'
	// wall-clock view; nil without a machine record.
	timed map[string]float64
}

// timedUse is device dev's use per metric during r's concurrent timed
// repetitions (Result.TimedUse.NVML), nil when r has none.
func timedUse(r *profiler.Result, dev int) map[string]float64 {
	if r == nil || r.TimedUse == nil {
		return nil
	}
	var out map[string]float64
	for _, u := range r.TimedUse.NVML[backends.ModeConcurrent] {
		if u.Device != dev || u.Covered <= 0 || math.IsNaN(u.Value) {
			continue
		}
		if out == nil {
			out = map[string]float64{}
		}
		out[u.Metric] = u.Value
	}
	return out
}

// sampleWindow bounds live samples by their time (the sampler's clock, in
// ns); on is false for the whole history.
type sampleWindow struct {
	from, to int64
	on       bool
}

// lookup returns a metric's series and the telemetry it belongs to: this
// one's, or else the run's behind live telemetry.
func (tel telemetry) lookup(metric string) (series, telemetry, bool) {
	if s, ok := tel.series[metric]; ok {
		return s, tel, true
	}
	if tel.run != nil {
		if s, ok := tel.run.series[metric]; ok {
			return s, *tel.run, true
		}
	}
	return series{}, tel, false
}

// hasNVMLMetrics reports whether a result carries samples of any resource
// NVML reports (everything the utilization panel shows but copy streams):
// the simulator's do; a GPU run's carry only what its own events tell.
func hasNVMLMetrics(r *profiler.Result) bool {
	for _, s := range r.Samples {
		if s.Metric != backends.MetricCopyStreamsBusy && slices.Contains(utilMetrics(), s.Metric) {
			return true
		}
	}
	return false
}

// newTelemetry gathers device dev's samples of r. The repetition ends at
// the last span's end (or the last sample when there are no spans).
func newTelemetry(r *profiler.Result, dev int) telemetry {
	tel := telemetry{series: map[string]series{}}
	if r == nil {
		return tel
	}
	tel.timed = timedUse(r, dev)
	for _, sp := range r.Timeline {
		tel.end = max(tel.end, sp.End)
	}
	byMetric := map[string][]backends.Sample{}
	for _, s := range r.Samples {
		if s.Device != dev {
			continue
		}
		byMetric[s.Metric] = append(byMetric[s.Metric], s)
		tel.end = max(tel.end, s.Time)
	}
	if tel.end <= 0 {
		tel.end = 1
	}
	for name, list := range byMetric {
		slices.SortStableFunc(list, func(a, b backends.Sample) int { return cmp.Compare(a.Time, b.Time) })
		var s series
		for _, x := range list {
			s.t = append(s.t, x.Time)
			s.v = append(s.v, x.Value)
		}
		tel.series[name] = s
	}
	return tel
}

// avg is the time-weighted average of metric over the repetition; ok is
// false when the samples lack the metric.
func (t telemetry) avg(metric string) (float64, bool) {
	s, ok := t.series[metric]
	if !ok {
		return math.NaN(), false
	}
	return s.mean(0, t.end), true
}

// liveTelemetry turns device dev's live history into the same step
// functions, over the time the history covers.
func liveTelemetry(h *nvtel.History, dev int, w sampleWindow) telemetry {
	tel := telemetry{series: map[string]series{}}
	pick := func(list []backends.Sample) []backends.Sample {
		if !w.on {
			return list
		}
		var in []backends.Sample
		for _, x := range list {
			if x.Time >= w.from && x.Time <= w.to {
				in = append(in, x)
			}
		}
		return in
	}
	var start int64 = math.MaxInt64
	for _, metric := range utilMetrics() {
		for _, x := range pick(h.Series(dev, metric)) {
			start = min(start, x.Time)
		}
	}
	for _, metric := range utilMetrics() {
		list := pick(h.Series(dev, metric))
		if len(list) == 0 {
			continue
		}
		var s series
		for _, x := range list {
			s.t = append(s.t, x.Time-start)
			s.v = append(s.v, x.Value)
			tel.end = max(tel.end, x.Time-start)
		}
		tel.series[metric] = s
	}
	if tel.end <= 0 {
		tel.end = 1
	}
	tel.live, tel.window = true, w.on && len(tel.series) > 0
	if w.on && len(tel.series) == 0 {
		// No sample fell inside the window (a measurement shorter than the
		// sampling interval): show the recent history instead.
		return liveTelemetry(h, dev, sampleWindow{})
	}
	return tel
}
