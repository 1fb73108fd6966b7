package cuda

import (
	"errors"
	"fmt"
	"slices"

	"github.com/c3lab/c3lab/native"
	"github.com/c3lab/c3lab/scenarios"
)

// Reductions that load the peers' blocks (comm_engine p2p-load).
//
// A copy-engine reduction (dma.go) first copies the peers' blocks into a
// staging buffer, then adds them with a kernel; next to a GEMM that holds
// every SM the add waits for SMs. A p2p-load reduction has no copy: each
// rank's reduction kernel reads its own block from local memory and the
// peers' blocks straight from their memory, over NVLink, adds them and
// stores its reduced block. It runs on few CTAs (comm_ctas, or the comm
// partition of comm_sms), so under comm-first it can own a small
// partition beside the GEMM.
//
//   - What is pulled. Reduce-scatter: rank r's kernel loads block r of
//     every rank's send buffer (its own locally) and writes its output.
//     All-reduce: the same into block r of its output, then the reduced
//     blocks are gathered on the copy engines (each rank pushes its block
//     to every peer's output, dma.go's gather): a pure copy, which the
//     copy engines carry without an SM, so a GEMM holding the SMs does not
//     delay it (FINDINGS.md section 1: one engine drives NVLink to a peer
//     at 376 GB/s alone). Gathering by pulls would put that copy back on
//     the SMs the add just gave up.
//   - Ordering, one process. A rank's kernel starts once every rank's
//     collective has started (its comm stream waits for the peers'
//     comm-start events, cross-GPU waits that use no SM): a peer's input
//     was written before that point on its stream. A rank's part ends once
//     every peer's kernel, which read its block, has finished (its comm
//     stream waits for the peers' reduction-done events), so nothing after
//     the collective on that stream overwrites a block a peer still loads.
//     An all-reduce's gather copies wait for their own rank's kernel, and
//     every rank's comm stream waits for every copy (joinCopies), which
//     covers the second point.
//   - Ordering, one process per GPU. Events do not cross processes; the
//     copy-engine collectives' flags (proc_ipc.go) do: two words of each
//     rank's flag buffer per peer, "started" and "loaded". Each rank's comm
//     stream raises its word on every peer, then waits until its own
//     words from every peer reach the call's sequence number. The peers'
//     send buffers are mapped with CUDA IPC (ipcMap) so the kernel loads
//     them through the mapping.

// peerLoadCTAs is a p2p-load reduction's grid when the strategy sets no
// comm_ctas and no comm_sms: 32 CTAs of 256 threads, each thread with 8
// loads of 16 bytes in flight, keep about 1 MiB in flight, which covers
// NVLink's bandwidth-delay product on an H200 (about 450 GB/s x 2 µs).
// A model, not a measurement (NOTES.md).
const peerLoadCTAs = 32

// The words of a rank's flag buffer (proc_ipc.go: ipcFlag's stream index)
// a p2p-load reduction uses, after the copy streams'.
const (
	peerStartedWord = ipcFlagStreams - 1
	peerLoadedWord  = ipcFlagStreams - 2
)

// peerPlan is a p2p-load reduction's plan: its kernel's grid. An
// all-reduce's gather is the plan's dmaPlan (plan.dma).
type peerPlan struct {
	ctas int
}

// key identifies the plan for the verification cache.
func (pp *peerPlan) key() string {
	if pp == nil {
		return "off"
	}
	return fmt.Sprintf("p2p-load, %d CTAs", pp.ctas)
}

// peerCTAs is a p2p-load reduction's grid under st: comm_ctas when set;
// else pipeCTAsPerSM CTAs per SM of the comm partition (as the pipelined
// copy-engine reduction); else peerLoadCTAs.
func peerCTAs(st scenarios.Strategy) int {
	switch {
	case st.CommCTAs > 0:
		return st.CommCTAs
	case st.CommSMs > 0:
		return pipeCTAsPerSM * st.CommSMs
	}
	return peerLoadCTAs
}

