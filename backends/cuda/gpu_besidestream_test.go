package cuda

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// streamCase is one HBM-streaming kernel (c3lab's stream op, the shape of
// a fused optimizer step) beside one latency-bound SM kernel of a few
// CTAs, the way an SM collective's CTAs sit beside it: c3lab's copy kernel
// (device to device, the shape of an all-gather's local traffic) or its
// reduction kernel loading two local blocks and writing one (an
// all-reduce's).
type streamCase struct {
	Kernel      string // "copy" or "reduce"
	StreamBytes int64  // the stream op's bytes read (it writes as many)
	// GEMM, when set, replaces the stream op by a bf16 GEMM of this M, N,
	// K beside the SM kernel.
	GEMM  [3]int
	Bytes int64 // the SM kernel's bytes written
	CTAs  int
	// SMs is the partition the SM kernel gets; 0: as many as its CTAs.
	SMs int
}

// neighbour names the op beside the SM kernel.
func (c streamCase) neighbour() string {
	if c.GEMM[0] > 0 {
		return fmt.Sprintf("gemm %dx%dx%d", c.GEMM[0], c.GEMM[1], c.GEMM[2])
	}
	return "stream " + scenarios.ByteSize(c.StreamBytes).String()
}

// partitionSMs is the size of the SM kernel's partition.
func (c streamCase) partitionSMs() int {
	if c.SMs > 0 {
		return c.SMs
	}
	return c.CTAs
}

// streamRep is one repetition: when each kernel ended, in ns after the
// stamp both were released at (0 for a kernel the mode does not run).
type streamRep struct {
	Mode      string `json:"mode"`
	StreamEnd int64  `json:"stream_end_ns,omitempty"`
	KernelEnd int64  `json:"kernel_end_ns,omitempty"`
	HostNS    int64  `json:"host_ns"` // the host's time for the repetition
}

// streamRow is every repetition of one case.
type streamRow struct {
	Case   string `json:"case"`
	Kernel string `json:"kernel"`
	Stream int64  `json:"stream_bytes,omitempty"`
	// GEMM is the neighbour GEMM's M, N, K (bf16) when it is not the
	// stream op; GEMMHBMBytes what it reads and writes at the least.
	GEMM         []int       `json:"gemm,omitempty"`
	GEMMHBMBytes int64       `json:"gemm_hbm_bytes,omitempty"`
	Bytes        int64       `json:"kernel_bytes"`
	CTAs         int         `json:"ctas"`
	SMs          int         `json:"partition_sms"`
	Reps         []streamRep `json:"reps"`
	// SetupS and LoopS are the host's seconds preparing the case and
	// running its repetitions.
	SetupS float64 `json:"setup_s"`
	LoopS  float64 `json:"loop_s"`
	Error  string  `json:"error,omitempty"`
}

// streamModes are the ways one repetition runs the pair. "shared": the SM
// kernel launched first on a high-priority stream, the stream op on the
// whole GPU beside it (comm-first+prio), so the stream op's CTAs fill
// what the kernel's leave on its SMs; "partition": the SM kernel in a
// green context of as many SMs as its CTAs, the stream op in the rest
// (comm-sms-N), so no SM is shared. Each kernel also runs alone on the
// SMs each mode gives it.
var streamModes = []string{"stream-alone", "kernel-alone", "shared", "stream-rest", "kernel-part", "partition"}

