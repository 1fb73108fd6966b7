package cuda

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// dmaStrategy runs a graph's collectives on the copy engines.
var dmaStrategy = scenarios.Strategy{CommEngine: scenarios.EngineDMA}

// spanOf finds rep 0's span of graph op instance name[i] on dev on a
// track ending in suffix ("" for the instance's own span on its stream).
func spanOf(t *testing.T, c *backends.Collector, name string, i, dev int, suffix string) backends.Span {
	t.Helper()
	for _, s := range c.SpanList {
		if s.Rep != 0 || s.GraphOp != name || s.Instance != i || s.Device != dev {
			continue
		}
		own := !strings.HasSuffix(s.Track, " ce") && !strings.HasSuffix(s.Track, " reduce")
		if suffix == "" && own || suffix != "" && strings.HasSuffix(s.Track, suffix) {
			return s
		}
	}
	t.Fatalf("no span of %s[%d] on GPU %d track *%s", name, i, dev, suffix)
	return backends.Span{}
}

// peerCopies lists the copies between GPUs the fake saw, as
// "devQ+srcOff -> devR+dstOff n", sorted, with each buffer named by its
// role in gp.
func peerCopies(f *fakeGPU, name map[bufID]string) []string {
	var out []string
	for _, c := range f.copyLog {
		if f.bufs[c.src.b].dev == f.bufs[c.dst.b].dev {
			continue
		}
		out = append(out, fmt.Sprintf("%s%d+%d -> %s%d+%d %d", name[c.src.b], f.bufs[c.src.b].dev, c.src.off, name[c.dst.b], f.bufs[c.dst.b].dev, c.dst.off, c.n))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Decomposed TP pairs with comm_engine dma on 2 and 4 GPUs in 1, 2 and 4
// chunks: every chunk's copies move exactly the peer slices (chunk c of
// the send buffer to chunk c of the receive buffer, or to chunk c's
// staging), no NCCL collective runs, the result passes the check against
// the whole GEMM, and a GPU's consumer (the GEMM chunk, or the end of the
// reduce-scatter chunk that dependents wait for) waits for the last copy
// and add of its chunk on every GPU: the last GPU's copies and adds are
// made slow, and GPU 0's copies into it slower still (which makes GPU 0's
// last copy stream the last of all), so a GPU that waited only for its own copies, or a
// rank's copies joined without one of its streams, would start early.
func TestGraphDMADecomposedPairs(t *testing.T) {
	for _, gpus := range []int{2, 4} {
		for _, chunks := range []int{1, 2, 4} {
			decomp := chunks
			if chunks == 1 {
				decomp = 0
			}
			for _, sc := range []scenarios.Scenario{agGEMM(gpus, decomp), gemmRS(gpus, decomp)} {
				t.Run(fmt.Sprintf("%s/%d GPUs/%d chunks", sc.Name, gpus, chunks), func(t *testing.T) {
					f := newFakeGPU(gpus)
					slow := gpus - 1
					f.copyNsOn = map[int]int64{slow: 500_000}
					f.copyNsPair = map[[2]int]int64{{0, slow}: 900_000}
					f.reduceNsOn = map[int]int64{slow: 700_000}
					b := fakeBackend(t, f, Options{})
					c := &backends.Collector{}
					if _, err := b.Run(context.Background(), backends.Experiment{Scenario: sc, Strategy: dmaStrategy, Mode: backends.ModeConcurrent, Reps: 1}, c); err != nil {
						t.Fatal(err)
					}
					if f.colls != 0 {
						t.Errorf("%d NCCL collectives under comm_engine dma", f.colls)
					}
					var gp *graphPrep
					b.do(func() { gp = b.prepared.graph })
					g := gp.g
					comm := g.OpsOf(scenarios.RoleComm)[0]
					ob := gp.ops[comm]
					name := map[bufID]string{}
					for r := range gpus {
						name[ob.in[r]], name[ob.out[r]] = "send", "recv"
						if len(gp.staging[comm]) > 0 {
							name[gp.staging[comm][r]] = "staging"
						}
					}
					var want []string
					blk := 2 * reduceBlock(ob.coll, gpus)
					for ch := range int64(chunks) {
						for q := range gpus {
							for r := range gpus {
								if r == q {
									continue
								}
								if ob.coll.Kind == scenarios.AllGather {
									want = append(want, fmt.Sprintf("send%d+%d -> recv%d+%d %d", q, ch*ob.inChunk, r, ch*ob.outChunk+int64(q)*ob.inChunk, ob.inChunk))
								} else {
									want = append(want, fmt.Sprintf("send%d+%d -> staging%d+%d %d", q, ch*ob.inChunk+int64(r)*blk, r, ch*int64(gpus-1)*blk+int64(stagingSlot(q, r))*blk, blk))
								}
							}
						}
					}
					slices.Sort(want)
					if got := peerCopies(f, name); !slices.Equal(got, want) {
						t.Errorf("copies between GPUs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
					}
					// The fake's event times are absolute (spans are relative
					// to each GPU's own start): they compare across GPUs.
					at := func(e eventID) int64 { return f.events[e].t }
					cons := g.Ops[comm].Feeds // the GEMM, for an all-gather
					for ch := range chunks {
						k := g.InstanceOf(comm, ch)
						// The chunk's last copy (of the last run: the fake's
						// clocks only grow) into its receive or staging range.
						lo, hi := int64(ch)*ob.outChunk, int64(ch+1)*ob.outChunk
						if ob.coll.Kind != scenarios.AllGather {
							lo, hi = int64(ch)*int64(gpus-1)*blk, int64(ch+1)*int64(gpus-1)*blk
						}
						var lastCopy int64
						for _, cp := range f.copyLog {
							if n := name[cp.dst.b]; (n == "recv" || n == "staging") && f.bufs[cp.src.b].dev != f.bufs[cp.dst.b].dev && cp.dst.off >= lo && cp.dst.off < hi {
								lastCopy = max(lastCopy, cp.end)
							}
						}
						for dev := range gpus {
							if cons >= 0 {
								if s := at(gp.ev[g.InstanceOf(cons, ch)][dev][0]); s < lastCopy {
									t.Errorf("GEMM chunk %d on GPU %d starts at %d, before the chunk's last copy ends at %d", ch, dev, s, lastCopy)
								}
								continue
							}
							if e, add := at(gp.ev[k][dev][1]), at(gp.ceEv[k][dev][ceReduce]); e < lastCopy || e < add {
								t.Errorf("reduce-scatter chunk %d on GPU %d ends at %d, before the chunk's last copy (%d) or its add (%d)", ch, dev, e, lastCopy, add)
							}
						}
					}
					// The spans show every copy and add.
					for ch := range chunks {
						for dev := range gpus {
							spanOf(t, c, g.Ops[comm].Name, ch, dev, " ce")
							if ob.coll.Kind == scenarios.ReduceScatter {
								spanOf(t, c, g.Ops[comm].Name, ch, dev, " reduce")
							}
						}
					}
				})
			}
		}
	}
}

// A copy that delivers wrong data is caught before timing, for every
// collective on the copy engines in a graph.
func TestGraphDMACatchesWrongCopies(t *testing.T) {
	for _, sc := range []scenarios.Scenario{agGEMM(2, 2), gemmRS(4, 2), collGraph(4, 1)} {
		f := newFakeGPU(sc.GPUs)
		f.corruptCopies = true
		_, _, err := runGraphOn(t, f, sc, dmaStrategy, backends.ModeConcurrent)
		if err == nil || !strings.Contains(err.Error(), "wrong result") {
			t.Errorf("%s: a corrupt copy gave %v, want a wrong result", sc.Name, err)
		}
	}
}

// collGraph is a GEMM stream next to a comm stream of an all-reduce, an
// all-to-all and a reduce-scatter of count instances each.
func collGraph(gpus, count int) scenarios.Scenario {
	ar := commOp("ar", scenarios.AllReduce, 1024*int64(gpus))
	ar.Count = count
	a2a := commOp("a2a", scenarios.AllToAll, 256*int64(gpus))
	a2a.Count = count
	rs := commOp("rs", scenarios.ReduceScatter, 512)
	rs.Count = count
	return scenarios.Scenario{Name: "colls", GPUs: gpus, Streams: []scenarios.StreamSpec{
		{Name: "compute", Ops: []scenarios.StreamOp{gemmOp("g", 16, 8, 8)}},
		{Name: "comm", Ops: []scenarios.StreamOp{ar, a2a, rs}},
	}}
}

// All-reduces, all-to-alls and reduce-scatters of count 3 in a graph on
// the copy engines: verified, no NCCL call, the reductions add on every
// GPU, repeated runs allocate nothing more (instances reuse the op's
// buffers and staging), and a reduce-scatter's copies, which refill the
// staging the previous instance's adds read, start only after those adds
// are done on every GPU (the last GPU's adds are made slow; an
// all-reduce's forwarding joins its adds anyway).
func TestGraphDMAAllReduceAllToAllReuse(t *testing.T) {
	for _, gpus := range []int{2, 4} {
		t.Run(fmt.Sprintf("%d GPUs", gpus), func(t *testing.T) {
			f := newFakeGPU(gpus)
			slow := gpus - 1
			f.reduceNsOn = map[int]int64{slow: 900_000}
			b := fakeBackend(t, f, Options{})
			ex := backends.Experiment{Scenario: collGraph(gpus, 3), Strategy: dmaStrategy, Mode: backends.ModeConcurrent, Reps: 2}
			c := &backends.Collector{}
			if _, err := b.Run(context.Background(), ex, c); err != nil {
				t.Fatal(err)
			}
			if f.colls != 0 {
				t.Errorf("%d NCCL collectives under comm_engine dma", f.colls)
			}
			// Verification and two repetitions, 3 all-reduces and 3
			// reduce-scatters each, on every GPU.
			if want := 3 * 6 * gpus; f.reduces != want {
				t.Errorf("%d reductions, want %d", f.reduces, want)
			}
			var gp *graphPrep
			b.do(func() { gp = b.prepared.graph })
			rs := slices.IndexFunc(gp.g.Ops, func(o scenarios.GraphOp) bool { return o.Name == "rs" })
			at := func(e eventID) int64 { return f.events[e].t } // absolute, unlike spans
			for i := 1; i < 3; i++ {
				prevAdd := at(gp.ceEv[gp.g.InstanceOf(rs, i-1)][slow][ceReduce])
				for q := range gpus {
					if e := at(gp.ceEv[gp.g.InstanceOf(rs, i)][q][ceCopies]); e <= prevAdd {
						t.Errorf("reduce-scatter %d: GPU %d's copies end at %d, before GPU %d's add of reduce-scatter %d ends at %d", i, q, e, slow, i-1, prevAdd)
					}
				}
			}
			for i := range 3 {
				for q := range gpus {
					spanOf(t, c, "rs", i, q, " reduce")
					spanOf(t, c, "ar", i, q, " ce")
				}
			}
			allocs := f.allocs
			if _, err := b.Run(context.Background(), ex, nil); err != nil {
				t.Fatal(err)
			}
			if f.allocs != allocs {
				t.Errorf("a second run allocated %d buffers more", f.allocs-allocs)
			}
		})
	}
}

// copy_engines acts on a graph's host copies under comm_engine dma: a
// chunked copy is dealt to that many copy streams, a swap's directions
// take a stream each, and the GEMM chunk fed by a copy chunk still waits
// for all of its pieces.
func TestGraphHostCopyEngines(t *testing.T) {
	swap := scenarios.Scenario{Name: "swap", GPUs: 1, Streams: []scenarios.StreamSpec{
		{Name: "compute", Ops: []scenarios.StreamOp{gemmOp("g", 16, 8, 8)}},
		{Name: "copy", Ops: []scenarios.StreamOp{commOp("sw", scenarios.HostSwap, 1<<12)}},
	}}
	// A reload of 512 KiB feeding a GEMM in 2 chunks: 4 pieces of 64 KiB
	// per chunk.
	const m, n, k = 128, 8, 2048
	mlp := gemmOp("mlp", m, n, k, "reload")
	mlp.Decompose = 2
	big := scenarios.Scenario{Name: "offload", GPUs: 1, Streams: []scenarios.StreamSpec{
		{Name: "copy", Ops: []scenarios.StreamOp{commOp("reload", scenarios.HostToDevice, m*k*2)}},
		{Name: "compute", Ops: []scenarios.StreamOp{mlp}},
	}}
	for _, tc := range []struct {
		name    string
		sc      scenarios.Scenario
		st      scenarios.Strategy
		streams int
	}{
		{"chunked, default engines", big, scenarios.Strategy{CommEngine: scenarios.EngineDMA, ChunkBytes: 64 << 10}, 3},
		{"chunked, copy_engines 2", big, scenarios.Strategy{CommEngine: scenarios.EngineDMA, ChunkBytes: 64 << 10, CopyEngines: 2}, 2},
		{"chunked, copy_engines 1", big, scenarios.Strategy{CommEngine: scenarios.EngineDMA, ChunkBytes: 64 << 10, CopyEngines: 1}, 1},
		{"unchunked", big, scenarios.Strategy{CommEngine: scenarios.EngineDMA}, 1},
		{"swap", swap, scenarios.Strategy{CommEngine: scenarios.EngineDMA}, 2},
		{"swap, copy_engines 1", swap, scenarios.Strategy{CommEngine: scenarios.EngineDMA, CopyEngines: 1}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeGPU(1)
			f.copyNsOn = map[int]int64{0: 10_000}
			_, c, err := runGraphOn(t, f, tc.sc, tc.st, backends.ModeConcurrent)
			if err != nil {
				t.Fatal(err)
			}
			streams := map[streamID]bool{}
			for _, cp := range f.copyLog {
				streams[cp.stream] = true
			}
			if len(streams) != tc.streams {
				t.Errorf("host copies on %d streams, want %d", len(streams), tc.streams)
			}
			if tc.sc.Name != "offload" {
				return
			}
			pieces := 1
			if tc.st.ChunkBytes > 0 {
				pieces = 4
			}
			for ch := range 2 {
				// The copy chunk lasts at least its longest stream's pieces.
				if cp, gm := spanOf(t, c, "reload", ch, 0, ""), spanOf(t, c, "mlp", ch, 0, ""); gm.Start < cp.End || cp.End-cp.Start < 10_000*int64((pieces+tc.streams-1)/tc.streams) {
					t.Errorf("chunk %d: copy %d..%d, GEMM from %d: the GEMM must wait for every piece", ch, cp.Start, cp.End, gm.Start)
				}
			}
		})
	}
}

// With CUPTI on, a graph's repetitions carry the copies and kernels CUPTI
// saw.
func TestGraphCUPTISpans(t *testing.T) {
	f := newFakeGPU(2)
	b := fakeBackend(t, f, Options{})
	tr := &fakeTracer{}
	b.do(func() { b.tracer = tr })
	var sink backends.Collector
	ex := backends.Experiment{Scenario: agGEMM(2, 2), Strategy: dmaStrategy, Mode: backends.ModeConcurrent, Reps: 2}
	if _, err := b.Run(context.Background(), ex, &sink); err != nil {
		t.Fatal(err)
	}
	want := "rep0 1:cupti-s9 50-150 memcpy PtoP 2MiB; rep0 0:cupti-s4 150-250 nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT (132 CTAs); " +
		"rep1 1:cupti-s9 50-150 memcpy PtoP 2MiB; rep1 0:cupti-s4 150-250 nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT (132 CTAs)"
	if g := collectedCUPTISpans(sink); g != want {
		t.Errorf("got  %q\nwant %q", g, want)
	}
}

// hostSwapGraph is a GEMM next to a swap of 256 KiB each way on one GPU.
func hostSwapGraph() scenarios.Scenario {
	return scenarios.Scenario{Name: "swap", GPUs: 1, Streams: []scenarios.StreamSpec{
		{Name: "compute", Ops: []scenarios.StreamOp{gemmOp("g", 16, 8, 8)}},
		{Name: "copy", Ops: []scenarios.StreamOp{commOp("sw", scenarios.HostSwap, 256<<10)}},
	}}
}

// In a comm partition (comm_sms) a graph's copy-engine reductions are
// pipelined with their copies, as a pair's: the reduction kernel of the
// partition's grid adds chunk by chunk behind flags the copies raise (no
// add-after kernel runs), the results pass verification (a corrupt copy
// does not), instances of one op reuse its flags with growing numbers
// (the fake refuses a kernel whose flags are not up, and one that would
// read a flag set by an earlier call only), and an instance's copies wait
// for the previous instance's adds on every GPU.
func TestGraphDMAPipelined(t *testing.T) {
	bigAR := scenarios.Scenario{Name: "big-ar", GPUs: 2, Streams: []scenarios.StreamSpec{
		{Name: "compute", Ops: []scenarios.StreamOp{gemmOp("g", 16, 8, 8)}},
		{Name: "comm", Ops: []scenarios.StreamOp{func() scenarios.StreamOp {
			o := commOp("ar", scenarios.AllReduce, 512<<10)
			o.Count = 2
			return o
		}()}},
	}}
	pipe := scenarios.Strategy{CommEngine: scenarios.EngineDMA, CommSMs: 16}
	chunked := pipe
	chunked.ChunkBytes = 64 << 10
	for _, tc := range []struct {
		sc scenarios.Scenario
		st scenarios.Strategy
	}{
		{gemmRS(2, 2), pipe}, {gemmRS(4, 4), pipe}, {gemmRS(4, 0), pipe},
		{collGraph(2, 3), pipe}, {collGraph(4, 2), pipe}, {bigAR, chunked},
	} {
		t.Run(fmt.Sprintf("%s/%d GPUs", tc.sc.Name, tc.sc.GPUs), func(t *testing.T) {
			f := newFakeGPU(tc.sc.GPUs)
			slow := tc.sc.GPUs - 1
			f.reduceNsOn = map[int]int64{slow: 900_000}
			b := fakeBackend(t, f, Options{})
			c := &backends.Collector{}
			if _, err := b.Run(context.Background(), backends.Experiment{Scenario: tc.sc, Strategy: tc.st, Mode: backends.ModeConcurrent, Reps: 2}, c); err != nil {
				t.Fatal(err)
			}
			if f.reduces != 0 || f.pipeReduces == 0 || f.colls != 0 {
				t.Errorf("%d add-after reductions, %d pipelined, %d NCCL calls; want pipelined only", f.reduces, f.pipeReduces, f.colls)
			}
			for _, grid := range f.pipeGrids {
				if grid != pipeCTAsPerSM*16 {
					t.Errorf("a pipelined reduction of %d CTAs, want %d", grid, pipeCTAsPerSM*16)
				}
			}
			var gp *graphPrep
			b.do(func() { gp = b.prepared.graph })
			at := func(e eventID) int64 { return f.events[e].t }
			for op, o := range gp.g.Ops {
				if o.Role != scenarios.RoleComm || gp.ops[op].coll.Kind.IsPureCopy() || o.Chunks > 1 {
					continue
				}
				for i := 1; i < o.Count; i++ {
					prevAdd := at(gp.ceEv[gp.g.InstanceOf(op, i-1)][slow][ceReduce])
					for q := range tc.sc.GPUs {
						if e := at(gp.ceEv[gp.g.InstanceOf(op, i)][q][ceCopies]); e <= prevAdd {
							t.Errorf("%s %d: GPU %d's copies end at %d, before GPU %d's add of instance %d ends at %d", o.Name, i, q, e, slow, i-1, prevAdd)
						}
					}
				}
			}
			f2 := newFakeGPU(tc.sc.GPUs)
			f2.corruptCopies = true
			if _, _, err := runGraphOn(t, f2, tc.sc, tc.st, backends.ModeConcurrent); err == nil || !strings.Contains(err.Error(), "wrong result") {
				t.Errorf("a corrupt copy gave %v, want a wrong result", err)
			}
		})
	}
}

// Switching comm_sms on switches a graph's copy-engine reductions to the
// pipelined path, which is verified on its own before it is timed.
func TestGraphDMAVerifiesEachPath(t *testing.T) {
	f := newFakeGPU(2)
	b := fakeBackend(t, f, Options{})
	run := func(st scenarios.Strategy) {
		t.Helper()
		if _, err := b.Run(context.Background(), backends.Experiment{Scenario: gemmRS(2, 2), Strategy: st, Mode: backends.ModeConcurrent, Reps: 1}, nil); err != nil {
			t.Fatal(err)
		}
	}
	run(dmaStrategy)
	f.corruptCopies = true
	_, err := b.Run(context.Background(), backends.Experiment{Scenario: gemmRS(2, 2), Strategy: scenarios.Strategy{CommEngine: scenarios.EngineDMA, CommSMs: 16}, Mode: backends.ModeConcurrent, Reps: 1}, nil)
	if err == nil || !strings.Contains(err.Error(), "wrong result") {
		t.Errorf("the pipelined path after the add-after one was verified: %v, want a wrong result", err)
	}
}

// An all-to-all on the copy engines whose input a GEMM writes
// (GraphOp.FedBy; the one pure copy a GEMM can feed) moves the peers'
// blocks and leaves each rank's own where the GEMM wrote it: placed before
// the run, as an unfed op's is, the own block would hold no run's data
// (the MoE layer's combine all-to-alls failed their check so), and copied
// in the op it would run on the SMs behind the GEMMs. On 2 and 4 GPUs the
// check passes with no same-GPU copy at all, and still catches a wrong
// peer block.
func TestGraphDMAFedAllToAllLeavesItsOwnBlock(t *testing.T) {
	const m, n, k = 16, 48, 32
	for _, gpus := range []int{2, 4} {
		t.Run(fmt.Sprintf("%d GPUs", gpus), func(t *testing.T) {
			sc := scenarios.Scenario{Name: "gemm-then-a2a", GPUs: gpus, Streams: []scenarios.StreamSpec{
				{Name: "compute", Ops: []scenarios.StreamOp{gemmOp("down", m, n, k)}},
				{Name: "comm", Ops: []scenarios.StreamOp{commOp("combine", scenarios.AllToAll, m*n*2, "down")}},
			}}
			g, err := sc.Graph(dmaStrategy)
			if err != nil {
				t.Fatal(err)
			}
			if g.Ops[opIndex(t, g, "combine")].FedBy < 0 {
				t.Fatal("the all-to-all does not read the GEMM's output; the case tests nothing")
			}
			f := newFakeGPU(gpus)
			if _, _, err := runGraphOn(t, f, sc, dmaStrategy, backends.ModeConcurrent); err != nil {
				t.Fatal(err)
			}
			for _, c := range f.copyLog {
				if f.bufs[c.src.b].dev == f.bufs[c.dst.b].dev {
					t.Errorf("a same-GPU copy of %d bytes on GPU %d; the own block stays in place", c.n, f.bufs[c.src.b].dev)
				}
			}
			bad := newFakeGPU(gpus)
			bad.corruptCopies = true
			if _, _, err := runGraphOn(t, bad, sc, dmaStrategy, backends.ModeConcurrent); err == nil || !strings.Contains(err.Error(), "wrong result") {
				t.Errorf("a corrupt peer copy gave %v, want a wrong result", err)
			}
		})
	}
}
