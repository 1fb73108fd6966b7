package scenarios

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// baseYAML is a valid scenario; its line numbers are fixed points of the
// error tests below (compute on line 3, comm on line 9).
const baseYAML = `name: demo
gpus: 2
compute:
  kind: gemm
  m: 4096
  n: 4096
  k: 4096
  dtype: bf16
comm:
  collective: all-gather
  bytes: 256MiB
`

// edit returns baseYAML with old replaced by new (old must occur).
func edit(t *testing.T, old, new string) string {
	t.Helper()
	if !strings.Contains(baseYAML, old) {
		t.Fatalf("baseYAML has no %q", old)
	}
	return strings.Replace(baseYAML, old, new, 1)
}

func TestParseValid(t *testing.T) {
	base := Scenario{
		Name: "demo", GPUs: 2,
		Compute: ComputeOp{Kind: GEMM, M: 4096, N: 4096, K: 4096, DType: BF16},
		Comm:    CommOp{Collective: AllGather, Bytes: 256 << 20},
	}
	with := func(f func(*Scenario)) Scenario {
		sc := base
		f(&sc)
		return sc
	}
	tests := []struct {
		name string
		src  string
		want Scenario
	}{
		{"base", baseYAML, base},
		{"size 256MiB", baseYAML, base},
		{"size in bytes", edit(t, "256MiB", "268435456"), base},
		{"size 1.5GiB", edit(t, "256MiB", "1.5GiB"), with(func(s *Scenario) { s.Comm.Bytes = 3 << 29 })},
		{"size with space and lower case", edit(t, "256MiB", "256 mib"), base},
		{"size in decimal units", edit(t, "256MiB", "64MB"), with(func(s *Scenario) { s.Comm.Bytes = 64e6 })},
		{"size as quoted text", edit(t, "256MiB", `"256MiB"`), base},
		{"integral float int", edit(t, "m: 4096", "m: 4.096e3"), base},
		{"hex and octal ints", edit(t, "m: 4096\n  n: 4096", "m: 0x1000\n  n: 0o10000"), base},
		{"underscores", edit(t, "m: 4096", "m: 4_096"), base},
		{"zero-padded size text", edit(t, "256MiB", `"0256MiB"`), base},
		{"comments and byte order mark", "\uFEFF# a scenario\n" + baseYAML + "# end\n", base},
		{"trailing document marker", baseYAML + "---\n", base},
		{"explicit document start", "---\n" + baseYAML, base},
		{"flow style", `{name: demo, gpus: 2, compute: {kind: gemm, m: 4096, n: 4096, k: 4096, dtype: bf16}, comm: {collective: all-gather, bytes: 256MiB}}`, base},
		{"crlf line ends", strings.ReplaceAll(baseYAML, "\n", "\r\n"), base},
		{"empty strategy", baseYAML + "strategy:\n", base},
		{"p2p-load reduce-scatter", edit(t, "collective: all-gather", "collective: reduce-scatter") + "strategy:\n  launch: comm-first\n  comm_sms: 16\n  comm_ctas: 32\n  comm_engine: p2p-load\n",
			with(func(s *Scenario) {
				s.Comm.Collective = ReduceScatter
				s.Strategy = Strategy{Launch: CommFirst, CommSMs: 16, CommCTAs: 32, CommEngine: EngineP2PLoad}
			})},
		{"anchor and alias", edit(t, "m: 4096\n  n: 4096\n  k: 4096", "m: &d 4096\n  n: *d\n  k: *d"), base},
		{"strategy", baseYAML + "reps: 5\nstrategy:\n  launch: comm-first\n  comm_priority: -5\n  comm_sms: 16\n  comm_engine: dma\n  copy_engines: 2\n  chunk_bytes: 4MiB\n",
			with(func(s *Scenario) {
				s.Reps = 5
				s.Strategy = Strategy{Launch: CommFirst, CommPriority: -5, CommSMs: 16, CommEngine: EngineDMA, CopyEngines: 2, ChunkBytes: 4 << 20}
			})},
		{"stream op", edit(t, "kind: gemm\n  m: 4096\n  n: 4096\n  k: 4096\n  dtype: bf16", "kind: stream\n  bytes: 1GiB"),
			with(func(s *Scenario) { s.Compute = ComputeOp{Kind: Stream, Bytes: 1 << 30} })},
		{"description block", edit(t, "gpus: 2\n", "gpus: 2\ndescription: |\n  two\n  lines\n"),
			with(func(s *Scenario) { s.Description = "two\nlines\n" })},
		{"text with tab, emoji and joiner", edit(t, "gpus: 2\n", "gpus: 2\nsource: \"a\\tb \U0001F469\u200d\U0001F4BB\"\nprofile: h200\n"),
			with(func(s *Scenario) { s.Source, s.Profile = "a\tb \U0001F469\u200d\U0001F4BB", "h200" })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.src), "t.yaml", h200())
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !got.Equal(tt.want) {
				t.Errorf("Parse = %+v\nwant    %+v", got, tt.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name      string
		src       string
		line, col int
		msg       string // a fragment of the first problem's message
		problems  int    // how many problems in all; 0 means 1
	}{
		// YAML itself.
		{"unclosed quote", edit(t, "name: demo", `name: "demo`), 1, 7, "invalid YAML: could not find end character of double-quoted text; close the quote", 0},
		{"tab indentation", edit(t, "  m: 4096", "\tm: 4096"), 5, 1, "indent with spaces, not tabs", 0},
		{"duplicate field", edit(t, "gpus: 2\n", "gpus: 2\ngpus: 4\n"), 3, 1, `mapping key "gpus" already defined at [2:1]; each field may appear only once`, 0},
		{"bad indentation", edit(t, "  kind: gemm\n  m: 4096", "  kind: gemm\n    m: 4096"), 4, 9, "invalid YAML: mapping value is not allowed in this context", 0},
		// The document's shape.
		{"empty", "", 1, 1, "file is empty; want a YAML mapping", 0},
		{"only a comment", "# nothing\n", 1, 1, "file is empty", 0},
		{"a list", "- name: demo\n- name: other\n", 1, 1, "file holds a list; want a mapping of scenario fields (name, description,", 0},
		{"a scalar", "hello\n", 1, 1, `file holds "hello"; want a mapping`, 0},
		{"two documents", baseYAML + "---\n" + baseYAML, 13, 1, "file holds 2 YAML documents; want exactly one", 0},
		{"deep nesting", "a: " + strings.Repeat("[", 40) + strings.Repeat("]", 40), 1, 19, "nesting is deeper than 16 levels", 0},
		{"deep block nesting", deepBlock(30), 17, 33, "nesting is deeper than 16 levels", 0},
		{"binary junk", "\x00\x01\xff\xfe", 1, 1, "control character U+0000", 0},
		{"invalid UTF-8", edit(t, "name: demo", "name: d\xffmo"), 1, 8, "byte 0xff is not UTF-8 text", 0},
		{"too large", baseYAML + "description: " + strings.Repeat("x", MaxFileSize) + "\n", 1, 1, "file is larger than 64KiB", 0},
		{"merge key", "<<: {name: demo}\n", 1, 1, "merge keys (<<) are not supported", 0},
		// Unknown fields.
		{"unknown top-level field", edit(t, "gpus: 2\n", "gpus: 2\ngpu_count: 2\n"), 3, 1, `unknown field "gpu_count" at the top level; allowed name, description, source, gpus, profile, compute, comm, streams, reps, strategy`, 0},
		{"misspelt top-level field", edit(t, "name: demo", "nmae: demo"), 1, 1, `unknown field "nmae" at the top level (did you mean name?)`, 2},
		{"unknown strategy field", baseYAML + "strategy:\n  comm_smz: 8\n", 13, 3, `unknown field "comm_smz" in strategy (did you mean comm_sms?); allowed launch, comm_priority, comm_sms,`, 0},
		{"unknown compute field", edit(t, "  m: 4096", "  m: 4096\n  batch: 2"), 6, 3, `unknown field "batch" in compute; allowed kind, m, n, k, dtype, bytes`, 0},
		// Wrong types.
		{"string for int", edit(t, "gpus: 2", "gpus: two"), 2, 7, `gpus is "two", not a whole number; want an integer`, 0},
		{"quoted int", edit(t, "gpus: 2", `gpus: "2"`), 2, 7, "quoted text, not a whole number", 0},
		{"fraction for int", edit(t, "gpus: 2", "gpus: 2.5"), 2, 7, "gpus is 2.5, not a whole number", 0},
		{"huge int", edit(t, "m: 4096", "m: 99999999999999999999999"), 5, 6, "compute.m is 99999999999999999999999, far out of range", 0},
		{"leading zero", edit(t, "m: 4096", "m: 010"), 5, 6, "compute.m is 010, ambiguous: YAML 1.1 reads a leading 0 as octal", 0},
		{"leading zeros, not octal", edit(t, "m: 4096", "m: 0089"), 5, 6, "compute.m is 0089, ambiguous", 0},
		{"leading zero size", edit(t, "256MiB", "010"), 11, 10, "comm.bytes is 010, ambiguous", 0},
		{"NaN", edit(t, "gpus: 2", "gpus: .nan"), 2, 7, "gpus is .nan, not a whole number", 0},
		{"infinite size", edit(t, "256MiB", ".inf"), 11, 10, "comm.bytes: +Inf is too large a size", 0},
		{"huge size", edit(t, "256MiB", "1e30"), 11, 10, `"1e30" is too large a size`, 0},
		{"list for int", edit(t, "gpus: 2", "gpus: [2]"), 2, 1, "gpus is a list, not a whole number", 0},
		{"scalar for mapping", edit(t, "comm:\n  collective: all-gather\n  bytes: 256MiB", "comm: all-gather"), 9, 1, "comm is \"all-gather\", not a mapping; want a mapping of collective, bytes", 0},
		{"mapping for string", edit(t, "name: demo", "name: {first: demo}"), 1, 1, "name is a mapping, not text", 0},
		{"size 1.5B", edit(t, "256MiB", "1.5B"), 11, 10, `comm.bytes: "1.5B" is not a whole number of bytes; want a byte count such as 268435456 or 256MiB`, 0},
		{"size unit unknown", edit(t, "256MiB", "256 parsecs"), 11, 10, `"256 parsecs" is not a size`, 0},
		{"every type problem at once", edit(t, "gpus: 2", "gpus: two\nreps: many\nflavour: x"), 2, 7, "gpus is", 3},
		// Validation.
		{"negative bytes", edit(t, "256MiB", "-1"), 11, 10, "bytes is -1; allowed 1B..1TiB per rank", 0},
		{"comm_sms not a multiple of 8", baseYAML + "strategy:\n  comm_sms: 12\n", 13, 13, "comm_sms is 12; SM partitions on NVIDIA H200 come in steps of 8 (try 8 or 16)", 0},
		{"comm_sms beyond the device", baseYAML + "strategy:\n  comm_sms: 160\n", 13, 13, "comm_sms is 160 but NVIDIA H200 has 132 SMs and the other op needs at least 8; allowed up to 124", 0},
		{"comm_sms odd near the top", baseYAML + "strategy:\n  comm_sms: 127\n", 13, 13, "steps of 8 (try 120)", 0},
		{"priority too high", baseYAML + "strategy:\n  comm_priority: -9\n", 13, 18, "comm_priority is -9; allowed -5 (highest) .. 0 (lowest)", 0},
		{"copy engines without dma", baseYAML + "strategy:\n  copy_engines: 2\n", 13, 17, "copy_engines applies only with comm_engine: dma", 0},
		{"p2p-load of an all-gather", baseYAML + "strategy:\n  comm_engine: p2p-load\n", 13, 16, "comm_engine p2p-load is a reduction that loads the peers' blocks; it runs reduce-scatter and all-reduce, not all-gather", 0},
		{"p2p-load with copy engines", edit(t, "collective: all-gather", "collective: all-reduce") + "strategy:\n  comm_engine: p2p-load\n  copy_engines: 2\n", 14, 17, "copy_engines applies only with comm_engine: dma", 0},
		{"unknown comm engine", baseYAML + "strategy:\n  comm_engine: p2p\n", 13, 16, `comm_engine "p2p" is unknown; allowed sm, dma, nccl-ce, p2p-load`, 0},
		{"unknown collective", edit(t, "collective: all-gather", "collective: all-gether"), 10, 15, `collective "all-gether" is unknown; allowed all-gather, reduce-scatter, all-reduce, all-to-all`, 0},
		{"unknown dtype", edit(t, "dtype: bf16", "dtype: bf32"), 8, 10, `dtype "bf32" is unknown; allowed bf16, fp16, fp8, fp32`, 0},
		{"gemm with bytes", edit(t, "dtype: bf16", "dtype: bf16\n  bytes: 1MiB"), 9, 10, "bytes belongs to a stream op; a gemm's size comes from m, n, k and dtype", 0},
		{"stream with gemm fields", edit(t, "kind: gemm", "kind: stream\n  bytes: 1GiB"), 3, 1, "m, n, k and dtype belong to a gemm; a stream op takes only bytes", 0},
		{"missing compute kind", edit(t, "  kind: gemm\n", ""), 3, 1, "compute.kind is missing; allowed gemm, stream", 0},
		{"unknown compute kind", edit(t, "kind: gemm", "kind: conv"), 4, 9, `compute.kind "conv" is unknown; allowed gemm, stream`, 0},
		{"missing top-level field", edit(t, "gpus: 2\n", ""), 1, 1, "gpus is missing; a collective needs at least 2", 0},
		{"empty value", edit(t, "gpus: 2", "gpus:"), 2, 1, "gpus is missing; a collective needs at least 2", 0},
		{"explicit zero", edit(t, "gpus: 2", "gpus: 0"), 2, 7, "gpus is 0; a collective needs at least 2", 0},
		{"missing gemm dimension", edit(t, "  k: 4096\n", ""), 3, 1, "compute.k is missing; allowed 1..1048576", 0},
		{"missing stream bytes", edit(t, "kind: gemm\n  m: 4096\n  n: 4096\n  k: 4096\n  dtype: bf16", "kind: stream"), 3, 1, "compute.bytes is missing; allowed 1B..1TiB", 0},
		{"missing comm", edit(t, "comm:\n  collective: all-gather\n  bytes: 256MiB\n", ""), 1, 1, "comm.collective is missing", 2},
		{"empty comm", edit(t, "comm:\n  collective: all-gather\n  bytes: 256MiB\n", "comm:\n"), 9, 1, "comm.collective is missing", 2},
		{"too many gpus", edit(t, "gpus: 2", "gpus: 16"), 2, 7, "gpus is 16 but NVIDIA H200 allows at most 8; allowed 2..8", 0},
		{"escape sequence in description", edit(t, "gpus: 2", "gpus: 2\ndescription: \"\\x1b[2J gone\""), 3, 14, "description holds the control character U+001B; allowed printable text", 0},
		{"bidi override in source", edit(t, "gpus: 2", "gpus: 2\nsource: \u202eevil"), 3, 9, "source holds the control character U+202E", 0},
		{"bad profile", edit(t, "gpus: 2", "gpus: 2\nprofile: H200 SXM"), 3, 10, `profile "H200 SXM" is not a device profile name`, 0},
		{"bad name", edit(t, "name: demo", "name: My Demo"), 1, 7, `name "My Demo" is not allowed; use lower-case letters`, 0},
		{"all-to-all bytes not divisible", edit(t, "collective: all-gather\n  bytes: 256MiB", "collective: all-to-all\n  bytes: 3"), 11, 10, "bytes is 3, not a multiple of gpus (2); an all-to-all sends bytes/gpus to every rank", 0},
		{"alias position", edit(t, "gpus: 2", "reps: &n 1\ngpus: *n"), 3, 7, "gpus is 1; a collective needs at least 2", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.src), "bad.yaml", h200())
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("Parse error = %v (%T), want *FileError", err, err)
			}
			if fe.File != "bad.yaml" || len(fe.Problems) == 0 {
				t.Fatalf("FileError = %+v", fe)
			}
			p := fe.Problems[0]
			if p.Line != tt.line || p.Col != tt.col || !strings.Contains(p.Msg, tt.msg) {
				t.Errorf("first problem = %d:%d: %s\nwant          %d:%d: ...%s...", p.Line, p.Col, p.Msg, tt.line, tt.col, tt.msg)
			}
			if want := max(tt.problems, 1); len(fe.Problems) != want {
				t.Errorf("%d problems, want %d:\n%v", len(fe.Problems), want, err)
			}
			// Each problem is one line, "file:line:col: what; allowed".
			for line := range strings.SplitSeq(err.Error(), "\n") {
				if !strings.HasPrefix(line, "bad.yaml:") || !strings.Contains(line, "; ") {
					t.Errorf("problem line %q is not file:line:col: what; allowed", line)
				}
			}
		})
	}
}

