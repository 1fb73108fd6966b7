package cuda

import (
	"context"
	"encoding/binary"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// besideCase is one GEMM and one host copy of c3lab's copy kernel.
type besideCase struct {
	M, N, K int
	DType   scenarios.DType
	Copy    scenarios.Collective
	Bytes   int64
	CTAs    int
}

// besideRow is what the probe measured for one case, medians over the
// repetitions (ns from the stamp before the GEMM).
type besideRow struct {
	Case        string  `json:"case"`
	GEMM        string  `json:"gemm"`
	Copy        string  `json:"copy"`
	CTAs        int     `json:"ctas"`
	Reps        int     `json:"reps"`
	GEMMAlone   float64 `json:"gemm_alone_ns"`
	CopyAlone   float64 `json:"copy_alone_ns"`
	RaceGEMM    float64 `json:"race_gemm_end_ns"`
	RaceCopy    float64 `json:"race_copy_end_ns"`
	LateGEMM    float64 `json:"late_gemm_end_ns"`
	LateCopy    float64 `json:"late_copy_end_ns"`
	LateDelayNs float64 `json:"late_delay_ns"`
}

// TestGPUCopyBesideGEMM asks where c3lab's copy kernel runs when it is
// launched next to a GEMM: with the GEMM (its CTAs share SMs or take some
// first) or after it. Each repetition stamps the GPU's %globaltimer before
// the GEMM, after it (compute stream) and after the copy (comm stream):
//
//   - race: the copy's stream waits on an event after the start gate, as
//     the measurement protocol's compute-first launch does, so GEMM and copy
//     become ready together;
//   - late: the copy is enqueued on its ungated stream lateDelay after the
//     gate opened, once the GEMM holds its SMs, so it can only run during
//     the GEMM on SMs the GEMM's CTAs leave room on.
//
// The cases are the one-GPU scenarios' GEMMs with their copies at several
// CTA counts, and small copies beside other suite GEMMs. C3LAB_BESIDE_OUT
// names the JSON report.
func TestGPUCopyBesideGEMM(t *testing.T) {
	b := openGPU(t)
	const lateDelay = 300 * time.Microsecond
	var cases []besideCase
	for _, g := range []struct {
		m, n, k int
		copy    scenarios.Collective
		bytes   int64
	}{
		{8192, 10240, 8192, scenarios.HostSwap, 48 << 20},
		{8192, 7168, 8192, scenarios.DeviceToHost, 112 << 20},
		{4096, 28672, 8192, scenarios.HostToDevice, 64 << 20},
	} {
		for _, ctas := range []int{4, 16, 64} {
			cases = append(cases, besideCase{g.m, g.n, g.k, scenarios.BF16, g.copy, g.bytes, ctas})
		}
		for _, c := range []scenarios.Collective{scenarios.HostToDevice, scenarios.DeviceToHost} {
			cases = append(cases, besideCase{g.m, g.n, g.k, scenarios.BF16, c, 1 << 20, 8})
		}
	}
	for _, g := range [][3]int{{32768, 8192, 8192}, {8192, 8192, 8192}, {4096, 4096, 4096}, {16384, 10240, 8192}, {4096, 16384, 6144}, {8192, 28672, 1536}, {64, 16384, 6144}} {
		for _, c := range []scenarios.Collective{scenarios.HostToDevice, scenarios.DeviceToHost} {
			cases = append(cases, besideCase{g[0], g[1], g[2], scenarios.BF16, c, 1 << 20, 8})
		}
	}
	var rows []besideRow
	for i, c := range cases {
		row, err := b.copyBesideGEMM(c, 9, lateDelay)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		rows = append(rows, row)
		t.Logf("%-44s alone GEMM %7.1f copy %7.1f | race GEMM %7.1f copy %7.1f | late GEMM %7.1f copy %7.1f (µs)",
			row.Case, row.GEMMAlone/1e3, row.CopyAlone/1e3, row.RaceGEMM/1e3, row.RaceCopy/1e3, row.LateGEMM/1e3, row.LateCopy/1e3)
		writeReport(t, "C3LAB_BESIDE_OUT", "c3lab copy beside GEMM probe", map[string]any{
			"devices": b.Devices(), "cases_done": i + 1, "cases": len(cases), "rows": rows})
	}
}

// copyBesideGEMM measures one case (see TestGPUCopyBesideGEMM): reps
// repetitions of each arrangement after one warm-up, interleaved.
func (b *Backend) copyBesideGEMM(c besideCase, reps int, lateDelay time.Duration) (besideRow, error) {
	sc := scenarios.Scenario{Name: "copy-beside-gemm", GPUs: 1,
		Compute: scenarios.ComputeOp{Kind: scenarios.GEMM, M: c.M, N: c.N, K: c.K, DType: c.DType},
		Comm:    scenarios.CommOp{Collective: c.Copy, Bytes: scenarios.ByteSize(c.Bytes)}}
	st := scenarios.Strategy{CommCTAs: c.CTAs}
	row := besideRow{Case: fmt.Sprintf("%s %s %s ctas %d", sc.Compute, c.Copy, scenarios.ByteSize(c.Bytes), c.CTAs),
		GEMM: sc.Compute.String(), Copy: sc.Comm.String(), CTAs: c.CTAs, Reps: reps, LateDelayNs: float64(lateDelay.Nanoseconds())}
	// A run prepares the scenario's buffers and warms the GEMM's plan.
	if _, err := b.Run(context.Background(), backends.Experiment{Scenario: sc, Strategy: st, Reps: 1}, nil); err != nil {
		return row, err
	}
	var err error
	var samples [6][]int64
	b.do(func() {
		p := b.prepared
		var pl plan
		if pl, err = b.strategyPlan(p, st); err != nil {
			return
		}
		var hb bufID
		if hb, err = b.g.AllocHost(0, 32); err != nil {
			return
		}
		defer b.g.Free(hb)
		var ev eventID
		if ev, err = b.g.Event(0); err != nil {
			return
		}
		for i := 0; i <= reps; i++ {
			for mode := 0; mode < 4; mode++ { // GEMM alone, copy alone, race, late
				var ends [2]int64
				if ends, err = b.besideRep(p, pl, hb, ev, mode, lateDelay); err != nil {
					return
				}
				if i == 0 {
					continue
				}
				switch mode {
				case 0:
					samples[0] = append(samples[0], ends[0])
				case 1:
					samples[1] = append(samples[1], ends[1])
				case 2:
					samples[2], samples[3] = append(samples[2], ends[0]), append(samples[3], ends[1])
				case 3:
					samples[4], samples[5] = append(samples[4], ends[0]), append(samples[5], ends[1])
				}
			}
		}
	})
	if err != nil {
		return row, err
	}
	med := func(v []int64) float64 {
		s := append([]int64(nil), v...)
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
		return float64(s[len(s)/2])
	}
	row.GEMMAlone, row.CopyAlone = med(samples[0]), med(samples[1])
	row.RaceGEMM, row.RaceCopy = med(samples[2]), med(samples[3])
	row.LateGEMM, row.LateCopy = med(samples[4]), med(samples[5])
	return row, nil
}

// besideRep runs one repetition of one arrangement (0 GEMM alone, 1 copy
// alone, 2 race, 3 late) and returns the GEMM's and the copy's end, in ns
// after the stamp that precedes them.
func (b *Backend) besideRep(p *prepared, pl plan, hb bufID, ev eventID, mode int, lateDelay time.Duration) ([2]int64, error) {
	g, ok := b.g.(procGPU)
	if !ok {
		return [2]int64{}, fmt.Errorf("this backend's GPU layer has no %%globaltimer stamp kernel")
	}
	cs, ms := pl.computeStreams[0], pl.commStreams[0]
	b.gateVal++
	v := b.gateVal
	if err := g.GateWait(cs, v); err != nil {
		return [2]int64{}, err
	}
	if err := g.Stamp(cs, bufRef{hb, 0}); err != nil {
		return [2]int64{}, err
	}
	if err := g.Record(ev, cs); err != nil {
		return [2]int64{}, err
	}
	copyOn := ms
	if mode == 1 || mode == 2 {
		if err := g.Wait(ms, ev); err != nil {
			return [2]int64{}, err
		}
	}
	if mode != 1 {
		if err := g.GEMM(cs, pl.gemm, p.a[0], p.bm[0], p.d[0]); err != nil {
			return [2]int64{}, err
		}
		if err := g.Stamp(cs, bufRef{hb, 8}); err != nil {
			return [2]int64{}, err
		}
	}
	if mode == 1 || mode == 2 {
		if err := g.CopyKernel(copyOn, hostCopySegs(p, 0), pl.hostCTAs); err != nil {
			return [2]int64{}, err
		}
		if err := g.Stamp(copyOn, bufRef{hb, 16}); err != nil {
			return [2]int64{}, err
		}
	}
	g.OpenGate(v)
	if mode == 3 {
		// The copy stream is not gated: what is enqueued now runs now.
		time.Sleep(lateDelay)
		if err := g.CopyKernel(copyOn, hostCopySegs(p, 0), pl.hostCTAs); err != nil {
			return [2]int64{}, err
		}
		if err := g.Stamp(copyOn, bufRef{hb, 16}); err != nil {
			return [2]int64{}, err
		}
	}
	if err := g.Synchronize(0); err != nil {
		return [2]int64{}, err
	}
	raw := make([]byte, 24)
	if err := g.Download(hb, raw); err != nil {
		return [2]int64{}, err
	}
	t0 := int64(binary.LittleEndian.Uint64(raw[0:]))
	var ends [2]int64
	if mode != 1 {
		ends[0] = int64(binary.LittleEndian.Uint64(raw[8:])) - t0
	}
	if mode != 0 {
		ends[1] = int64(binary.LittleEndian.Uint64(raw[16:])) - t0
	}
	return ends, nil
}
