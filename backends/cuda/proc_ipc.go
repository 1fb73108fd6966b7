package cuda

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/c3lab/c3lab/scenarios"
)

// Copy-engine collectives between processes (one process per GPU, ranks of
// one node). The single-process schedule (dma.go) runs unchanged; what
// changes is how a rank reaches its peers' memory and how the ranks order
// their copies:
//
//   - Memory. Every buffer a peer writes into (the output of an all-gather
//     or all-to-all, the staging buffer of a reduction, the ordering flags)
//     is one cuMemAlloc allocation. Before the first timed work of a run,
//     each rank exports its own with cuIpcGetMemHandle, the ranks exchange
//     the handles through the job's store (Peers.AllGather), and each rank
//     maps its peers' with cuIpcOpenMemHandle (lazy peer access). A rank's
//     mapping of rank q's buffer stands where the placeholder was, so
//     CopyPeer and WriteFlag on it run on this rank's GPU. Mappings live as
//     long as the buffers: freeing the buffer (a new scenario shape), Close,
//     or the process's end closes them (cuIpcCloseMemHandle).
//   - Who copies. Push, as in one process: rank q's copy engines read q's
//     own send buffer and write into every peer's output (or staging), so
//     each rank enqueues exactly the copies its GPU's engines perform, and
//     nothing reads a peer's memory. A reduction's add and an all-reduce's
//     second copy phase stay on the rank that owns the block.
//   - Ordering. In one process, a rank's comm stream waits on its peers'
//     copy-done events; events do not cross processes, so flags replace
//     them. Rank r owns a flag buffer with one 32-bit word per (peer q,
//     copy stream e). After its copies, q's copy stream e writes the
//     collective's sequence number into word (q, e) of every peer's flag
//     buffer, through the mapping (cuStreamWriteValue32, fenced behind the
//     copies before it on the stream); r's comm stream waits until each of
//     its own words reaches that number (cuStreamWaitValue32, cyclic
//     greater-or-equal), polling its own memory. Every rank numbers the
//     collectives alike, since every rank makes the same calls in the same
//     order.
//   - A lost peer. Its flags never come: the run's context is canceled
//     (the group's liveness) and the watchdog writes a number past any
//     awaited one into this rank's own flag words from the host, so the
//     waiting streams drain and the rank leaves; the next run on every
//     rank clears the flags again. A hung repetition (the repetition
//     timeout) does the same.
//
// Across nodes no copy engine reaches the peer's GPU: such a run is
// refused (ErrCopyEngineAcrossNodes) and NCCL is the way.

// ErrCopyEngineAcrossNodes refuses copy-engine collectives between ranks
// on different hosts.
var ErrCopyEngineAcrossNodes = errors.New("copy-engine collectives cannot cross nodes: a GPU's copy engines reach only the GPUs of its own node (NVLink or PCIe, mapped with CUDA IPC); use NCCL (--comm-engine sm), which takes the network between nodes")

// ipcFlagStreams is how many copy streams of each peer a rank's flag
// buffer has a word for.
const ipcFlagStreams = 16

// procDMACheck refuses, with one process per GPU, the copy-engine runs
// that cannot run between processes: any across nodes, and those c3lab
// does not map (format-2 scenarios, reductions pipelined in comm_sms).
func (b *Backend) procDMACheck(sc scenarios.Scenario, st scenarios.Strategy) error {
	if b.proc == nil || !crossProcessDMA(sc, st) {
		return nil
	}
	if !b.proc.oneHost {
		return fmt.Errorf("%w (the ranks are on hosts %s)", ErrCopyEngineAcrossNodes, hostList(b.proc.hosts))
	}
	if sc.IsGraph() {
		return fmt.Errorf("a format-2 scenario's copy-engine ops: %w", ErrCopyEngineAcrossProcesses)
	}
	if !sc.Comm.Collective.IsPureCopy() && st.Normalize().CommSMs > 0 {
		return fmt.Errorf("a copy-engine %s pipelined in a comm_sms partition: %w", sc.Comm.Collective, ErrCopyEngineAcrossProcesses)
	}
	return nil
}

// hostList names the distinct hosts, in rank order.
func hostList(hosts []string) string {
	var out []string
	seen := map[string]bool{}
	for _, h := range hosts {
		if !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
	}
	return strings.Join(out, ", ")
}

// ipcFlagsSetup allocates (once per prepared scenario) every rank's flag
// buffer and clears this rank's, with the sequence, when they are new or
// were released.
func (b *Backend) ipcFlagsSetup(p *prepared, d *dmaPlan) error {
	for q := range d.copyStreams {
		if len(d.copyStreams[q]) > ipcFlagStreams {
			return fmt.Errorf("%d copy streams on GPU %d; copy-engine collectives between processes order at most %d", len(d.copyStreams[q]), q, ipcFlagStreams)
		}
	}
	bytes := 4 * int64(p.gpus) * ipcFlagStreams
	for dev := len(p.ceFlags); dev < p.gpus; dev++ {
		id, err := b.g.Alloc(dev, bytes)
		if err != nil {
			return fmt.Errorf("allocating the copy-engine collective's flags on GPU %d: %w", dev, err)
		}
		p.ceFlags = append(p.ceFlags, id)
		b.proc.rg.useFlags(id)
		p.flagsDirty = true
	}
	if !p.flagsDirty {
		return nil
	}
	zero := make([]byte, bytes)
	for dev := range p.gpus {
		if err := b.g.Upload(p.ceFlags[dev], zero); err != nil {
			return fmt.Errorf("clearing the copy-engine collective's flags on GPU %d: %w", dev, err)
		}
	}
	b.proc.rg.flagSeq.Store(0)
	p.flagsDirty = false
	return nil
}

