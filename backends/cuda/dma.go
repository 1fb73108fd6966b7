package cuda

import (
	"fmt"

	"github.com/c3lab/c3lab/scenarios"
)

// dmaPlan runs a pure-copy collective on the copy engines (the paper's
// ConCCL): every transfer is a peer copy, spread over one stream per engine
// in use on each GPU, ordered across GPUs with events. No kernel of c3lab's
// runs on the SMs.
type dmaPlan struct {
	engines int
	chunk   int64 // bytes per copy; 0 = one piece per engine
	// copyStreams[rank][engine] and done[rank][engine]: the streams and
	// their completion events.
	copyStreams [][]streamID
	done        [][]eventID
}

// key identifies the plan for the verification cache.
func (d *dmaPlan) key() string {
	if d == nil {
		return "off"
	}
	return fmt.Sprintf("%d engines, chunk %d", d.engines, d.chunk)
}

// dmaSetup creates (once) the copy streams and events a strategy needs.
func (b *Backend) dmaSetup(p *prepared, st scenarios.Strategy) (*dmaPlan, error) {
	engines := b.devs[0].CopyEngines
	if st.CopyEngines > 0 {
		engines = min(st.CopyEngines, engines)
	}
	if engines < 1 {
		return nil, fmt.Errorf("GPU 0 reports %d copy engines; copy-engine collectives need at least one", b.devs[0].CopyEngines)
	}
	d := &dmaPlan{engines: engines, chunk: int64(st.ChunkBytes)}
	for dev := range p.gpus {
		var ss []streamID
		for e := range engines {
			s, err := b.stream(dev, "copy", streamSpec{Priority: e}) // the spec only keys the cache: copies ignore priority
			if err != nil {
				return nil, fmt.Errorf("copy stream %d on GPU %d: %w", e, dev, err)
			}
			ss = append(ss, s)
		}
		d.copyStreams = append(d.copyStreams, ss)
		for len(p.copyDone) <= dev {
			p.copyDone = append(p.copyDone, nil)
		}
		for len(p.copyDone[dev]) < engines {
			ev, err := b.g.Event(dev)
			if err != nil {
				return nil, err
			}
			p.copyDone[dev] = append(p.copyDone[dev], ev)
		}
		d.done = append(d.done, p.copyDone[dev][:engines])
	}
	return d, nil
}

// transfer is one rank's copy into a peer's buffer.
type transfer struct {
	dst, src       bufID
	dstOff, srcOff int64
	bytes          int64
}

// dmaTransfers lists what rank q sends: for an in-place all-gather its shard
// to every peer's output; for an all-to-all block p of its input to rank
// p's output (its own block too, a local copy).
func dmaTransfers(c collective, p *prepared, q int) []transfer {
	n := 2 * c.Count
	var out []transfer
	for r := range p.gpus {
		switch c.Kind {
		case scenarios.AllGather:
			if r != q {
				out = append(out, transfer{dst: p.recv[r], dstOff: int64(q) * n, src: p.send[q], bytes: n})
			}
		case scenarios.AllToAll:
			out = append(out, transfer{dst: p.recv[r], dstOff: int64(q) * n, src: p.send[q], srcOff: int64(r) * n, bytes: n})
		}
	}
	return out
}

// collective enqueues the plan's collective: NCCL on the SMs, or copies.
func (b *Backend) collective(p *prepared, pl plan) error {
	if pl.dma == nil {
		return b.g.Collective(pl.coll, p.send, p.recv, pl.commStreams)
	}
	d, g := pl.dma, b.g
	for q := range p.gpus {
		// The copies start where the collective starts on this GPU's comm stream.
		for _, s := range d.copyStreams[q] {
			if err := g.Wait(s, p.ev[q][evCommStart]); err != nil {
				return err
			}
		}
		ts := dmaTransfers(pl.coll, p, q)
		// Cut the transfers into pieces so every engine has work: the
		// chunk size asked for, or by default one piece per engine.
		chunk := d.chunk
		if chunk <= 0 && len(ts) > 0 {
			pieces := max(1, (d.engines+len(ts)-1)/len(ts))
			chunk = (ts[0].bytes + int64(pieces) - 1) / int64(pieces)
			chunk = (chunk + 15) / 16 * 16
		}
		k := 0
		for _, t := range ts {
			for off := int64(0); off < t.bytes; off += chunk {
				n := min(chunk, t.bytes-off)
				if err := g.CopyPeer(t.dst, t.dstOff+off, t.src, t.srcOff+off, n, d.copyStreams[q][k%d.engines]); err != nil {
					return err
				}
				k++
			}
		}
		for e, s := range d.copyStreams[q] {
			if err := g.Record(d.done[q][e], s); err != nil {
				return err
			}
		}
	}
	// A rank's collective is complete when every rank's copies are: its
	// comm stream waits for all of them (cross-GPU event waits, no SM).
	for r := range p.gpus {
		for q := range p.gpus {
			for _, ev := range d.done[q] {
				if err := g.Wait(pl.commStreams[r], ev); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
