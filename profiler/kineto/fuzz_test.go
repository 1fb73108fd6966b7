package kineto

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"strings"
	"testing"
)

// FuzzRead feeds the reader arbitrary bytes: it must return a trace or a
// *kineto.Error (never panic), and whatever it reads must analyse and
// render without panicking, and write a scenario or say why not.
func FuzzRead(f *testing.F) {
	for _, name := range []string{"synthetic-tp2-rank0.json", "h200-offload.json.gz"} {
		data, err := os.ReadFile(fixture(f, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		f.Add(data[:len(data)/3])
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		zw.Write(data)
		zw.Close()
		f.Add(z.Bytes())
	}
	f.Add(synth(f, 2, ev{cat: "kernel", name: gemmK, ts: 0, dur: 100, stream: 7}, ev{cat: "kernel", name: agK, ts: 50, dur: 100, stream: 23}))
	f.Add([]byte(`[{"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pinned -> Device)","ts":"1.5","dur":2,"args":{"bytes":"64","stream":"stream 3"}}]`))
	f.Add([]byte(`{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"aten::mm","ts":1,"dur":1,"args":{"External id":3,"Input Dims":[[2,3],[3,4]],"Input type":["float","float"]}},{"ph":"X","cat":"kernel","name":"gemm","ts":2,"dur":1,"args":{"External id":3}}]}`))
	f.Add([]byte(`{"traceEvents":[{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","ts":0,"dur":5}],"distributedInfo":{"rank":"x"}}`))
	f.Add([]byte(`{}`))
	f.Add([]byte{0x1f, 0x8b, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := Read(bytes.NewReader(data), "fuzz.json")
		if err != nil {
			var ke *Error
			if !errors.As(err, &ke) {
				t.Fatalf("error %v is not a *kineto.Error", err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of more than one line: %q", err)
			}
			return
		}
		for _, sel := range []Select{{}, {Step: "1"}, {From: 1000, To: 5000}} {
			r, err := Analyze(tr, sel)
			if err != nil {
				continue
			}
			var b strings.Builder
			if err := WriteText(&b, []*Report{r}, 80); err != nil {
				t.Fatal(err)
			}
			if err := WriteJSON(&b, []*Report{r}); err != nil {
				t.Fatalf("WriteJSON: %v", err)
			}
			sc, _, err := r.Scenario(ScenarioOptions{})
			if err != nil {
				continue
			}
			checkScenario(t, sc)
		}
	})
}
