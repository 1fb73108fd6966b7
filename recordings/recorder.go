package recordings

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/recordings/outfile"
	"github.com/c3lab/c3lab/scenarios"
)

// Recorder defaults.
const (
	// DefaultFlushEvery is how often the recorder writes what it holds.
	DefaultFlushEvery = time.Second
	// DefaultMaxPending is how many events the recorder holds before it
	// drops new ones (and records that it did): minutes of a live session,
	// tens of MB at most.
	DefaultMaxPending = 1 << 14
)

// Tuning of the writer; not options because nothing gains from changing them.
const (
	// compressAbove: payloads (or batches) at least this long are stored
	// zstd-compressed, when that makes them smaller.
	compressAbove = 512
	// batchLimit bounds the uncompressed size of one batch frame.
	batchLimit = 4 << 20
	// maxItemsPerFrame bounds the spans or samples of one event frame, so
	// that a huge batch is split well below MaxFrameSize.
	maxItemsPerFrame = 100_000
	// kickAt wakes the writer early when this many events are waiting.
	kickAt = 4096
)

// Options tune a Recorder.
type Options struct {
	// Overwrite lets Create replace an existing file.
	Overwrite bool
	// FlushEvery is the longest an event waits before it is written (and
	// so the most a crash can lose); 0 means DefaultFlushEvery.
	FlushEvery time.Duration
	// Sync makes every write durable (fsync) before the next, not only the
	// last one at Close: a power cut then loses at most FlushEvery too.
	Sync bool
	// MaxPending is how many events may wait to be written; past it new
	// events are dropped and an error event says how many. 0 means
	// DefaultMaxPending.
	MaxPending int

	// wrap, for tests, wraps the file the recorder writes to.
	wrap func(io.Writer) io.Writer
	// now, for tests, replaces the clock (time since the recording started).
	now func() time.Duration
}

// Stats counts what a recorder did so far.
type Stats struct {
	// Events is the number of events written to the file.
	Events int64
	// Dropped is the number of events lost: dropped while the writer was
	// behind, or queued when a write failed. Calls made after the recorder
	// stopped are not counted.
	Dropped int64
	// Bytes is the size of the file.
	Bytes int64
}

// pending is an event waiting to be written.
type pending struct {
	kind     Kind
	t        time.Duration
	scenario *scenarios.Scenario
	strategy scenarios.Strategy
	result   *profiler.Result
	spans    []backends.Span
	samples  []backends.Sample
	text     string
}

// Recorder appends a session's events to a recording file. Its methods are
// safe for concurrent use, never block on I/O and never fail: events are
// queued and written by a background goroutine at least every
// Options.FlushEvery. If a write fails the recorder stops: later calls do
// nothing, Err reports the failure, and the file keeps everything written
// before it. A nil *Recorder is valid and records nothing.
//
// *Recorder is a backends.EventSink.
type Recorder struct {
	path  string
	f     *os.File
	w     io.Writer
	start time.Time
	now   func() time.Duration
	opt   Options

	mu      sync.Mutex
	queue   []pending
	spare   []pending
	dropped int64
	closed  bool

	stopped  atomic.Bool
	errMu    sync.Mutex
	err      error
	nEvents  atomic.Int64
	nDropped atomic.Int64
	size     atomic.Int64

	kick      chan struct{}
	flushReq  chan chan error
	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once

	// Owned by the writer goroutine.
	enc   *zstd.Encoder
	out   []byte
	batch []byte
	group []encoded
}

// encoded is one event frame's content, before framing.
type encoded struct {
	kind    Kind
	t       time.Duration
	payload []byte
}

var _ backends.EventSink = (*Recorder)(nil)

