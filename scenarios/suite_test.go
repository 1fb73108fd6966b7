package scenarios

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// collectiveSuite is the built-in suite without its host copies (which
// TestHostCopySuite checks).
func collectiveSuite() []Scenario {
	var out []Scenario
	for _, sc := range Builtin() {
		if !sc.IsGraph() && !sc.Comm.Collective.IsHostCopy() {
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
			if !strings.HasSuffix(sc.Name, "-2gpu") {
				t.Errorf("name should end in the GPU count it runs on, -2gpu")
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
			if d := sc.Description; !strings.HasSuffix(d, ". "+sc.Runs()+".") || strings.Count(d, ". ") != 1 || len(d) < 40 {
				t.Errorf("description %q should be one sentence of what it shows, then what it runs", d)
			}
			if m := degreeInName.FindString(sc.Name); m != "" {
				t.Errorf("name claims a parallel degree (%s) that the GPUs it runs on need not have", m)
			}
			if !strings.Contains(sc.Name, abbrev[sc.Comm.Collective]) {
				t.Errorf("name should say the collective (%s)", abbrev[sc.Comm.Collective])
			}
			if want := sizeSuffix(sc.Comm.Bytes) + "-2gpu"; !strings.HasSuffix(sc.Name, want) {
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
			if min(sc.Compute.M, sc.Compute.K) <= 256 && memoryBound(sc.Compute) {
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

// memoryBound reports whether a GEMM is memory-bound at the ceilings
// measured on H200s.
func memoryBound(c ComputeOp) bool {
	r := H200Rates()
	return c.Kind == Stream || gemmBytes(c)/r.hbm > c.FLOPs()/r.peak[c.DType]
}

// pairTable is a pair scenario's row in the suite's doc tables: its ops,
// their times estimated from the rates measured on H200s, and its class.
func pairTable(sc Scenario) (row, class string) {
	r := H200Rates()
	tComp, tComm := r.Compute(sc.Compute), r.Comm(sc.Comm, sc.GPUs)
	class = BalanceClass(tComp, tComm)
	return fmt.Sprintf("%-56s %-27s %-22s %6.3f %6.3f %5.2f  %s", sc.Name, sc.Compute, sc.Comm, tComp*1e3, tComm*1e3, tComm/tComp, class), class
}

// TestBuiltinMeasuredClasses checks that the pair scenarios split 12
// GEMM-long, 12 balanced and 12 comm-long on 2 x H200 by the rates
// measured there, as the table in Builtin's doc comment says.
func TestBuiltinMeasuredClasses(t *testing.T) {
	doc, err := os.ReadFile("suite.go")
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	var table strings.Builder
	for _, sc := range collectiveSuite() {
		row, class := pairTable(sc)
		counts[class]++
		fmt.Fprintf(&table, "//\t%s\n", row)
		if !regexp.MustCompile(`(?m)^//\t` + regexp.QuoteMeta(row) + `$`).Match(doc) {
			t.Errorf("suite.go's table lacks the row: %s", row)
		}
	}
	t.Logf("classes on 2 x H200 by measured rates (ms):\n%s", table.String())
	want := map[string]int{ClassGEMMLong: 12, ClassBalanced: 12, ClassCommLong: 12}
	for class, n := range want {
		if counts[class] != n {
			t.Errorf("%d %s pair scenarios, want %d", counts[class], class, n)
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
		if err != nil || !got.Equal(sc) {
			t.Errorf("Find(%q) = %v, %v", sc.Name, got.Name, err)
		}
	}
	tests := []struct {
		query string
		want  []string // suggestions, in order; nil means none
		check func(s string) bool
	}{
		{"llama70b-ag", nil, func(s string) bool { return strings.HasPrefix(s, "llama3-70b-") }},
		{"llama3-70b-tp-qkv-ag-256m-2gpu", []string{"llama3-70b-tp-qkv-ag-224m-2gpu"}, nil},
		{"gpt3-175b-tp-o-proj-rs", []string{"gpt3-175b-tp-o-proj-rs-168m-2gpu"}, nil},
		{"LLAMA3-70B-TP-QKV-AG-224M-2GPU", []string{"llama3-70b-tp-qkv-ag-224m-2gpu"}, nil},
		{"router", []string{"mixtral-8x22b-ep-router-a2a-192m-2gpu"}, nil},
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
				if len(ue.Suggestions) < len(tt.want) || !slices.Equal(ue.Suggestions[:len(tt.want)], tt.want) {
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

// degreeInName matches a parallelism with a degree in a scenario name
// ("-tp8-", "-fsdp2-"): a GPU count the scenario does not necessarily run.
var degreeInName = regexp.MustCompile(`-(tp|sp|pp|dp|ep|fsdp|ulysses)[0-9]+-`)

// countRules are the counts a scenario's texts may state, each with the
// value it must have on n GPUs.
var countRules = []struct {
	what string
	re   *regexp.Regexp
	want func(n int) int
}{
	{"GPU count", regexp.MustCompile(`\b(\d+)[ -]GPUs?\b`), func(n int) int { return n }},
	{"peer count", regexp.MustCompile(`\b(\d+) peers?\b`), func(n int) int { return n - 1 }},
	{"shard count", regexp.MustCompile(`\b(\d+) shards?\b`), func(n int) int { return n - 1 }},
	{"shards sent", regexp.MustCompile(`\bsends (\d+)(?:[ ,;)]|$)`), func(n int) int { return n - 1 }},
	{"block count", regexp.MustCompile(`\binto (\d+) blocks\b`), func(n int) int { return n }},
	{"ranks", regexp.MustCompile(`\b(\d+) ranks?\b`), func(n int) int { return n }},
}

// TestSuiteTextsMatchWhatRuns checks every built-in's description and
// source on every GPU count sweep --gpus allows: each GPU, peer or shard
// count they state must be the one the scenario runs, and the description
// must say what each GPU sends, as the scenario's fields give it.
func TestSuiteTextsMatchWhatRuns(t *testing.T) {
	for _, base := range Builtin() {
		for n := base.Comm.Collective.MinGPUs(); n <= 8; n++ {
			if base.IsGraph() && n%2 == 1 && n > 1 {
				continue // stream scenarios split their data over 2, 4 or 8 GPUs
			}
			sc := OnGPUs(base, n)
			stem, _, _ := splitGPUName(base.Name)
			if sc.GPUs != n || sc.Name != gpuName(stem, n) || (!base.IsGraph() && (sc.Compute != base.Compute || sc.Comm != base.Comm)) {
				t.Fatalf("OnGPUs(%s, %d) changed more than the GPU count: %+v", base.Name, n, sc)
			}
			text := sc.Description + " | " + sc.Source
			for _, r := range countRules {
				for _, m := range r.re.FindAllStringSubmatch(text, -1) {
					if got, _ := strconv.Atoi(m[1]); got != r.want(n) {
						t.Errorf("%s on %d GPUs states %q: a %s of %d, but it runs %d\n%s", sc.Name, n, m[0], r.what, got, r.want(n), text)
					}
				}
			}
			if n > 2 && strings.Contains(text, "its peer ") {
				t.Errorf("%s on %d GPUs speaks of one peer: %s", sc.Name, n, text)
			}
			if sc.IsGraph() {
				if !strings.HasSuffix(sc.Description, ". "+graphRuns(sc)+".") {
					t.Errorf("%s on %d GPUs: the description does not end in what runs: %s", sc.Name, n, sc.Description)
				}
				continue
			}
			sent := ByteSize(sc.Comm.LinkBytes(n)).Human()
			if sc.Comm.Collective.IsHostCopy() {
				sent = sc.Comm.Bytes.Human() // over PCIe, not to peers
			}
			if !strings.Contains(sc.Description, sc.Runs()) || !strings.Contains(sc.Runs(), sent) {
				t.Errorf("%s on %d GPUs: the description does not say that each GPU sends %s:\n%s", sc.Name, n, sent, sc.Description)
			}
		}
	}
	// A scenario that is not a built-in only changes its GPU count.
	mine := Builtin()[0]
	mine.Name, mine.Description = "mine", "my own words"
	if got := OnGPUs(mine, 4); got.GPUs != 4 || got.Description != "my own words" {
		t.Errorf("OnGPUs rewrote a user's scenario: %+v", got)
	}
}

// TestFindResolvesOldNames checks that the names the suite had before
// (which committed results and recordings use) still find the scenario
// under its current name, re-sized or not, and that a built-in's name with
// another GPU count finds it on that many GPUs.
func TestFindResolvesOldNames(t *testing.T) {
	for _, tc := range []struct{ old, now string }{
		{"llama3-70b-tp8-qkv-ag-224m", "llama3-70b-tp-qkv-ag-224m-2gpu"},
		{"llama3-70b-tp-qkv-ag-224m", "llama3-70b-tp-qkv-ag-224m-2gpu"},
		{"llama3-70b-fsdp2-ffn-up-ag-224m", "llama3-70b-fsdp-ffn-up-ag-224m-2gpu"},
		{"mixtral-8x22b-ep2-router-a2a-192m", "mixtral-8x22b-ep-router-a2a-192m-2gpu"},
		{"llama3-70b-ulysses2-qkv-a2a-320m", "llama3-70b-ulysses-qkv-a2a-320m-2gpu"},
		{"gpt3-175b-tp8-dp2-qkv-wgrad-ar-256m", "gpt3-175b-tp-dp-qkv-wgrad-ar-192m-2gpu"},
		{"gpt3-175b-tp-dp-qkv-wgrad-ar-256m", "gpt3-175b-tp-dp-qkv-wgrad-ar-192m-2gpu"},
		{"mixtral-8x22b-ep-o-proj-a2a-144m", "mixtral-8x22b-ep-o-proj-a2a-96m-2gpu"},
		{"llama3-70b-qkv-wgrad-optimizer-swap-96m", "llama3-70b-qkv-wgrad-optimizer-swap-48m-1gpu"},
		{"mixtral-8x22b-decode-expert-fetch-h2d-192m", "mixtral-8x22b-decode-expert-fetch-h2d-192m-1gpu"},
	} {
		sc, err := Find(tc.old)
		if err != nil || sc.Name != tc.now {
			t.Errorf("Find(%q) = %q, %v; want %q", tc.old, sc.Name, err, tc.now)
		}
		if now, ok := Renamed(tc.old); !ok || now != tc.now {
			t.Errorf("Renamed(%q) = %q, %v", tc.old, now, ok)
		}
	}
	current := map[string]bool{}
	for _, n := range Names() {
		current[n] = true
	}
	if got, want := len(renamed()), 36+44; got != want {
		t.Errorf("%d former names, want %d: the first names of the 36 collective pairs and the names of issue 14 of all 44 pairs", got, want)
	}
	for old, now := range renamed() {
		if current[old] || !current[now] {
			t.Errorf("alias %s -> %s: the old name must be gone and the new one a built-in", old, now)
		}
	}
	if _, ok := Renamed(Names()[0]); ok {
		t.Error("a current name reads as renamed")
	}
	// Other GPU counts.
	for _, tc := range []struct {
		name string
		gpus int // 0: not found
	}{
		{"llama3-70b-tp-qkv-ag-224m-4gpu", 4},
		{"llama3-70b-tp-qkv-ag-gemm-decomp4-8gpu", 8},
		{"llama3-8b-act-offload-d2h-2gpu", 2},
		{"llama3-70b-tp-qkv-ag-224m-1gpu", 0},
		{"llama3-70b-tp-qkv-ag-224m-65gpu", 0},
		{"llama3-70b-tp-qkv-ag-224m-04gpu", 0},
		{"llama3-70b-tp-qkv-ag-224m-gpu", 0},
	} {
		sc, err := Find(tc.name)
		switch {
		case tc.gpus == 0 && err == nil:
			t.Errorf("Find(%q) = %s on %d GPUs, want an error", tc.name, sc.Name, sc.GPUs)
		case tc.gpus > 0 && (err != nil || sc.GPUs != tc.gpus || sc.Name != tc.name):
			t.Errorf("Find(%q) = %q on %d GPUs, %v", tc.name, sc.Name, sc.GPUs, err)
		}
	}
}
