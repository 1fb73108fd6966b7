package cuda

import (
	"encoding/binary"
	"fmt"
	"runtime"
)

// CUDA IPC on the real GPU (one process per GPU; proc_ipc.go says what it
// is for). Buffers are plain cuMemAlloc allocations, so the legacy IPC
// calls serve: cuIpcGetMemHandle exports one, cuIpcOpenMemHandle maps a
// peer's into this process (native/ABI-NOTES.md section 1.8).

// ExportBuf returns the CUDA IPC handle of this process's device buffer b.
// Exporting acquires nothing (there is nothing to close on this side).
func (g *nativeGPU) ExportBuf(b bufID) ([]byte, error) {
	nb, ok := g.bufs[b]
	switch {
	case !ok:
		return nil, fmt.Errorf("export of unknown buffer %d", b)
	case nb.peer, nb.symmetric, !nb.host.IsZero():
		return nil, fmt.Errorf("buffer %d is not a cuMemAlloc allocation of this process: it cannot be exported with cuIpcGetMemHandle", b)
	}
	if err := g.current(nb.dev); err != nil {
		return nil, err
	}
	return g.l.drv.IPCHandle(nb.p)
}

// OpenPeerBuf maps a buffer of bytes another process exported into this
// process's GPU: a buffer CopyPeer and WriteFlag take like any other;
// Free closes the mapping (cuIpcCloseMemHandle), and so does Close.
func (g *nativeGPU) OpenPeerBuf(handle []byte, bytes int64) (bufID, error) {
	if err := g.current(0); err != nil {
		return 0, err
	}
	p, err := g.l.drv.OpenIPCHandle(handle)
	if err != nil {
		return 0, fmt.Errorf("mapping a peer process's buffer (%d bytes) with CUDA IPC: %w", bytes, err)
	}
	id := bufID(g.id())
	g.bufs[id] = nbuf{dev: 0, p: p, bytes: bytes, peer: true}
	return id, nil
}

// UseFlags names this process's buffer b as ordering flags: ReleaseFlags
// raises its words. Free forgets it.
func (g *nativeGPU) UseFlags(b bufID) {
	nb, ok := g.bufs[b]
	if !ok || nb.peer {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.flags == nil {
		g.flags = map[bufID]nbuf{}
	}
	g.flags[b] = nb
}

// ReleaseFlags writes v to every word of the flag buffers from the host,
// from any goroutine: a stream waiting on a flag a lost peer will never
// raise goes on. The write is a synchronous cuMemcpyHtoD on the legacy
// stream, which c3lab's non-blocking streams do not order against, so it
// lands while they wait.
func (g *nativeGPU) ReleaseFlags(v uint32) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.flags) == 0 || len(g.devs) == 0 {
		return
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := g.l.drv.SetCurrent(g.devs[0].ctx); err != nil {
		return
	}
	for _, nb := range g.flags {
		words := make([]byte, nb.bytes/4*4)
		for i := 0; i+4 <= len(words); i += 4 {
			binary.LittleEndian.PutUint32(words[i:], v)
		}
		g.l.drv.CopyToDevice(nb.p, words)
	}
}
