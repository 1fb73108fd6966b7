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
	"github.com/c3lab/c3lab/native"
	"github.com/c3lab/c3lab/scenarios"
)

// placeCase is one GEMM and one copy-kernel launch whose CTAs are traced.
type placeCase struct {
	M, N, K int
	DType   scenarios.DType
	Copy    scenarios.Collective
	Bytes   int64
	CTAs    int
	Late    time.Duration // host wait (spinFor) before the late copy is enqueued
	// Cluster, when above 0, launches the copy in thread-block clusters of
	// that many CTAs, each asking for Smem bytes of dynamic shared memory
	// (CopyKernelTracedCluster): how NCCL's kernels are launched on Hopper.
	Cluster, Smem int
	// Local copies between two device buffers of Bytes (HBM to HBM, as a
	// collective's local traffic) instead of the host copy Copy names.
	Local bool
}

// clusterCopier is the GPU layer's traced copy kernel launched in
// clusters (nativeGPU).
type clusterCopier interface {
	CopyKernelTracedCluster(s streamID, segs []copySeg, ctas, cluster, shmem int, trace bufRef) error
}

// launchTraced launches the case's traced copy on s: in clusters when the
// case asks for them.
func launchTraced(g gpu, tc tracedCopier, s streamID, segs []copySeg, c placeCase, trace bufRef) error {
	if c.Cluster == 0 {
		return tc.CopyKernelTraced(s, segs, c.CTAs, trace)
	}
	cc, ok := g.(clusterCopier)
	if !ok {
		return fmt.Errorf("this backend's GPU layer has no clustered copy kernel")
	}
	return cc.CopyKernelTracedCluster(s, segs, c.CTAs, c.Cluster, c.Smem, trace)
}

// placeRep is one repetition: when the GEMM ended and where and when each
// of the copy's CTAs ran, in ns after the stamp before the GEMM (for the
// copy alone: before the copy).
type placeRep struct {
	Mode    string     `json:"mode"`
	GEMMEnd int64      `json:"gemm_end_ns,omitempty"`
	CTAs    [][3]int64 `json:"ctas,omitempty"` // SM, start, end
}

// placeRow is every repetition of one case.
type placeRow struct {
	Case  string     `json:"case"`
	GEMM  string     `json:"gemm"`
	Copy  string     `json:"copy"`
	CTAs  int        `json:"ctas"`
	Late  int64      `json:"late_sleep_ns"`
	Reps  []placeRep `json:"reps"`
	Error string     `json:"error,omitempty"`
}

// tracedCopier is the GPU layer's copy kernel with a record of its CTAs
// (nativeGPU).
type tracedCopier interface {
	CopyKernelTraced(s streamID, segs []copySeg, ctas int, trace bufRef) error
}