// Create starts a recording at path: it writes the preamble and header h
// and returns a recorder for the events. It refuses an existing file
// unless opt.Overwrite, and anything but a regular file (or a link to one)
// always (package outfile says how). Event times count from this call,
// which h.Created records; h.Schema is set too, and h.Host filled in when
// empty.
func Create(path string, h Header, opt Options) (*Recorder, error) {
	if opt.FlushEvery <= 0 {
		opt.FlushEvery = DefaultFlushEvery
	}
	if opt.MaxPending <= 0 {
		opt.MaxPending = DefaultMaxPending
	}
	start := time.Now()
	h.Schema = SchemaVersion
	h.Created = start.Round(0)
	if h.Host == "" {
		h.Host, _ = os.Hostname()
	}
	hj, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("recording header: %w", err)
	}
	if len(hj) > MaxFrameSize {
		return nil, fmt.Errorf("recording header: %d bytes, more than the %d a frame holds", len(hj), MaxFrameSize)
	}

	// outfile writes only regular files: a new one, or with Overwrite an
	// existing one (through a link, the file it names), emptied.
	f, err := outfile.Create(path, outfile.Options{Overwrite: opt.Overwrite})
	if errors.Is(err, outfile.ErrExists) {
		return nil, fmt.Errorf("recording %s already exists; choose another file or allow overwriting it", path)
	}
	if err != nil {
		return nil, fmt.Errorf("create recording: %w", err)
	}

	r := &Recorder{
		path:     path,
		f:        f,
		w:        f,
		start:    start,
		opt:      opt,
		kick:     make(chan struct{}, 1),
		flushReq: make(chan chan error),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	if opt.wrap != nil {
		r.w = opt.wrap(f)
	}
	r.now = opt.now
	if r.now == nil {
		r.now = func() time.Duration { return time.Since(start) }
	}
	r.enc, err = zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("create recording %s: zstd: %w", path, err)
	}

	head := make([]byte, 0, preambleSize+frameHeaderSize+len(hj))
	head = append(head, magic...)
	head = binary.LittleEndian.AppendUint32(head, SchemaVersion)
	flag, payload := r.compress(hj)
	head = appendFrame(head, frameHeader, flag, 0, payload)
	if _, err := r.w.Write(head); err != nil {
		r.enc.Close()
		f.Close()
		if !opt.Overwrite {
			os.Remove(path)
		}
		return nil, fmt.Errorf("write recording %s: %w", path, err)
	}
	if opt.Sync {
		if err := f.Sync(); err != nil {
			r.enc.Close()
			f.Close()
			return nil, fmt.Errorf("sync recording %s: %w", path, err)
		}
	}
	r.size.Store(int64(len(head)))
	go r.loop()
	return r, nil
}

// Path returns the file the recorder writes.
func (r *Recorder) Path() string {
	if r == nil {
		return ""
	}
	return r.path
}

// Scenario records a switch to scenario sc.
func (r *Recorder) Scenario(sc scenarios.Scenario) {
	r.enqueue(pending{kind: KindScenario, scenario: &sc})
}

// Strategy records a switch to strategy st.
func (r *Recorder) Strategy(st scenarios.Strategy) {
	r.enqueue(pending{kind: KindStrategy, strategy: st})
}

// Result records one iteration's measurement. The result is copied (its
// slices and maps too), so the caller may change it afterwards.
func (r *Recorder) Result(res profiler.Result) {
	if r.inactive() {
		return
	}
	r.enqueue(pending{kind: KindResult, result: copyResult(res)})
}

// Spans records a batch of spans (copied; an empty batch records nothing).
func (r *Recorder) Spans(s []backends.Span) {
	if len(s) == 0 || r.inactive() {
		return
	}
	r.enqueue(pending{kind: KindSpans, spans: slices.Clone(s)})
}

// Samples records a batch of telemetry samples (copied; an empty batch
// records nothing).
func (r *Recorder) Samples(s []backends.Sample) {
	if len(s) == 0 || r.inactive() {
		return
	}
	r.enqueue(pending{kind: KindSamples, samples: slices.Clone(s)})
}

// Marker records a note from the user.
func (r *Recorder) Marker(text string) { r.enqueue(pending{kind: KindMarker, text: text}) }

// Error records an error the session met.
func (r *Recorder) Error(text string) { r.enqueue(pending{kind: KindError, text: text}) }

// inactive reports whether calls are no-ops: a nil recorder, or one that
// stopped after a failure.
func (r *Recorder) inactive() bool { return r == nil || r.stopped.Load() }

