package main

import (
	"fmt"
	"io"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/telemetry"
	"github.com/c3lab/c3lab/recordings"
)

// openNodeTelemetry opens the one NVML monitor of a run or sweep on the
// node's GPUs: the machine record of its measurements (each one's drift
// check and the engines' use during its timed repetitions) and, when rec
// is set, the samples a replay shows, recorded as they come. Off the
// node's GPUs or without NVML it opens nothing and claims nothing (a
// recording says why). stop ends sampling and waits for the last
// samples to be recorded. One sampler per process: two NVML samplers
// reading GPM at once crashed inside NVML on an H200.
func openNodeTelemetry(b backends.Backend, rec *recordings.Recorder) (m profiler.Machine, stop func()) {
	if !b.Capabilities().LocalGPUs {
		return nil, func() {}
	}
	var tap chan telemetry.Batch
	if rec != nil {
		tap = make(chan telemetry.Batch, 16)
	}
	mon, err := telemetry.OpenMonitorTap(nvml.New(), nodeConfig(b), tap)
	if err != nil {
		if rec != nil {
			rec.Marker("telemetry off: " + err.Error())
		}
		return nil, func() {}
	}
	done := recordBatches(tap, rec)
	return mon, func() {
		mon.Close() // closes tap
		<-done
	}
}

// recordBatches records every batch of tap into rec until tap is closed,
// then closes the channel it returns; without a tap (nil: nothing to
// record) that channel is closed at once. A range over a nil tap would
// block for ever, and the stop of a run or sweep without --record with it:
// that hung every such sweep on the GPUs at its end.
func recordBatches(tap <-chan telemetry.Batch, rec *recordings.Recorder) <-chan struct{} {
	done := make(chan struct{})
	if tap == nil {
		close(done)
		return done
	}
	go func() {
		defer close(done)
		for batch := range tap {
			rec.Samples(batch.Samples)
		}
	}()
	return done
}

// openLabMachine opens the one NVML monitor the lab uses: the machine
// record of its measurements, whose batches also reach the live view
// through live (capacity batches deep). All are nil off the node's GPUs;
// err says why NVML could not be opened on them.
func openLabMachine(b backends.Backend, capacity int) (m profiler.Machine, live <-chan telemetry.Batch, stop func(), err error) {
	if !b.Capabilities().LocalGPUs {
		return nil, nil, func() {}, nil
	}
	tap := make(chan telemetry.Batch, capacity)
	mon, err := telemetry.OpenMonitorTap(nvml.New(), nodeConfig(b), tap)
	if err != nil {
		return nil, nil, func() {}, err
	}
	return mon, tap, func() { mon.Close() }, nil
}

// nodeConfig samples every GPU of b; link utilization is a share of the
// NVLink bandwidth b reports for each device.
func nodeConfig(b backends.Backend) telemetry.Config {
	cfg := telemetry.Config{LinkBandwidth: map[int]float64{}}
	for _, d := range b.Devices() {
		cfg.LinkBandwidth[d.Index] = d.LinkBandwidth
		cfg.Devices = append(cfg.Devices, d.Index)
	}
	return cfg
}

// warnDrift prints the result's drift warning, one line, when it has one,
// and then the note on the GPUs' clocks during the runs (a cap hit, or
// modes at different clocks: Drift.ClockNote), one line, when it has one.
func warnDrift(w io.Writer, r profiler.Result) {
	if msg := r.Drift.Warning(); msg != "" {
		fmt.Fprintln(w, "c3lab: "+msg)
	}
	if note := r.Drift.ClockNote(); note != "" {
		fmt.Fprintln(w, "c3lab: "+note)
	}
}
