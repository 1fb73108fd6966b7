package sim

import (
	"encoding/json"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/scenarios"
)

// dramCounterFile is what ncu's DRAM counters read for the first cuBLASLt
// kernel of each of 25 suite GEMMs on one H200, alone on the whole GPU
// after a cache flush (results/2026-12-04-h200x1-s23, call 8, ncu_dram.py).
const dramCounterFile = "../cuda/results/2026-12-04-h200x1-s23/call8/gemm-dram.json"

// dramReading is one shape of dramCounterFile.
type dramReading struct {
	Shape string  `json:"shape"`
	DType string  `json:"dtype"`
	Read  float64 `json:"dram_read_bytes"`
	Write float64 `json:"dram_write_bytes"`
}

// TestGEMMReadsMatchDRAMCounters checks the wave-panel traffic model
// (gemmModel) against the H200's DRAM counters: the bytes a GEMM reads
// from HBM set its share of HBM beside copies and collectives. Reads are
// compared, not writes: an output that fits in L2 is still there when the
// kernel ends, so its writes reach HBM later (the 8192x1280x256 GEMM wrote
// 0.1 of its 21 MB). The model's reads are its traffic's A and B part.
// On every shape the model must be nearer the counters than reading A and
// B once, and over the 25 shapes within 10 % at the median (measured over
// model: 1.06, 0.58-1.49; small K read less than the model says, long K
// more).
func TestGEMMReadsMatchDRAMCounters(t *testing.T) {
	raw, err := os.ReadFile(dramCounterFile)
	if err != nil {
		t.Fatal(err)
	}
	var readings []dramReading
	if err := json.Unmarshal(raw, &readings); err != nil {
		t.Fatal(err)
	}
	p := H200()
	var ratios []float64
	off := func(a, b float64) float64 { return math.Abs(math.Log(a / b)) }
	for _, r := range readings {
		dims := strings.Split(r.Shape, "x")
		if len(dims) != 3 {
			t.Fatalf("shape %q", r.Shape)
		}
		var mnk [3]int
		for i, d := range dims {
			if mnk[i], err = strconv.Atoi(d); err != nil {
				t.Fatalf("shape %q: %v", r.Shape, err)
			}
		}
		c := scenarios.ComputeOp{Kind: scenarios.GEMM, M: mnk[0], N: mnk[1], K: mnk[2], DType: scenarios.DType(r.DType)}
		l := p.gemmLaunch(c, p.SMs)
		g := gemmModel(p, c, l, p.SMs)
		reads, least := g.reads, g.readsOnce
		ratio := r.Read / reads
		ratios = append(ratios, ratio)
		if off(r.Read, reads) > off(r.Read, least) {
			t.Errorf("%s %s: the model's %.1f MB is further from the %.1f MB read than A and B once (%.1f MB)",
				r.Shape, r.DType, reads/1e6, r.Read/1e6, least/1e6)
		}
		t.Logf("%-18s %s: read %7.1f MB, model %7.1f MB (x%.2f), least %7.1f MB; tiles %dx%d split %d",
			r.Shape, r.DType, r.Read/1e6, reads/1e6, ratio, least/1e6, l.TileM, l.TileN, l.SplitK)
	}
	if len(ratios) != 25 {
		t.Fatalf("%d shapes read; the file has 25", len(ratios))
	}
	slices.Sort(ratios)
	med := ratios[len(ratios)/2]
	t.Logf("measured over model: median %.2f, range %.2f-%.2f (%d shapes)", med, ratios[0], ratios[len(ratios)-1], len(ratios))
	if off(med, 1) > math.Log(1.1) {
		t.Errorf("the model's reads are off the counters by x%.2f at the median; want within 10 %%", med)
	}
}