// deepBlock nests block mappings n levels deep, two spaces a level.
func deepBlock(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(strings.Repeat("  ", i) + "a:\n")
	}
	return b.String()
}

func TestParseReportsEveryProblem(t *testing.T) {
	src := `name: Demo
gpus: 1
compute:
  kind: gemm
  m: 0
  n: 4096
  k: 4096
  dtype: int4
comm:
  collective: broadcast
  bytes: 256MiB
strategy:
  launch: later
  comm_sms: 12
`
	_, err := Parse([]byte(src), "many.yaml", h200())
	want := []string{
		`many.yaml:1:7: name "Demo" is not allowed`,
		"many.yaml:2:7: gpus is 1; a collective needs at least 2",
		"many.yaml:5:6: m is 0; allowed 1..1048576",
		`many.yaml:8:10: dtype "int4" is unknown`,
		`many.yaml:10:15: collective "broadcast" is unknown`,
		`many.yaml:13:11: launch "later" is unknown; allowed compute-first, comm-first`,
		"many.yaml:14:13: comm_sms is 12; SM partitions on NVIDIA H200 come in steps of 8",
	}
	if err == nil {
		t.Fatal("Parse accepted a broken scenario")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d problems, want %d:\n%v", len(lines), len(want), err)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d = %q\nwant prefix %q", i+1, lines[i], w)
		}
	}
}

