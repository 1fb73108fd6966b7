package store

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// Client is one rank's connection to the store.
type Client struct {
	c     net.Conn
	hello Hello
	opt   Options

	wmu sync.Mutex
	enc *json.Encoder

	mu      sync.Mutex
	next    uint64
	pending map[uint64]chan message
	heard   time.Time
	closing bool
	err     error
	failed  chan struct{} // closed when err is set
	stop    chan struct{}
	wg      sync.WaitGroup
}

// Dial connects to the store at addr as h, trying again until opt.Join
// has passed (rank 0 may not listen yet), and says hello. The server
// refuses a wrong world size or a rank given twice in one line.
func Dial(ctx context.Context, addr string, h Hello, opt Options) (*Client, error) {
	opt = opt.withDefaults()
	deadline := time.Now().Add(opt.Join)
	var d net.Dialer
	wait := 20 * time.Millisecond
	var c net.Conn
	for {
		var err error
		dctx, cancel := context.WithDeadline(ctx, deadline)
		c, err = d.DialContext(dctx, "tcp", addr)
		cancel()
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if time.Now().Add(wait).After(deadline) {
			return nil, fmt.Errorf("rank %d could not reach rank 0's store at %s within %s: %v (is rank 0 running? are MASTER_ADDR and MASTER_PORT right?)", h.Rank, addr, opt.Join, err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 500*time.Millisecond)
	}
	cl := &Client{
		c: c, hello: h, opt: opt, enc: json.NewEncoder(c),
		pending: map[uint64]chan message{}, heard: time.Now(),
		failed: make(chan struct{}), stop: make(chan struct{}),
	}
	cl.wg.Add(2)
	go cl.read()
	go cl.beat()
	hctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	hh := h
	if _, err := cl.call(hctx, message{Op: opHello, Hello: &hh}); err != nil {
		cl.shut()
		return nil, err
	}
	return cl, nil
}

// Failed is closed when the group has failed (Err says why).
func (c *Client) Failed() <-chan struct{} { return c.failed }

// Err is why the group failed: a *FailedError naming the rank when one
// rank is to blame; nil while it has not.
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *Client) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	if !c.closing {
		// Closing, the end of the connection is expected: the calls in
		// flight end, the group has not failed.
		c.err = err
		close(c.failed)
	}
	for id, ch := range c.pending {
		close(ch)
		delete(c.pending, id)
	}
}

func (c *Client) send(m message) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.c.SetWriteDeadline(time.Now().Add(c.opt.Silence))
	return c.enc.Encode(m)
}

// call sends m and waits for its answer, the group's failure, or ctx.
func (c *Client) call(ctx context.Context, m message) (message, error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return message{}, c.err
	}
	c.next++
	m.ID = c.next
	ch := make(chan message, 1)
	c.pending[m.ID] = ch
	c.mu.Unlock()
	if err := c.send(m); err != nil {
		c.fail(&FailedError{0, fmt.Sprintf("rank %d cannot write to rank 0's store: %v", c.hello.Rank, err)})
		return message{}, c.Err()
	}
	select {
	case r, ok := <-ch:
		if !ok {
			return message{}, c.Err()
		}
		if r.Op == opError {
			return r, errors.New(r.Err)
		}
		return r, nil
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.pending, m.ID)
		c.mu.Unlock()
		return message{}, ctx.Err()
	}
}

func (c *Client) read() {
	defer c.wg.Done()
	dec := json.NewDecoder(bufio.NewReader(c.c))
	for {
		var m message
		if err := dec.Decode(&m); err != nil {
			c.fail(&FailedError{0, fmt.Sprintf("rank 0 is gone: the store's connection closed (%v)", err)})
			return
		}
		c.mu.Lock()
		c.heard = time.Now()
		ch := c.pending[m.ID]
		if m.ID != 0 {
			delete(c.pending, m.ID)
		}
		c.mu.Unlock()
		switch {
		case m.Op == opAbort:
			blame := -1
			if m.Rank != nil {
				blame = *m.Rank
			}
			c.fail(&FailedError{blame, m.Err})
			if ch != nil {
				close(ch) // its call returns the failure
			}
		case ch != nil:
			ch <- m
		}
	}
}

// beat sends heartbeats and fails the group when rank 0 falls silent.
func (c *Client) beat() {
	defer c.wg.Done()
	t := time.NewTicker(c.opt.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-c.failed:
			return
		case now := <-t.C:
			c.mu.Lock()
			quiet := now.Sub(c.heard)
			c.mu.Unlock()
			if quiet > c.opt.Silence {
				c.fail(&FailedError{0, fmt.Sprintf("rank 0 sent nothing for %s: it hangs, or its host is unreachable", quiet.Round(100*time.Millisecond))})
				return
			}
			c.send(message{Op: opPing})
		}
	}
}

// Set stores value under key; every Get of key, waiting or later, gets it.
func (c *Client) Set(ctx context.Context, key string, value []byte) error {
	_, err := c.call(ctx, message{Op: opSet, Key: key, Value: value})
	return err
}

// Get returns key's value, waiting until some rank sets it.
func (c *Client) Get(ctx context.Context, key string) ([]byte, error) {
	r, err := c.call(ctx, message{Op: opGet, Key: key})
	return r.Value, err
}

// Barrier waits until every rank has reached the barrier name, and
// returns when the server let the ranks go, on the server's clock.
func (c *Client) Barrier(ctx context.Context, name string) (time.Time, error) {
	r, err := c.call(ctx, message{Op: opBarrier, Key: name})
	if err != nil {
		return time.Time{}, err
	}
	return time.Unix(0, r.Time), nil
}

// Close says goodbye (the server then takes the connection's end for
// what it is) and closes the connection.
func (c *Client) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), c.opt.Silence)
	defer cancel()
	var err error
	if c.Err() == nil {
		c.mu.Lock()
		c.closing = true
		c.mu.Unlock()
		_, err = c.call(ctx, message{Op: opBye})
	}
	c.shut()
	return err
}

func (c *Client) shut() {
	c.mu.Lock()
	c.closing = true
	c.mu.Unlock()
	select {
	case <-c.stop:
	default:
		close(c.stop)
	}
	c.c.Close()
	c.wg.Wait()
}
