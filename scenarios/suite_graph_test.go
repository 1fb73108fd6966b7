package scenarios

import (
	"fmt"
	"strings"
	"testing"
)

// graphSuite is the built-in suite's stream and layer scenarios.
func graphSuite() []Scenario {
	var out []Scenario
	for _, sc := range Builtin() {
		if sc.IsGraph() {
			out = append(out, sc)
		}
	}
	return out
}

// graphMemory is the device memory one GPU needs for every op buffer of
// the graph at once, each op instance with buffers of its own (the
// chunks of a decomposed op are slices of one buffer), as DeviceMemory
// counts a pair's, plus the runtime reserve.
func graphMemory(t *testing.T, sc Scenario) int64 {
	g, err := sc.Graph(Strategy{})
	if err != nil {
		t.Fatal(err)
	}
	total := int64(RuntimeReserveBytes)
	for _, o := range g.Ops {
		one := Scenario{GPUs: g.GPUs}
		if o.Role == RoleComm {
			one.Comm = o.Comm
		} else {
			one.Compute = o.Compute
		}
		f := one.DeviceMemory(Strategy{})
		total = addSat(total, mulSat(int64(o.Count), f.Compute+f.Comm))
	}
	return total
}

func TestGraphSuite(t *testing.T) {
	suite := graphSuite()
	if len(suite) < 16 {
		t.Fatalf("%d stream and layer scenarios, want at least 16", len(suite))
	}
	r := H200Rates()
	models := map[string]string{"llama3-8b-": srcLlama8, "llama3-70b-": srcLlama70, "llama3-405b-": srcLlama405, "mixtral-8x22b-": srcMixtral}
	overlap := map[string]bool{}
	for _, b := range graphBuiltins() {
		overlap[gpuName(b.name, b.home())] = b.overlap
	}
	one := h200()
	one.MaxGPUs = 1
	kinds := map[OpKind]int{}
	decomposed := map[int]int{}
	seen := map[string]bool{}
	for _, sc := range suite {
		t.Run(sc.Name, func(t *testing.T) {
			if seen[sc.Name] {
				t.Error("duplicate name")
			}
			seen[sc.Name] = true
			if !strings.HasSuffix(sc.Name, fmt.Sprintf("-%dgpu", sc.GPUs)) || degreeInName.MatchString(sc.Name) {
				t.Errorf("name should end in the GPU count it runs on (-%dgpu) and state no parallel degree", sc.GPUs)
			}
			matched := false
			for prefix, src := range models {
				if strings.HasPrefix(sc.Name, prefix) {
					matched = strings.HasPrefix(sc.Source, src+", shapes from ")
				}
			}
			if !matched {
				t.Errorf("name and source should start with the model the shapes come from: %q", sc.Source)
			}
			lim := h200()
			if sc.GPUs == 1 {
				lim = one
			}
			if err := Validate(sc, lim); err != nil {
				t.Errorf("invalid on H200: %v", err)
			}
			if sc.Profile != "h200" || sc.Reps != 0 || sc.Strategy != (Strategy{}) {
				t.Errorf("want profile h200, no reps and the default strategy")
			}
			if lead := sc.WithLead(); lead.Compute != sc.Compute || lead.Comm != sc.Comm || sc.Compute.Kind == "" || sc.Comm.Collective == "" {
				t.Errorf("Compute and Comm should be the lead ops, got %v and %v", sc.Compute, sc.Comm)
			}
			if d := sc.Description; !strings.HasSuffix(d, ". "+graphRuns(sc)+".") || len(d) < 80 {
				t.Errorf("description %q should say what it shows, then what it runs", d)
			}
			g, err := sc.Graph(Strategy{})
			if err != nil {
				t.Fatalf("Graph: %v", err)
			}
			if n := len(g.Instances); n < 2 || n > 256 {
				t.Errorf("%d op instances, want 2..256", n)
			}
			if mem := graphMemory(t, sc); mem > h200Memory {
				t.Errorf("needs %s per GPU, more than an H200's %s", fmtBytes(mem), fmtBytes(h200Memory))
			}
			serial, ideal, err := r.Estimate(sc, Strategy{})
			if err != nil {
				t.Fatal(err)
			}
			s := serial / ideal
			t.Logf("T_serial %.3f ms, T_ideal %.3f ms, S_ideal %.2f", serial*1e3, ideal*1e3, s)
			if ideal < 0.2e-3 || ideal > 50e-3 {
				t.Errorf("T_ideal %.3f ms is outside 0.2..50 ms", ideal*1e3)
			}
			if s < 1-1e-9 || s > float64(len(g.Streams)) {
				t.Errorf("S_ideal %.3f is outside 1..%d (its streams)", s, len(g.Streams))
			}
			switch {
			case overlap[sc.Name] && s <= 1.05:
				t.Errorf("meant to overlap, but S_ideal is %.3f", s)
			case !overlap[sc.Name] && s > 1+1e-9:
				t.Errorf("a chain, but S_ideal is %.3f", s)
			}
			// A decomposed op hands its data over chunk by chunk.
			for _, o := range g.Ops {
				if o.Chunks > 1 && o.Feeds < 0 && o.FedBy < 0 {
					t.Errorf("%s is decomposed but hands no data over", o.Name)
				}
			}
			// On 4 and 8 GPUs the streams are rebuilt and still valid.
			for _, n := range []int{4, 8} {
				if _, err := OnGPUs(sc, n).Graph(Strategy{}); err != nil {
					t.Errorf("on %d GPUs: %v", n, err)
				}
			}
		})
		g, _ := sc.Graph(Strategy{})
		for _, o := range g.Ops {
			if o.Role == RoleComm {
				kinds[OpKind(o.Comm.Collective)]++
			} else {
				kinds[OpKind(o.Compute.Kind)]++
			}
			if o.Chunks > 1 && o.Role == RoleCompute {
				decomposed[o.Chunks]++
			}
		}
	}
	for _, k := range []OpKind{OpKind(GEMM), OpKind(Stream), OpKind(AllGather), OpKind(ReduceScatter), OpKind(AllReduce), OpKind(AllToAll), OpKind(HostToDevice), OpKind(DeviceToHost)} {
		if kinds[k] == 0 {
			t.Errorf("no %s op in the stream scenarios", k)
		}
	}
	for _, n := range []int{2, 4, 8} {
		if decomposed[n] < 4 {
			t.Errorf("%d pairs decomposed into %d chunks, want the TP pairs of both models", decomposed[n], n)
		}
	}
}