// loadGrid is the grid ReduceLoad launches for n elements under a cap of
// ctas: no more CTAs than one 16-byte word per thread fills, at least one.
func loadGrid(n int64, ctas int) int64 {
	need := (n/8 + native.ReduceThreads - 1) / native.ReduceThreads
	return max(min(int64(ctas), need), 1)
}

// ErrPeerLoadAcrossNodes refuses p2p-load reductions between ranks on
// different hosts.
var ErrPeerLoadAcrossNodes = errors.New("p2p-load reductions cannot cross nodes: a kernel loads only from GPUs of its own node (NVLink, mapped with CUDA IPC); use comm_engine sm (NCCL), which takes the network between nodes")

// checkPeerLoad refuses a p2p-load reduction unless every GPU maps every
// other's memory: without peer access a kernel cannot load a peer's block.
func checkPeerLoad(devs []devInfo) error {
	for i, d := range devs {
		for j := range devs {
			if i != j && !slices.Contains(d.Peers, j) {
				return fmt.Errorf("p2p-load reductions load the peers' blocks over NVLink, and GPU %d cannot map GPU %d's memory (no peer access); use comm_engine dma or sm", i, j)
			}
		}
	}
	return nil
}

// peerLoadable reports whether every pair of devs has peer access (and
// there are at least two): the cuda backend's capability CapPeerLoad.
func peerLoadable(devs []devInfo) bool {
	return len(devs) >= 2 && checkPeerLoad(devs) == nil
}

// procPeerCheck refuses, with one process per GPU, a p2p-load run whose
// ranks are on different hosts.
func (b *Backend) procPeerCheck(sc scenarios.Scenario, st scenarios.Strategy) error {
	if b.proc == nil || st.Normalize().CommEngine != scenarios.EngineP2PLoad || b.proc.oneHost {
		return nil
	}
	return fmt.Errorf("%w (the ranks are on hosts %s)", ErrPeerLoadAcrossNodes, hostList(b.proc.hosts))
}

// peerSetup plans a p2p-load reduction: its grid, every rank's
// reduction-done event, an all-reduce's copy streams for the gather and,
// with one process per GPU, the flags. It allocates no buffer but the
// flags.
func (b *Backend) peerSetup(p *prepared, st scenarios.Strategy) (*peerPlan, *dmaPlan, error) {
	if !p.coll.Kind.P2PLoadCovers() {
		return nil, nil, fmt.Errorf("comm_engine p2p-load runs reduce-scatter and all-reduce, not %s; use sm, dma or nccl-ce", p.coll.Kind)
	}
	if err := checkPeerLoad(b.devs[:p.gpus]); err != nil {
		return nil, nil, err
	}
	if p.gpus > native.ReduceMaxSources {
		return nil, nil, fmt.Errorf("a p2p-load %s adds at most %d blocks per rank; %d GPUs need %d", p.coll.Kind, native.ReduceMaxSources, p.gpus, p.gpus)
	}
	if p.coll.Kind == scenarios.AllReduce && p.coll.Count%int64(p.gpus) != 0 {
		return nil, nil, fmt.Errorf("a p2p-load all-reduce splits the buffer into %d blocks; %d bf16 elements do not split evenly", p.gpus, p.coll.Count)
	}
	for dev := len(p.reduceDone); dev < p.gpus; dev++ {
		ev, err := b.g.Event(dev)
		if err != nil {
			return nil, nil, err
		}
		p.reduceDone = append(p.reduceDone, ev)
	}
	pp := &peerPlan{ctas: peerCTAs(st)}
	var d *dmaPlan
	if p.coll.Kind == scenarios.AllReduce {
		engines := b.devs[0].CopyEngines
		if engines < 1 {
			return nil, nil, fmt.Errorf("GPU 0 reports %d copy engines; a p2p-load all-reduce gathers its reduced blocks on them; use a reduce-scatter or comm_engine sm", engines)
		}
		d = &dmaPlan{}
		d.engines, d.chunk = ceSplit(p.coll, p.gpus, engines)
		if err := b.copyStreamsSetup(p, d); err != nil {
			return nil, nil, err
		}
	}
	if b.proc != nil {
		fd := d
		if fd == nil {
			fd = &dmaPlan{}
		}
		for q := range fd.copyStreams {
			if len(fd.copyStreams[q]) > peerLoadedWord {
				return nil, nil, fmt.Errorf("%d copy streams on GPU %d; a p2p-load all-reduce between processes orders at most %d", len(fd.copyStreams[q]), q, peerLoadedWord)
			}
		}
		if err := b.ipcFlagsSetup(p, fd); err != nil {
			return nil, nil, err
		}
	}
	return pp, d, nil
}