func TestParseDecodeAndValidationProblemsTogether(t *testing.T) {
	// A field that fails to decode is reported once, not again by Validate
	// for the zero value left behind; other fields are still validated.
	src := edit(t, "gpus: 2", "gpus: two") + "strategy:\n  comm_sms: 12\n"
	_, err := Parse([]byte(src), "x.yaml", h200())
	var fe *FileError
	if !errors.As(err, &fe) {
		t.Fatalf("err = %v", err)
	}
	if len(fe.Problems) != 2 || fe.Problems[0].Path != "$.gpus" || fe.Problems[1].Path != "$.strategy.comm_sms" {
		t.Errorf("problems = %+v", fe.Problems)
	}
}

func TestParseNeverPanics(t *testing.T) {
	inputs := []string{
		"", " ", "\n\n", "~", "null", "[]", "{}", "-", "- -", ":", "::", "? ", "&a", "*a", "!tag", "!!binary AAAA",
		"name: *undefined", "a: &a [*a]", "%YAML 1.2\n---\n", "---\n...\n", "'", `"`, "|", ">", "{", "[", "}", "]",
		strings.Repeat("- ", 2000), strings.Repeat("{a: ", 500), strings.Repeat("a:\n ", 500), strings.Repeat("[", 5000),
		"gpus: 1e400", "gpus: -1e400", "gpus: 0x7fffffffffffffff", "gpus: -9223372036854775808", "gpus: 0o17", "gpus: true",
		"compute: {kind: stream, bytes: 1e18}", "comm: {bytes: [1, 2]}", "comm: {bytes: {a: 1}}", "strategy: [1]", "strategy: 3",
		"compute:\n  <<: {kind: gemm}\n", "? [a, b]\n: c\n", "1: 2\n", "~: 3\n", "name: !!int 3\n", "gpus: !!str 2\n",
		"\xef\xbb\xbf", "\x7f", "name: \u2028x\n",
	}
	for _, in := range inputs {
		if _, err := Parse([]byte(in), "p.yaml", h200()); err == nil {
			t.Errorf("Parse(%.40q) succeeded, want an error", in)
		}
	}
}

