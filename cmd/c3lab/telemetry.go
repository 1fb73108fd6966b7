package main

import (
	"context"
	"fmt"
	"io"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/telemetry"
	"github.com/c3lab/c3lab/recordings"
)

// recordTelemetry samples NVML into rec while a recorded run or sweep is
// on the GPUs, so a replay shows what the engines did. It returns the
// function that stops sampling; without a recording, on another backend or
// without NVML it samples nothing (and says why in the recording).
func recordTelemetry(ctx context.Context, b backends.Backend, rec *recordings.Recorder) (stop func()) {
	if rec == nil || !b.Capabilities().LocalGPUs {
		return func() {}
	}
	batches, stopSampling, err := sampleNVML(ctx, b, 16)
	if err != nil {
		rec.Marker("telemetry off: " + err.Error())
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for batch := range batches {
			rec.Samples(batch.Samples)
		}
	}()
	return func() {
		stopSampling()
		<-done
	}
}

// sampleNVML starts sampling every GPU's NVML telemetry into a channel of
// the given capacity, closed when sampling stops; link utilization is a
// share of the NVLink bandwidth b reports for each device. stop ends
// sampling, waits for the sampler and frees it.
func sampleNVML(ctx context.Context, b backends.Backend, capacity int) (batches <-chan telemetry.Batch, stop func(), err error) {
	cfg := telemetry.Config{LinkBandwidth: map[int]float64{}}
	for _, d := range b.Devices() {
		cfg.LinkBandwidth[d.Index] = d.LinkBandwidth
	}
	sampler, err := telemetry.Open(nvml.New(), cfg)
	if err != nil {
		return nil, nil, err
	}
	out := make(chan telemetry.Batch, capacity)
	done := make(chan struct{})
	sctx, cancel := context.WithCancel(ctx)
	go func() {
		defer close(done)
		defer close(out)
		sampler.Run(sctx, out)
	}()
	return out, func() {
		cancel()
		<-done
		sampler.Close()
	}, nil
}

// openMachine opens the NVML monitor a measurement reads the GPUs' state
// and timed-window use from (profiler.Options.Machine): nil on another
// backend than the node's GPUs or without NVML, where nothing is recorded
// or claimed. close stops it.
func openMachine(b backends.Backend) (m profiler.Machine, close func()) {
	if !b.Capabilities().LocalGPUs {
		return nil, func() {}
	}
	cfg := telemetry.Config{LinkBandwidth: map[int]float64{}}
	for _, d := range b.Devices() {
		cfg.LinkBandwidth[d.Index] = d.LinkBandwidth
		cfg.Devices = append(cfg.Devices, d.Index)
	}
	mon, err := telemetry.OpenMonitor(nvml.New(), cfg)
	if err != nil {
		return nil, func() {}
	}
	return mon, func() { mon.Close() }
}

// warnDrift prints the result's drift warning, one line, when it has one.
func warnDrift(w io.Writer, r profiler.Result) {
	if msg := r.Drift.Warning(); msg != "" {
		fmt.Fprintln(w, "c3lab: "+msg)
	}
}
