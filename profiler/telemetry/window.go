package telemetry

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// Window is a stretch of wall-clock time: the timed repetitions of one run.
type Window struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

// Use is one metric's mean on one device over some windows.
type Use struct {
	Device int    `json:"device"`
	Metric string `json:"metric"`
	// Value is the time-weighted mean of the samples over the windows.
	Value float64 `json:"value"`
	// Covered is the share of the windows' time the samples cover (0..1):
	// a window shorter than the sampling period is covered by the one
	// sample whose interval holds it, and weighs by its overlap only.
	Covered float64 `json:"covered"`
}

// Clip returns, per device and metric, the mean of the samples clipped to
// the windows: each sample stands for the interval from the previous batch
// to its own (GPM metrics are exactly that interval's; instant reads are
// taken as holding over it) and weighs by that interval's overlap with the
// windows. A series' first batch has no interval and counts for nothing.
// Batches must be in time order; the result is sorted by device, metric.
func Clip(batches []Batch, windows []Window) []Use {
	var total time.Duration
	for _, w := range windows {
		if w.End.After(w.Start) {
			total += w.End.Sub(w.Start)
		}
	}
	if total <= 0 || len(batches) < 2 {
		return nil
	}
	type acc struct{ sum, weight float64 }
	accs := map[seriesKey]*acc{}
	for i := 1; i < len(batches); i++ {
		from, to := batches[i-1].At, batches[i].At
		if !to.After(from) {
			continue
		}
		var ov time.Duration
		for _, w := range windows {
			s, e := maxTime(from, w.Start), minTime(to, w.End)
			if e.After(s) {
				ov += e.Sub(s)
			}
		}
		if ov <= 0 {
			continue
		}
		for _, s := range batches[i].Samples {
			k := seriesKey{s.Device, s.Metric}
			a := accs[k]
			if a == nil {
				a = &acc{}
				accs[k] = a
			}
			a.sum += s.Value * ov.Seconds()
			a.weight += ov.Seconds()
		}
	}
	if len(accs) == 0 {
		return nil
	}
	out := make([]Use, 0, len(accs))
	for k, a := range accs {
		out = append(out, Use{Device: k.device, Metric: k.metric, Value: a.sum / a.weight, Covered: min(1, a.weight/total.Seconds())})
	}
	slices.SortFunc(out, func(a, b Use) int {
		if a.Device != b.Device {
			return a.Device - b.Device
		}
		return cmp.Compare(a.Metric, b.Metric)
	})
	return out
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// maxKept bounds the batches a Monitor keeps (an hour at 100 ms).
const maxKept = 36000

// Monitor watches the GPUs while measurements run: it reads their state
// (StateReader) on demand and samples NVML telemetry in the background,
// keeping the batches so that a measurement can ask for the engines' use
// during its timed windows only (Use). Open it with OpenMonitor; Close it
// when done.
type Monitor struct {
	state   *StateReader
	sampler *Sampler

	mu      sync.Mutex
	batches []Batch

	cancel context.CancelFunc
	done   chan struct{}
}

// OpenMonitor opens NVML for the GPUs of cfg and starts sampling. Without
// NVML it fails; the caller then measures without a machine record.
func OpenMonitor(lib nvml.Interface, cfg Config) (*Monitor, error) {
	return OpenMonitorTap(lib, cfg, nil)
}

// OpenMonitorTap is OpenMonitor that also hands every batch to tap (when
// not nil) without blocking: a batch tap cannot take at once is dropped
// there, never from the monitor. tap is closed when the monitor closes.
// A process must run one sampler: two NVML samplers reading GPM metrics
// at once crashed inside NVML on an H200 (driver 580.159.04), so the
// lab's live view reads the monitor's batches through tap.
func OpenMonitorTap(lib nvml.Interface, cfg Config, tap chan<- Batch) (*Monitor, error) {
	st, err := OpenState(lib, cfg.Devices)
	if err != nil {
		return nil, err
	}
	sa, err := Open(lib, cfg)
	if err != nil {
		st.Close()
		return nil, err
	}
	m := &Monitor{state: st, sampler: sa, done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	out := make(chan Batch, 64)
	go func() {
		sa.Run(ctx, out)
		close(out)
	}()
	go func() {
		defer close(m.done)
		if tap != nil {
			defer close(tap)
		}
		for b := range out {
			m.add(b)
			if tap != nil {
				select {
				case tap <- b:
				default:
				}
			}
		}
	}()
	return m, nil
}

// add keeps one batch.
func (m *Monitor) add(b Batch) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.batches = append(m.batches, b)
	if len(m.batches) > maxKept {
		m.batches = slices.Delete(m.batches, 0, len(m.batches)-maxKept)
	}
}

// State reads every GPU's state now.
func (m *Monitor) State() []GPUState { return m.state.State() }

// Use returns the engines' use clipped to the windows (Clip), and forgets
// the batches from before the earliest window, which no later measurement
// asks for.
func (m *Monitor) Use(windows []Window) []Use {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := Clip(m.batches, windows)
	if len(windows) > 0 {
		first := windows[0].Start
		for _, w := range windows {
			first = minTime(first, w.Start)
		}
		// Keep the batch that opens the earliest window's interval.
		i, _ := slices.BinarySearchFunc(m.batches, first, func(b Batch, t time.Time) int { return b.At.Compare(t) })
		if i > 1 {
			m.batches = slices.Delete(m.batches, 0, i-1)
		}
	}
	return out
}

// Close stops sampling and shuts NVML down.
func (m *Monitor) Close() error {
	m.cancel()
	<-m.done
	return errors.Join(m.sampler.Close(), m.state.Close())
}
