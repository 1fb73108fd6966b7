package scenarios

import (
	"errors"
	"strings"
	"testing"
)

// A host copy runs on one GPU; a collective needs two, and on a one-GPU
// node the message says what does run there.
func TestValidateGPUCounts(t *testing.T) {
	one := h200()
	one.MaxGPUs = 1
	gemm := ComputeOp{Kind: GEMM, M: 4096, N: 4096, K: 4096, DType: BF16}
	tests := []struct {
		name string
		coll Collective
		gpus int
		lim  Limits
		want string // "" = valid
	}{
		{"h2d on one GPU", HostToDevice, 1, h200(), ""},
		{"d2h on one GPU", DeviceToHost, 1, one, ""},
		{"swap on eight GPUs", HostSwap, 8, h200(), ""},
		{"host copy on no GPU", DeviceToHost, 0, h200(), "gpus is 0; a host copy needs at least 1"},
		{"all-gather on one GPU", AllGather, 1, h200(), "a collective needs at least 2 (host copies, h2d, d2h and swap, run on 1)"},
		{"all-gather on a one-GPU node", AllGather, 2, one, "has only 1 GPU here, and a collective needs 2; host copies (h2d, d2h, swap) run on 1 GPU, and --backend sim"},
		{"host copies past the node", HostToDevice, 2, one, "allows at most 1; allowed 1..1"},
		{"collective past the node", AllReduce, 9, h200(), "allows at most 8; allowed 2..8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := Scenario{Name: "x", GPUs: tt.gpus, Compute: gemm, Comm: CommOp{Collective: tt.coll, Bytes: 64 << 20}}
			err := Validate(sc, tt.lim)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate = %v, want valid", err)
				}
				return
			}
			var ve *ValidationError
			if !errors.As(err, &ve) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate = %v, want a problem containing %q", err, tt.want)
			}
			if ve.Fields[0].Path != "$.gpus" {
				t.Errorf("problem at %s, want $.gpus", ve.Fields[0].Path)
			}
		})
	}
}

// NCCL's copy-engine path is for collectives between GPUs.
func TestValidateHostCopyEngines(t *testing.T) {
	sc := Scenario{Name: "x", GPUs: 1, Compute: ComputeOp{Kind: Stream, Bytes: 1 << 20}, Comm: CommOp{Collective: HostSwap, Bytes: 1 << 20}}
	for _, tt := range []struct {
		st   Strategy
		want string
	}{
		{Strategy{CommEngine: EngineDMA, CopyEngines: 2}, ""},
		{Strategy{CommEngine: EngineSM, CommCTAs: 16, CommSMs: 16}, ""},
		{Strategy{CommEngine: EngineNCCLCE}, "NCCL's copy-engine path covers all-gather and all-to-all, not swap"},
	} {
		sc.Strategy = tt.st
		err := Validate(sc, h200())
		if (err == nil) != (tt.want == "") || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%s: Validate = %v, want %q", tt.st, err, tt.want)
		}
	}
}

// What one GPU moves over PCIe, each way.
func TestHostBytes(t *testing.T) {
	for _, tt := range []struct {
		c                CommOp
		toHost, fromHost int64
		size             int64
		link             float64
	}{
		{CommOp{HostToDevice, 1 << 20}, 0, 1 << 20, 1 << 20, 0},
		{CommOp{DeviceToHost, 1 << 20}, 1 << 20, 0, 1 << 20, 0},
		{CommOp{HostSwap, 1 << 20}, 1 << 20, 1 << 20, 2 << 20, 0},
		{CommOp{AllGather, 1 << 20}, 0, 0, 2 << 20, 1 << 20},
	} {
		to, from := tt.c.HostBytes()
		if to != tt.toHost || from != tt.fromHost || tt.c.SizeBytes(2) != tt.size || tt.c.LinkBytes(2) != tt.link {
			t.Errorf("%s: HostBytes %d/%d SizeBytes %d LinkBytes %g, want %d/%d %d %g", tt.c, to, from, tt.c.SizeBytes(2), tt.c.LinkBytes(2), tt.toHost, tt.fromHost, tt.size, tt.link)
		}
		if tt.c.Collective.IsHostCopy() != (tt.c.Collective.MinGPUs() == 1) {
			t.Errorf("%s: MinGPUs %d", tt.c, tt.c.Collective.MinGPUs())
		}
	}
}