// TestGPUKernelBesideStream measures whether an SM partition shields a
// latency-bound kernel of few CTAs from an HBM-streaming kernel beside it.
// The simulator's CommLatencySensitivity slows an SM collective by the
// share of HBM the others take, and until this probe a collective in a
// partition of its own was exempt; on two H200s the 160 MiB all-reduce in
// a 16-64 SM partition beside the AdamW stream op ran 14-18 % longer in C3
// than that model said. One GPU shows the mechanism without NCCL: the same
// stream op beside c3lab's copy or reduction kernel, shared and
// partitioned; a case may put a bf16 GEMM in the stream op's place, and
// give the kernel fewer SMs than CTAs, as NCCL's 32 CTAs in a 16-SM
// partition. C3LAB_BESIDESTREAM_OUT names the JSON report;
// C3LAB_BESIDESTREAM_REPS the repetitions per mode (default 10, after one
// warm-up); C3LAB_BESIDESTREAM_CASES replaces the cases
// (parseStreamCases).
func TestGPUKernelBesideStream(t *testing.T) {
	b := openGPU(t)
	reps := envRepetitions(t, "C3LAB_BESIDESTREAM_REPS", 10, 1)
	spec := defaultStreamCases
	if v := os.Getenv("C3LAB_BESIDESTREAM_CASES"); v != "" {
		spec = v
	}
	cases, err := parseStreamCases(spec)
	if err != nil {
		t.Fatalf("C3LAB_BESIDESTREAM_CASES: %v", err)
	}
	var rows []streamRow
	for i, c := range cases {
		row, err := b.kernelBesideStream(c, reps)
		if err != nil {
			// One case that fails must not lose the others: record it.
			row.Error = err.Error()
			t.Errorf("%s: %v", row.Case, err)
		}
		rows = append(rows, row)
		t.Logf("%s: %d repetitions", row.Case, len(row.Reps))
		writeReport(t, "C3LAB_BESIDESTREAM_OUT", "c3lab SM kernel beside a stream op probe", map[string]any{
			"devices": b.Devices(), "cases_done": i + 1, "cases": len(cases), "rows": rows})
	}
}

// kernelBesideStream measures one case: reps repetitions of every mode,
// interleaved, after one warm-up of each.
func (b *Backend) kernelBesideStream(c streamCase, reps int) (row streamRow, err error) {
	row = streamRow{Case: fmt.Sprintf("%s beside %s %s ctas %d", c.neighbour(), c.Kernel, scenarios.ByteSize(c.Bytes), c.CTAs),
		Kernel: c.Kernel, Stream: c.StreamBytes, Bytes: c.Bytes, CTAs: c.CTAs, SMs: c.partitionSMs()}
	if c.SMs > 0 {
		row.Case += fmt.Sprintf(" in %d SMs", c.SMs)
	}
	// A run of the neighbour's scenario prepares its buffers; the SM
	// kernel's are allocated here.
	op := scenarios.ComputeOp{Kind: scenarios.Stream, Bytes: scenarios.ByteSize(c.StreamBytes)}
	if c.GEMM[0] > 0 {
		op = scenarios.ComputeOp{Kind: scenarios.GEMM, M: c.GEMM[0], N: c.GEMM[1], K: c.GEMM[2], DType: scenarios.BF16}
		row.Stream, row.GEMM = 0, c.GEMM[:]
		m, n, k := int64(c.GEMM[0]), int64(c.GEMM[1]), int64(c.GEMM[2])
		row.GEMMHBMBytes = 2 * (m*k + k*n + m*n)
	}
	sc := scenarios.Scenario{Name: "kernel-beside-stream", GPUs: 1, Compute: op,
		Comm: scenarios.CommOp{Collective: scenarios.HostToDevice, Bytes: 1 << 20}}
	start := time.Now()
	defer func() { row.LoopS = time.Since(start).Seconds() - row.SetupS }()
	if _, err := b.Run(context.Background(), backends.Experiment{Scenario: sc, Strategy: scenarios.Strategy{}, Reps: 1}, nil); err != nil {
		return row, err
	}
	b.do(func() {
		g, ok := b.g.(procGPU)
		if !ok {
			err = fmt.Errorf("this backend's GPU layer has no stamps")
			return
		}
		p := b.prepared
		var shared, part plan
		if shared, err = b.strategyPlan(p, scenarios.Strategy{Launch: scenarios.CommFirst, CommPriority: -5}); err != nil {
			return
		}
		if part, err = b.strategyPlan(p, scenarios.Strategy{CommSMs: c.partitionSMs()}); err != nil {
			return
		}
		var src, dst, hb bufID
		in := c.Bytes
		if c.Kernel == "reduce" {
			in = 2 * c.Bytes
		}
		if src, err = g.Alloc(0, in); err != nil {
			return
		}
		defer g.Free(src)
		if dst, err = g.Alloc(0, c.Bytes); err != nil {
			return
		}
		defer g.Free(dst)
		if hb, err = g.AllocHost(0, 32); err != nil {
			return
		}
		defer g.Free(hb)
		var ev eventID
		if ev, err = g.Event(0); err != nil {
			return
		}
		kernel := func(s streamID) error {
			if c.Kernel == "reduce" {
				n := c.Bytes / 2
				return g.ReduceLoad(s, bufRef{dst, 0}, []bufRef{{src, 0}, {src, c.Bytes}}, n, c.CTAs)
			}
			return g.CopyKernel(s, []copySeg{{dst: bufRef{dst, 0}, src: bufRef{src, 0}, bytes: c.Bytes}}, c.CTAs)
		}
		// The first launch of a kernel loads its module, which waits for
		// the context's streams: it must not come while a stream waits on
		// the start gate (call 2 hung there on the reduction kernel, call 5
		// on cuBLASLt's GEMM in a partition's rest), so both ops run once
		// ungated first, on both plans' streams.
		for _, pl := range []plan{shared, part} {
			if err = kernel(pl.commStreams[0]); err != nil {
				return
			}
			if err = b.besideOp(g, p, pl); err != nil {
				return
			}
		}
		if err = g.Synchronize(0); err != nil {
			return
		}
		row.SetupS = time.Since(start).Seconds()
		for i := 0; i <= reps; i++ {
			for _, mode := range rotated(streamModes, i) {
				pl := shared
				if mode == "stream-rest" || mode == "kernel-part" || mode == "partition" {
					pl = part
				}
				var rep streamRep
				t := time.Now()
				rep, err = b.streamRep(g, p, pl, hb, ev, mode, kernel)
				rep.HostNS = time.Since(t).Nanoseconds()
				if err != nil {
					err = fmt.Errorf("%s: %w", mode, err)
					return
				}
				if i > 0 {
					rep.Mode = mode
					row.Reps = append(row.Reps, rep)
				}
			}
		}
	})
	return row, err
}

