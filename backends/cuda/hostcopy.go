package cuda

import (
	"bytes"
	"fmt"

	"github.com/c3lab/c3lab/scenarios"
)

// Host copies (comm h2d, d2h, swap) are the communication one GPU has on
// its own: each GPU of the scenario copies between its memory and a pinned
// host buffer of its own, over PCIe, next to its kernels. With comm_engine
// dma the copy engines move the data (cuMemcpyAsync, as frameworks offload
// activations and optimizer states); with sm a kernel of c3lab's own copies
// it on the SMs through the host buffer's device address (zero-copy), so
// priorities, SM partitions and the CTA cap act on it as on a collective's
// kernels.

// hostBufs are one GPU's buffers for a host copy: fromHost (pinned host
// memory, filled) is copied to toDev, and fromDev (filled) to toHost
// (pinned host memory). A direction the op does not have has no buffers.
type hostBufs struct {
	fromHost, toDev bufID
	fromDev, toHost bufID
}

// DefaultHostCopyCTAs is how many CTAs c3lab's SM copy kernel uses for a
// host copy when the strategy sets no comm_ctas.
const DefaultHostCopyCTAs = 32

// hostPattern is the data a host copy's source holds on GPU dev: the
// collectives' test data, with a different seed for each direction so a
// copy that went the wrong way is caught.
func hostPattern(dev int, toHost bool, n int64) []byte {
	seed := dev
	if toHost {
		seed += 1 << 10
	}
	return sendBytes(seed, n/2)
}

// hostDeviceBytes is what a host copy allocates on each GPU.
func hostDeviceBytes(c scenarios.CommOp) int64 {
	toHost, fromHost := c.HostBytes()
	return toHost + fromHost
}

// prepareHostCopy allocates and fills one GPU's host-copy buffers.
func (b *Backend) prepareHostCopy(p *prepared, c scenarios.CommOp, dev int) error {
	toHost, fromHost := c.HostBytes()
	var hb hostBufs
	// Registered first, so release frees whatever was allocated on failure.
	p.host = append(p.host, &hb)
	pair := func(n int64, srcHost bool, src, dst *bufID) error {
		if n == 0 {
			return nil
		}
		allocSrc, allocDst := b.g.Alloc, b.g.AllocHost
		if srcHost {
			allocSrc, allocDst = b.g.AllocHost, b.g.Alloc
		}
		var err error
		if *src, err = allocSrc(dev, n); err != nil {
			return fmt.Errorf("allocating the host copy's source (%d bytes) for GPU %d: %w", n, dev, err)
		}
		if err := b.g.Upload(*src, hostPattern(dev, !srcHost, n)); err != nil {
			return err
		}
		if *dst, err = allocDst(dev, n); err != nil {
			return fmt.Errorf("allocating the host copy's destination (%d bytes) for GPU %d: %w", n, dev, err)
		}
		return nil
	}
	if err := pair(fromHost, true, &hb.fromHost, &hb.toDev); err != nil {
		return err
	}
	return pair(toHost, false, &hb.fromDev, &hb.toHost)
}

// hostCopySegs lists GPU q's copies: host to device first, then device to
// host.
func hostCopySegs(p *prepared, q int) []copySeg {
	toHost, fromHost := p.hostOp.HostBytes()
	var segs []copySeg
	if fromHost > 0 {
		segs = append(segs, copySeg{dst: bufRef{p.host[q].toDev, 0}, src: bufRef{p.host[q].fromHost, 0}, bytes: fromHost})
	}
	if toHost > 0 {
		segs = append(segs, copySeg{dst: bufRef{p.host[q].toHost, 0}, src: bufRef{p.host[q].fromDev, 0}, bytes: toHost})
	}
	return segs
}

// hostTransfers is hostCopySegs as copy-engine transfers.
func hostTransfers(p *prepared, q int) []transfer {
	var out []transfer
	for _, s := range hostCopySegs(p, q) {
		out = append(out, transfer{dst: s.dst.b, dstOff: s.dst.off, src: s.src.b, srcOff: s.src.off, bytes: s.bytes})
	}
	return out
}

// hostCopyEngines picks a copy-engine host copy's copy streams and chunk:
// unchunked, one copy per direction, each on a stream of its own (so a
// swap's two directions run on two engines at once; one direction of PCIe
// gains nothing from a second engine); chunked, the chunks are dealt to
// every engine the strategy allows.
func hostCopyEngines(c scenarios.CommOp, engines int, chunk int64) int {
	if chunk > 0 {
		return engines
	}
	dirs := 1
	if c.Collective == scenarios.HostSwap {
		dirs = 2
	}
	return min(engines, dirs)
}

