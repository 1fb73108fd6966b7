package sim

import (
	"fmt"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/scenarios"
)

// TestNoEffect asks the model whether a knob can change a scenario: it
// must say so, with the profile's numbers, exactly where both strategies
// give the same times, and stay silent where they differ.
func TestNoEffect(t *testing.T) {
	p := H200()
	b := New(p)
	// Without a cost per copy stream, a split transfer and a whole one
	// differ only in bandwidth, which the link caps.
	free := p
	free.CopyStreamSyncOverhead = 0
	noStreamCost := New(free)
	dma := scenarios.Strategy{CommEngine: scenarios.EngineDMA}
	ces := func(n int) scenarios.Strategy { s := dma; s.CopyEngines = n; return s }
	small := gemmAG()
	small.Comm.Bytes = 16 << 20
	link := fmt.Sprintf("%.0f GB/s", p.LinkBandwidth*p.LinkEfficiencyCE/1e9)
	engine := fmt.Sprintf("%.0f GB/s", p.CopyEngineBandwidth/1e9)
	for _, tc := range []struct {
		name     string
		sc       scenarios.Scenario
		from, to scenarios.Strategy
		want     []string // fragments of the reason; none: the knob matters
		b        *Backend // nil: the built-in H200
	}{
		{"one engine already outruns the link on 2 GPUs", gemmAG(), dma, ces(1), []string{"one copy engine moves " + engine, link, "cannot speed up the all-gather"}, noStreamCost},
		{"and back to all engines", gemmAG(), ces(1), dma, []string{engine, link, "the compute op's time next to it moves"}, noStreamCost},
		{"one stream instead of three saves its sync", gemmAG(), dma, ces(1), nil, nil},
		{"a transfer too small to split rides one engine", small, ces(1), ces(2), []string{"1 transfer of 16.0 MiB", "64 MiB", "cannot change the run"}, nil},
		{"a CTA cap at NCCL's own count", gemmAG(), scenarios.Strategy{}, scenarios.Strategy{CommCTAs: p.CommCTAs[scenarios.AllGather]},
			[]string{fmt.Sprintf("%d CTAs", p.CommCTAs[scenarios.AllGather]), "cannot change the run"}, nil},
		{"comm first matters next to a GEMM", gemmAG(), scenarios.Strategy{}, scenarios.Strategy{Launch: scenarios.CommFirst}, nil, nil},
		{"a CTA cap of 8 matters", gemmAG(), scenarios.Strategy{}, scenarios.Strategy{CommCTAs: 8}, nil, nil},
		{"dma matters", gemmAG(), scenarios.Strategy{}, dma, nil, nil},
		{"a scenario the model refuses", func() scenarios.Scenario { s := gemmAG(); s.Profile = "mi300x"; return s }(), dma, ces(1), nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := b
			if tc.b != nil {
				sb = tc.b
			}
			got := sb.NoEffect(tc.sc, tc.from, tc.to)
			if len(tc.want) == 0 {
				if got != "" {
					t.Errorf("claims no effect: %q", got)
				}
				return
			}
			if got == "" {
				t.Fatal("says nothing")
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("%q lacks %q", got, w)
				}
			}
			if strings.Contains(got, "\n") {
				t.Errorf("not one line: %q", got)
			}
		})
	}
}
