// Package export writes a measurement's timeline and telemetry in formats
// other tools open: pprof (go tool pprof, Perfetto), Perfetto's native
// protobuf trace, and Chrome's JSON trace as a fallback. WriteFile goes
// through a temporary file that is renamed into place, so a failed export
// never leaves a half-written file under the final name.
package export

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/recordings/outfile"
)

// Trace is what the exporters need: one concurrent repetition's spans and
// telemetry, with enough context to label them.
type Trace struct {
	Scenario string
	Strategy string
	Backend  string
	Devices  []backends.DeviceInfo
	Spans    []backends.Span
	// Samples become counter tracks, one per device and metric.
	Samples []backends.Sample
	// Units maps metrics to their units, as a recording's header does
	// ("power_w": "W"); a metric not in it is a share (or an SM count).
	Units map[string]string
}

// FromResult takes the trace of a measurement's concurrent repetition.
func FromResult(r profiler.Result) Trace {
	t := Trace{
		Scenario: r.Scenario.Name, Strategy: r.Strategy.String(), Backend: r.Backend,
		Devices: r.Devices, Spans: slices.Clone(r.Timeline), Samples: slices.Clone(r.Samples),
	}
	slices.SortStableFunc(t.Spans, func(a, b backends.Span) int {
		return cmp.Or(cmp.Compare(a.Device, b.Device), cmp.Compare(a.Track, b.Track), cmp.Compare(a.Start, b.Start))
	})
	slices.SortStableFunc(t.Samples, func(a, b backends.Sample) int {
		return cmp.Or(cmp.Compare(a.Device, b.Device), cmp.Compare(a.Metric, b.Metric), cmp.Compare(a.Time, b.Time))
	})
	return t
}

// deviceName labels a device for track names ("GPU 0 · NVIDIA H200").
func (t Trace) deviceName(dev int) string {
	for _, d := range t.Devices {
		if d.Index == dev {
			return fmt.Sprintf("GPU %d · %s", dev, d.Name)
		}
	}
	return fmt.Sprintf("GPU %d", dev)
}

// ErrEmpty is returned when a trace holds nothing to export.
var ErrEmpty = errors.New("the measurement has no timeline to export (the backend reported no spans)")

// WriteFile writes an export to path, replacing a regular file there, the
// way every user-named output is written (recordings/outfile): through a
// temporary file beside it that is synced and renamed into place, so on
// any error path is untouched; a link is followed, and a folder, device,
// FIFO or socket is refused. Callers refuse an existing file beforehand
// when the user did not allow overwriting (outfile.Check).
func WriteFile(path string, write func(io.Writer) error) error {
	return outfile.WriteFile(path, outfile.Options{Overwrite: true}, write)
}

// metricLabel is a telemetry metric's name on a counter track: its stored
// name, except where that name says less than the truth (the busy copy
// streams keep the name they had as copy-engine utilization).
func metricLabel(metric string) string {
	if metric == backends.MetricCopyStreamsBusy {
		return "copy_streams_busy"
	}
	return metric
}

// metricUnit says how a telemetry metric is shown: a scale and a unit.
// Shares are shown in percent, byte rates in GB/s and byte counts in GB;
// other units as they are.
func (t Trace) metricUnit(metric string) (scale float64, unit string) {
	switch metric {
	case backends.MetricSMsCompute, backends.MetricSMsComm:
		return 1, "SMs"
	}
	switch u, ok := t.Units[metric]; {
	case !ok, u == "fraction":
		return 100, "%"
	case u == "bytes/s":
		return 1e-9, "GB/s"
	case u == "bytes":
		return 1e-9, "GB"
	default:
		return 1, u
	}
}
