package cuda

import (
	"errors"
	"fmt"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/native"
)

// Tools of the copy-engine baseline probe (gpu_cebias_test.go, FINDINGS.md
// section 5): a busy kernel that keeps a few SMs of every GPU active while
// a collective runs on the copy engines alone, and an untimed copy on every
// copy stream before a repetition's start gate. Neither is used by a
// measurement unless asked for.

// spinner is a GPU layer that can run c3lab's busy kernel.
type spinner interface {
	// Spin enqueues on s a kernel of ctas one-warp CTAs that spin until
	// StopSpin(v') with v' at or past v (compared cyclically), or maxNs
	// have passed.
	Spin(s streamID, ctas int, v uint32, maxNs int64) error
	// StopSpin raises the word the busy kernels watch to v. It calls no
	// CUDA function, so any goroutine may call it.
	StopSpin(v uint32)
}

// Spin implements spinner.
func (g *nativeGPU) Spin(s streamID, ctas int, v uint32, maxNs int64) error {
	if ctas < 1 || maxNs <= 0 {
		return fmt.Errorf("a busy kernel of %d CTAs for %d ns: want at least one CTA and a positive time limit", ctas, maxNs)
	}
	st, ok := g.streams[s]
	if !ok {
		return fmt.Errorf("busy kernel on unknown stream %d", s)
	}
	drv := g.l.drv
	if g.spinStop.IsZero() {
		w, ptrs, err := g.mappedHostWord("the busy kernels' stop word")
		if err != nil {
			return err
		}
		g.spinStop, g.spinPtr = w, ptrs
	}
	if err := g.current(st.dev); err != nil {
		return err
	}
	return drv.Launch(g.devs[st.dev].spin, uint32(ctas), native.SpinThreads, st.s, uint64(g.spinPtr[st.dev]), uint64(v), uint64(maxNs))
}

// StopSpin implements spinner.
func (g *nativeGPU) StopSpin(v uint32) {
	if !g.spinStop.IsZero() {
		g.spinStop.Raise(v)
	}
}

// opBusy names the busy kernels' streams (one per GPU).
const opBusy backends.Op = "busy"

// keepBusy starts, on each of the first gpus GPUs, c3lab's busy kernel on
// ctas SMs on a stream of its own, for at most maxNs. The returned stop ends
// the kernels and waits for the GPUs; it must be called before the
// backend's buffers are freed (a change of scenario, Close), which would
// otherwise wait for the kernels' time limit.
func (b *Backend) keepBusy(gpus, ctas int, maxNs int64) (stop func() error, err error) {
	var sp spinner
	var v uint32
	derr := b.do(func() {
		var ok bool
		if sp, ok = b.g.(spinner); !ok {
			err = errors.New("this GPU layer has no busy kernel")
			return
		}
		if gpus > len(b.devs) {
			err = fmt.Errorf("a busy kernel on %d GPUs; this node has %d", gpus, len(b.devs))
			return
		}
		b.busySeq++
		v = b.busySeq
		for dev := range gpus {
			s, serr := b.stream(dev, opBusy, streamSpec{})
			if serr == nil {
				serr = sp.Spin(s, ctas, v, maxNs)
			}
			if serr != nil {
				sp.StopSpin(v) // the kernels already started end at once
				err = fmt.Errorf("starting the busy kernel on GPU %d: %w", dev, serr)
				return
			}
		}
	})
	if derr != nil {
		return nil, derr
	}
	if err != nil {
		return nil, err
	}
	return func() error {
		sp.StopSpin(v)
		var serr error
		if derr := b.do(func() {
			for dev := range gpus {
				if e := b.g.Synchronize(dev); e != nil {
					serr = errors.Join(serr, fmt.Errorf("waiting for the busy kernel on GPU %d: %w", dev, e))
				}
			}
		}); derr != nil {
			return derr
		}
		return serr
	}, nil
}

// primeBytes is the size of the untimed copy each copy stream makes before
// a primed repetition's start gate (Backend.primeCopies).
const primeBytes = 1 << 20

// setPrimeCopies turns the untimed copy before each repetition's start gate
// on or off for the experiments run after it.
func (b *Backend) setPrimeCopies(on bool) error {
	return b.do(func() { b.primeCopies = on })
}

// setUngated turns the start gate off (or back on) for the experiments run
// after it, as Options.Ungated does for a whole backend.
func (b *Backend) setUngated(on bool) error {
	return b.do(func() { b.opts.Ungated = on })
}

// setStructuredRest turns the structured-rest probe on (or off) for the
// experiments run after it (TestGPUGEMMOnPartitions compares the two).
func (b *Backend) setStructuredRest(on bool) error {
	return b.do(func() { b.structuredRest = on })
}

// primeCopyStreams enqueues, on every copy stream of every GPU, one copy of
// the first primeBytes of a transfer the collective (or host copy) is
// about to make, with the same data, so its result is unchanged. It runs
// before the repetition's start gate, untimed: the repetition's first copy
// on each engine is then not the first since the GPU was last idle. One
// process per GPU is not primed.
func (b *Backend) primeCopyStreams(p *prepared, pl plan) error {
	if b.proc != nil || pl.dma == nil || pl.dma.pipe != nil {
		return nil
	}
	for q := range p.gpus {
		var ts []transfer
		switch {
		case p.hostOp.Collective != "":
			ts = hostTransfers(p, q)
		case pl.peer != nil:
			// A p2p-load all-reduce's gather: rank q's reduced block as
			// the last run left it; the gather's own copies, later on the
			// same streams, write those bytes again.
			ts = gatherReduced(pl.coll, p, q)
		default:
			ts = dmaTransfers(pl.coll, p, q)
		}
		if len(ts) == 0 {
			continue
		}
		for k, s := range pl.dma.copyStreams[q][:pl.dma.engines] {
			t := ts[k%len(ts)]
			if err := b.g.CopyPeer(t.dst, t.dstOff, t.src, t.srcOff, min(primeBytes, t.bytes), s); err != nil {
				return fmt.Errorf("the untimed copy before the gate on GPU %d: %w", q, err)
			}
		}
	}
	return nil
}
