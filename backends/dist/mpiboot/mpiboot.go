// Package mpiboot is the MPI channel of c3lab's ranks under mpirun: it
// loads libmpi at run time (native.LoadMPI), initializes MPI, and offers
// MPI_Bcast from rank 0 (group.Broadcaster) until Close finalizes it.
// Every MPI call runs on one goroutine locked to its OS thread, as MPI
// wants MPI_Init and MPI_Finalize on the same thread.
package mpiboot

import (
	"fmt"
	"runtime"

	"github.com/c3lab/c3lab/native"
)

// EnvLibrary names the variable that points c3lab at a libmpi of its
// choosing (a path); without it the usual sonames are tried.
const EnvLibrary = "C3LAB_LIBMPI"

// lib is what MPI offers; *native.MPI in use, a fake in tests.
type lib interface {
	Init() error
	Rank() (int, error)
	Size() (int, error)
	Bcast(buf []byte, root int) error
	Finalize() error
}

// Channel is an initialized MPI.
type Channel struct {
	calls      chan func()
	done       chan struct{}
	rank, size int
	desc       string
	m          lib
}

// Open loads libmpi (path, or the usual sonames when ""), initializes MPI
// and reads the rank and size of MPI_COMM_WORLD.
func Open(path string) (*Channel, error) {
	var m *native.MPI
	c, err := start(func() (lib, error) {
		var err error
		m, err = native.LoadMPI(path)
		return m, err
	})
	if err != nil {
		return nil, err
	}
	c.desc = m.ABI()
	if v := m.Version(); v != "" {
		c.desc = v
	}
	return c, nil
}

// start runs load, Init, Rank and Size on a new locked goroutine that
// then serves the channel's calls.
func start(load func() (lib, error)) (*Channel, error) {
	c := &Channel{calls: make(chan func()), done: make(chan struct{})}
	ready := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		defer close(c.done)
		m, err := load()
		if err == nil {
			err = m.Init()
		}
		if err == nil {
			c.rank, err = m.Rank()
		}
		if err == nil {
			c.size, err = m.Size()
		}
		c.m = m
		ready <- err
		if err != nil {
			return
		}
		for f := range c.calls {
			f()
		}
	}()
	if err := <-ready; err != nil {
		return nil, fmt.Errorf("starting MPI: %w", err)
	}
	return c, nil
}

// Describe names the library ("Open MPI v4.1.4 ...").
func (c *Channel) Describe() string { return c.desc }

// Rank is this process's rank in MPI_COMM_WORLD.
func (c *Channel) Rank() int { return c.rank }

// Size is MPI_COMM_WORLD's size.
func (c *Channel) Size() int { return c.size }

func (c *Channel) do(f func() error) error {
	errc := make(chan error, 1)
	c.calls <- func() { errc <- f() }
	return <-errc
}

// Bcast sends buf from root to every rank (MPI_Bcast of MPI_BYTE).
func (c *Channel) Bcast(buf []byte, root int) error {
	return c.do(func() error { return c.m.Bcast(buf, root) })
}

// Close finalizes MPI and ends the channel's thread.
func (c *Channel) Close() error {
	err := c.do(c.m.Finalize)
	close(c.calls)
	<-c.done
	return err
}