// TestGPUCopyCTAPlacement records where the block scheduler puts c3lab's
// copy kernel's CTAs and how long each ran: alone on an idle GPU, ready at
// the same moment as a GEMM (race: the moment a decomposed reload's copy
// chunk i+1 and GEMM chunk i both become ready), enqueued while the
// GEMM runs (late), and behind the GEMM on its stream (after). cuBLASLt's GEMM kernels hold 168 registers x 384
// threads on each SM they use, so a 512-thread copy CTA cannot share an SM
// with one: the SM ids and start times show whether the copy's CTAs wait
// for the GEMM's, take SMs it leaves, or pack several to an SM.
// C3LAB_CTAPLACE_OUT names the JSON report; C3LAB_CTAPLACE_REPS the
// repetitions per mode (default 5, after one warm-up); C3LAB_CTAPLACE_CASES
// replaces the cases (parsePlaceCases).
func TestGPUCopyCTAPlacement(t *testing.T) {
	b := openGPU(t)
	reps := envRepetitions(t, "C3LAB_CTAPLACE_REPS", 5, 1)
	us := time.Microsecond
	h2d, d2h := scenarios.HostToDevice, scenarios.DeviceToHost
	cases := []placeCase{
		// the decomposed reloads' chunks (llama3-8b-act-reload-h2d-gemm-decomp4-1gpu at 8 and 4 chunks)
		{512, 28672, 4096, scenarios.BF16, h2d, 4 << 20, 32, 60 * us, 0, 0, false},
		{1024, 28672, 4096, scenarios.BF16, h2d, 8 << 20, 32, 100 * us, 0, 0, false},
		{512, 28672, 4096, scenarios.BF16, h2d, 4 << 20, 8, 60 * us, 0, 0, false},
		{512, 28672, 4096, scenarios.BF16, h2d, 4 << 20, 64, 60 * us, 0, 0, false},
		{512, 28672, 4096, scenarios.BF16, h2d, 16 << 20, 32, 60 * us, 0, 0, false},
		{512, 28672, 4096, scenarios.BF16, d2h, 4 << 20, 32, 60 * us, 0, 0, false},
		// a persistent GEMM of the same kernel as the 1024-row chunk
		{4096, 4096, 4096, scenarios.BF16, h2d, 8 << 20, 32, 100 * us, 0, 0, false},
		{4096, 4096, 4096, scenarios.BF16, h2d, 128 << 20, 32, 100 * us, 0, 0, false},
		// the decode GEMM, 112 CTAs: 20 SMs free
		{64, 28672, 8192, scenarios.BF16, h2d, 16 << 20, 16, 40 * us, 0, 0, false},
		{64, 28672, 8192, scenarios.BF16, h2d, 16 << 20, 32, 40 * us, 0, 0, false},
		{64, 28672, 8192, scenarios.BF16, h2d, 16 << 20, 64, 40 * us, 0, 0, false},
		// a long GEMM: the copy's CTAs against its tail only
		{8192, 8192, 8192, scenarios.BF16, h2d, 16 << 20, 32, 300 * us, 0, 0, false},
	}
	if v := os.Getenv("C3LAB_CTAPLACE_CASES"); v != "" {
		var err error
		if cases, err = parsePlaceCases(v); err != nil {
			t.Fatalf("C3LAB_CTAPLACE_CASES: %v", err)
		}
	}
	var rows []placeRow
	for i, c := range cases {
		row, err := b.copyCTAPlacement(c, reps)
		if err != nil {
			// One case that fails (memory, a refused launch) must not lose
			// the others: record it and go on.
			row.Error = err.Error()
			t.Errorf("%s: %v", row.Case, err)
		}
		rows = append(rows, row)
		t.Logf("%s: %d repetitions", row.Case, len(row.Reps))
		writeReport(t, "C3LAB_CTAPLACE_OUT", "c3lab copy kernel CTA placement probe", map[string]any{
			"devices": b.Devices(), "cases_done": i + 1, "cases": len(cases), "rows": rows})
	}
}

