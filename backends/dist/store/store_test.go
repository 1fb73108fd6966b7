package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// fast makes failures show within a fraction of a second.
var fast = Options{Heartbeat: 20 * time.Millisecond, Silence: 300 * time.Millisecond, Join: 2 * time.Second}

// group starts a store for world ranks and connects them all.
func group(t *testing.T, world int, opt Options) (*Server, []*Client) {
	t.Helper()
	s, err := Listen("127.0.0.1:0", world, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(0) })
	cs := make([]*Client, world)
	errs := make([]error, world)
	var wg sync.WaitGroup
	for r := range world {
		wg.Go(func() {
			cs[r], errs[r] = Dial(context.Background(), s.Addr(), Hello{Rank: r, World: world, Host: "h", PID: 100 + r}, opt)
		})
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
		t.Cleanup(func() { cs[r].shut() })
	}
	return s, cs
}

func TestSetGetWaits(t *testing.T) {
	_, cs := group(t, 3, fast)
	ctx := context.Background()
	got := make(chan []byte, 2)
	for _, c := range cs[1:] {
		go func() {
			v, err := c.Get(ctx, "id")
			if err != nil {
				t.Error(err)
			}
			got <- v
		}()
	}
	time.Sleep(50 * time.Millisecond) // the gets wait first
	if err := cs[0].Set(ctx, "id", []byte("nccl-id")); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if v := <-got; string(v) != "nccl-id" {
			t.Errorf("got %q", v)
		}
	}
	// A get after the set answers at once.
	if v, err := cs[2].Get(ctx, "id"); err != nil || string(v) != "nccl-id" {
		t.Errorf("late get: %q, %v", v, err)
	}
}

func TestBarrierWaitsForEveryRank(t *testing.T) {
	_, cs := group(t, 3, fast)
	ctx := context.Background()
	released := make(chan int, 3)
	for r, c := range cs[:2] {
		go func() {
			if _, err := c.Barrier(ctx, "start"); err != nil {
				t.Error(err)
			}
			released <- r
		}()
	}
	select {
	case r := <-released:
		t.Fatalf("rank %d let go before rank 2 arrived", r)
	case <-time.After(100 * time.Millisecond):
	}
	at, err := cs[2].Barrier(ctx, "start")
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		select {
		case <-released:
		case <-time.After(time.Second):
			t.Fatal("the barrier did not let every rank go")
		}
	}
	if d := time.Since(at); d < 0 || d > time.Second {
		t.Errorf("the server's release time %v is %v from now", at, d)
	}
	// The same name can be used again: a second round.
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Go(func() {
			if _, err := c.Barrier(ctx, "start"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}

func TestCleanCloseIsNoFailure(t *testing.T) {
	s, cs := group(t, 3, fast)
	for _, c := range cs {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	s.Close(5 * time.Second)
	if time.Since(start) > time.Second {
		t.Errorf("Close waited %v though every rank said goodbye", time.Since(start))
	}
	if err := s.Err(); err != nil {
		t.Errorf("a clean end failed the group: %v", err)
	}
}

// waitFailed waits for c to see the group fail and returns why.
func waitFailed(t *testing.T, c *Client, within time.Duration) error {
	t.Helper()
	select {
	case <-c.Failed():
		return c.Err()
	case <-time.After(within):
		t.Fatalf("no failure seen within %v", within)
		return nil
	}
}

// A failed group is closed at once, but for the moment the ranks get to
// read why (Server.drain): nobody is left to say goodbye.
func TestCloseAfterFailureDoesNotWait(t *testing.T) {
	s, cs := group(t, 2, fast)
	cs[1].c.Close()
	waitFailed(t, cs[0], time.Second)
	start := time.Now()
	s.Close(5 * time.Second)
	if d := time.Since(start); d > time.Second {
		t.Errorf("Close waited %v", d)
	}
}

func TestLostRanks(t *testing.T) {
	for _, tc := range []struct {
		name string
		kill func(s *Server, cs []*Client)
		// watcher is the rank whose view is checked.
		watcher int
		rank    int
		msg     string
	}{
		{"a rank killed", func(_ *Server, cs []*Client) { cs[2].c.Close() }, 1, 2,
			"rank 2 (host h, pid 102) is gone: its connection closed (the process ended or was killed)"},
		{"a rank hung", func(_ *Server, cs []*Client) { close(cs[1].stop) /* no more heartbeats */ }, 2, 1,
			"rank 1 (host h, pid 101) sent nothing for"},
		{"rank 0 gone", func(s *Server, _ []*Client) { s.Close(0) }, 1, 0,
			"rank 0 is gone: the store's connection closed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, cs := group(t, 3, fast)
			// A rank blocked in a get is let go with the failure.
			getErr := make(chan error, 1)
			go func() {
				_, err := cs[tc.watcher].Get(context.Background(), "never")
				getErr <- err
			}()
			time.Sleep(30 * time.Millisecond)
			tc.kill(s, cs)
			err := waitFailed(t, cs[tc.watcher], 3*fast.Silence)
			var fe *FailedError
			if !errors.As(err, &fe) || fe.Rank != tc.rank || !strings.Contains(fe.Msg, tc.msg) {
				t.Fatalf("failure %#v, want rank %d and %q", err, tc.rank, tc.msg)
			}
			select {
			case err := <-getErr:
				if err == nil || err.Error() != fe.Msg {
					t.Errorf("the waiting get ended with %v, want the failure", err)
				}
			case <-time.After(time.Second):
				t.Error("the waiting get was not let go")
			}
		})
	}
}

func TestRefusals(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		hello Hello
		want  string
	}{
		{Hello{Rank: 1, World: 3}, "rank 1 says the world has 3 ranks, rank 0 says 2: start every rank with the same world size"},
		{Hello{Rank: 0, World: 2, Host: "b", PID: 2}, "rank 0 joined twice (rank 0 and rank 0 (host b, pid 2)): two processes were given the same rank"},
		{Hello{Rank: 5, World: 2}, "rank 5 is not below the world size 2"},
	} {
		s, err := Listen("127.0.0.1:0", 2, fast)
		if err != nil {
			t.Fatal(err)
		}
		c0, err := Dial(ctx, s.Addr(), Hello{Rank: 0, World: 2}, fast)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Dial(ctx, s.Addr(), tc.hello, fast); err == nil || err.Error() != tc.want {
			t.Errorf("%+v: %v, want %q", tc.hello, err, tc.want)
		}
		// The refusal failed the group, and rank 0 was told.
		if err := waitFailed(t, c0, time.Second); err.Error() != tc.want {
			t.Errorf("rank 0 saw %v", err)
		}
		// A rank that comes later is told too.
		if _, err := Dial(ctx, s.Addr(), Hello{Rank: 1, World: 2}, fast); err == nil || err.Error() != tc.want {
			t.Errorf("a later rank: %v", err)
		}
		c0.shut()
		s.Close(0)
	}
}

func TestPortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, err = Listen(ln.Addr().String(), 2, fast)
	want := "rank 0 cannot serve the store on " + ln.Addr().String() + ": the port is in use"
	if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("%v, want one line starting %q", err, want)
	}
}

