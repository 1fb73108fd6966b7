package store

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Server is rank 0's store.
type Server struct {
	ln    net.Listener
	world int
	opt   Options

	mu       sync.Mutex
	kv       map[string][]byte
	waiters  map[string][]reply
	barriers map[string][]reply
	ranks    map[int]*peer // the ranks that said hello
	conns    map[*peer]bool
	failed   *FailedError
	closing  bool
	allBye   chan struct{} // closed when every rank has said goodbye
	failedCh chan struct{} // closed when the group fails
	stop     chan struct{}
	wg       sync.WaitGroup
	// aborts are the failure messages failLocked is sending; close waits
	// for them before it closes the connections, so that every rank reads
	// why the group failed, not only that rank 0's store went away.
	aborts sync.WaitGroup

	closeOnce sync.Once
}

// reply is a request waiting for its answer.
type reply struct {
	p  *peer
	id uint64
}

// peer is one client connection.
type peer struct {
	c     net.Conn
	wmu   sync.Mutex
	enc   *json.Encoder
	hello *Hello
	seen  time.Time // guarded by the server's mu
	bye   bool
}

func (p *peer) send(m message) {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	p.c.SetWriteDeadline(time.Now().Add(2 * time.Second))
	p.enc.Encode(m) // a peer that cannot take it is found out by its reader
}

// Listen serves a store for world ranks on addr ("host:port"; port 0
// picks a free one). A port in use is refused in one line that says what
// to do.
func Listen(addr string, world int, opt Options) (*Server, error) {
	if world < 1 {
		return nil, fmt.Errorf("a store for %d ranks: want at least 1", world)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("rank 0 cannot serve the store on %s: the port is in use (another job, or a c3lab still running?); set MASTER_PORT or C3LAB_MASTER_PORT to a free port", addr)
		}
		return nil, fmt.Errorf("rank 0 cannot serve the store on %s: %w", addr, err)
	}
	s := &Server{
		ln: ln, world: world, opt: opt.withDefaults(),
		kv: map[string][]byte{}, waiters: map[string][]reply{}, barriers: map[string][]reply{},
		ranks: map[int]*peer{}, conns: map[*peer]bool{},
		allBye: make(chan struct{}), failedCh: make(chan struct{}), stop: make(chan struct{}),
	}
	s.wg.Add(2)
	go s.accept()
	go s.watch()
	return s, nil
}

// Addr is the address the store listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Port is the port the store listens on.
func (s *Server) Port() int {
	_, p, _ := net.SplitHostPort(s.Addr())
	n, _ := strconv.Atoi(p)
	return n
}

// Err is why the group failed, nil while it has not.
func (s *Server) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed == nil {
		return nil
	}
	return s.failed
}

// Close waits up to grace for every rank to say goodbye (so none is cut
// off while it finishes; not at all once the group failed), then closes
// every connection and the port.
func (s *Server) Close(grace time.Duration) error {
	var err error
	s.closeOnce.Do(func() { err = s.close(grace) })
	return err
}

func (s *Server) close(grace time.Duration) error {
	if s.Err() == nil {
		// A failed group has nobody left to wait for.
		select {
		case <-s.allBye:
		case <-s.failedCh:
		case <-time.After(grace):
		}
	}
	s.mu.Lock()
	s.closing = true // no failure starts another abort from here on
	s.mu.Unlock()
	s.aborts.Wait() // each send gives up after its 2 s write deadline
	if s.Err() != nil {
		s.drain(min(grace, failedDrain))
	}
	s.mu.Lock()
	for p := range s.conns {
		p.c.Close()
	}
	s.mu.Unlock()
	err := s.ln.Close()
	close(s.stop)
	s.wg.Wait()
	return err
}

// failedDrain bounds how long a failed group's store waits for the ranks
// to read why it failed and hang up: long enough for a live rank to read
// the abort, short enough that closing stays prompt.
const failedDrain = 500 * time.Millisecond

// drain half-closes every connection of a failed group, so that each rank
// reads the abort already sent and then the end of the stream, and waits
// up to d for the ranks to hang up. Closing at once, with a rank's
// heartbeats unread, would reset the connection: the rank could then lose
// the abort and report the reset instead of the rank that failed.
func (s *Server) drain(d time.Duration) {
	s.mu.Lock()
	for p := range s.conns {
		if tc, ok := p.c.(interface{ CloseWrite() error }); ok {
			tc.CloseWrite()
		}
	}
	s.mu.Unlock()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		s.mu.Lock()
		n := len(s.conns)
		s.mu.Unlock()
		if n == 0 {
			return
		}
	}
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		p := &peer{c: c, enc: json.NewEncoder(c)}
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			c.Close()
			return
		}
		s.conns[p] = true
		s.mu.Unlock()
		s.wg.Add(1)
		go s.serve(p)
	}
}

// watch fails the group when a rank falls silent, or when not every rank
// has joined in time.
func (s *Server) watch() {
	defer s.wg.Done()
	tick := time.NewTicker(s.opt.Heartbeat)
	defer tick.Stop()
	start := time.Now()
	for {
		select {
		case <-s.stop:
			return
		case now := <-tick.C:
			s.mu.Lock()
			if s.failed == nil && !s.closing {
				for _, r := range slices.Sorted(maps.Keys(s.ranks)) {
					p := s.ranks[r]
					if !p.bye && now.Sub(p.seen) > s.opt.Silence {
						s.failLocked(&FailedError{r, fmt.Sprintf("%s sent nothing for %s: it hangs, or its host is unreachable", p.hello.who(), now.Sub(p.seen).Round(100*time.Millisecond))})
						break
					}
				}
				if s.failed == nil && len(s.ranks) < s.world && now.Sub(start) > s.opt.Join {
					var missing []string
					for r := range s.world {
						if s.ranks[r] == nil {
							missing = append(missing, strconv.Itoa(r))
						}
					}
					s.failLocked(&FailedError{-1, fmt.Sprintf("rank %s did not join within %s (is the world size %d right? did every rank start?)", strings.Join(missing, ", "), s.opt.Join, s.world)})
				}
			}
			s.mu.Unlock()
		}
	}
}