func TestFileErrorFormat(t *testing.T) {
	e := &FileError{File: "s.yaml", Problems: []Problem{
		{Line: 2, Col: 7, Path: "$.gpus", Msg: "gpus is 1; a collective needs at least 2 (host copies, h2d, d2h and swap, run on 1)"},
		{Line: 13, Col: 13, Path: "$.strategy.comm_sms", Msg: "comm_sms is 12; try 8 or 16"},
	}}
	want := "s.yaml:2:7: gpus is 1; a collective needs at least 2 (host copies, h2d, d2h and swap, run on 1)\ns.yaml:13:13: comm_sms is 12; try 8 or 16"
	if got := e.Error(); got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestParseDefaultFilename(t *testing.T) {
	_, err := Parse(nil, "", h200())
	if err == nil || !strings.HasPrefix(err.Error(), "<input>:1:1: ") {
		t.Errorf("err = %v, want it to start with <input>:1:1:", err)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte(baseYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	if sc, err := Load(good, h200()); err != nil || sc.Name != "demo" {
		t.Errorf("Load(good) = %+v, %v", sc, err)
	}

	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte(edit(t, "gpus: 2", "gpus: 1")), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(bad, h200())
	if err == nil || !strings.HasPrefix(err.Error(), bad+":2:7: gpus is 1") {
		t.Errorf("Load(bad) = %v, want %s:2:7: gpus is 1...", err, bad)
	}

	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, make([]byte, 10*MaxFileSize), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(big, h200()); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("Load(big) = %v, want a size error", err)
	}

	if _, err := Load(filepath.Join(dir, "missing.yaml"), h200()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load(missing) = %v, want fs.ErrNotExist", err)
	}
	if _, err := Load(dir, h200()); err == nil {
		t.Error("Load(a directory) succeeded")
	}
}

func TestMarshalRoundTrip(t *testing.T) {
	extra := Scenario{
		Name: "custom", Description: "quotes \" and 'colons: here' # not a comment", Source: "- looks like a list",
		GPUs: 4, Profile: "h200", Reps: 7,
		Compute:  ComputeOp{Kind: Stream, Bytes: 1<<30 + 512},
		Comm:     CommOp{Collective: AllToAll, Bytes: 1000},
		Strategy: Strategy{Launch: CommFirst, CommPriority: -3, CommSMs: 16, ComputeSMs: 112, CommEngine: EngineDMA, CopyEngines: 3, ChunkBytes: 1 << 20},
	}
	for _, sc := range append(Builtin(), extra) {
		t.Run(sc.Name, func(t *testing.T) {
			out, err := Marshal(sc)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			got, err := Parse(out, sc.Name+".yaml", h200())
			if err != nil {
				t.Fatalf("Parse(Marshal(sc)): %v\n%s", err, out)
			}
			if !got.Equal(sc) {
				t.Errorf("round trip changed the scenario\n got %+v\nwant %+v\n%s", got, sc, out)
			}
			text := string(out)
			if !strings.HasSuffix(text, "\n") || strings.HasSuffix(text, "\n\n") {
				t.Errorf("output should end in exactly one newline:\n%q", text)
			}
			if !sc.IsGraph() && !strings.Contains(text, "\n  bytes: "+sc.Comm.Bytes.String()+"\n") {
				t.Errorf("sizes should be written in units, like %s:\n%s", sc.Comm.Bytes, text)
			}
			if sc.Strategy == (Strategy{}) && strings.Contains(text, "\nstrategy:") {
				t.Errorf("a default strategy should be left out:\n%s", text)
			}
			if sc.Reps == 0 && strings.Contains(text, "\nreps:") {
				t.Errorf("unset reps should be left out:\n%s", text)
			}
			if sc.Compute.Kind == GEMM && !regexp.MustCompile(`\n +n: `).MatchString(text) {
				t.Errorf("compute's n should be written bare:\n%s", text)
			}
		})
	}
}

func TestMarshalQuotesText(t *testing.T) {
	// Every string must come back as it went out, whatever YAML would make
	// of it unquoted. Decoded without validation: some are not valid text.
	texts := []string{
		"plain words, with commas (and brackets)", " lead", "trail ", "null", "Null", "~", "true", "yes", "no", "n", "off",
		"123", "1.5", "1e3", "+1", "0x10", "0o7", ".inf", ".nan", "2001-01-01", "-", "- x", "? x", "a: b", "a #b", "#x", "x:",
		"'q'", `"dq"`, `a\b`, "x\ny", "x\n", "\n", "x\n\n", " \n x", "\tx", "x\t", "\r", "a\rb", "\x1b[31m", "\x7f",
		"\u2028", "a\u0085b", "\u00a0", "\ufeff", "&a", "*a", "!t", "%x", "@x", "`x", "{x}", "[x]", ",", "|", ">", "<<",
		"---", "...", "a\n---\nb", "é", "😀", "=", "  ", "x\n  y",
	}
	for _, text := range texts {
		sc := Builtin()[0]
		sc.Description, sc.Source, sc.Profile = text, text+text, text
		out, err := Marshal(sc)
		if err != nil {
			t.Errorf("Marshal(%q): %v", text, err)
			continue
		}
		d := &decoder{}
		back, ok := d.decode(out)
		if !ok || len(d.problems) != 0 || !back.Equal(sc) {
			t.Errorf("text %q came back as %q, %q, %q (%v)\n%s", text, back.Description, back.Source, back.Profile, d.problems, out)
		}
	}
	// Ordinary text stays unquoted.
	out, err := Marshal(Builtin()[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\ndescription: A skinny", "\nprofile: h200\n", "\n  kind: gemm\n", "\n  collective: all-gather\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("Marshal output lacks %q:\n%s", want, out)
		}
	}
}

func TestMarshalLeavesTextAlone(t *testing.T) {
	// The bare-n rewrite must not touch strings that happen to hold it.
	sc := Builtin()[0]
	sc.Description = "line one\n  \"n\": 5\nline three"
	sc.Compute.DType = "bf16\n  \"n\": 3"
	out, err := Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	var back Scenario
	if back, err = Parse(out, "x.yaml", Limits{}); err == nil {
		t.Fatal("a bad dtype should not validate")
	}
	d := &decoder{}
	back, ok := d.decode(out)
	if !ok || len(d.problems) != 0 || !back.Equal(sc) {
		t.Errorf("decode(Marshal(sc)) = %+v, %v, %v\nwant %+v\n%s", back, ok, d.problems, sc, out)
	}
}

// comm_sms may be exactly what compute_sms leaves, whatever its size: the
// compute op gets an aligned partition, the collective the rest. Off that
// sum the usual steps hold.
func TestCommSMsAsTheRestOfAComputeSplit(t *testing.T) {
	lim := h200()
	for _, tc := range []struct {
		st   Strategy
		want string // "" when valid
	}{
		{Strategy{ComputeSMs: 112, CommSMs: 20}, ""},
		{Strategy{ComputeSMs: 120, CommSMs: 12}, ""},
		{Strategy{ComputeSMs: 112, CommSMs: 12}, "comm_sms is 12; SM partitions"},
		{Strategy{CommSMs: 20}, "comm_sms is 20; SM partitions"},
		{Strategy{ComputeSMs: 116, CommSMs: 16}, "compute_sms is 116; SM partitions"},
	} {
		errs := ValidateStrategy(tc.st, lim)
		got := ""
		if len(errs) > 0 {
			got = errs[0].Msg
		}
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%+v: errors %v, want %q", tc.st, errs, tc.want)
		}
	}
}

// baseV2 is a valid format-2 scenario: a TP all-gather feeding a GEMM,
// decomposed in 4. Its line numbers are fixed points of the tests below
// (the all-gather on line 6, the GEMM on line 11, its after on line 17).
const baseV2 = `name: tp
gpus: 2
streams:
  - name: tp
    ops:
      - name: ag
        kind: all-gather
        bytes: 64MiB
  - name: compute
    ops:
      - name: qkv
        kind: gemm
        m: 8192
        n: 5120
        k: 8192
        dtype: bf16
        after: [ag]
        decompose: 4
`

// editV2 returns baseV2 with old replaced by new (old must occur).
func editV2(t *testing.T, old, new string) string {
	t.Helper()
	if !strings.Contains(baseV2, old) {
		t.Fatalf("baseV2 has no %q", old)
	}
	return strings.Replace(baseV2, old, new, 1)
}

func baseV2Scenario() Scenario {
	return Scenario{Name: "tp", GPUs: 2, Streams: []StreamSpec{
		{Name: "tp", Ops: []StreamOp{{Name: "ag", Kind: OpKind(AllGather), Bytes: 64 << 20}}},
		{Name: "compute", Ops: []StreamOp{{Name: "qkv", Kind: OpKind(GEMM), M: 8192, N: 5120, K: 8192, DType: BF16, After: []string{"ag"}, Decompose: 4}}},
	}}
}

func TestParseV2Valid(t *testing.T) {
	base := baseV2Scenario().WithLead()
	with := func(f func(*Scenario)) Scenario {
		sc := baseV2Scenario()
		f(&sc)
		return sc.WithLead()
	}
	tests := []struct {
		name string
		src  string
		want Scenario
	}{
		{"base", baseV2, base},
		{"compact lists", strings.ReplaceAll(strings.ReplaceAll(baseV2, "\n  ", "\n"), "\n  - name", "\n- name"), base},
		{"flow style", `{name: tp, gpus: 2, streams: [{name: tp, ops: [{name: ag, kind: all-gather, bytes: 64MiB}]},
  {name: compute, ops: [{name: qkv, kind: gemm, m: 8192, n: 5120, k: 8192, dtype: bf16, after: [ag], decompose: 4}]}]}`, base},
		{"after as a block list", editV2(t, "after: [ag]", "after:\n          - ag"), base},
		{"instance references", editV2(t, "bytes: 64MiB\n", "bytes: 64MiB\n      - name: rs\n        kind: reduce-scatter\n        bytes: 8MiB\n        count: 4\n        after: [qkv, \"ag[0]\"]\n      - name: rs2\n        kind: reduce-scatter\n        bytes: 8MiB\n        count: 4\n        after:\n          - rs[i]\n          - rs[3]\n"),
			with(func(s *Scenario) {
				s.Streams[0].Ops = append(s.Streams[0].Ops, StreamOp{Name: "rs", Kind: OpKind(ReduceScatter), Bytes: 8 << 20, Count: 4, After: []string{"qkv", "ag[0]"}},
					StreamOp{Name: "rs2", Kind: OpKind(ReduceScatter), Bytes: 8 << 20, Count: 4, After: []string{"rs[i]", "rs[3]"}})
			})},
		{"unnamed ops take stream.index", strings.Replace(editV2(t, "      - name: ag\n        kind", "      - kind"), "after: [ag]", "after: [tp.1]", 1),
			with(func(s *Scenario) {
				s.Streams[0].Ops[0].Name = ""
				s.Streams[1].Ops[0].After = []string{"tp.1"}
			})},
		{"anchors in lists", editV2(t, "m: 8192\n        n: 5120\n        k: 8192", "m: &d 8192\n        n: 5120\n        k: *d"), base},
		{"strategy decompose", baseV2 + "strategy:\n  decompose: 8\n", with(func(s *Scenario) { s.Strategy.Decompose = 8 })},
		{"host copies on one GPU", `name: offload
gpus: 1
streams:
  - name: compute
    ops: [{name: g, kind: gemm, m: 4096, n: 4096, k: 4096, dtype: bf16, count: 8}]
  - name: pcie
    ops: [{name: out, kind: d2h, bytes: 256MiB, count: 4}, {name: in, kind: h2d, bytes: 256MiB, count: 4}]
`, Scenario{Name: "offload", GPUs: 1,
			Compute: ComputeOp{Kind: GEMM, M: 4096, N: 4096, K: 4096, DType: BF16}, Comm: CommOp{Collective: DeviceToHost, Bytes: 256 << 20},
			Streams: []StreamSpec{
				{Name: "compute", Ops: []StreamOp{{Name: "g", Kind: OpKind(GEMM), M: 4096, N: 4096, K: 4096, DType: BF16, Count: 8}}},
				{Name: "pcie", Ops: []StreamOp{{Name: "out", Kind: OpKind(DeviceToHost), Bytes: 256 << 20, Count: 4}, {Name: "in", Kind: OpKind(HostToDevice), Bytes: 256 << 20, Count: 4}}},
			}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.src), "t.yaml", h200())
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !got.Equal(tt.want) {
				t.Errorf("Parse = %+v\nwant    %+v", got, tt.want)
			}
		})
	}
}