// peerLoadReduction enqueues a p2p-load reduce-scatter or all-reduce (see
// the comment at the top of the file).
func (b *Backend) peerLoadReduction(p *prepared, pl plan) error {
	g := b.g
	n := reduceBlock(pl.coll, p.gpus)
	blk := 2 * n
	var seq uint32
	if b.proc != nil {
		seq = b.proc.rg.flagSeq.Add(1)
	}
	// Every rank's inputs are in place before any rank loads them.
	if err := b.peerBarrier(p, pl, peerStartedWord, seq, func(q int) eventID { return p.ev[q][evCommStart] }); err != nil {
		return err
	}
	for r := range p.gpus {
		srcs := []bufRef{{p.send[r], int64(r) * blk}}
		for q := range p.gpus {
			if q != r {
				srcs = append(srcs, bufRef{p.send[q], int64(r) * blk})
			}
		}
		out := bufRef{p.recv[r], 0}
		if pl.coll.Kind == scenarios.AllReduce {
			out.off = int64(r) * blk
		}
		if err := g.ReduceLoad(pl.commStreams[r], out, srcs, n, pl.peer.ctas); err != nil {
			return err
		}
		if err := g.Record(p.reduceDone[r], pl.commStreams[r]); err != nil {
			return err
		}
	}
	if pl.coll.Kind != scenarios.AllReduce {
		// No rank's part ends before every peer has loaded its block.
		return b.peerBarrier(p, pl, peerLoadedWord, seq, func(q int) eventID { return p.reduceDone[q] })
	}
	// All-reduce: gather the reduced blocks on the copy engines; every
	// rank's comm stream then waits for every copy, each of which waited
	// for its own rank's kernel, so for every load.
	if err := b.copyPhase(p, pl.dma, p.reduceDone, true, func(q int) []transfer { return gatherReduced(pl.coll, p, q) }); err != nil {
		return err
	}
	return b.joinCopies(p, pl)
}

// peerBarrier makes every rank's comm stream wait until every peer's comm
// stream has reached this point: in one process by waiting for each
// peer's event ev(q), recorded there just before; between processes by
// raising flag word `word` on every peer and waiting for its own from
// every peer to reach seq.
func (b *Backend) peerBarrier(p *prepared, pl plan, word int, seq uint32, ev func(q int) eventID) error {
	if b.proc == nil {
		for r := range p.gpus {
			for q := range p.gpus {
				if q != r {
					if err := b.g.Wait(pl.commStreams[r], ev(q)); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	for r := range p.gpus {
		for q := range p.gpus {
			if q != r {
				if err := b.g.WriteFlag(pl.commStreams[r], ipcFlag(p, q, r, word), seq); err != nil {
					return fmt.Errorf("raising a p2p-load reduction's flag on GPU %d: %w", q, err)
				}
			}
		}
	}
	for r := range p.gpus {
		for q := range p.gpus {
			if q != r {
				if err := b.g.WaitFlag(pl.commStreams[r], ipcFlag(p, r, q, word), seq); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
