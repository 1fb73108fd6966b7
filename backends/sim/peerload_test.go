package sim

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
)

// gemmLong is a compute-bound GEMM that holds every SM for about 1.4 ms
// next to a reduction of bytes.
func gemmLong(coll scenarios.Collective, bytes scenarios.ByteSize) scenarios.Scenario {
	sc := gemmAG()
	sc.Name = "gemm-long-" + string(coll)
	sc.Comm = scenarios.CommOp{Collective: coll, Bytes: bytes}
	return sc
}

// The p2p-load model: alone, the kernel's CTAs bound it (fewer CTAs,
// slower; enough CTAs, the link's copy-engine share); beside a GEMM that
// holds every SM it waits for SMs unless it owns a partition launched
// first, where it needs no staging copy and beats the staged copy-engine
// reduction pipelined on the same partition; an all-reduce adds a gather
// on the copy engines.
func TestPeerLoadModel(t *testing.T) {
	rs := gemmLong(scenarios.ReduceScatter, 64<<20)
	p2p := func(st scenarios.Strategy) scenarios.Strategy {
		st.CommEngine = scenarios.EngineP2PLoad
		return st
	}
	b := New(H200())
	if !b.Capabilities().Has(scenarios.CapPeerLoad) {
		t.Fatal("the simulator lacks the p2p-load capability")
	}
	// Launched first beside a tiny stream op, the collective has the GPU:
	// its time in C3 is its own under the CTA cap (the isolated baseline
	// drops the cap).
	tiny := rs
	tiny.Compute = scenarios.ComputeOp{Kind: scenarios.Stream, Bytes: 1 << 20}
	first := scenarios.Strategy{Launch: scenarios.CommFirst}
	capped := func(ctas int) float64 {
		st := p2p(first)
		st.CommCTAs = ctas
		return measure(t, tiny, st).TCommInC3.Median
	}
	few, many, def := capped(4), capped(64), measure(t, tiny, p2p(first)).TCommInC3.Median
	if !(few > 2*many) {
		t.Errorf("4 CTAs took %.0f µs and 64 took %.0f µs; the CTAs should bound it", few/1e3, many/1e3)
	}
	p := H200()
	link := rs.Comm.LinkBytes(2) / (p.LinkBandwidth * p.LinkEfficiencyCE)
	if many < link*1e9 {
		t.Errorf("64 CTAs moved the block in %.0f µs, faster than the link allows (%.0f µs)", many/1e3, link*1e6)
	}
	if def > few || def < many {
		t.Errorf("the default grid (%d CTAs) took %.0f µs, outside 64 CTAs' %.0f and 4 CTAs' %.0f", peerLoadCTAs, def/1e3, many/1e3, few/1e3)
	}
	behind := measure(t, rs, p2p(scenarios.Strategy{}))
	part := measure(t, rs, p2p(scenarios.Strategy{Launch: scenarios.CommFirst, CommSMs: 16}))
	staged := measure(t, rs, scenarios.Strategy{CommEngine: scenarios.EngineDMA, Launch: scenarios.CommFirst, CommSMs: 16})
	if !(part.CommSlowdown < behind.CommSlowdown) {
		t.Errorf("comm slowdown %.2fx in a 16-SM partition launched first, %.2fx behind the GEMM; the partition should help", part.CommSlowdown, behind.CommSlowdown)
	}
	if !(part.TC3.Median <= staged.TC3.Median) {
		t.Errorf("p2p-load on 16 SMs: T_c3 %.0f µs; the staged copy-engine reduction on 16 SMs %.0f µs", part.TC3.Median/1e3, staged.TC3.Median/1e3)
	}
	var kernel bool
	for _, e := range part.Explain[backends.ModeConcurrent] {
		if e.Op == backends.OpComm && strings.HasPrefix(e.Label, "p2p-load") {
			kernel = true
		}
	}
	if !kernel {
		t.Error("no p2p-load kernel in the explanation")
	}
	if got := ctaGBs(p, &job{peerLoad: true, coll: scenarios.ReduceScatter}); got != DefaultPeerLoadCTABandwidth/1e9 {
		t.Errorf("a p2p-load CTA is explained as moving %.1f GB/s, want %.0f", got, DefaultPeerLoadCTABandwidth/1e9)
	}

	ar := gemmLong(scenarios.AllReduce, 64<<20)
	arRes := measure(t, ar, p2p(scenarios.Strategy{}))
	rsAlone := measure(t, gemmLong(scenarios.ReduceScatter, 32<<20), p2p(scenarios.Strategy{}))
	if !(arRes.TComm.Median > rsAlone.TComm.Median) {
		t.Errorf("an all-reduce of 64 MiB (%.0f µs) should take longer than its reduce-scatter half (%.0f µs): it gathers after it", arRes.TComm.Median/1e3, rsAlone.TComm.Median/1e3)
	}
	ce := false
	for _, e := range arRes.Explain[backends.ModeComm] {
		if strings.HasPrefix(e.Label, "copy ") {
			ce = true
		}
	}
	if !ce {
		t.Error("the p2p-load all-reduce gathered on no copy engine")
	}

	if _, err := profiler.Measure(context.Background(), b, gemmAG(), p2p(scenarios.Strategy{}), profiler.Options{Reps: 1}); err == nil || !strings.Contains(err.Error(), "p2p-load") {
		t.Errorf("a p2p-load all-gather: %v", err)
	}
}