func TestParseV2Errors(t *testing.T) {
	tests := []struct {
		name      string
		src       string
		line, col int
		path      string
		msg       string // a fragment of the first problem's message
		problems  int    // how many problems in all; 0 means 1
	}{
		// The graph.
		{"cycle", editV2(t, "bytes: 64MiB\n", "bytes: 64MiB\n        after: [qkv]\n"), 9, 9, "$.streams[0].ops[0].after",
			"the dependencies form a cycle through ag, qkv; every op must be able to start", 0},
		{"unknown op name in after", editV2(t, "after: [ag]", "after: [ag, ga]"), 17, 21, "$.streams[1].ops[0].after[1]",
			`after names op "ga", which the scenario does not have (did you mean ag?); allowed ag, qkv`, 0},
		{"after reference syntax", editV2(t, "after: [ag]", "after: [ag, \"ag[j]\"]"), 17, 21, "$.streams[1].ops[0].after[1]",
			`after entry "ag[j]" is not an op reference; write op, op[3] or op[i]`, 0},
		{"after instance out of range", editV2(t, "after: [ag]", "after: [\"ag[3]\"]"), 17, 17, "$.streams[1].ops[0].after[0]",
			"after ag[3] asks for instance 3 of ag, which has 1; allowed ag[0]..ag[0]", 0},
		{"decompose does not divide m", editV2(t, "m: 8192", "m: 8190"), 18, 20, "$.streams[1].ops[0].decompose",
			"decompose 4 of ag -> qkv: the GEMM's m (8190) does not split into 4 chunks", 0},
		{"strategy decompose does not divide m", editV2(t, "        decompose: 4\n", "") + "strategy:\n  decompose: 3\n", 19, 14, "$.strategy.decompose",
			"decompose 3 of ag -> qkv: the GEMM's m (8192) does not split into 3 chunks", 0},
		{"decompose of a pair that is not one", editV2(t, "after: [ag]", "after: [ag, ag]"), 18, 20, "$.streams[1].ops[0].decompose",
			"qkv cannot be decomposed: it must wait for exactly one whole op", 0},
		{"stream past the instance limit", editV2(t, "bytes: 64MiB\n", "bytes: 64MiB\n      - name: small\n        kind: all-gather\n        bytes: 4MiB\n        count: 4093\n"), 9, 9, "$.streams[0].ops[1]",
			"the streams expand to 4101 op instances, past the limit at op small (4093 instances); allowed at most 4096 in all", 0},
		{"count past the instance limit", editV2(t, "dtype: bf16\n", "dtype: bf16\n        count: 5000\n"), 17, 16, "$.streams[1].ops[0].count",
			"count is 5000; allowed 1..4096", 0},
		{"does not fit the device", editV2(t, "bytes: 64MiB\n", "bytes: 64MiB\n      - name: big\n        kind: all-reduce\n        bytes: 80GiB\n"), 9, 9, "$.streams[0].ops[1]",
			// qkv: A 128, B 80, C 80, workspace 64, check A+B 208 MiB (560
			// MiB); ag 64 + 128 MiB and big 2 x 80 GiB (160.2 GiB); 1 GiB.
			"the scenario needs 161.7 GiB of device memory per GPU (1 compute ops' buffers, workspaces and the largest GEMM's check operands 560.0 MiB, 2 communication ops' device buffers 160.2 GiB, 1.0 GiB for NCCL and cuBLASLt) but NVIDIA H200 has 139.8 GiB; the largest op, big, holds 160.0 GiB", 0},
		{"compute and streams both", editV2(t, "gpus: 2\n", "gpus: 2\ncompute: {kind: gemm, m: 8, n: 8, k: 8, dtype: bf16}\ncomm: {collective: all-gather, bytes: 1MiB}\n"), 3, 1, "$.compute",
			"compute belongs to a one-pair scenario (format 1) and this file also has streams (format 2); a scenario file has either compute and comm or streams, never both", 0},
		{"mixed stream", editV2(t, "bytes: 64MiB\n", "bytes: 64MiB\n      - name: g0\n        kind: gemm\n        m: 8\n        n: 8\n        k: 8\n        dtype: bf16\n"), 10, 15, "$.streams[0].ops[1].kind",
			"stream tp holds comm ops and this op is compute (gemm); put compute and communication ops on separate streams", 0},
		{"duplicate op name", editV2(t, "name: qkv", "name: ag"), 11, 15, "$.streams[1].ops[0].name", `op name "ag" is used twice`, 0},
		{"no communication op", editV2(t, "kind: all-gather\n        bytes: 64MiB", "kind: stream\n        bytes: 64MiB"), 3, 1, "$.streams",
			"the streams hold no communication op (a collective or a host copy); a scenario runs compute next to communication", 2},
		{"empty streams", "name: tp\ngpus: 2\nstreams: []\n", 3, 1, "$.streams", "streams is empty; want a list of streams", 0},
		{"p2p-load of a format-2 scenario", editV2(t, "gpus: 2\n", "gpus: 2\nstrategy: {comm_engine: p2p-load}\n"), 3, 25, "$.strategy.comm_engine",
			"comm_engine p2p-load runs the one reduction of a format-1 scenario (compute: and comm:), not a format-2 scenario's streams; allowed sm, dma or nccl-ce", 0},
		// Ops by kind.
		{"unknown kind", editV2(t, "kind: all-gather", "kind: all-gathr"), 7, 15, "$.streams[0].ops[0].kind",
			`streams[0].ops[0].kind "all-gathr" is unknown (did you mean all-gather?); allowed gemm, stream, all-gather, reduce-scatter, all-reduce, all-to-all, h2d, d2h, swap`, 0},
		{"missing kind", editV2(t, "        kind: all-gather\n", ""), 6, 9, "$.streams[0].ops[0].kind", "streams[0].ops[0].kind is missing; allowed gemm, stream, all-gather", 0},
		{"gemm dimension out of range", editV2(t, "k: 8192", "k: 0"), 15, 12, "$.streams[1].ops[0].k", "k is 0; allowed 1..1048576", 0},
		{"missing dtype", editV2(t, "        dtype: bf16\n", ""), 11, 9, "$.streams[1].ops[0].dtype", "streams[1].ops[0].dtype is missing; allowed bf16, fp16, fp8, fp32", 0},
		{"comm op with gemm fields", editV2(t, "bytes: 64MiB", "bytes: 64MiB\n        m: 8"), 6, 9, "$.streams[0].ops[0]", "m, n, k and dtype belong to a gemm; a all-gather op takes only bytes", 0},
		{"comm bytes out of range", editV2(t, "bytes: 64MiB", "bytes: 0"), 8, 16, "$.streams[0].ops[0].bytes", "bytes is 0; allowed 1B..1TiB per rank", 0},
		{"one GPU with a collective", editV2(t, "gpus: 2", "gpus: 1"), 2, 7, "$.gpus", "gpus is 1; op ag is a collective (all-gather), which needs at least 2", 0},
		// The walk over lists.
		{"streams not a list", "name: tp\ngpus: 2\nstreams: {name: tp}\n", 3, 1, "$.streams", "streams is a mapping, not a list; want a list of mappings of name, ops", 0},
		{"op not a mapping", editV2(t, "      - name: ag\n        kind: all-gather\n        bytes: 64MiB\n", "      - ag\n"), 6, 9, "$.streams[0].ops[0]",
			`streams[0].ops[0] is "ag", not a mapping; want a mapping of name, kind, m, n, k, dtype, bytes, count, after, decompose`, 0},
		{"after not a list", editV2(t, "after: [ag]", "after: ag"), 17, 9, "$.streams[1].ops[0].after",
			`streams[1].ops[0].after is "ag", not a list; want a list of op references such as [ag] or [ag[i], rs[3]]`, 0},
		{"after entry not text", editV2(t, "after: [ag]", "after: [[ag]]"), 17, 17, "$.streams[1].ops[0].after[0]", "streams[1].ops[0].after[0] is a list, not text", 0},
		{"unknown op field", editV2(t, "        decompose: 4\n", "        decompse: 4\n"), 18, 9, "$.streams[1].ops[0].decompse",
			`unknown field "decompse" in streams[1].ops[0] (did you mean decompose?); allowed name, kind, m, n, k, dtype, bytes, count, after, decompose`, 0},
		{"unknown stream field", editV2(t, "    ops:\n      - name: qkv", "    opps:\n      - name: qkv"), 9, 5, "$.streams[1].ops",
			// Then, on line 10: unknown field "opps" in streams[1] (did you mean ops?).
			"streams[1].ops is missing; give it at least one, or remove it", 2},
		{"leading zero in an op", editV2(t, "m: 8192", "m: 08192"), 13, 12, "$.streams[1].ops[0].m", "streams[1].ops[0].m is 08192, ambiguous", 0},
		{"wrong type in an op", editV2(t, "decompose: 4", "decompose: four"), 18, 20, "$.streams[1].ops[0].decompose", `streams[1].ops[0].decompose is "four", not a whole number`, 0},
		{"unquoted instance reference in a flow list", editV2(t, "after: [ag]", "after: [ag[0]]"), 17, 19, "", "an op reference with an instance inside [ ] needs quotes", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.src), "bad.yaml", h200())
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("Parse error = %v (%T), want *FileError", err, err)
			}
			p := fe.Problems[0]
			if p.Line != tt.line || p.Col != tt.col || p.Path != tt.path || !strings.Contains(p.Msg, tt.msg) {
				t.Errorf("first problem = %d:%d: %s: %s\nwant          %d:%d: %s: ...%s...", p.Line, p.Col, p.Path, p.Msg, tt.line, tt.col, tt.path, tt.msg)
			}
			if want := max(tt.problems, 1); len(fe.Problems) != want {
				t.Errorf("%d problems, want %d:\n%v", len(fe.Problems), want, err)
			}
			for line := range strings.SplitSeq(err.Error(), "\n") {
				if !strings.HasPrefix(line, "bad.yaml:") || !strings.Contains(line, "; ") {
					t.Errorf("problem line %q is not file:line:col: what; allowed", line)
				}
			}
		})
	}
}