// copyCTAPlacement measures one case: reps repetitions of GEMM alone, copy
// alone, race and late, interleaved, after one warm-up of each.
func (b *Backend) copyCTAPlacement(c placeCase, reps int) (placeRow, error) {
	sc := scenarios.Scenario{Name: "copy-cta-placement", GPUs: 1,
		Compute: scenarios.ComputeOp{Kind: scenarios.GEMM, M: c.M, N: c.N, K: c.K, DType: c.DType},
		Comm:    scenarios.CommOp{Collective: c.Copy, Bytes: scenarios.ByteSize(c.Bytes)}}
	st := scenarios.Strategy{CommCTAs: c.CTAs}
	name := fmt.Sprintf("%s %s %s ctas %d", sc.Compute, c.Copy, scenarios.ByteSize(c.Bytes), c.CTAs)
	if c.Cluster > 0 {
		name += fmt.Sprintf(" cluster %d smem %d", c.Cluster, c.Smem)
	}
	if c.Local {
		name += " local"
	}
	row := placeRow{Case: name,
		GEMM: sc.Compute.String(), Copy: sc.Comm.String(), CTAs: c.CTAs, Late: c.Late.Nanoseconds()}
	if _, err := b.Run(context.Background(), backends.Experiment{Scenario: sc, Strategy: st, Reps: 1}, nil); err != nil {
		return row, err
	}
	var err error
	b.do(func() {
		g, ok := b.g.(procGPU)
		tc, ok2 := b.g.(tracedCopier)
		if !ok || !ok2 {
			err = fmt.Errorf("this backend's GPU layer has no stamp or traced copy kernel")
			return
		}
		p := b.prepared
		var pl plan
		if pl, err = b.strategyPlan(p, st); err != nil {
			return
		}
		var hb, tb bufID
		if hb, err = g.AllocHost(0, 32); err != nil {
			return
		}
		defer g.Free(hb)
		traceBytes := int64(c.CTAs) * native.CopyTraceWords * 8
		if tb, err = g.Alloc(0, traceBytes); err != nil {
			return
		}
		defer g.Free(tb)
		var ev eventID
		if ev, err = g.Event(0); err != nil {
			return
		}
		segs := hostCopySegs(p, 0)
		if c.Local {
			var src, dst bufID
			if src, err = g.Alloc(0, c.Bytes); err != nil {
				return
			}
			defer g.Free(src)
			if dst, err = g.Alloc(0, c.Bytes); err != nil {
				return
			}
			defer g.Free(dst)
			segs = []copySeg{{dst: bufRef{dst, 0}, src: bufRef{src, 0}, bytes: c.Bytes}}
		}
		modes := []string{"gemm-alone", "copy-alone", "race", "late", "after"}
		for i := 0; i <= reps; i++ {
			for m, mode := range modes {
				var rep placeRep
				if rep, err = b.placeRep(g, tc, p, pl, hb, tb, ev, m, c, segs); err != nil {
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

// placeRep runs one repetition of mode 0 (GEMM alone), 1 (copy alone), 2
// (race), 3 (late) or 4 (after: the copy on the GEMM's stream, starting
// as it ends) and reads back the stamps and the copy's CTA record.
func (b *Backend) placeRep(g procGPU, tc tracedCopier, p *prepared, pl plan, hb, tb bufID, ev eventID, mode int, c placeCase, segs []copySeg) (placeRep, error) {
	var rep placeRep
	cs, ms := pl.computeStreams[0], pl.commStreams[0]
	b.gateVal++
	v := b.gateVal
	traceBytes := int64(c.CTAs) * native.CopyTraceWords * 8
	if err := g.Upload(tb, make([]byte, traceBytes)); err != nil {
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
	copyNow := mode == 1 || mode == 2
	if copyNow {
		if err := g.Wait(ms, ev); err != nil {
			return rep, err
		}
	}
	if mode != 1 {
		if err := g.GEMM(cs, pl.gemm, p.a[0], p.bm[0], p.d[0]); err != nil {
			return rep, err
		}
		if err := g.Stamp(cs, bufRef{hb, 8}); err != nil {
			return rep, err
		}
	}
	if copyNow {
		if err := launchTraced(b.g, tc, ms, segs, c, bufRef{tb, 0}); err != nil {
			return rep, err
		}
	}
	if mode == 4 {
		// On the GEMM's own stream: the copy starts as the GEMM ends,
		// every SM free, its output perhaps still in L2.
		if err := launchTraced(b.g, tc, cs, segs, c, bufRef{tb, 0}); err != nil {
			return rep, err
		}
	}
	g.OpenGate(v)
	if mode == 3 {
		// The copy stream is not gated: what is enqueued now runs now.
		spinFor(c.Late)
		if err := launchTraced(b.g, tc, ms, segs, c, bufRef{tb, 0}); err != nil {
			return rep, err
		}
	}
	if err := g.Synchronize(0); err != nil {
		return rep, err
	}
	raw := make([]byte, 16)
	if err := g.Download(hb, raw); err != nil {
		return rep, err
	}
	t0 := int64(binary.LittleEndian.Uint64(raw[0:]))
	if mode != 1 {
		rep.GEMMEnd = int64(binary.LittleEndian.Uint64(raw[8:])) - t0
	}
	if mode == 0 {
		return rep, nil
	}
	tr := make([]byte, traceBytes)
	if err := g.Download(tb, tr); err != nil {
		return rep, err
	}
	for i := 0; i < c.CTAs; i++ {
		w := func(j int) int64 { return int64(binary.LittleEndian.Uint64(tr[8*(3*i+j):])) }
		start, end := w(1), w(2)
		if start == 0 || end == 0 {
			return rep, fmt.Errorf("CTA %d of %d left no record", i, c.CTAs)
		}
		rep.CTAs = append(rep.CTAs, [3]int64{w(0), start - t0, end - t0})
	}
	return rep, nil
}

// spinFor waits d on the host by polling the clock: time.Sleep on the
// GPU nodes' virtual machines overslept a 100 µs wait to 0.8-1.3 ms
// (results/2026-12-04-h200x1-s25, call 3: every "late" copy started after
// the GEMM it was meant to land inside).
func spinFor(d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); {
	}
}

// parsePlaceCases reads cases separated by ';', each "MxNxK dtype copy
// bytes ctas late", e.g. "256x16384x6144 bf16 h2d 192MiB 16 40us".
func parsePlaceCases(v string) ([]placeCase, error) {
	var out []placeCase
	for _, item := range strings.Split(v, ";") {
		f := strings.Fields(item)
		if len(f) == 0 {
			continue
		}
		if len(f) < 6 || len(f) > 9 {
			return nil, fmt.Errorf("case %q: want MxNxK dtype copy bytes ctas late [cluster=N] [smem=BYTES] [local]", item)
		}
		var c placeCase
		if _, err := fmt.Sscanf(f[0], "%dx%dx%d", &c.M, &c.N, &c.K); err != nil {
			return nil, fmt.Errorf("case %q: shape %q: %v", item, f[0], err)
		}
		c.DType, c.Copy = scenarios.DType(f[1]), scenarios.Collective(f[2])
		b, err := scenarios.ParseByteSize(f[3])
		if err != nil {
			return nil, fmt.Errorf("case %q: %v", item, err)
		}
		c.Bytes = int64(b)
		if c.CTAs, err = strconv.Atoi(f[4]); err != nil || c.CTAs < 1 {
			return nil, fmt.Errorf("case %q: CTAs %q: want a whole number, at least 1", item, f[4])
		}
		if c.Late, err = time.ParseDuration(f[5]); err != nil {
			return nil, fmt.Errorf("case %q: %v", item, err)
		}
		for _, kv := range f[6:] {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "cluster":
				if c.Cluster, err = strconv.Atoi(v); err != nil || c.Cluster < 1 || c.CTAs%c.Cluster != 0 {
					return nil, fmt.Errorf("case %q: cluster %q: want a whole number, at least 1, that divides the CTAs", item, v)
				}
			case "local":
				c.Local = true
			case "smem":
				sb, err := scenarios.ParseByteSize(v)
				if err != nil || sb > 227<<10 {
					return nil, fmt.Errorf("case %q: smem %q: want a size up to 227KiB", item, v)
				}
				c.Smem = int(sb)
			default:
				return nil, fmt.Errorf("case %q: %q: want cluster=N, smem=BYTES or local", item, kv)
			}
		}
		if c.Smem > 0 && c.Cluster == 0 {
			c.Cluster = 1
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no case in %q", v)
	}
	return out, nil
}

// The case list parses as written and refuses what it cannot read.
func TestParsePlaceCases(t *testing.T) {
	got, err := parsePlaceCases("256x16384x6144 bf16 h2d 192MiB 16 40us; 64x28672x8192 bf16 d2h 16MiB 8 1ms; 64x28672x8192 bf16 h2d 16MiB 16 1ms cluster=4 smem=100KiB local")
	if err != nil {
		t.Fatal(err)
	}
	want := []placeCase{{256, 16384, 6144, scenarios.BF16, scenarios.HostToDevice, 192 << 20, 16, 40 * time.Microsecond, 0, 0, false},
		{64, 28672, 8192, scenarios.BF16, scenarios.DeviceToHost, 16 << 20, 8, time.Millisecond, 0, 0, false},
		{64, 28672, 8192, scenarios.BF16, scenarios.HostToDevice, 16 << 20, 16, time.Millisecond, 4, 100 << 10, true}}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("case %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	for _, bad := range []string{"", "256x16384 bf16 h2d 192MiB 16 40us", "256x16384x6144 bf16 h2d lots 16 40us",
		"256x16384x6144 bf16 h2d 192MiB 0 40us", "256x16384x6144 bf16 h2d 192MiB 16 soon", "256x16384x6144 bf16 h2d 192MiB 16",
		"256x16384x6144 bf16 h2d 192MiB 16 40us cluster=3", "256x16384x6144 bf16 h2d 192MiB 16 40us smem=1GiB", "256x16384x6144 bf16 h2d 192MiB 16 40us tiles=2"} {
		if _, err := parsePlaceCases(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
