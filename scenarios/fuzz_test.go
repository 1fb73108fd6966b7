package scenarios

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

// FuzzParse feeds Parse arbitrary bytes, one-pair (format 1) and stream
// (format 2) scenarios and their breakages. It must never panic; whatever
// it rejects must come back as a *FileError of well-formed one-line
// problems; whatever it accepts must be valid, agree with goccy's own
// strict decoder (a format-2 scenario with its lead ops filled in), and
// survive Marshal and Parse unchanged.
func FuzzParse(f *testing.F) {
	breakages := []struct{ old, new string }{
		{"gpus: 2", "gpus: two"},
		{"gpus: 2", "gpus: 2.5"},
		{"gpus: 2", `gpus: "2"`},
		{"gpus: 2", "gpus: [2]"},
		{"name:", "nmae:"},
		{"MiB", "MiBs"},
		{"MiB", ".5B"},
		{"bf16", "bf32"},
		{"all-", "al-"},
		{"compute:", "compute: 5"},
		{"  kind: gemm\n", ""},
		{"\n  ", "\n\t"},
		{"\n", "\n---\n"},
		{": ", ":"},
	}
	for _, sc := range Builtin() {
		out, err := Marshal(sc)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(out)
		f.Add(out[:len(out)/2])
		f.Add(append(bytes.Clone(out), "strategy:\n  comm_sms: 12\n  launch: comm-first\n"...))
		for _, b := range breakages {
			f.Add(bytes.Replace(out, []byte(b.old), []byte(b.new), 1))
		}
	}
	for _, text := range []string{"a: b # c", "\"quoted\" 'single' \\ back", "two\nlines\n", "\ttab", "null", ".inf", "? x", "\u00e9\U0001F600"} {
		sc := Builtin()[0]
		sc.Description, sc.Source = text, "- "+text
		out, err := Marshal(sc)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(out)
	}
	for _, s := range []string{
		"", "~", "- a\n", "hello", "{", "[[[[", "a: &a [*a]", "<<: {name: x}", "\x00\xff",
		`{name: x, gpus: 2, compute: {kind: stream, bytes: 1GiB}, comm: {collective: all-to-all, bytes: 16MiB}}`,
		"name: x\ngpus: &g 2\ncompute: {kind: stream, bytes: 1KiB}\ncomm: {collective: all-reduce, bytes: 1MiB}\nreps: *g\n",
		"name: x\ngpus: 2\ncompute: {kind: gemm, m: 64, n: 64, k: 64, dtype: bf16}\ncomm: {collective: reduce-scatter, bytes: 1MiB}\nstrategy: {launch: comm-first, comm_sms: 16, comm_ctas: 16, comm_engine: p2p-load}\n",
		"name: x\ngpus: 2\ncompute: {kind: stream, bytes: 1KiB}\ncomm: {collective: all-gather, bytes: 1MiB}\nstrategy: {comm_engine: p2p-load}\n",
	} {
		f.Add([]byte(s))
	}
	for _, src := range v2Seeds() {
		f.Add([]byte(src))
		for _, b := range v2Breakages {
			f.Add([]byte(strings.Replace(src, b.old, b.new, 1)))
		}
	}
	lim := h200()
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := Parse(data, "fuzz.yaml", lim)
		if err != nil {
			var fe *FileError
			if !errors.As(err, &fe) || len(fe.Problems) == 0 {
				t.Fatalf("Parse error %v (%T) is not a *FileError with problems", err, err)
			}
			for _, p := range fe.Problems {
				if p.Line < 1 || p.Col < 1 || p.Msg == "" || strings.ContainsAny(p.Msg, "\n\r") {
					t.Fatalf("malformed problem %+v", p)
				}
			}
			return
		}
		if err := Validate(sc, lim); err != nil {
			t.Fatalf("Parse accepted an invalid scenario: %v", err)
		}
		var strict Scenario
		src := bytes.TrimPrefix(data, []byte("\uFEFF"))
		if err := yaml.UnmarshalWithOptions(src, &strict, yaml.Strict()); err != nil {
			t.Fatalf("goccy's strict decoder rejects what Parse accepted: %v", err)
		}
		if !strict.WithLead().Equal(sc) {
			t.Fatalf("Parse and goccy disagree:\n parse %+v\n goccy %+v", sc, strict)
		}
		out, err := Marshal(sc)
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		back, err := Parse(out, "marshalled.yaml", lim)
		if err != nil {
			t.Fatalf("Parse(Marshal(sc)): %v\n%s", err, out)
		}
		if !back.Equal(sc) {
			t.Fatalf("round trip changed the scenario\n got %+v\nwant %+v\n%s", back, sc, out)
		}
	})
}

// v2Seeds are format-2 scenarios for the fuzzer: the base pair decomposed,
// streams with counts, instance references ([i] and [3]), a strategy that
// decomposes, and flow and compact list styles.
func v2Seeds() []string {
	return []string{
		baseV2,
		baseV2 + "strategy:\n  decompose: 8\n  launch: comm-first\n",
		`name: streams
gpus: 2
streams:
- name: compute
  ops:
  - {name: g, kind: gemm, m: 4096, n: 4096, k: 4096, dtype: bf16, count: 16}
- name: comm
  ops:
  - {name: ag, kind: all-gather, bytes: 4MiB, count: 64}
  - name: rs
    kind: reduce-scatter
    bytes: 4MiB
    count: 16
    after: ["g[i]"]
  - name: tail
    kind: all-reduce
    bytes: 1MiB
    after:
    - g[3]
    - rs
`,
		`{name: off, gpus: 1, streams: [{name: c, ops: [{kind: stream, bytes: 1GiB}]}, {name: p, ops: [{kind: swap, bytes: 64MiB, after: [c.1]}]}]}`,
		`name: moe
gpus: 4
streams:
  - name: a2a
    ops:
      - {name: dispatch, kind: all-to-all, bytes: 64MiB}
      - {name: combine, kind: all-to-all, bytes: 64MiB, after: [experts]}
  - name: experts
    ops:
      - {name: experts, kind: gemm, m: 8192, n: 4096, k: 4096, dtype: fp8, count: 4, after: [dispatch]}
`,
	}
}

// v2Breakages turn a valid format-2 scenario into a broken one: cycles,
// unknown names, unquoted references, chunks that do not divide, lists
// where there should be none and the other way round.
var v2Breakages = []struct{ old, new string }{
	{"bytes: 64MiB\n", "bytes: 64MiB\n        after: [qkv]\n"},
	{"after: [ag]", "after: [ga]"},
	{"after: [ag]", "after: [ag[0]]"},
	{"after: [ag]", `after: ["ag[i]"]`},
	{"after: [ag]", "after: ag"},
	{"decompose: 4", "decompose: 3"},
	{"decompose: 4", "decompose: 04"},
	{"decompose: 4", "decompose: [4]"},
	{"m: 8192", "m: 8190"},
	{"kind: gemm", "kind: all-reduce"},
	{"kind: all-gather", "kind: gemm"},
	{"ops:", "ops: []\n    opps:"},
	{"  - name: compute", "  - compute"},
	{"gpus: 2\n", "gpus: 2\ncompute: {kind: stream, bytes: 1GiB}\n"},
	{"count: 16", "count: 5000"},
	{"name: rs", "name: ag"},
	{"streams:", "streams: []\nx:"},
}
