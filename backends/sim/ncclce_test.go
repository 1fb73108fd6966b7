package sim

import (
	"testing"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// TestNCCLCECopiesWaitForEarlierKernels shows how the model runs NCCL's
// copy-engine path beside a GEMM, as 24 of 24 pairs on 2 x H200 ran it
// (ncclCEWaitsFor): launched after the GEMM, its copies start only when the
// GEMM has ended, even when the GEMM leaves SMs free; its setup holds no SM
// and runs beside the GEMM; launched before the GEMM, its copies wait for
// nothing.
func TestNCCLCECopiesWaitForEarlierKernels(t *testing.T) {
	b := New(H200())
	for _, tc := range []struct {
		name    string
		gemm    scenarios.ComputeOp
		launch  scenarios.LaunchOrder
		waits   bool
		overlap bool // the setup hides behind the GEMM: T_c3 < T_comp + T_comm
	}{
		{"a decode GEMM that leaves SMs free, GEMM first", scenarios.ComputeOp{Kind: scenarios.GEMM, M: 64, N: 16384, K: 6144, DType: scenarios.BF16}, scenarios.ComputeFirst, true, true},
		{"a GEMM that holds every SM, GEMM first", scenarios.ComputeOp{Kind: scenarios.GEMM, M: 8192, N: 8192, K: 8192, DType: scenarios.BF16}, scenarios.ComputeFirst, true, true},
		{"the decode GEMM, collective first", scenarios.ComputeOp{Kind: scenarios.GEMM, M: 64, N: 16384, K: 6144, DType: scenarios.BF16}, scenarios.CommFirst, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := scenarios.Scenario{Name: "nccl-ce", GPUs: 2, Compute: tc.gemm,
				Comm: scenarios.CommOp{Collective: scenarios.AllToAll, Bytes: 96 << 20}}
			st := scenarios.Strategy{CommEngine: scenarios.EngineNCCLCE, Launch: tc.launch}
			o, err := b.Simulate(backends.Experiment{Scenario: sc, Strategy: st, Mode: backends.ModeConcurrent, Reps: 1})
			if err != nil {
				t.Fatal(err)
			}
			var gemmEnd, copyStart int64 = -1, -1
			for _, s := range o.Spans {
				switch {
				case s.Op == backends.OpCompute:
					gemmEnd = max(gemmEnd, s.End)
				case s.Kind == "copy" && (copyStart < 0 || s.Start < copyStart):
					copyStart = s.Start
				}
			}
			if gemmEnd < 0 || copyStart < 0 {
				t.Fatalf("no GEMM or no copy span: %+v", o.Spans)
			}
			if waited := copyStart >= gemmEnd; waited != tc.waits {
				t.Errorf("copies start at %d ns, the GEMM ends at %d ns: waited %v, want %v", copyStart, gemmEnd, waited, tc.waits)
			}
			alone := func(m backends.Mode) int64 {
				t.Helper()
				a, err := b.Simulate(backends.Experiment{Scenario: sc, Strategy: st, Mode: m, Reps: 1})
				if err != nil {
					t.Fatal(err)
				}
				return a.Rep.Compute + a.Rep.Comm
			}
			serial := alone(backends.ModeCompute) + alone(backends.ModeComm)
			if hid := o.Rep.Wall < serial; hid != tc.overlap {
				t.Errorf("T_c3 %d ns against %d ns serial: overlap %v, want %v", o.Rep.Wall, serial, hid, tc.overlap)
			}
		})
	}
}