func (r *Recorder) enqueue(p pending) {
	if r.inactive() {
		return
	}
	r.mu.Lock()
	p.t = r.now() // under the lock, so times never go back in file order
	if r.closed {
		r.mu.Unlock()
		return
	}
	if len(r.queue) >= r.opt.MaxPending {
		r.dropped++
		r.mu.Unlock()
		r.nDropped.Add(1)
		return
	}
	r.queue = append(r.queue, p)
	n := len(r.queue)
	r.mu.Unlock()
	if n == kickAt {
		select {
		case r.kick <- struct{}{}:
		default:
		}
	}
}

// Flush writes every event recorded so far to the file (to the operating
// system; with Options.Sync, to the disk) and returns Err.
func (r *Recorder) Flush() error {
	if r == nil {
		return nil
	}
	ch := make(chan error, 1)
	select {
	case r.flushReq <- ch:
		return <-ch
	case <-r.done:
		return r.Err()
	}
}

// Close writes what is left, marks the recording complete, syncs and
// closes the file. It returns Err; calling it again does nothing more.
func (r *Recorder) Close() error {
	if r == nil {
		return nil
	}
	r.closeOnce.Do(func() {
		r.mu.Lock()
		r.closed = true
		r.mu.Unlock()
		close(r.stop)
		<-r.done
	})
	return r.Err()
}

// Err returns the write error that stopped the recorder, or nil.
func (r *Recorder) Err() error {
	if r == nil {
		return nil
	}
	r.errMu.Lock()
	defer r.errMu.Unlock()
	return r.err
}

// Stats returns what the recorder did so far.
func (r *Recorder) Stats() Stats {
	if r == nil {
		return Stats{}
	}
	return Stats{Events: r.nEvents.Load(), Dropped: r.nDropped.Load(), Bytes: r.size.Load()}
}

// fail stops the recorder after a write error. It cuts the file back to
// the last frame written whole, so what is there stays readable.
func (r *Recorder) fail(err error) {
	r.errMu.Lock()
	if r.err == nil {
		r.err = err
	}
	r.errMu.Unlock()
	r.stopped.Store(true)
	r.f.Truncate(r.size.Load()) // best effort: a failing disk may refuse this too
	r.mu.Lock()
	r.nDropped.Add(int64(len(r.queue)))
	r.queue = nil
	r.mu.Unlock()
}

// loop is the writer goroutine.
func (r *Recorder) loop() {
	defer close(r.done)
	tick := time.NewTicker(r.opt.FlushEvery)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			r.writePending()
		case <-r.kick:
			r.writePending()
		case ch := <-r.flushReq:
			r.writePending()
			ch <- r.Err()
		case <-r.stop:
			r.writePending()
			r.finish()
			return
		}
	}
}

// finish writes the end frame, syncs and closes the file.
func (r *Recorder) finish() {
	defer r.enc.Close()
	if !r.stopped.Load() {
		end, _ := json.Marshal(endPayload{Events: r.nEvents.Load(), Dropped: r.nDropped.Load()})
		r.write(appendFrame(r.out[:0], frameEnd, 0, r.now(), end))
	}
	if !r.stopped.Load() {
		if err := r.f.Sync(); err != nil {
			r.fail(fmt.Errorf("sync recording %s: %w", r.path, err))
		}
	}
	if err := r.f.Close(); err != nil && !r.stopped.Load() {
		r.fail(fmt.Errorf("close recording %s: %w", r.path, err))
	}
}

// write appends b to the file, or stops the recorder.
func (r *Recorder) write(b []byte) {
	if r.stopped.Load() || len(b) == 0 {
		return
	}
	n, err := r.w.Write(b)
	if err == nil && n < len(b) {
		err = io.ErrShortWrite
	}
	if err != nil {
		r.fail(fmt.Errorf("write recording %s: %w", r.path, err))
		return
	}
	if r.opt.Sync {
		if err := r.f.Sync(); err != nil {
			r.fail(fmt.Errorf("sync recording %s: %w", r.path, err))
			return
		}
	}
	r.size.Add(int64(n))
}

