package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/backends/cuda"
	"github.com/c3lab/c3lab/profiler/doctor"
	"github.com/c3lab/c3lab/profiler/telemetry"
	"github.com/c3lab/c3lab/recordings"
)

// recordFlags are --record and --record-overwrite, shared by run, sweep
// and the lab.
type recordFlags struct {
	path      string
	overwrite bool
}

// output is the --record file as an output to check (none when empty).
func (r *recordFlags) output() output {
	return output{path: r.path, force: r.overwrite, flag: "--record", forceFlag: "--record-overwrite", what: "the recording"}
}

// check refuses, before anything runs, --record-overwrite without
// --record, and a --record file that cannot be written: an existing one
// without --record-overwrite, one that is not a regular file, one whose
// folder is missing or takes no file.
func (r *recordFlags) check() error {
	if err := r.checkFlags(); err != nil {
		return err
	}
	return checkOutputs(r.output())
}

// checkFlags refuses --record-overwrite without --record.
func (r *recordFlags) checkFlags() error {
	if r.overwrite && r.path == "" {
		return noEffect("record-overwrite", "without --record; add --record FILE or drop it")
	}
	return nil
}

// register adds --record and --record-overwrite to fs.
func (r *recordFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&r.path, "record", "", "record the session (scenario, strategies, results, timelines) to this file; c3lab replay plays it back")
	fs.BoolVar(&r.overwrite, "record-overwrite", false, "let --record replace an existing file")
}

// open starts a recorder (nil when not recording) with a header that says
// where the session ran: devices, their driver and library versions when
// the backend is cuda, the device profile and the telemetry catalogue.
func (r *recordFlags) open(b backends.Backend, gpus int) (*recordings.Recorder, error) {
	if r.path == "" {
		return nil, nil
	}
	devs := b.Devices()
	if gpus > 0 && gpus < len(devs) {
		devs = devs[:gpus]
	}
	caps := b.Capabilities()
	h := recordings.Header{Version: version, Backend: b.Name(), Devices: recordings.DevicesFromInfo(devs), Telemetry: telemetry.Units(),
		Profile: caps.Profile}
	if caps.LocalGPUs {
		probe, nv := cuda.Probe(), doctor.ProbeNVML(nvml.New())
		libs := probe.LibraryVersions()
		for i := range h.Devices {
			h.Devices[i].Libraries = libs
			h.Devices[i].Driver = nv.Driver
			if i < len(probe.Devices) {
				h.Devices[i].UUID = probe.Devices[i].UUID
			}
			if i < len(nv.Devices) {
				h.Devices[i].NVLink = map[string]any{"active_links": nv.Devices[i].NVLinksActive, "peers": nv.Devices[i].NVLinkPeers}
			}
		}
	}
	rec, err := recordings.Create(r.path, h, recordings.Options{Overwrite: r.overwrite})
	if err != nil {
		return nil, fmt.Errorf("starting the recording: %w", err)
	}
	return rec, nil
}

// closeRecorder closes a recorder and says on w if it stopped early (disk
// full, say): the run went on, the recording holds what came before.
func closeRecorder(rec *recordings.Recorder, w io.Writer) error {
	if rec == nil {
		return nil
	}
	failed := rec.Err()
	err := rec.Close()
	if failed != nil {
		fmt.Fprintf(w, "c3lab: the recording %s stopped early: %v; it holds everything before that\n", rec.Path(), failed)
		return nil
	}
	if err != nil && !errors.Is(err, os.ErrClosed) {
		return fmt.Errorf("closing the recording: %w", err)
	}
	return nil
}
