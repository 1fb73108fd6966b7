package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/backends/sim"
	"github.com/c3lab/c3lab/scenarios"
)

// TestCheckFits refuses a sweep whose scenarios, at the GPU count --gpus
// gives them, outgrow the device's memory, naming the first and counting
// the others; the suite fits an H200 at every count the sweep offers.
func TestCheckFits(t *testing.T) {
	h200 := sim.New(sim.H200()).Capabilities().Limits
	small := h200
	small.Device, small.MemoryBytes = "a 6 GiB GPU", 6<<30
	suite := scenarios.Builtin()
	at := func(gpus int) []scenarios.Scenario {
		out := append([]scenarios.Scenario(nil), suite...)
		for i := range out {
			out[i].GPUs = gpus
		}
		return out
	}
	big := scenarios.Scenario{Name: "big-ag", GPUs: 8, Compute: suite[0].Compute, Comm: scenarios.CommOp{Collective: scenarios.AllGather, Bytes: 16 << 30}}
	for _, tc := range []struct {
		name string
		list []scenarios.Scenario
		lim  scenarios.Limits
		want []string // fragments of the refusal; none: it fits
	}{
		{"the suite on 2 H200s", at(2), h200, nil},
		{"the suite on 8 H200s", at(8), h200, nil},
		{"one scenario outgrows an H200 on 8 GPUs", []scenarios.Scenario{suite[0], big}, h200,
			[]string{"big-ag on 8 GPUs:", "144.0 GiB", "has 139.8 GiB", "fewer gpus"}},
		{"the suite on 8 small GPUs", at(8), small, []string{"on 8 GPUs:", "but a 6 GiB GPU has 6.0 GiB", "more scenarios do not fit"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkFits(tc.list, tc.lim)
			if len(tc.want) == 0 {
				if err != nil {
					t.Errorf("refused: %v", err)
				}
				return
			}
			if _, usage := err.(usageError); !usage {
				t.Fatalf("error %v, want a usage error", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q lacks %q", err, w)
				}
			}
		})
	}
}

// TestRunRefusesWhatDoesNotFit runs a file asking for 1 TiB per rank on 8
// GPUs: exit 2, the line of the field, the device's memory.
func TestRunRefusesWhatDoesNotFit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "huge.yaml")
	src := "name: huge\ngpus: 8\ncompute:\n  kind: gemm\n  m: 1024\n  n: 1024\n  k: 1024\n  dtype: bf16\ncomm:\n  collective: all-gather\n  bytes: 1TiB\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := call(t, "run", "--backend", "sim", "--scenario", path)
	if code != 2 || !strings.Contains(errOut, "huge.yaml:11:") || !strings.Contains(errOut, "139.8 GiB") {
		t.Errorf("exit %d, stderr %q; want exit 2 at huge.yaml:11 with the H200's memory", code, errOut)
	}
}
