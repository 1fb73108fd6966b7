package cuda

import (
	"fmt"
	"time"

	"github.com/c3lab/c3lab/native"
	"github.com/c3lab/c3lab/scenarios"
)

// pipeSyncBytes is the size of each rank's sync buffer: room for 8 sources
// of pipeMaxChunks chunks.
const pipeSyncBytes = 4 * (native.ReduceSyncFlags + native.ReduceMaxSources*pipeMaxChunks)

// pipeSetup plans a reduction pipelined with its copies in the comm
// partition of st.CommSMs SMs, and clears every rank's sync words, so the
// experiment's calls count from sequence number 1.
func (b *Backend) pipeSetup(p *prepared, d *dmaPlan, st scenarios.Strategy) error {
	n := reduceBlock(p.coll, p.gpus)
	pp := &pipePlan{chunk: pipeChunk(n, int64(st.ChunkBytes)), grid: pipeCTAsPerSM * st.CommSMs}
	chunks := (n + pp.chunk - 1) / pp.chunk
	if w := syncWords(p.gpus, chunks); 4*w > pipeSyncBytes {
		return fmt.Errorf("a pipelined reduction of %d chunks on %d GPUs needs %d sync bytes; %d are allocated", chunks, p.gpus, 4*w, pipeSyncBytes)
	}
	zero := make([]byte, pipeSyncBytes)
	for dev := range p.gpus {
		if err := b.g.Upload(p.pipeSync[dev], zero); err != nil {
			return fmt.Errorf("clearing the reduction's sync words on GPU %d: %w", dev, err)
		}
	}
	p.pipeSeq = 0
	d.pipe = pp
	return nil
}

// pipelinedReduction enqueues a copy-engine reduce-scatter or all-reduce
// whose add runs alongside its copies:
//
//  1. Each rank's copy streams push chunk c of its block for every peer
//     into that peer's staging buffer (peers in rotated order, so every
//     GPU receives from one peer per round), and after each copy the
//     stream raises the flag for that source and chunk on the peer (a
//     stream write to peer memory). No SM is used.
//  2. Each rank's reduction kernel, on the comm stream and so in the comm
//     partition, adds chunk c as soon as its flags are up and then counts
//     it done.
//  3. An all-reduce's gather streams wait for each chunk's done counter
//     (a stream wait, no SM) and push the reduced chunk to every peer.
//  4. The comm stream waits for every copy of every rank.
//
// Pushing is what the add-after design and the all-gather do. Pulling
// (Options.PipePull) keeps every flag local; next to a GEMM on the H200s
// it measured the same for reduce-scatters, and for all-reduces the same
// in some runs and up to 20 points of ideal worse in others
// (results/2026-11-30-h200x2-session3/gpu-tests-*.txt).
func (b *Backend) pipelinedReduction(p *prepared, pl plan) error {
	g, d, pp := b.g, pl.dma, pl.dma.pipe
	p.pipeSeq++
	seq := p.pipeSeq
	n := reduceBlock(pl.coll, p.gpus)
	chunks := (n + pp.chunk - 1) / pp.chunk
	blk := 2 * n // bytes of one block
	word := func(dev int, w int64) bufRef { return bufRef{p.pipeSync[dev], 4 * w} }
	// Rank q's copy streams move chunk c of block r between q and r: by
	// default q pushes its own block r into r's staging; with PipePull, q
	// pulls the peers' blocks q into its own staging. Either way the flag
	// raised after the copy is the receiving rank's.
	for q := range p.gpus {
		if err := b.openStreams(d.copyStreams[q], p.ev[q][evCommStart], d.started[q]); err != nil {
			return err
		}
		k := 0
		for c := range chunks {
			lo := c * pp.chunk
			bytes := 2 * min(pp.chunk, n-lo)
			for _, peer := range peerOrder(q, p.gpus) {
				if peer == q {
					continue
				}
				from, to := q, peer // push
				if b.opts.PipePull {
					from, to = peer, q
				}
				slot := stagingSlot(from, to)
				s := d.copyStreams[q][k%d.engines]
				k++
				if err := g.CopyPeer(p.staging[to], int64(slot)*blk+2*lo, p.send[from], int64(to)*blk+2*lo, bytes, s); err != nil {
					return err
				}
				if err := g.WriteFlag(s, word(to, flagWord(slot+1, c, chunks)), seq); err != nil {
					return err
				}
			}
		}
		if err := b.closeStreams(d.copyStreams[q], d.done[q]); err != nil {
			return err
		}
	}
	ps := pipeSync{chunk: pp.chunk, seq: seq, grid: pp.grid, timeoutNs: b.opts.RepTimeoutNanos,
		countDone: pl.coll.Kind == scenarios.AllReduce}
	outOff := func(r int) int64 {
		if pl.coll.Kind == scenarios.AllReduce {
			return int64(r) * blk
		}
		return 0
	}
	for r := range p.gpus {
		srcs := []bufRef{{p.send[r], int64(r) * blk}}
		for q := range p.gpus {
			if q != r {
				srcs = append(srcs, bufRef{p.staging[r], int64(stagingSlot(q, r)) * blk})
			}
		}
		ps.sync = p.pipeSync[r]
		if err := g.ReducePipelined(pl.commStreams[r], bufRef{p.recv[r], outOff(r)}, srcs, n, ps); err != nil {
			return err
		}
		if err := g.Record(p.reduceDone[r], pl.commStreams[r]); err != nil {
			return err
		}
	}
	if pl.coll.Kind == scenarios.AllReduce {
		full := seq * uint32(pp.grid) // every CTA has counted the chunk (cyclic)
		for q := range p.gpus {
			if err := b.openStreams(pp.gather[q], p.ev[q][evCommStart], d.started[q][d.engines:]); err != nil {
				return err
			}
			for c := range chunks {
				lo := c * pp.chunk
				bytes := 2 * min(pp.chunk, n-lo)
				s := pp.gather[q][int(c)%d.engines]
				if err := g.WaitFlag(s, word(q, doneWord(p.gpus, c, chunks)), full); err != nil {
					return err
				}
				for _, r := range peerOrder(q, p.gpus) {
					if r != q {
						if err := g.CopyPeer(p.recv[r], outOff(q)+2*lo, p.recv[q], outOff(q)+2*lo, bytes, s); err != nil {
							return err
						}
					}
				}
			}
			if err := b.closeStreams(pp.gather[q], d.done[q][d.engines:]); err != nil {
				return err
			}
		}
	}
	return b.joinCopies(p, pl)
}

// pipeStatus reports a pipelined reduction whose kernel gave up waiting
// for its copies during the experiment (the status word is sticky until
// the next experiment clears it).
func (b *Backend) pipeStatus(p *prepared) error {
	word := make([]byte, 4)
	for dev, w := range p.pipeSync {
		if err := b.g.Download(w, word); err != nil {
			return err
		}
		if word[0]&native.ReduceSyncStatusTimeout != 0 {
			return fmt.Errorf("the copy-engine reduction on GPU %d waited more than %v for its copies and gave up, so the results are discarded; run c3lab doctor and retry", dev, time.Duration(b.opts.RepTimeoutNanos))
		}
	}
	return nil
}