func TestMarshalRoundTripV2(t *testing.T) {
	tp := baseV2Scenario()
	tp.Description, tp.Source, tp.Reps = "a TP pair: \"quoted\", with: colons", "Llama-3 70B", 5
	tp.Strategy = Strategy{Launch: CommFirst, CommPriority: -5, Decompose: 8}
	streams := Scenario{Name: "streams", GPUs: 2, Streams: []StreamSpec{
		{Name: "compute", Ops: []StreamOp{
			{Name: "g", Kind: OpKind(GEMM), M: 4096, N: 4096, K: 4096, DType: FP8, Count: 16},
			{Kind: OpKind(Stream), Bytes: 1 << 30, After: []string{"rs[3]"}},
		}},
		{Name: "comm", Ops: []StreamOp{
			{Name: "ag", Kind: OpKind(AllGather), Bytes: 4 << 20, Count: 64},
			{Name: "rs", Kind: OpKind(ReduceScatter), Bytes: 4 << 20, Count: 16, After: []string{"g[i]", "ag"}},
		}},
	}}
	offload := Scenario{Name: "offload", GPUs: 1, Streams: []StreamSpec{
		{Name: "c", Ops: []StreamOp{{Name: "n", Kind: OpKind(GEMM), M: 8192, N: 8192, K: 8192, DType: BF16}}},
		{Name: "pcie", Ops: []StreamOp{{Name: "null", Kind: OpKind(HostSwap), Bytes: 256 << 20, After: []string{"n"}}}},
	}}
	for _, sc := range []Scenario{tp, streams, offload} {
		t.Run(sc.Name, func(t *testing.T) {
			out, err := Marshal(sc)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			got, err := Parse(out, sc.Name+".yaml", h200())
			if err != nil {
				t.Fatalf("Parse(Marshal(sc)): %v\n%s", err, out)
			}
			if !got.Equal(sc.WithLead()) {
				t.Errorf("round trip changed the scenario\n got %+v\nwant %+v\n%s", got, sc.WithLead(), out)
			}
			// What Parse returns (lead ops filled) round-trips as it is.
			again, err := Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			if back, err := Parse(again, "again.yaml", h200()); err != nil || !back.Equal(got) {
				t.Errorf("Parse(Marshal(Parse(...))) = %+v, %v\nwant %+v", back, err, got)
			}
			text := string(out)
			for _, bad := range []string{"\ncompute:", "\ncomm:", `"n":`} {
				if strings.Contains(text, bad) {
					t.Errorf("a format-2 scenario should be written without %q:\n%s", bad, text)
				}
			}
			if !strings.Contains(text, "\nstreams:\n") || (sc.Name != "offload" && !strings.Contains(text, "\n    n: ")) {
				t.Errorf("streams should be written, with GEMMs' n bare:\n%s", text)
			}
		})
	}
}