// A profile without PeerLoadCTABandwidth (0, or a file that predates it)
// runs p2p-load on the model default; the built-in sets that default.
func TestPeerLoadDefaultConstant(t *testing.T) {
	if got := H200().PeerLoadCTABandwidth; got != DefaultPeerLoadCTABandwidth {
		t.Errorf("H200's PeerLoadCTABandwidth = %g, want the default %g", got, DefaultPeerLoadCTABandwidth)
	}
	if H200Provenance()["PeerLoadCTABandwidth"].Source != SourceModel {
		t.Error("PeerLoadCTABandwidth's provenance is not model")
	}
	rs := gemmLong(scenarios.ReduceScatter, 64<<20)
	st := scenarios.Strategy{CommEngine: scenarios.EngineP2PLoad}
	old := H200()
	old.PeerLoadCTABandwidth = 0
	a, err := profiler.Measure(context.Background(), New(old), rs, st, profiler.Options{Reps: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := measure(t, rs, st)
	if a.TComm.Median != want.TComm.Median {
		t.Errorf("a profile without the constant: T_comm %.0f ns, the default's %.0f ns", a.TComm.Median, want.TComm.Median)
	}
	// A file without a base that leaves it out still loads.
	prov := H200Provenance()
	delete(prov, "PeerLoadCTABandwidth")
	full := MarshalProfileFile(ProfileFile{Profile: H200(), Provenance: prov}, "test")
	var kept [][]byte
	for _, l := range bytes.Split(full, []byte("\n")) {
		if !bytes.Contains(l, []byte("PeerLoadCTABandwidth:")) {
			kept = append(kept, l)
		}
	}
	short := bytes.Join(kept, []byte("\n"))
	if bytes.Contains(short, []byte("PeerLoadCTABandwidth")) || bytes.Contains(short, []byte("\nbase:")) {
		t.Fatal("the test file still sets PeerLoadCTABandwidth or has a base")
	}
	pf, err := ReadProfileFile(short)
	if err != nil {
		t.Fatalf("a full profile file without PeerLoadCTABandwidth: %v", err)
	}
	if pf.Profile.peerLoadCTABandwidth() != DefaultPeerLoadCTABandwidth {
		t.Errorf("it runs p2p-load at %g per CTA, want the default", pf.Profile.peerLoadCTABandwidth())
	}
}