// ipcFlag is word (q, e) of rank r's flags: copy stream e of rank q raises
// it when its copies into r have landed.
func ipcFlag(p *prepared, r, q, e int) bufRef {
	return bufRef{p.ceFlags[r], 4 * int64(q*ipcFlagStreams+e)}
}

// ipcMap maps, on every rank, the peers' buffers a copy-engine collective
// writes into, and with send those a p2p-load reduction's kernel loads.
// Every rank calls it at the same point of a run, with the same send.
func (b *Backend) ipcMap(ctx context.Context, p *prepared, send bool) error {
	sets := [][]bufID{p.recv, p.staging, p.ceFlags}
	if send {
		sets = append(sets, p.send)
	}
	var ids []bufID
	for _, set := range sets {
		ids = append(ids, set...)
	}
	return b.proc.mapPeers(ctx, ids, p.gpus)
}

// joinCopiesIPC is joinCopies between processes: each rank's copy streams
// raise their flag on every peer once their copies are done, and each
// rank's comm stream waits for its own copy streams' events and for every
// peer's flags.
func (b *Backend) joinCopiesIPC(p *prepared, pl plan) error {
	d := pl.dma
	seq := b.proc.rg.flagSeq.Add(1)
	for q := range p.gpus {
		for e, s := range d.copyStreams[q] {
			for r := range p.gpus {
				if r == q {
					continue
				}
				if err := b.g.WriteFlag(s, ipcFlag(p, r, q, e), seq); err != nil {
					return fmt.Errorf("raising a copy-engine collective's flag on GPU %d: %w", r, err)
				}
			}
		}
	}
	for r := range p.gpus {
		for q := range p.gpus {
			if q == r {
				for _, ev := range d.done[r] {
					if err := b.g.Wait(pl.commStreams[r], ev); err != nil {
						return err
					}
				}
				continue
			}
			for e := range d.copyStreams[q] {
				if err := b.g.WaitFlag(pl.commStreams[r], ipcFlag(p, r, q, e), seq); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// mapPeers exports this rank's buffers among ids, exchanges the handles
// with every rank, and maps the peers' (those not mapped yet) when this
// rank is one of the scenario's gpus. Every rank calls it with the same
// ids; any rank's failure fails it on every rank.
func (ps *procState) mapPeers(ctx context.Context, ids []bufID, gpus int) error {
	r := ps.rg
	var rep procReport
	for _, id := range ids {
		h, ok := r.bufs[id]
		if !ok {
			rep.Err = fmt.Sprintf("mapping an unknown buffer %d", id)
			break
		}
		if !r.mine(h.dev) {
			continue
		}
		hd, err := r.in.ExportBuf(bufID(h.inner))
		if err != nil {
			rep.Err = fmt.Sprintf("exporting a buffer of GPU %d to the other processes with CUDA IPC: %v", h.dev, err)
			break
		}
		rep.Handles = append(rep.Handles, hd)
	}
	if rep.Err != "" {
		rep.Handles = nil
	}
	reps, err := ps.exchange(ctx, "peer mapping", rep)
	if err != nil {
		return err
	}
	var openErr error
	next := make([]int, len(reps))
	for _, id := range ids {
		h := r.bufs[id]
		q := h.dev
		if r.mine(q) {
			continue
		}
		if q < 0 || q >= len(reps) || next[q] >= len(reps[q].Handles) {
			openErr = fmt.Errorf("rank %d sent too few CUDA IPC handles for its buffers", q)
			break
		}
		hd := reps[q].Handles[next[q]]
		next[q]++
		if h.mapped || r.rank >= gpus {
			continue // mapped already, or this rank copies nothing
		}
		in, err := r.in.OpenPeerBuf(hd, h.bytes)
		if err != nil {
			openErr = fmt.Errorf("rank %d's buffer on GPU %d (%s): %w", q, q, ps.hosts[q], err)
			break
		}
		h.inner, h.mapped = int(in), true
		r.bufs[id] = h
	}
	return ps.agree(ctx, "peer mapping", openErr)
}

// useFlags names this rank's flag buffer b (a handle of the backend's) to
// the GPU, which ReleaseFlags raises.
func (r *rankGPU) useFlags(b bufID) {
	if h := r.bufs[b]; r.mine(h.dev) && h.inner != phantom {
		r.in.UseFlags(bufID(h.inner))
	}
}

// flagRelease is how far past the last awaited number releaseFlags
// raises the flags: past any wait the worker may still enqueue.
const flagRelease = 1 << 20

// releaseFlags raises this rank's flags past every wait (any goroutine).
func (r *rankGPU) releaseFlags() {
	r.released.Store(true)
	r.in.ReleaseFlags(r.flagSeq.Load() + flagRelease)
}