// writePending encodes the queued events and writes them with one write:
// a lone event as its own frame, several as batch frames, compressed
// together.
func (r *Recorder) writePending() {
	r.mu.Lock()
	q := r.queue
	r.queue = r.spare[:0]
	dropped := r.dropped
	r.dropped = 0
	r.mu.Unlock()
	defer func() {
		clear(q)
		r.mu.Lock()
		r.spare = q[:0]
		r.mu.Unlock()
	}()
	if r.stopped.Load() {
		r.nDropped.Add(int64(len(q)))
		return
	}
	r.out = r.out[:0]
	r.group = r.group[:0]
	groupSize := 0
	add := func(e encoded) {
		size := frameHeaderSize + len(e.payload)
		if groupSize+size > batchLimit && len(r.group) > 0 {
			r.flushGroup()
			groupSize = 0
		}
		r.group = append(r.group, e)
		groupSize += size
	}
	for i := range q {
		for _, e := range r.encode(&q[i]) {
			add(e)
		}
	}
	if dropped > 0 {
		add(r.textEvent(KindError, r.now(), fmt.Sprintf("recorder fell behind: dropped %d events", dropped)))
	}
	r.flushGroup()
	r.write(r.out)
	if r.stopped.Load() {
		r.nDropped.Add(int64(len(q)))
		return
	}
	r.nEvents.Add(int64(len(q)))
}

// flushGroup appends the events gathered so far to r.out as frames.
func (r *Recorder) flushGroup() {
	switch len(r.group) {
	case 0:
		return
	case 1:
		e := r.group[0]
		flag, payload := r.compress(e.payload)
		r.out = appendFrame(r.out, byte(e.kind), flag, e.t, payload)
	default:
		r.batch = r.batch[:0]
		for _, e := range r.group {
			r.batch = appendFrame(r.batch, byte(e.kind), 0, e.t, e.payload)
		}
		flag, payload := r.compress(r.batch)
		r.out = appendFrame(r.out, frameBatch, flag, r.group[0].t, payload)
	}
	clear(r.group)
	r.group = r.group[:0]
}

// compress returns the payload zstd-compressed when it is long enough and
// that makes it smaller, with the flag that says so.
func (r *Recorder) compress(p []byte) (byte, []byte) {
	if len(p) < compressAbove {
		return 0, p
	}
	c := r.enc.EncodeAll(p, nil)
	if len(c) >= len(p) {
		return 0, p
	}
	return flagZstd, c
}

func (r *Recorder) textEvent(k Kind, t time.Duration, text string) encoded {
	b, _ := json.Marshal(textPayload{Text: text}) // a string always encodes
	return encoded{kind: k, t: t, payload: b}
}

// encode turns one queued event into one or more frame payloads. An event
// that cannot be encoded becomes an error event saying why, so the
// recording keeps going.
// encodeChunked splits a list too long for one frame into frames of at most
// maxItemsPerFrame items, each built by frame, so a reader never meets a frame
// over its size limit.
func encodeChunked[T any](r *Recorder, items []T, frame func([]T) *pending) []encoded {
	var out []encoded
	for c := range slices.Chunk(items, maxItemsPerFrame) {
		out = append(out, r.encode(frame(c))...)
	}
	return out
}

func (r *Recorder) encode(p *pending) []encoded {
	var (
		b   []byte
		err error
	)
	switch p.kind {
	case KindScenario:
		b, err = json.Marshal(p.scenario)
	case KindStrategy:
		b, err = json.Marshal(p.strategy)
	case KindResult:
		b, err = encodeResult(p.result)
	case KindSpans:
		if len(p.spans) > maxItemsPerFrame {
			return encodeChunked(r, p.spans, func(c []backends.Span) *pending {
				return &pending{kind: KindSpans, t: p.t, spans: c}
			})
		}
		b, err = json.Marshal(p.spans)
	case KindSamples:
		if len(p.samples) > maxItemsPerFrame {
			return encodeChunked(r, p.samples, func(c []backends.Sample) *pending {
				return &pending{kind: KindSamples, t: p.t, samples: c}
			})
		}
		b, err = json.Marshal(toWire(p.samples))
	case KindMarker, KindError:
		b, err = json.Marshal(textPayload{Text: p.text})
	default:
		err = fmt.Errorf("unknown event kind %d", p.kind)
	}
	if err == nil && len(b) > MaxFrameSize {
		err = fmt.Errorf("%d bytes, more than the %d a frame holds", len(b), MaxFrameSize)
	}
	if err != nil {
		return []encoded{r.textEvent(KindError, p.t, fmt.Sprintf("recorder could not record a %s event: %v", p.kind, err))}
	}
	return []encoded{{kind: p.kind, t: p.t, payload: b}}
}