// hostCopyCTAs is the SM copy kernel's CTA count under a strategy.
func hostCopyCTAs(st scenarios.Strategy) int {
	if st.CommCTAs > 0 {
		return max(st.CommCTAs, 2) // a swap needs a CTA per direction
	}
	return DefaultHostCopyCTAs
}

// hostCopy enqueues one host copy on every GPU: on the copy streams (then
// each comm stream waits for its own GPU's copies) or as c3lab's copy
// kernel on the comm stream.
func (b *Backend) hostCopy(p *prepared, pl plan) error {
	if pl.dma == nil {
		for q := range p.gpus {
			if err := b.g.CopyKernel(pl.commStreams[q], hostCopySegs(p, q), pl.hostCTAs); err != nil {
				return err
			}
		}
		return nil
	}
	d := pl.dma
	for q := range p.gpus {
		if err := b.openStreams(d.copyStreams[q], p.ev[q][evCommStart], d.started[q]); err != nil {
			return err
		}
		transfers := hostTransfers(p, q)
		for i, t := range transfers {
			streams := hostCopyStreams(d.copyStreams[q], i, len(transfers))
			chunk := d.chunk
			if chunk <= 0 {
				chunk = t.bytes
			}
			k := 0
			for off := int64(0); off < t.bytes; off += chunk {
				n := min(chunk, t.bytes-off)
				if err := b.g.CopyPeer(t.dst, t.dstOff+off, t.src, t.srcOff+off, n, streams[k%len(streams)]); err != nil {
					return err
				}
				k++
			}
		}
		if err := b.closeStreams(d.copyStreams[q], d.done[q]); err != nil {
			return err
		}
		for _, ev := range d.done[q] {
			if err := b.g.Wait(pl.commStreams[q], ev); err != nil {
				return err
			}
		}
	}
	return nil
}

// hostCopyStreams picks the copy streams of direction i of n: with one
// direction every stream; with a swap's two, each direction its own share
// of the streams (the first half to the GPU, the rest from it), so no
// stream alternates directions and one engine never waits for the other
// direction's copy (measured on H200: a swap of 32 MiB each way chunked in
// 8 MiB over 3 engines dealt in turn ran at 69 GB/s, against 99 unchunked).
// A single stream carries both.
func hostCopyStreams(ss []streamID, i, n int) []streamID {
	if n < 2 || len(ss) < 2 {
		return ss
	}
	half := (len(ss) + 1) / 2
	if i == 0 {
		return ss[:half]
	}
	return ss[half:]
}

// verifyHostCopy runs the copy once on cleared destinations and checks
// every byte that arrived.
func (b *Backend) verifyHostCopy(p *prepared, pl plan) error {
	for q := range p.gpus {
		for _, s := range hostCopySegs(p, q) {
			if err := b.g.Upload(s.dst.b, make([]byte, s.bytes)); err != nil {
				return err
			}
		}
	}
	if err := b.commOnce(p, pl); err != nil {
		return err
	}
	for q := range p.gpus {
		if !b.mine(q) {
			continue // that rank checks its own
		}
		for _, s := range hostCopySegs(p, q) {
			got := make([]byte, s.bytes)
			if err := b.g.Download(s.dst.b, got); err != nil {
				return err
			}
			toHost := s.dst.b == p.host[q].toHost
			if !bytes.Equal(got, hostPattern(q, toHost, s.bytes)) {
				dir := "host to device"
				if toHost {
					dir = "device to host"
				}
				return fmt.Errorf("the %s copy on GPU %d delivered wrong data, so it is not timed", dir, q)
			}
		}
	}
	return nil
}

// hostCopySpanName names a host copy's comm span by what carried it.
func hostCopySpanName(c scenarios.CommOp, pl plan) (name, kind string) {
	if pl.dma != nil {
		return "copy-engine " + c.String(), "copy"
	}
	return fmt.Sprintf("copy kernel %s (%d CTAs)", c, pl.hostCTAs), "kernel"
}

// hostCopyCheck refuses a host copy the backend cannot run.
func hostCopyCheck(c scenarios.CommOp) error {
	if int64(c.Bytes)%16 != 0 {
		return fmt.Errorf("a host copy of %d bytes: the copy kernel moves 16-byte words; use a multiple of 16", int64(c.Bytes))
	}
	return nil
}