func TestWithLead(t *testing.T) {
	g1 := StreamOp{Name: "g1", Kind: OpKind(GEMM), M: 64, N: 32, K: 16, DType: BF16, Count: 3, After: []string{"ag"}}
	g2 := StreamOp{Name: "g2", Kind: OpKind(Stream), Bytes: 1 << 20}
	ag := StreamOp{Name: "ag", Kind: OpKind(AllGather), Bytes: 8 << 20}
	rs := StreamOp{Name: "rs", Kind: OpKind(ReduceScatter), Bytes: 1 << 20}
	pair := Scenario{Name: "p", GPUs: 2, Compute: ComputeOp{Kind: Stream, Bytes: 5}, Comm: CommOp{Collective: AllReduce, Bytes: 7}}
	for _, tc := range []struct {
		name          string
		sc            Scenario
		compute, comm any
	}{
		{"pair unchanged", pair, pair.Compute, pair.Comm},
		{"first of each role in stream order", Scenario{Streams: []StreamSpec{{Name: "c", Ops: []StreamOp{g1, g2}}, {Name: "m", Ops: []StreamOp{ag, rs}}}},
			ComputeOp{Kind: GEMM, M: 64, N: 32, K: 16, DType: BF16}, CommOp{Collective: AllGather, Bytes: 8 << 20}},
		{"comm stream first", Scenario{Streams: []StreamSpec{{Name: "m", Ops: []StreamOp{rs, ag}}, {Name: "c", Ops: []StreamOp{g2, g1}}}},
			ComputeOp{Kind: Stream, Bytes: 1 << 20}, CommOp{Collective: ReduceScatter, Bytes: 1 << 20}},
		{"stale pair replaced", Scenario{Compute: pair.Compute, Comm: pair.Comm, Streams: []StreamSpec{{Name: "c", Ops: []StreamOp{g2}}}},
			ComputeOp{Kind: Stream, Bytes: 1 << 20}, CommOp{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.sc.WithLead()
			if got.Compute != tc.compute || got.Comm != tc.comm {
				t.Errorf("lead = %+v, %+v; want %+v, %+v", got.Compute, got.Comm, tc.compute, tc.comm)
			}
			if !reflect.DeepEqual(got.Streams, tc.sc.Streams) {
				t.Errorf("WithLead changed the streams")
			}
		})
	}
}

