package kineto

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

// rawGPU reads a trace's GPU activities with encoding/json the plain way
// (the whole file at once), for checks independent of the streaming
// reader.
func rawGPU(t *testing.T, path string) []ev {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []struct {
			Ph, Cat, Name string
			Ts, Dur       float64
		} `json:"traceEvents"`
	}
	if err := json.NewDecoder(zr).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	var out []ev
	for _, e := range doc.TraceEvents {
		if e.Ph == "X" && (e.Cat == "kernel" || e.Cat == "gpu_memcpy" || e.Cat == "gpu_memset") {
			out = append(out, ev{cat: e.Cat, name: e.Name, ts: e.Ts, dur: e.Dur})
		}
	}
	return out
}

// TestRealTraces reads the traces recorded on an H200 (testdata/README.md):
// the counts match a plain read of the file, the overlap of communication
// with compute matches one computed from the raw events, and the reports
// match their golden files.
func TestRealTraces(t *testing.T) {
	for _, tc := range []struct {
		file          string
		ops, comm     int
		gemms         string
		scenarioError string
	}{
		{"h200-offload.json.gz", 36, 6, "gemm 4096x4096x4096 bf16", ""},
		{"h200-nccl-1rank.json.gz", 27, 0, "gemm 4096x4096x4096 bf16", "no communication op"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := fixture(t, tc.file)
			tr, err := ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			raw := rawGPU(t, path)
			if len(tr.Ops) != len(raw) || len(tr.Ops) != tc.ops {
				t.Fatalf("%d GPU activities, a plain read finds %d, want %d", len(tr.Ops), len(raw), tc.ops)
			}
			tr.File = tc.file
			r := mustAnalyze(t, tr, Select{})
			if r.CommOps != tc.comm {
				t.Errorf("%d communication activities, want %d", r.CommOps, tc.comm)
			}
			// c3lab's overlap (copies to and from the host are
			// communication) from the raw events, by the cut-and-count way.
			var rel []ev
			for _, e := range raw {
				c := e
				c.cat = "kernel"
				switch {
				case strings.Contains(e.name, "HtoD") || strings.Contains(e.name, "DtoH"):
					c.name = "nccl-like copy"
				case strings.HasPrefix(e.name, "nccl"):
				default:
					c.name = "compute " + e.name
				}
				rel = append(rel, c)
			}
			want, ok := refOverlap(rel)
			switch {
			case ok != (r.Overlap != nil):
				t.Errorf("overlap %v, reference defined: %v", r.Overlap, ok)
			case ok && abs(*r.Overlap-want) > 0.005:
				t.Errorf("overlap %v, from the raw events %v", *r.Overlap, want)
			}
			hta, hok := refOverlap(raw)
			if hok != (r.HTAOverlap != nil) || (hok && abs(*r.HTAOverlap-hta) > 0.005) {
				t.Errorf("HTA overlap %v, from the raw events %v (%v)", r.HTAOverlap, hta, hok)
			}
			if !strings.Contains(fmt.Sprint(r.Classes), tc.gemms) {
				t.Errorf("no %s among %v", tc.gemms, r.Classes)
			}
			var b strings.Builder
			WriteText(&b, []*Report{r}, 100)
			golden(t, strings.TrimSuffix(tc.file, ".json.gz")+".txt", b.String())
			step := mustAnalyze(t, tr, Select{Step: "2"})
			_, _, err = step.Scenario(ScenarioOptions{})
			if tc.scenarioError != "" {
				if err == nil || !strings.Contains(err.Error(), tc.scenarioError) {
					t.Errorf("scenario: %v, want %q", err, tc.scenarioError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			im, err := step.Import(ScenarioOptions{})
			if err != nil {
				t.Fatal(err)
			}
			checkScenario(t, im.Scenario)
			data, _ := json.Marshal(im.Scenario.Streams)
			golden(t, strings.TrimSuffix(tc.file, ".json.gz")+"-step2-streams.json", string(data)+"\n")
		})
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
