// Package store is the rendezvous of c3lab's ranks: a key/value store on
// a TCP port that rank 0 serves and every rank (rank 0 too) connects to,
// as torchrun's store on MASTER_ADDR:MASTER_PORT. It offers set, a get
// that waits for its key, and barriers, and it watches every rank: each
// client sends a heartbeat a few times a second, and a rank whose
// connection closes without saying goodbye, or that falls silent, fails
// the whole group at once with one line naming that rank. Clients see
// rank 0 fall silent or go away alike.
//
// The wire format is one JSON object per line each way. There is no
// authentication: like torch's store it is for a job's own network.
package store

import (
	"fmt"
	"time"
)

// Options tune the store's timing; zero values take the defaults.
type Options struct {
	// Heartbeat is how often a client says it is alive (and the server
	// answers); DefaultHeartbeat when 0.
	Heartbeat time.Duration
	// Silence is how long a rank may say nothing before it is taken for
	// hung; DefaultSilence when 0.
	Silence time.Duration
	// Join bounds the wait for every rank to connect (server), and a
	// client's attempts to reach the server; DefaultJoin when 0.
	Join time.Duration
}

// Defaults of Options.
const (
	DefaultHeartbeat = 250 * time.Millisecond
	DefaultSilence   = 3 * time.Second
	DefaultJoin      = 60 * time.Second
)

func (o Options) withDefaults() Options {
	if o.Heartbeat <= 0 {
		o.Heartbeat = DefaultHeartbeat
	}
	if o.Silence <= 0 {
		o.Silence = DefaultSilence
	}
	if o.Join <= 0 {
		o.Join = DefaultJoin
	}
	return o
}

// Hello is what a client tells the server about itself when it connects.
type Hello struct {
	Rank  int    `json:"rank"`
	World int    `json:"world"`
	Host  string `json:"host,omitempty"`
	PID   int    `json:"pid,omitempty"`
}

// who names a rank for messages: "rank 2 (host n1, pid 4711)".
func (h Hello) who() string {
	if h.Host == "" {
		return fmt.Sprintf("rank %d", h.Rank)
	}
	return fmt.Sprintf("rank %d (host %s, pid %d)", h.Rank, h.Host, h.PID)
}

// Operations on the wire.
const (
	opHello   = "hello"
	opSet     = "set"
	opGet     = "get"
	opBarrier = "barrier"
	opPing    = "ping"
	opBye     = "bye"
	// Server to client.
	opOK    = "ok"
	opValue = "value"
	opPong  = "pong"
	opAbort = "abort"
	opError = "error"
)

// message is one line on the wire.
type message struct {
	Op    string `json:"op"`
	ID    uint64 `json:"id,omitempty"`
	Key   string `json:"key,omitempty"`
	Value []byte `json:"value,omitempty"`
	Hello *Hello `json:"hello,omitempty"`
	Err   string `json:"err,omitempty"`
	// Rank is, in an abort, the rank the failure is blamed on (nil: none).
	Rank *int `json:"rank,omitempty"`
	// Time is the server's clock (Unix ns) when a barrier let go.
	Time int64 `json:"time,omitempty"`
}

// FailedError is the error of a group that lost a rank: Rank is the rank
// (-1 when the failure is not one rank's), Msg says what happened.
type FailedError struct {
	Rank int
	Msg  string
}

func (e *FailedError) Error() string { return e.Msg }