// The decomposed TP pairs hand the data over chunk by chunk, and their
// estimated T_ideal falls as the chunks get finer up to 8.
func TestGraphSuiteTPDecomposition(t *testing.T) {
	r := H200Rates()
	for _, stem := range []string{"llama3-70b-tp-qkv-ag-gemm", "llama3-70b-tp-o-proj-gemm-rs", "llama3-405b-tp-qkv-ag-gemm", "llama3-405b-tp-o-proj-gemm-rs"} {
		prev := 0.0
		for _, suffix := range []string{"", "-decomp2", "-decomp4"} {
			sc, err := Find(stem + suffix + "-2gpu")
			if err != nil {
				t.Fatal(err)
			}
			g, err := sc.Graph(Strategy{})
			if err != nil {
				t.Fatal(err)
			}
			fed := 0
			for _, o := range g.Ops {
				if o.Feeds >= 0 {
					fed++
				}
			}
			if fed != 1 {
				t.Errorf("%s: %d ops feed another, want the pair's producer", sc.Name, fed)
			}
			_, ideal, err := r.Estimate(sc, Strategy{})
			if err != nil {
				t.Fatal(err)
			}
			if prev > 0 && ideal >= prev {
				t.Errorf("%s: T_ideal %.3f ms, not below the coarser pair's %.3f ms", sc.Name, ideal*1e3, prev*1e3)
			}
			prev = ideal
		}
	}
}
