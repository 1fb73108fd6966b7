package scenarios

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

// FuzzParse feeds Parse arbitrary bytes. It must never panic; whatever it
// rejects must come back as a *FileError of well-formed one-line
// problems; whatever it accepts must be valid, agree with goccy's own
// strict decoder, and survive Marshal and Parse unchanged.
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
	} {
		f.Add([]byte(s))
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
		if !strict.Equal(sc) {
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