// abort is the message that tells a rank the group failed.
func abort(e *FailedError, id uint64) message {
	m := message{Op: opAbort, ID: id, Err: e.Msg}
	if e.Rank >= 0 {
		r := e.Rank
		m.Rank = &r
	}
	return m
}

// failLocked fails the group once: every connected rank is told why.
func (s *Server) failLocked(e *FailedError) {
	if s.failed != nil || s.closing {
		return
	}
	s.failed = e
	close(s.failedCh)
	for p := range s.conns {
		s.aborts.Go(func() { p.send(abort(e, 0)) })
	}
}

func (s *Server) serve(p *peer) {
	defer s.wg.Done()
	defer p.c.Close()
	dec := json.NewDecoder(bufio.NewReader(p.c))
	for {
		var m message
		if err := dec.Decode(&m); err != nil {
			s.lost(p, err)
			return
		}
		if !s.handle(p, m) {
			return
		}
	}
}

// lost handles a connection that ended: a rank that had not said goodbye
// is gone.
func (s *Server) lost(p *peer, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, p)
	if p.hello == nil || p.bye || s.closing {
		return
	}
	s.failLocked(&FailedError{p.hello.Rank, fmt.Sprintf("%s is gone: %s", p.hello.who(), lostWhy(err))})
}

// lostWhy says in words why a connection ended.
func lostWhy(err error) string {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET), errors.Is(err, net.ErrClosed):
		return "its connection closed (the process ended or was killed)"
	case errors.As(err, &syntax), errors.As(err, &typ):
		return "it sent something the store cannot read: " + err.Error()
	}
	return "its connection broke: " + err.Error()
}

// handle answers one message; false ends the connection.
func (s *Server) handle(p *peer, m message) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	p.seen = time.Now()
	if p.hello == nil && m.Op != opHello {
		p.send(message{Op: opError, ID: m.ID, Err: "say hello first"})
		return false
	}
	if s.failed != nil && m.Op != opBye {
		if m.Op == opHello {
			p.send(abort(s.failed, m.ID))
			return false
		}
		go p.send(abort(s.failed, m.ID))
		return true
	}
	switch m.Op {
	case opHello:
		return s.helloLocked(p, m)
	case opPing:
		go p.send(message{Op: opPong})
	case opSet:
		s.kv[m.Key] = m.Value
		for _, w := range s.waiters[m.Key] {
			go w.p.send(message{Op: opValue, ID: w.id, Key: m.Key, Value: m.Value})
		}
		delete(s.waiters, m.Key)
		go p.send(message{Op: opOK, ID: m.ID})
	case opGet:
		if v, ok := s.kv[m.Key]; ok {
			go p.send(message{Op: opValue, ID: m.ID, Key: m.Key, Value: v})
		} else {
			s.waiters[m.Key] = append(s.waiters[m.Key], reply{p, m.ID})
		}
	case opBarrier:
		arrived := append(s.barriers[m.Key], reply{p, m.ID})
		if len(arrived) < s.world {
			s.barriers[m.Key] = arrived
			break
		}
		delete(s.barriers, m.Key)
		now := time.Now().UnixNano()
		for _, w := range arrived {
			w.p.send(message{Op: opOK, ID: w.id, Key: m.Key, Time: now}) // at once, in turn: the release
		}
	case opBye:
		p.bye = true
		go p.send(message{Op: opOK, ID: m.ID})
		s.checkAllByeLocked()
	default:
		go p.send(message{Op: opError, ID: m.ID, Err: fmt.Sprintf("unknown operation %q", m.Op)})
	}
	return true
}

func (s *Server) helloLocked(p *peer, m message) bool {
	h := m.Hello
	refuse := func(format string, a ...any) bool {
		msg := fmt.Sprintf(format, a...)
		p.send(message{Op: opError, ID: m.ID, Err: msg})
		s.failLocked(&FailedError{-1, msg})
		return false
	}
	switch {
	case h == nil:
		return refuse("a client said hello without saying who it is")
	case h.World != s.world:
		return refuse("rank %d says the world has %d ranks, rank 0 says %d: start every rank with the same world size", h.Rank, h.World, s.world)
	case h.Rank < 0 || h.Rank >= s.world:
		return refuse("rank %d is not below the world size %d", h.Rank, s.world)
	case s.ranks[h.Rank] != nil:
		return refuse("rank %d joined twice (%s and %s): two processes were given the same rank", h.Rank, s.ranks[h.Rank].hello.who(), h.who())
	}
	p.hello = h
	s.ranks[h.Rank] = p
	go p.send(message{Op: opOK, ID: m.ID})
	return true
}

func (s *Server) checkAllByeLocked() {
	if len(s.ranks) < s.world {
		return
	}
	for _, p := range s.ranks {
		if !p.bye {
			return
		}
	}
	select {
	case <-s.allBye:
	default:
		close(s.allBye)
	}
}