// streamRep runs one repetition of a mode and reads back its stamps. Both
// streams are released by one event after the gate; in the two-kernel
// modes the SM kernel is enqueued first on the higher-priority stream.
func (b *Backend) streamRep(g procGPU, p *prepared, pl plan, hb bufID, ev eventID, mode string, kernel func(streamID) error) (streamRep, error) {
	var rep streamRep
	cs, ms := pl.computeStreams[0], pl.commStreams[0]
	runStream := mode != "kernel-alone" && mode != "kernel-part"
	runKernel := mode != "stream-alone" && mode != "stream-rest"
	b.gateVal++
	v := b.gateVal
	if err := g.Upload(hb, make([]byte, 32)); err != nil {
		return rep, err
	}
	if err := g.GateWait(cs, v); err != nil {
		return rep, err
	}
	if err := g.Stamp(cs, bufRef{hb, 0}); err != nil {
		return rep, err
	}
	if err := g.Record(ev, cs); err != nil {
		return rep, err
	}
	if runKernel {
		if err := g.Wait(ms, ev); err != nil {
			return rep, err
		}
		if err := kernel(ms); err != nil {
			return rep, err
		}
		if err := g.Stamp(ms, bufRef{hb, 16}); err != nil {
			return rep, err
		}
	}
	if runStream {
		if err := b.besideOp(g, p, pl); err != nil {
			return rep, err
		}
		if err := g.Stamp(cs, bufRef{hb, 8}); err != nil {
			return rep, err
		}
	}
	g.OpenGate(v)
	if err := g.Synchronize(0); err != nil {
		return rep, err
	}
	raw := make([]byte, 24)
	if err := g.Download(hb, raw); err != nil {
		return rep, err
	}
	t0 := int64(binary.LittleEndian.Uint64(raw[0:]))
	if runStream {
		rep.StreamEnd = int64(binary.LittleEndian.Uint64(raw[8:])) - t0
	}
	if runKernel {
		rep.KernelEnd = int64(binary.LittleEndian.Uint64(raw[16:])) - t0
	}
	return rep, nil
}

// defaultStreamCases are the cases of results/2026-12-04-h200x1-s23,
// call 4: both kernels at 16, 32 and 64 CTAs beside the 1 GiB stream op.
const defaultStreamCases = "copy 1GiB 192MiB 16; copy 1GiB 192MiB 32; copy 1GiB 192MiB 64; " +
	"reduce 1GiB 96MiB 16; reduce 1GiB 96MiB 32; reduce 1GiB 96MiB 64"

