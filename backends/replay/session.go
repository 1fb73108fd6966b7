package replay

import (
	"slices"
	"sort"
	"time"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/recordings"
)

// Measurement is a recorded result in its place in the session: when it
// was asked for, when it was recorded, and what was noted before it.
type Measurement struct {
	Result profiler.Result
	// From is when the measurement was asked for, as near as the
	// recording tells: the last setting change (scenario, strategy,
	// marker, error) or result recorded before it; 0 when none was. At is
	// when its result was recorded.
	From, At time.Duration
	// BackToBack says the result before it was the last thing recorded
	// before it: the session measured back to back (the lab's live mode).
	BackToBack bool
	// Notes are the markers and errors recorded since the result before
	// it; the last measurement's include those recorded after it.
	Notes []Note
}

// Note is a marker (a note the user made, such as a key press in the lab)
// or an error the session recorded.
type Note struct {
	At   time.Duration
	Kind recordings.Kind // recordings.KindMarker or recordings.KindError
	Text string
}

// Batch is a batch of telemetry recorded beside the results (a GPU node's
// NVML sampling) rather than inside one: its samples, on the sampler's
// clock, and when it was recorded.
type Batch struct {
	At      time.Duration
	Samples []backends.Sample
}

// session is what a recording holds around its results.
type session struct {
	measurements []Measurement
	telemetry    []Batch
	notes        []Note
}

// newSession walks a recording's events in order.
func newSession(rec *recordings.Recording) session {
	var s session
	var last time.Duration // the last setting change or result
	lastWasResult := false
	pending := 0 // notes not yet given to a measurement
	for _, e := range rec.Events {
		switch e.Kind {
		case recordings.KindSamples:
			if len(e.Samples) > 0 {
				s.telemetry = append(s.telemetry, Batch{At: e.Time, Samples: e.Samples})
			}
			continue
		case recordings.KindSpans:
			continue
		case recordings.KindMarker, recordings.KindError:
			s.notes = append(s.notes, Note{At: e.Time, Kind: e.Kind, Text: e.Text})
		case recordings.KindResult:
			if e.Result == nil {
				continue
			}
			s.measurements = append(s.measurements, Measurement{
				Result: *e.Result, From: last, At: e.Time, BackToBack: lastWasResult,
				Notes: slices.Clone(s.notes[pending:]),
			})
			pending = len(s.notes)
			last, lastWasResult = e.Time, true
			continue
		}
		last, lastWasResult = e.Time, false
	}
	if n := len(s.measurements); n > 0 {
		s.measurements[n-1].Notes = append(s.measurements[n-1].Notes, s.notes[pending:]...)
	}
	return s
}

// Measurements returns every recorded result in its place in the session,
// in recording order (the order of Results).
func (b *Backend) Measurements() []Measurement { return b.session.measurements }

// Telemetry returns the telemetry recorded beside the results, in
// recording order: a GPU node's NVML sampling while the lab, a run or a
// sweep went on. Results of a backend that reports its own telemetry
// (the simulator) carry it in Result.Samples instead.
func (b *Backend) Telemetry() []Batch { return b.session.telemetry }

// Notes returns the markers and errors the session recorded, in order.
func (b *Backend) Notes() []Note { return b.session.notes }

// TelemetryDuring returns the telemetry samples taken from from to to
// (times in the recording), with their times counted from from. A
// sample's time in the recording is its batch's, less how much older it is
// than the batch's newest sample: the sampler hands a batch over as soon
// as it is taken.
func (b *Backend) TelemetryDuring(from, to time.Duration) []backends.Sample {
	tel := b.session.telemetry
	// Batches are recorded after their samples are taken: none recorded
	// before from holds a sample taken after it.
	i := sort.Search(len(tel), func(i int) bool { return tel[i].At >= from })
	var out []backends.Sample
	for ; i < len(tel); i++ {
		newest := tel[i].Samples[0].Time
		for _, s := range tel[i].Samples {
			newest = max(newest, s.Time)
		}
		past := false
		for _, s := range tel[i].Samples {
			t := tel[i].At - time.Duration(newest-s.Time)
			switch {
			case t > to:
				past = true
			case t >= from:
				s.Time = int64(t - from)
				out = append(out, s)
			}
		}
		if past {
			break
		}
	}
	return out
}
