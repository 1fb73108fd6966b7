package scenarios

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// collectiveSuite is the built-in suite without its host copies (which
// TestHostCopySuite checks).
func collectiveSuite() []Scenario {
	var out []Scenario
	for _, sc := range Builtin() {
		if !sc.Comm.Collective.IsHostCopy() {
			out = append(out, sc)
		}
	}
	return out
}

func TestBuiltinSuite(t *testing.T) {
	suite := collectiveSuite()
	if len(suite) < 32 {
		t.Fatalf("Builtin has %d scenarios, want at least 32", len(suite))
	}
	namePat := regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	models := map[string]string{
		"llama3-70b-":    srcLlama70,
		"llama3-405b-":   srcLlama405,
		"gpt3-175b-":     srcGPT3,
		"mixtral-8x22b-": srcMixtral,
	}
	abbrev := map[Collective]string{AllGather: "-ag-", ReduceScatter: "-rs-", AllReduce: "-ar-", AllToAll: "-a2a-"}
	seen := map[string]bool{}
	colls := map[Collective]int{}
	dtypes := map[DType]int{}
	streams, decodeLike := 0, 0
	for _, sc := range suite {
		t.Run(sc.Name, func(t *testing.T) {
			if seen[sc.Name] {
				t.Errorf("duplicate name")
			}
			seen[sc.Name] = true
			if !namePat.MatchString(sc.Name) {
				t.Errorf("name is not lower-case and dash-separated")
			}
			if err := Validate(sc, h200()); err != nil {
				t.Errorf("invalid on H200: %v", err)
			}
			if sc.GPUs != 2 || sc.Profile != "h200" || sc.Reps != 0 || sc.Strategy != (Strategy{}) {
				t.Errorf("want gpus 2, profile h200, no reps and the default strategy; got %d, %q, %d, %v", sc.GPUs, sc.Profile, sc.Reps, sc.Strategy)
			}
			matched := false
			for prefix, src := range models {
				if strings.HasPrefix(sc.Name, prefix) {
					matched = true
					if !strings.HasPrefix(sc.Source, src+", ") {
						t.Errorf("source %q should start with the model, %q", sc.Source, src)
					}
				}
			}
			if !matched {
				t.Errorf("name does not start with a known model")
			}
			if len(sc.Source) < len("Llama-3 70B (...), TP=8: x") {
				t.Errorf("source %q is too short to name model, layer and parallelism", sc.Source)
			}
			if d := sc.Description; !strings.HasSuffix(d, ".") || strings.Contains(d, ". ") || len(d) < 40 {
				t.Errorf("description %q should be one sentence", d)
			}
			if !strings.Contains(sc.Name, abbrev[sc.Comm.Collective]) {
				t.Errorf("name should say the collective (%s)", abbrev[sc.Comm.Collective])
			}
			if want := sizeSuffix(sc.Comm.Bytes); !strings.HasSuffix(sc.Name, want) {
				t.Errorf("name should end in the per-rank size %s", want)
			}
			if sc.Comm.Bytes < 16<<20 || sc.Comm.Bytes > 1<<30 {
				t.Errorf("per-rank size %s is outside 16MiB..1GiB", sc.Comm.Bytes)
			}
		})
		colls[sc.Comm.Collective]++
		switch sc.Compute.Kind {
		case Stream:
			streams++
		case GEMM:
			dtypes[sc.Compute.DType]++
			if min(sc.Compute.M, sc.Compute.K) <= 256 && estimateCompute(sc.Compute).memoryBound {
				decodeLike++
			}
		}
	}
	for c, want := range map[Collective]int{AllGather: 10, AllToAll: 10, ReduceScatter: 4, AllReduce: 4} {
		if colls[c] < want {
			t.Errorf("%d %s scenarios, want at least %d", colls[c], c, want)
		}
	}
	if dtypes[BF16] < len(suite)/2 || dtypes[FP8] < 2 || dtypes[FP16] < 2 {
		t.Errorf("dtypes %v: want mostly bf16 and a few fp8 and fp16", dtypes)
	}
	if streams < 2 {
		t.Errorf("%d stream ops, want at least 2", streams)
	}
	if decodeLike < 4 {
		t.Errorf("%d memory-bound small-batch GEMMs, want at least 4", decodeLike)
	}
}

// sizeSuffix is the "-224m" or "-1g" a built-in name ends with.
func sizeSuffix(b ByteSize) string {
	if b%(1<<30) == 0 {
		return fmt.Sprintf("-%dg", b>>30)
	}
	return fmt.Sprintf("-%dm", b>>20)
}

func TestBuiltinIsFresh(t *testing.T) {
	a := Builtin()
	a[0].Name = "changed"
	a[1].Comm.Bytes = 1
	b := Builtin()
	if b[0].Name == "changed" || b[1].Comm.Bytes == 1 {
		t.Error("Builtin returned shared state")
	}
}

// estimate is the rough H200 model the suite's sizes were chosen with.
type estimate struct {
	seconds     float64
	memoryBound bool
}