// TestV2Examples parses the example files of testdata/v2 and checks the
// graphs they make; every one is far below MaxFileSize (a realistic layer
// of 16 ops takes about 2KiB, so the cap needs no raising).
func TestV2Examples(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "v2", "*.yaml"))
	if err != nil || len(files) < 3 {
		t.Fatalf("examples: %v, %v", files, err)
	}
	want := map[string]struct {
		ops, instances int
		check          func(t *testing.T, g *Graph)
	}{
		"tp-ag-gemm-decomposed-4.yaml": {2, 8, func(t *testing.T, g *Graph) {
			ag, qkv := g.Ops[0], g.Ops[1]
			if ag.Chunks != 4 || qkv.Chunks != 4 || ag.Feeds != 1 || qkv.FedBy != 0 || qkv.Compute.M != 2048 || ag.Comm.Bytes != 16<<20 {
				t.Errorf("decomposed pair = %+v / %+v", ag, qkv)
			}
		}},
		"gemm-stream-16-next-to-ag-64.yaml": {2, 80, nil},
		"layer-16-ops.yaml": {16, 17, func(t *testing.T, g *Graph) {
			if len(g.Streams) != 3 || g.Streams[0].Role != RoleCompute || g.Streams[2].Role != RoleComm {
				t.Errorf("streams = %+v", g.Streams)
			}
		}},
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			w, known := want[filepath.Base(file)]
			if !known {
				t.Fatalf("no expectations for %s", file)
			}
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if len(data) > MaxFileSize/16 {
				t.Errorf("%d bytes: examples should stay far below MaxFileSize (%d)", len(data), MaxFileSize)
			}
			sc, err := Load(file, h200())
			if err != nil {
				t.Fatal(err)
			}
			if !sc.IsGraph() || sc.Compute.Kind == "" || sc.Comm.Collective == "" {
				t.Errorf("scenario %+v lacks streams or lead ops", sc)
			}
			g, err := sc.Graph(sc.Strategy)
			if err != nil {
				t.Fatal(err)
			}
			if len(g.Ops) != w.ops || len(g.Instances) != w.instances {
				t.Errorf("%d ops, %d instances; want %d, %d", len(g.Ops), len(g.Instances), w.ops, w.instances)
			}
			if w.check != nil {
				w.check(t, g)
			}
		})
	}
}

func TestPositionWithIndexes(t *testing.T) {
	src := baseV2 + "reps: 3\n"
	d := &decoder{knobs: StrategyKnobs()}
	if _, ok := d.decode([]byte(src)); !ok || len(d.problems) > 0 {
		t.Fatalf("decode: %v", d.problems)
	}
	for _, tc := range []struct {
		path      string
		line, col int
		present   bool
	}{
		{"$.streams", 3, 1, true},
		{"$.streams[0]", 4, 5, true},
		{"$.streams[1].name", 9, 11, true},
		{"$.streams[1].ops", 10, 5, true},
		{"$.streams[1].ops[0]", 11, 9, true},
		{"$.streams[1].ops[0].m", 13, 12, true},
		{"$.streams[1].ops[0].after", 17, 9, true},
		{"$.streams[1].ops[0].after[0]", 17, 17, true},
		{"$.streams[0].ops[0].after", 6, 9, false},     // missing: its op
		{"$.streams[1].ops[0].after[1]", 17, 9, false}, // past the list: the key
		{"$.streams[2].name", 3, 1, false},             // past the streams: the key
		{"$.streams[0].ops[0].m", 6, 9, false},
		{"$.streams[x]", 1, 1, false}, // not a path Validate makes: the first field
		{"$.reps", 19, 7, true},
	} {
		line, col, present := d.position(tc.path)
		if line != tc.line || col != tc.col || present != tc.present {
			t.Errorf("position(%s) = %d:%d %v, want %d:%d %v", tc.path, line, col, present, tc.line, tc.col, tc.present)
		}
	}
}
