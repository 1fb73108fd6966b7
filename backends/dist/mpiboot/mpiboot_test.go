package mpiboot

import (
	"errors"
	"slices"
	"sync"
	"syscall"
	"testing"
)

// threadLib records the OS thread of every call.
type threadLib struct {
	mu      sync.Mutex
	threads []int
	initErr error
}

func (l *threadLib) note() {
	l.mu.Lock()
	l.threads = append(l.threads, syscall.Gettid())
	l.mu.Unlock()
}
func (l *threadLib) Init() error        { l.note(); return l.initErr }
func (l *threadLib) Rank() (int, error) { l.note(); return 1, nil }
func (l *threadLib) Size() (int, error) { l.note(); return 2, nil }
func (l *threadLib) Bcast(b []byte, root int) error {
	l.note()
	b[0] = 'x'
	return nil
}
func (l *threadLib) Finalize() error { l.note(); return nil }

// Every MPI call, from Init to Finalize, comes from one OS thread, though
// the callers are goroutines on any.
func TestOneThread(t *testing.T) {
	l := &threadLib{}
	c, err := start(func() (lib, error) { return l, nil })
	if err != nil {
		t.Fatal(err)
	}
	if c.Rank() != 1 || c.Size() != 2 {
		t.Errorf("rank %d of %d", c.Rank(), c.Size())
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			b := make([]byte, 4)
			if err := c.Bcast(b, 0); err != nil || b[0] != 'x' {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if len(l.threads) != 12 {
		t.Fatalf("%d calls, want 12", len(l.threads))
	}
	if distinct := slices.Compact(slices.Sorted(slices.Values(l.threads))); len(distinct) != 1 {
		t.Errorf("calls came from threads %v", l.threads)
	}
}

func TestStartFails(t *testing.T) {
	_, err := start(func() (lib, error) { return &threadLib{initErr: errors.New("no daemon")}, nil })
	if err == nil || err.Error() != "starting MPI: no daemon" {
		t.Errorf("%v", err)
	}
	_, err = start(func() (lib, error) { return nil, errors.New("no libmpi") })
	if err == nil || err.Error() != "starting MPI: no libmpi" {
		t.Errorf("%v", err)
	}
}