func TestJoinTimeoutNamesTheMissing(t *testing.T) {
	opt := fast
	opt.Join = 200 * time.Millisecond
	s, err := Listen("127.0.0.1:0", 4, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(0)
	c, err := Dial(context.Background(), s.Addr(), Hello{Rank: 1, World: 4}, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer c.shut()
	err = waitFailed(t, c, 2*time.Second)
	want := "rank 0, 2, 3 did not join within 200ms (is the world size 4 right? did every rank start?)"
	var fe *FailedError
	if err.Error() != want || !errors.As(err, &fe) || fe.Rank != -1 {
		t.Errorf("%v, want %q", err, want)
	}
}

func TestDialGivesUp(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	opt := fast
	opt.Join = 300 * time.Millisecond
	start := time.Now()
	_, err = Dial(context.Background(), addr, Hello{Rank: 1, World: 2}, opt)
	if err == nil || !strings.Contains(err.Error(), "rank 1 could not reach rank 0's store at "+addr+" within 300ms") {
		t.Fatalf("%v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("gave up after %v", d)
	}
}

// Lines the store cannot read end the sender's membership with a reason;
// a client that skips hello is refused. Bad input never panics the server.
func TestGarbageOnTheWire(t *testing.T) {
	s, err := Listen("127.0.0.1:0", 2, fast)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(0)
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintln(c, `{"op":"get","id":1,"key":"x"}`)
	var m message
	if err := json.NewDecoder(c).Decode(&m); err != nil || m.Op != opError || m.Err != "say hello first" {
		t.Errorf("got %+v, %v", m, err)
	}
	c2, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	fmt.Fprintln(c2, `{"op":"hello","id":1,"hello":{"rank":1,"world":2}}`)
	fmt.Fprintln(c2, `{"op": [}`)
	deadline := time.Now().Add(time.Second)
	for s.Err() == nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if err := s.Err(); err == nil || !strings.Contains(err.Error(), "rank 1 is gone: it sent something the store cannot read") {
		t.Errorf("%v", err)
	}
}

// FuzzServer feeds the server arbitrary lines: it answers or drops the
// connection, and never panics.
func FuzzServer(f *testing.F) {
	for _, s := range []string{
		`{"op":"hello","id":1,"hello":{"rank":0,"world":1}}` + "\n" + `{"op":"set","id":2,"key":"k","value":"dg=="}` + "\n",
		`{"op":"hello","id":1,"hello":{"rank":0,"world":1}}` + "\n" + `{"op":"barrier","id":2,"key":"b"}` + "\n",
		`{"op":"hello","id":1}` + "\n",
		`{"op":"bye"}` + "\n",
		"\x00\xff{",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := Listen("127.0.0.1:0", 1, fast)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close(0)
		c, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte(in))
		c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		buf := make([]byte, 4096)
		c.Read(buf)
		c.Close()
	})
}

// Rank 0 closing its store right after the group failed (what its
// process does on its way out) still tells every other rank why: the
// aborts are sent before the connections close, so no rank reads "rank 0
// is gone" instead of the rank that failed.
func TestCloseRightAfterFailureDeliversTheReason(t *testing.T) {
	for range 20 {
		s, cs := group(t, 4, fast)
		s.mu.Lock()
		s.failLocked(&FailedError{1, "rank 1 (host h, pid 101) sent nothing for 3s: it hangs, or its host is unreachable"})
		s.mu.Unlock()
		s.Close(0)
		for _, r := range []int{0, 2, 3} {
			err := waitFailed(t, cs[r], time.Second)
			var fe *FailedError
			if !errors.As(err, &fe) || fe.Rank != 1 {
				t.Fatalf("rank %d was told %v; want rank 1's failure", r, err)
			}
		}
	}
}