func estimateCompute(c ComputeOp) estimate {
	switch c.Kind {
	case Stream:
		return estimate{seconds: 2 * float64(c.Bytes) / 3.6e12, memoryBound: true}
	case GEMM:
		peak := map[DType]float64{BF16: 650e12, FP16: 650e12, FP8: 1300e12, FP32: 50e12}[c.DType]
		m, n, k := float64(c.M), float64(c.N), float64(c.K)
		compute := 2 * m * n * k / peak
		memory := (m*k + k*n + m*n) * float64(c.DType.Size()) / 3.6e12
		return estimate{seconds: max(compute, memory), memoryBound: memory > compute}
	}
	return estimate{}
}

func estimateComm(c CommOp) float64 {
	sent := float64(c.Bytes) // all-gather, reduce-scatter, all-reduce on 2 GPUs
	if c.Collective == AllToAll {
		sent /= 2
	}
	return sent/360e9 + 20e-6
}

func estimateClass(sc Scenario) (tComp, tComm float64, class string) {
	tComp, tComm = estimateCompute(sc.Compute).seconds, estimateComm(sc.Comm)
	switch {
	case tComp > 1.15*tComm:
		class = "gemm-long"
	case tComm > 1.15*tComp:
		class = "comm-long"
	default:
		class = "balanced"
	}
	return tComp, tComm, class
}

func TestBuiltinEstimatedClasses(t *testing.T) {
	suite := collectiveSuite()
	doc, err := os.ReadFile("suite.go")
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	var table strings.Builder
	for _, sc := range suite {
		tComp, tComm, class := estimateClass(sc)
		counts[class]++
		row := fmt.Sprintf("%-52s %-27s %-22s %6.3f %6.3f  %s", sc.Name, sc.Compute, sc.Comm, tComp*1e3, tComm*1e3, class)
		fmt.Fprintf(&table, "//\t%s\n", row)
		// The table in Builtin's doc comment must say the same.
		if !regexp.MustCompile(`(?m)^//\t` + regexp.QuoteMeta(sc.Name) + ` .*` + class + `$`).Match(doc) {
			t.Errorf("suite.go's table lacks the row: %s", row)
		}
	}
	t.Logf("estimated classes on an H200 pair (ms):\n%s", table.String())
	for _, class := range []string{"gemm-long", "comm-long", "balanced"} {
		if counts[class] < len(suite)/4 {
			t.Errorf("%d %s scenarios of %d, want roughly a third", counts[class], class, len(suite))
		}
	}
}

func TestNames(t *testing.T) {
	names, suite := Names(), Builtin()
	if len(names) != len(suite) {
		t.Fatalf("%d names for %d scenarios", len(names), len(suite))
	}
	for i := range suite {
		if names[i] != suite[i].Name {
			t.Errorf("Names()[%d] = %q, want %q", i, names[i], suite[i].Name)
		}
	}
}

func TestFind(t *testing.T) {
	for _, sc := range Builtin() {
		got, err := Find(sc.Name)
		if err != nil || got != sc {
			t.Errorf("Find(%q) = %v, %v", sc.Name, got.Name, err)
		}
	}
	tests := []struct {
		query string
		want  []string // suggestions, in order; nil means none
		check func(s string) bool
	}{
		{"llama70b-ag", nil, func(s string) bool { return strings.HasPrefix(s, "llama3-70b-") && strings.Contains(s, "-ag-") }},
		{"llama3-70b-tp8-qkv-ag-256m", []string{"llama3-70b-tp8-qkv-ag-224m"}, nil},
		{"gpt3-175b-tp8-o-proj-rs", []string{"gpt3-175b-tp8-o-proj-rs-168m"}, nil},
		{"LLAMA3-70B-TP8-QKV-AG-224M", []string{"llama3-70b-tp8-qkv-ag-224m"}, nil},
		{"router", []string{"mixtral-8x22b-ep2-router-a2a-192m"}, nil},
		{"quantum-annealer", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			_, err := Find(tt.query)
			var ue *UnknownError
			if !errors.As(err, &ue) {
				t.Fatalf("Find(%q) error = %v, want *UnknownError", tt.query, err)
			}
			if ue.Name != tt.query || len(ue.Suggestions) > 3 {
				t.Errorf("UnknownError = %+v", ue)
			}
			switch {
			case tt.check != nil:
				if len(ue.Suggestions) != 3 {
					t.Errorf("suggestions %v, want 3", ue.Suggestions)
				}
				for _, s := range ue.Suggestions {
					if !tt.check(s) {
						t.Errorf("suggestion %q does not fit %q", s, tt.query)
					}
				}
			case tt.want == nil:
				if len(ue.Suggestions) != 0 {
					t.Errorf("suggestions %v, want none", ue.Suggestions)
				}
			default:
				if len(ue.Suggestions) < len(tt.want) || !equalStrings(ue.Suggestions[:len(tt.want)], tt.want) {
					t.Errorf("suggestions %v, want %v first", ue.Suggestions, tt.want)
				}
			}
		})
	}
}

func TestUnknownErrorMessage(t *testing.T) {
	tests := []struct {
		err  UnknownError
		want string
	}{
		{UnknownError{Name: "llama70b-ag", Suggestions: []string{"a", "b", "c"}},
			`unknown scenario "llama70b-ag"; did you mean a, b, c? (c3lab scenarios lists all)`},
		{UnknownError{Name: "zzz"}, `unknown scenario "zzz" (c3lab scenarios lists all)`},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
