package cuda

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
)

func hostCopyScenario(coll scenarios.Collective, gpus int) scenarios.Scenario {
	sc := smallGEMM(coll)
	sc.Name, sc.GPUs = "offload", gpus
	sc.Comm.Bytes = 1 << 16
	if coll == scenarios.HostToDevice {
		sc.Comm.Bytes = 1 << 18 // room for chunks
	}
	return sc
}

// Host copies run on one GPU: on the copy engines (one copy per direction,
// each on its own stream unless chunked) or as c3lab's copy kernel on the
// comm stream; every byte is checked before anything is timed, no NCCL
// call is made, and each GPU copies only to and from its own host buffers.
func TestHostCopies(t *testing.T) {
	for _, tc := range []struct {
		name    string
		gpus    int
		coll    scenarios.Collective
		st      scenarios.Strategy
		copies  []string // fake log lines of one GPU's copies in one repetition
		kernels int      // copy kernels per GPU per repetition
		ctas    int
		streams int // copy streams that carried copies, per GPU
	}{
		{"h2d on the copy engines", 1, scenarios.HostToDevice, scenarios.Strategy{CommEngine: scenarios.EngineDMA}, []string{"copy host0->dev0 262144"}, 0, 0, 1},
		{"d2h on the copy engines", 1, scenarios.DeviceToHost, scenarios.Strategy{CommEngine: scenarios.EngineDMA}, []string{"copy dev0->host0 65536"}, 0, 0, 1},
		{"swap: a direction per engine", 1, scenarios.HostSwap, scenarios.Strategy{CommEngine: scenarios.EngineDMA}, []string{"copy host0->dev0 65536", "copy dev0->host0 65536"}, 0, 0, 2},
		{"swap on one engine", 1, scenarios.HostSwap, scenarios.Strategy{CommEngine: scenarios.EngineDMA, CopyEngines: 1}, []string{"copy host0->dev0 65536", "copy dev0->host0 65536"}, 0, 0, 1},
		{"h2d in 64 KiB chunks over every engine", 1, scenarios.HostToDevice, scenarios.Strategy{CommEngine: scenarios.EngineDMA, ChunkBytes: 64 << 10}, []string{"copy host0->dev0 65536", "copy host0->dev0 65536", "copy host0->dev0 65536", "copy host0->dev0 65536"}, 0, 0, 3},
		{"h2d by the SMs", 1, scenarios.HostToDevice, scenarios.Strategy{}, nil, 1, DefaultHostCopyCTAs, 0},
		{"swap by 8 CTAs in a partition", 1, scenarios.HostSwap, scenarios.Strategy{CommCTAs: 8, CommSMs: 16, CommPriority: -5}, nil, 1, 8, 0},
		{"d2h on two GPUs, each its own", 2, scenarios.DeviceToHost, scenarios.Strategy{CommEngine: scenarios.EngineDMA}, []string{"copy dev0->host0 65536"}, 0, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeGPU(tc.gpus)
			b := fakeBackend(t, f, Options{})
			sc := hostCopyScenario(tc.coll, tc.gpus)
			res, err := b.Run(context.Background(), backends.Experiment{Scenario: sc, Strategy: tc.st, Mode: backends.ModeConcurrent, Reps: 2}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if f.colls != 0 {
				t.Errorf("%d NCCL collectives for a host copy", f.colls)
			}
			// Verification ran once, then 2 timed repetitions.
			var copies []string
			kernels := 0
			for _, l := range f.log {
				if strings.HasPrefix(l, "copy ") && (strings.Contains(l, "host0") || strings.Contains(l, "dev0->")) {
					copies = append(copies, l)
				}
				if strings.HasPrefix(l, "copy-kernel dev0") {
					kernels++
					if !strings.Contains(l, fmt.Sprintf("ctas=%d", tc.ctas)) {
						t.Errorf("copy kernel %q, want ctas=%d", l, tc.ctas)
					}
				}
			}
			if want := 3 * len(tc.copies); len(copies) != want {
				t.Errorf("GPU 0 made %d copies, want %d (3 runs of %v): %v", len(copies), want, tc.copies, copies)
			} else {
				for i, c := range copies[:len(tc.copies)] {
					if c != tc.copies[i] {
						t.Errorf("copy %d = %q, want %q", i, c, tc.copies[i])
					}
				}
			}
			if tc.kernels > 0 && len(tc.copies) == 0 {
				// The swap's two directions are one launch: two log lines.
				per := 1
				if tc.coll == scenarios.HostSwap {
					per = 2
				}
				if kernels != 3*tc.kernels*per {
					t.Errorf("%d copy-kernel segments on GPU 0, want %d", kernels, 3*tc.kernels*per)
				}
			}
			if len(res.Reps) != 2 || res.Reps[0].Comm <= 0 || res.Reps[0].Compute <= 0 {
				t.Errorf("reps %+v", res.Reps)
			}
			var streams int
			b.do(func() {
				if b.prepared != nil && tc.streams > 0 {
					streams = len(b.prepared.copyStart[0])
				}
			})
			if tc.streams > 0 && streams < tc.streams {
				t.Errorf("%d copy streams on GPU 0, want at least %d", streams, tc.streams)
			}
		})
	}
}

