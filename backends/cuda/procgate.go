package cuda

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// procGate is the start gate of one process per GPU: every rank's streams
// wait on it, and it opens for all ranks once every rank has enqueued its
// share of a repetition.
type procGate interface {
	// arrive says this rank has enqueued everything gate value v holds.
	arrive(ctx context.Context, v uint32) error
	// stall opens the gate for v at once (the watchdog, when enqueuing
	// stalled, or a rank whose repetition failed) and marks v stalled.
	stall(v uint32)
	// stalled is this rank's view of whether v was opened by a stall.
	stalled(v uint32) bool
	close() error
}

// Words of the shared gate page.
const (
	gateWord    = iota // what the GPUs wait on (cuStreamWaitValue32 GEQ)
	arriveWord         // ranks that arrived, over every value
	verdictWord        // the last value decided (opened)
	stalledWord        // the last value a stall opened
	gateWords
)

// gatePageBytes is the shared page's size.
const gatePageBytes = 4096

// shmGate is the gate of the ranks of one node: a page every rank maps
// (and registers with the driver, so its GPU reads the first word). The
// last rank to arrive opens the gate for every GPU with one store, so the
// GPUs start within the time one write takes to reach them. Who opens a
// value is decided once, by a compare-and-swap on the verdict word: the
// last arrival, or a stall (which marks the value stalled before it opens
// the gate, so every rank reads the same verdict once its GPU has run).
type shmGate struct {
	words *[gateWords]uint32
	world uint32
	unmap func() error
}

func (g *shmGate) arrive(_ context.Context, v uint32) error {
	if atomic.AddUint32(&g.words[arriveWord], 1) == v*g.world {
		g.decide(v, false)
	}
	return nil
}

func (g *shmGate) decide(v uint32, stall bool) {
	if !atomic.CompareAndSwapUint32(&g.words[verdictWord], v-1, v) {
		return // decided already
	}
	if stall {
		atomic.StoreUint32(&g.words[stalledWord], v)
	}
	raiseWord(&g.words[gateWord], v)
}

func (g *shmGate) stall(v uint32) { g.decide(v, true) }

func (g *shmGate) stalled(v uint32) bool { return atomic.LoadUint32(&g.words[stalledWord]) == v }

func (g *shmGate) close() error {
	if g.unmap == nil {
		return nil
	}
	err := g.unmap()
	g.unmap = nil
	return err
}

// raiseWord sets *p to v unless it holds v or a later value (compared as
// cuStreamWaitValue32's GEQ does).
func raiseWord(p *uint32, v uint32) {
	for {
		old := atomic.LoadUint32(p)
		if int32(old-v) >= 0 || atomic.CompareAndSwapUint32(p, old, v) {
			return
		}
	}
}

// newShmGate makes the node's shared gate page: rank 0 creates a file in
// dir (default /dev/shm) and shares its name; every rank maps it and
// registers it with its GPU; once all have, rank 0 removes the file (the
// mappings stay). A failure on any rank fails every rank.
func newShmGate(ctx context.Context, peers Peers, in procGPU, dir string) (*shmGate, error) {
	if dir == "" {
		dir = "/dev/shm"
	}
	var path string
	var err error
	if peers.Rank() == 0 {
		var b [8]byte
		rand.Read(b[:])
		path = filepath.Join(dir, fmt.Sprintf("c3lab-gate-%d-%s", os.Getpid(), hex.EncodeToString(b[:])))
		err = createPage(path)
	}
	names, gerr := peers.AllGather(ctx, "cuda-gate", []byte(errText(err)+"\x00"+path))
	if gerr != nil {
		return nil, fmt.Errorf("sharing the start gate's page: %w", gerr)
	}
	if err != nil {
		return nil, fmt.Errorf("the ranks' shared start gate: %w", err)
	}
	msg, shared, _ := cutByte(names[0])
	if msg != "" {
		return nil, fmt.Errorf("rank 0 could not make the ranks' shared start gate: %s", msg)
	}
	page, err := mapPage(shared)
	if err == nil {
		if err = in.UseSharedGate(page); err != nil {
			syscall.Munmap(page)
		}
	}
	oks, gerr := peers.AllGather(ctx, "cuda-gate-mapped", []byte(errText(err)))
	if peers.Rank() == 0 {
		os.Remove(shared)
	}
	if gerr == nil {
		for q, m := range oks {
			if len(m) > 0 && gerr == nil {
				gerr = fmt.Errorf("rank %d could not map the ranks' shared start gate: %s", q, m)
			}
		}
	}
	if err != nil || gerr != nil {
		if err == nil {
			// Mapped here, failed elsewhere: the page stays mapped (and
			// registered with this GPU) until the process ends.
			return nil, gerr
		}
		return nil, fmt.Errorf("mapping the ranks' shared start gate %s: %w", shared, err)
	}
	return &shmGate{words: (*[gateWords]uint32)(unsafe.Pointer(&page[0])), world: uint32(peers.Size()),
		unmap: func() error { return syscall.Munmap(page) }}, nil
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func cutByte(b []byte) (string, string, bool) {
	for i, c := range b {
		if c == 0 {
			return string(b[:i]), string(b[i+1:]), true
		}
	}
	return string(b), "", false
}

// createPage makes a zeroed file of one page, only for this user.
func createPage(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("creating %s: %w", path, err)
	}
	defer f.Close()
	if err := f.Truncate(gatePageBytes); err != nil {
		os.Remove(path)
		return fmt.Errorf("sizing %s: %w", path, err)
	}
	return nil
}

// mapPage maps the page file shared.
func mapPage(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return syscall.Mmap(int(f.Fd()), 0, gatePageBytes, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
}

// timedGate is the gate of ranks on several nodes: each opens its own
// GPU's gate at the moment the job's start gate names (Peers.StartGate),
// so their clocks' offset and the release's spread add to the skew. The
// ranks learn of a stall from each other at the repetition's exchange.
type timedGate struct {
	peers  Peers
	ctx    context.Context
	g      gpu
	mu     sync.Mutex
	stalls map[uint32]bool
}

func (t *timedGate) arrive(ctx context.Context, v uint32) error {
	if _, err := t.peers.StartGate(ctx, fmt.Sprintf("cuda-rep/%d", v)); err != nil {
		t.g.OpenGate(v)
		return fmt.Errorf("the ranks' start gate: %w", err)
	}
	t.g.OpenGate(v)
	return nil
}

func (t *timedGate) stall(v uint32) {
	t.mu.Lock()
	t.stalls[v] = true
	t.mu.Unlock()
	t.g.OpenGate(v)
}

func (t *timedGate) stalled(v uint32) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.stalls[v]
}

func (t *timedGate) close() error { return nil }