func encodeResult(res *profiler.Result) ([]byte, error) {
	c := *res
	c.Samples = nil
	rj, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	return json.Marshal(resultPayload{Result: rj, Samples: toWire(res.Samples)})
}

// copyResult copies a result deeply enough that the caller may change
// the original (TestCopyResultCoversReferenceFields keeps it complete).
// cloneReps copies repetitions per mode, their per-op times included.
func cloneReps(in map[backends.Mode][]backends.Rep) map[backends.Mode][]backends.Rep {
	if in == nil {
		return nil
	}
	out := make(map[backends.Mode][]backends.Rep, len(in))
	for m, v := range in {
		v = slices.Clone(v)
		for i := range v {
			v[i].Ops = slices.Clone(v[i].Ops)
		}
		out[m] = v
	}
	return out
}

// cloneRounds copies the rounds of repetitions per mode.
func cloneRounds(in map[backends.Mode][]int) map[backends.Mode][]int {
	if in == nil {
		return nil
	}
	out := make(map[backends.Mode][]int, len(in))
	for m, rs := range in {
		out[m] = slices.Clone(rs)
	}
	return out
}

// cloneScenario copies a scenario's streams, their ops and after lists.
func cloneScenario(sc scenarios.Scenario) scenarios.Scenario {
	if sc.Streams == nil {
		return sc
	}
	sc.Streams = slices.Clone(sc.Streams)
	for i := range sc.Streams {
		ops := slices.Clone(sc.Streams[i].Ops)
		for j := range ops {
			ops[j].After = slices.Clone(ops[j].After)
		}
		sc.Streams[i].Ops = ops
	}
	return sc
}

func copyResult(r profiler.Result) *profiler.Result {
	r.Devices = slices.Clone(r.Devices)
	if r.FractionOfIdeal != nil {
		f := *r.FractionOfIdeal
		r.FractionOfIdeal = &f
	}
	if r.Bound != nil {
		b := *r.Bound
		if b.FractionOfBound != nil {
			f := *b.FractionOfBound
			b.FractionOfBound = &f
		}
		r.Bound = &b
	}
	if r.Explain != nil {
		ex := maps.Clone(r.Explain)
		for m, ops := range ex {
			ops = slices.Clone(ops)
			for i := range ops {
				ops[i].Bounds = slices.Clone(ops[i].Bounds)
			}
			ex[m] = ops
		}
		r.Explain = ex
	}
	r.Reps = cloneReps(r.Reps)
	r.DefaultReps = cloneReps(r.DefaultReps)
	r.Ops = slices.Clone(r.Ops)
	r.RoundOf = cloneRounds(r.RoundOf)
	r.DefaultRoundOf = cloneRounds(r.DefaultRoundOf)
	r.PassOfRound = slices.Clone(r.PassOfRound)
	r.Bimodal = slices.Clone(r.Bimodal)
	if r.Precision != nil {
		p := *r.Precision
		if p.HalfWidth != nil {
			hw := *p.HalfWidth
			p.HalfWidth = &hw
		}
		r.Precision = &p
	}
	if r.CI != nil {
		ci := *r.CI
		ci.Ops = slices.Clone(ci.Ops)
		r.CI = &ci
	}
	if r.ModelError != nil {
		me := *r.ModelError
		r.ModelError = &me
	}
	r.Drift, r.TimedUse = r.Drift.Clone(), r.TimedUse.Clone()
	r.Scenario = cloneScenario(r.Scenario)
	r.Timeline = slices.Clone(r.Timeline)
	r.Samples = slices.Clone(r.Samples)
	return &r
}