// besideOp enqueues the SM kernel's neighbour, the stream op or the GEMM,
// on the plan's compute stream.
func (b *Backend) besideOp(g procGPU, p *prepared, pl plan) error {
	if p.streamOp > 0 {
		return g.StreamOp(pl.computeStreams[0], p.a[0], p.d[0], p.streamOp)
	}
	return g.GEMM(pl.computeStreams[0], pl.gemm, p.a[0], p.bm[0], p.d[0])
}

// parseStreamCases reads cases separated by ';', each "kernel neighbour
// kernel-bytes ctas [sms]": the neighbour is the stream op's bytes or a
// bf16 GEMM's MxNxK, sms the SM kernel's partition (default its CTAs),
// e.g. "reduce 1GiB 96MiB 32" or "copy 16384x8192x1024 192MiB 32 16".
func parseStreamCases(v string) ([]streamCase, error) {
	var out []streamCase
	for _, item := range strings.Split(v, ";") {
		f := strings.Fields(item)
		if len(f) == 0 {
			continue
		}
		if len(f) != 4 && len(f) != 5 {
			return nil, fmt.Errorf("case %q: want kernel neighbour kernel-bytes ctas [sms]", item)
		}
		c := streamCase{Kernel: f[0]}
		if c.Kernel != "copy" && c.Kernel != "reduce" {
			return nil, fmt.Errorf("case %q: kernel %q: want copy or reduce", item, f[0])
		}
		sizes := []*int64{&c.StreamBytes, &c.Bytes}
		if dims := strings.Split(f[1], "x"); len(dims) == 3 {
			for i, d := range dims {
				n, err := strconv.Atoi(d)
				if err != nil || n < 1 {
					return nil, fmt.Errorf("case %q: GEMM %q: want MxNxK, each a whole number, at least 1", item, f[1])
				}
				c.GEMM[i] = n
			}
			sizes[0] = nil
		}
		for i, dst := range sizes {
			if dst == nil {
				continue
			}
			n, err := scenarios.ParseByteSize(f[1+i])
			if err != nil {
				return nil, fmt.Errorf("case %q: %v", item, err)
			}
			if n <= 0 || n%32 != 0 {
				return nil, fmt.Errorf("case %q: %s bytes: want a positive multiple of 32", item, f[1+i])
			}
			*dst = int64(n)
		}
		var err error
		if c.CTAs, err = strconv.Atoi(f[3]); err != nil || c.CTAs < 1 {
			return nil, fmt.Errorf("case %q: CTAs %q: want a whole number, at least 1", item, f[3])
		}
		if len(f) == 5 {
			if c.SMs, err = strconv.Atoi(f[4]); err != nil || c.SMs < 1 {
				return nil, fmt.Errorf("case %q: SMs %q: want a whole number, at least 1", item, f[4])
			}
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no case in %q", v)
	}
	return out, nil
}

// The case list parses as written and refuses what it cannot read.
func TestParseStreamCases(t *testing.T) {
	got, err := parseStreamCases("reduce 1GiB 96MiB 32; copy 512MiB 192MiB 16; copy 16384x8192x1024 192MiB 32 16")
	if err != nil {
		t.Fatal(err)
	}
	want := []streamCase{
		{Kernel: "reduce", StreamBytes: 1 << 30, Bytes: 96 << 20, CTAs: 32},
		{Kernel: "copy", StreamBytes: 512 << 20, Bytes: 192 << 20, CTAs: 16},
		{Kernel: "copy", GEMM: [3]int{16384, 8192, 1024}, Bytes: 192 << 20, CTAs: 32, SMs: 16},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("case %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	for _, bad := range []string{"", "copy 1GiB 96MiB", "move 1GiB 96MiB 32", "copy lots 96MiB 32",
		"copy 1GiB 96MiB 0", "copy 1GiB 17 32", "copy 1GiB 96MiB many", "copy 8x0x8 96MiB 32",
		"copy 8xax8 96MiB 32", "copy 1GiB 96MiB 32 0", "copy 1GiB 96MiB 32 16 1"} {
		if _, err := parseStreamCases(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