// A copy that delivers wrong data is refused before it is timed, whichever
// engine carried it.
func TestHostCopyVerification(t *testing.T) {
	for _, st := range []scenarios.Strategy{{CommEngine: scenarios.EngineDMA}, {}} {
		f := newFakeGPU(1)
		b := fakeBackend(t, f, Options{})
		b.do(func() { b.attach(&corruptingHostCopies{f}) })
		_, err := b.Run(context.Background(), backends.Experiment{Scenario: hostCopyScenario(scenarios.HostSwap, 1), Strategy: st, Mode: backends.ModeComm, Reps: 2}, nil)
		if err == nil || !strings.Contains(err.Error(), "delivered wrong data, so it is not timed") {
			t.Errorf("%s: error %v", st, err)
		}
	}
}

// corruptingHostCopies drops the last 16 bytes of every host copy.
type corruptingHostCopies struct{ *fakeGPU }

func (c *corruptingHostCopies) CopyPeer(dst bufID, dstOff int64, src bufID, srcOff int64, n int64, s streamID) error {
	return c.fakeGPU.CopyPeer(dst, dstOff, src, srcOff, n-16, s)
}

func (c *corruptingHostCopies) CopyKernel(s streamID, segs []copySeg, ctas int) error {
	for i := range segs {
		segs[i].bytes -= 16
	}
	return c.fakeGPU.CopyKernel(s, segs, ctas)
}

// Host copies of the wrong size are refused with the reason, and their
// buffers are freed with the scenario.
func TestHostCopyBuffers(t *testing.T) {
	f := newFakeGPU(1)
	b := fakeBackend(t, f, Options{})
	sc := hostCopyScenario(scenarios.HostSwap, 1)
	sc.Comm.Bytes = 1000
	if _, err := run(t, b, sc, scenarios.Strategy{}, backends.ModeComm); err == nil || !strings.Contains(err.Error(), "multiple of 16") {
		t.Errorf("1000-byte host copy: %v", err)
	}
	sc.Comm.Bytes = 1 << 16
	if _, err := run(t, b, sc, scenarios.Strategy{CommEngine: scenarios.EngineDMA}, backends.ModeConcurrent); err != nil {
		t.Fatal(err)
	}
	hosts := 0
	for _, buf := range f.bufs {
		if buf.host {
			hosts++
		}
	}
	// GEMM a, b, d; swap: a host and a device buffer each way.
	if len(f.bufs) != 3+4 || hosts != 2 {
		t.Errorf("%d buffers (%d pinned host), want 7 (2)", len(f.bufs), hosts)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if len(f.bufs) != 0 {
		t.Errorf("%d buffers left after Close", len(f.bufs))
	}
}

// The profiler's protocol measures a host copy next to a GEMM on one GPU.
func TestMeasureHostCopyOnOneGPU(t *testing.T) {
	f := newFakeGPU(1)
	b := fakeBackend(t, f, Options{})
	r, err := profiler.Measure(context.Background(), b, hostCopyScenario(scenarios.DeviceToHost, 1), scenarios.Strategy{CommEngine: scenarios.EngineDMA}, profiler.Options{Reps: 4})
	if err != nil {
		t.Fatal(err)
	}
	if r.TComm.Median <= 0 || r.TC3.Median <= 0 {
		t.Errorf("T_comm %v T_c3 %v", r.TComm.Median, r.TC3.Median)
	}
}

// streamRecorder notes which stream carried each copy's direction.
type streamRecorder struct {
	*fakeGPU
	dirs map[streamID]map[string]bool
}

func (r *streamRecorder) CopyPeer(dst bufID, dstOff int64, src bufID, srcOff int64, n int64, s streamID) error {
	if r.dirs[s] == nil {
		r.dirs[s] = map[string]bool{}
	}
	r.dirs[s][r.bufs[src].where()+"->"+r.bufs[dst].where()] = true
	return r.fakeGPU.CopyPeer(dst, dstOff, src, srcOff, n, s)
}

// A chunked swap keeps each direction on streams of its own: no stream
// alternates between the two.
func TestHostSwapDirectionsKeepTheirStreams(t *testing.T) {
	for _, engines := range []int{0, 2} {
		f := newFakeGPU(1)
		b := fakeBackend(t, f, Options{})
		rec := &streamRecorder{fakeGPU: f, dirs: map[streamID]map[string]bool{}}
		b.do(func() { b.attach(rec) })
		sc := hostCopyScenario(scenarios.HostSwap, 1)
		sc.Comm.Bytes = 1 << 20
		st := scenarios.Strategy{CommEngine: scenarios.EngineDMA, ChunkBytes: 64 << 10, CopyEngines: engines}
		if _, err := run(t, b, sc, st, backends.ModeComm); err != nil {
			t.Fatal(err)
		}
		if len(rec.dirs) < 2 {
			t.Errorf("%d engines: %d copy streams used, want one direction each on at least 2", engines, len(rec.dirs))
		}
		for s, dirs := range rec.dirs {
			if len(dirs) != 1 {
				t.Errorf("%d engines: stream %d carried %v; want one direction", engines, s, dirs)
			}
		}
	}
}
