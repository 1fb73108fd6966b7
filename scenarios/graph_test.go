package scenarios

import (
	"errors"
	"strings"
	"testing"
)

func gemmOp(name string, m, n, k int) StreamOp {
	return StreamOp{Name: name, Kind: OpKind(GEMM), M: m, N: n, K: k, DType: BF16}
}

func commOp(name string, c Collective, b ByteSize) StreamOp {
	return StreamOp{Name: name, Kind: OpKind(c), Bytes: b}
}

func graphScenario(streams ...StreamSpec) Scenario {
	return Scenario{Name: "g", GPUs: 2, Streams: streams}
}

// durs gives every op of g the duration named by its name, for hand-made
// schedules.
func durs(g *Graph, d map[string]float64) []float64 {
	out := make([]float64, len(g.Ops))
	for i, o := range g.Ops {
		out[i] = d[o.Name]
	}
	return out
}

func TestGraphOfPairIsPaperCase(t *testing.T) {
	sc := Scenario{Name: "p", GPUs: 2, Compute: ComputeOp{Kind: GEMM, M: 8, N: 8, K: 8, DType: BF16}, Comm: CommOp{Collective: AllGather, Bytes: 1 << 20}}
	g, err := sc.Graph(Strategy{})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Ops) != 2 || g.Ops[0].Role != RoleCompute || g.Ops[1].Role != RoleComm || len(g.Instances) != 2 {
		t.Fatalf("pair graph = %+v", g)
	}
	for _, tc := range []struct{ comp, comm float64 }{{3, 5}, {5, 3}, {4, 4}} {
		d := []float64{tc.comp, tc.comm}
		if got, want := g.ListSchedule(d).Makespan, max(tc.comp, tc.comm); got != want {
			t.Errorf("T_ideal(%v) = %v, want max = %v", d, got, want)
		}
		if got, want := g.Serial(d), tc.comp+tc.comm; got != want {
			t.Errorf("T_serial(%v) = %v, want sum = %v", d, got, want)
		}
	}
	if o := g.EnqueueOrder(CommFirst); g.Ops[g.Instances[o[0]].Op].Role != RoleComm {
		t.Errorf("comm-first enqueues %v first", g.Ops[g.Instances[o[0]].Op].Name)
	}
	if o := g.EnqueueOrder(ComputeFirst); g.Ops[g.Instances[o[0]].Op].Role != RoleCompute {
		t.Errorf("compute-first enqueues %v first", g.Ops[g.Instances[o[0]].Op].Name)
	}
}

func TestListScheduleHandGraphs(t *testing.T) {
	tests := []struct {
		name    string
		sc      Scenario
		st      Strategy
		d       map[string]float64
		ideal   float64
		serial  float64
		numInst int
	}{
		{
			// ag (4) -> g1 (3) -> rs (2): nothing can overlap.
			name: "chain",
			sc: graphScenario(
				StreamSpec{Name: "comm", Ops: []StreamOp{commOp("ag", AllGather, 1<<20), {Name: "rs", Kind: OpKind(ReduceScatter), Bytes: 1 << 20, After: []string{"g1"}}}},
				StreamSpec{Name: "compute", Ops: []StreamOp{{Name: "g1", Kind: OpKind(GEMM), M: 64, N: 64, K: 64, DType: BF16, After: []string{"ag"}}}},
			),
			d:     map[string]float64{"ag": 4, "g1": 3, "rs": 2},
			ideal: 9, serial: 9, numInst: 3,
		},
		{
			// ag (4) feeds g2 (3); g1 (5) is independent and first on the
			// compute stream, so g2 starts at max(5, 4) = 5: 8. A
			// second comm op (2) after ag ends at 6.
			name: "fork",
			sc: graphScenario(
				StreamSpec{Name: "comm", Ops: []StreamOp{commOp("ag", AllGather, 1<<20), commOp("ar", AllReduce, 1<<20)}},
				StreamSpec{Name: "compute", Ops: []StreamOp{gemmOp("g1", 64, 64, 64), {Name: "g2", Kind: OpKind(GEMM), M: 64, N: 64, K: 64, DType: BF16, After: []string{"ag"}}}},
			),
			d:     map[string]float64{"ag": 4, "ar": 2, "g1": 5, "g2": 3},
			ideal: 8, serial: 14, numInst: 4,
		},
		{
			// Counts: 4 gemms of 2 next to 8 collectives of 1.5: 12 vs 8.
			name: "streams",
			sc: graphScenario(
				StreamSpec{Name: "compute", Ops: []StreamOp{{Name: "g", Kind: OpKind(GEMM), M: 64, N: 64, K: 64, DType: BF16, Count: 4}}},
				StreamSpec{Name: "comm", Ops: []StreamOp{{Name: "ag", Kind: OpKind(AllGather), Bytes: 1 << 20, Count: 8}}},
			),
			d:     map[string]float64{"g": 2, "ag": 1.5},
			ideal: 12, serial: 20, numInst: 12,
		},
		{
			// An all-gather of 4 chunks feeding 4 GEMM chunks: chunk i of
			// the GEMM starts when chunk i lands. Chunks of 1 (comm) and
			// 2 (gemm): the last GEMM chunk starts at max(1+2*3, 4) = 7
			// and ends at 9, against 4 + 8 = 12 whole.
			name: "decomposed",
			sc: graphScenario(
				StreamSpec{Name: "tp", Ops: []StreamOp{commOp("ag", AllGather, 2<<20)}},
				StreamSpec{Name: "compute", Ops: []StreamOp{{Name: "qkv", Kind: OpKind(GEMM), M: 4096, N: 64, K: 512, DType: BF16, After: []string{"ag"}, Decompose: 4}}},
			),
			d:     map[string]float64{"ag": 1, "qkv": 2},
			ideal: 9, serial: 12, numInst: 8,
		},
		{
			// The same pair whole (the strategy undoes the decomposition).
			name: "undecomposed",
			sc: graphScenario(
				StreamSpec{Name: "tp", Ops: []StreamOp{commOp("ag", AllGather, 2<<20)}},
				StreamSpec{Name: "compute", Ops: []StreamOp{{Name: "qkv", Kind: OpKind(GEMM), M: 4096, N: 64, K: 512, DType: BF16, After: []string{"ag"}, Decompose: 4}}},
			),
			st:    Strategy{Decompose: 1},
			d:     map[string]float64{"ag": 4, "qkv": 8},
			ideal: 12, serial: 12, numInst: 2,
		},
		{
			// GEMM -> reduce-scatter decomposed in 2 by the strategy:
			// gemm chunks of 3, rs chunks of 2: 3, 6 | rs 3..5, 6..8.
			name: "gemm-rs-strategy",
			sc: graphScenario(
				StreamSpec{Name: "compute", Ops: []StreamOp{gemmOp("out", 4096, 512, 64)}},
				StreamSpec{Name: "tp", Ops: []StreamOp{{Name: "rs", Kind: OpKind(ReduceScatter), Bytes: 2 << 20, After: []string{"out"}}}},
			),
			st:    Strategy{Decompose: 2},
			d:     map[string]float64{"out": 3, "rs": 2},
			ideal: 8, serial: 10, numInst: 4,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := tt.sc.Graph(tt.st)
			if err != nil {
				t.Fatal(err)
			}
			if len(g.Instances) != tt.numInst {
				t.Fatalf("%d instances, want %d", len(g.Instances), tt.numInst)
			}
			d := durs(g, tt.d)
			if got := g.ListSchedule(d).Makespan; got != tt.ideal {
				t.Errorf("T_ideal = %v, want %v", got, tt.ideal)
			}
			if got := g.Serial(d); got != tt.serial {
				t.Errorf("T_serial = %v, want %v", got, tt.serial)
			}
			// Every instance comes after its predecessor and dependencies,
			// in the graph and in both enqueue orders.
			for _, order := range [][]int{nil, g.EnqueueOrder(ComputeFirst), g.EnqueueOrder(CommFirst)} {
				pos := make([]int, len(g.Instances))
				for i := range pos {
					pos[i] = i
				}
				for p, id := range order {
					pos[id] = p
				}
				for id, in := range g.Instances {
					for _, d := range append([]int{in.Prev}, in.Deps...) {
						if d >= 0 && pos[d] >= pos[id] {
							t.Errorf("instance %d (%s[%d]) placed before its dependency %d", id, g.Ops[in.Op].Name, in.Index, d)
						}
					}
				}
			}
		})
	}
}

func TestDecomposedPairIsWiredChunkByChunk(t *testing.T) {
	sc := graphScenario(
		StreamSpec{Name: "tp", Ops: []StreamOp{commOp("ag", AllGather, 2<<20)}},
		StreamSpec{Name: "compute", Ops: []StreamOp{{Name: "qkv", Kind: OpKind(GEMM), M: 4096, N: 64, K: 512, DType: BF16, After: []string{"ag"}, Decompose: 4}}},
	)
	g, err := sc.Graph(Strategy{})
	if err != nil {
		t.Fatal(err)
	}
	ag, qkv := g.Ops[0], g.Ops[1]
	if ag.Count != 4 || qkv.Count != 4 || ag.Comm.Bytes != 512<<10 || qkv.Compute.M != 1024 || ag.Chunks != 4 {
		t.Fatalf("chunks: ag %+v qkv %+v", ag, qkv)
	}
	if ag.Feeds != 1 || qkv.FedBy != 0 {
		t.Errorf("data flow: ag.Feeds = %d, qkv.FedBy = %d; want 1, 0", ag.Feeds, qkv.FedBy)
	}
	for k := range 4 {
		in := g.Instances[g.InstanceOf(1, k)]
		if len(in.Deps) != 1 || in.Deps[0] != g.InstanceOf(0, k) {
			t.Errorf("qkv[%d] waits for %v, want ag[%d] (%d)", k, in.Deps, k, g.InstanceOf(0, k))
		}
	}
}

func TestGraphErrors(t *testing.T) {
	tests := []struct {
		name string
		sc   Scenario
		st   Strategy
		path string
		want string
	}{
		{"cycle", graphScenario(
			StreamSpec{Name: "a", Ops: []StreamOp{{Name: "x", Kind: OpKind(GEMM), M: 8, N: 8, K: 8, DType: BF16, After: []string{"y"}}}},
			StreamSpec{Name: "b", Ops: []StreamOp{{Name: "y", Kind: OpKind(AllGather), Bytes: 8, After: []string{"x"}}}},
		), Strategy{}, "$.streams[0].ops[0].after", "cycle through x, y"},
		{"unknown op", graphScenario(
			StreamSpec{Name: "a", Ops: []StreamOp{{Name: "x", Kind: OpKind(GEMM), M: 8, N: 8, K: 8, DType: BF16, After: []string{"ag0"}}}},
			StreamSpec{Name: "b", Ops: []StreamOp{commOp("ag", AllGather, 8)}},
		), Strategy{}, "$.streams[0].ops[0].after[0]", `"ag0", which the scenario does not have (did you mean ag?)`},
		{"chunks do not divide", graphScenario(
			StreamSpec{Name: "tp", Ops: []StreamOp{commOp("ag", AllGather, 4<<20)}},
			StreamSpec{Name: "c", Ops: []StreamOp{{Name: "g", Kind: OpKind(GEMM), M: 4096, N: 64, K: 512, DType: BF16, After: []string{"ag"}, Decompose: 3}}},
		), Strategy{}, "$.streams[1].ops[0].decompose", "does not split into 3 chunks"},
		{"sizes do not match", graphScenario(
			StreamSpec{Name: "tp", Ops: []StreamOp{commOp("ag", AllGather, 4<<20)}},
			StreamSpec{Name: "c", Ops: []StreamOp{{Name: "g", Kind: OpKind(GEMM), M: 4096, N: 64, K: 512, DType: BF16, After: []string{"ag"}, Decompose: 4}}},
		), Strategy{}, "$.streams[1].ops[0].decompose", "sizes must match"},
		{"mixed stream", graphScenario(
			StreamSpec{Name: "a", Ops: []StreamOp{gemmOp("x", 8, 8, 8), commOp("y", AllGather, 8)}},
		), Strategy{}, "$.streams[0].ops[1].kind", "separate streams"},
		{"count mismatch", graphScenario(
			StreamSpec{Name: "a", Ops: []StreamOp{{Name: "x", Kind: OpKind(GEMM), M: 8, N: 8, K: 8, DType: BF16, Count: 3, After: []string{"y[i]"}}}},
			StreamSpec{Name: "b", Ops: []StreamOp{{Name: "y", Kind: OpKind(AllGather), Bytes: 8, Count: 2}}},
		), Strategy{}, "$.streams[0].ops[0].after[0]", "same count"},
		{"too long", graphScenario(
			StreamSpec{Name: "a", Ops: []StreamOp{{Name: "x", Kind: OpKind(GEMM), M: 8, N: 8, K: 8, DType: BF16, Count: MaxInstances}}},
			StreamSpec{Name: "b", Ops: []StreamOp{{Name: "y", Kind: OpKind(AllGather), Bytes: 8, Count: 2}}},
		), Strategy{}, "$.streams[1].ops[0]", "past the limit at op y (2 instances); allowed at most 4096"},
		{"after list too long", graphScenario(
			StreamSpec{Name: "a", Ops: []StreamOp{{Name: "x", Kind: OpKind(GEMM), M: 8, N: 8, K: 8, DType: BF16, After: make([]string, MaxAfter+1)}}},
			StreamSpec{Name: "b", Ops: []StreamOp{commOp("y", AllGather, 8)}},
		), Strategy{}, "$.streams[0].ops[0].after", "waits for 65 ops; allowed at most 64"},
		{"strategy decompose on a non-divisible pair", graphScenario(
			StreamSpec{Name: "tp", Ops: []StreamOp{commOp("ag", AllGather, 4<<20)}},
			StreamSpec{Name: "c", Ops: []StreamOp{{Name: "g", Kind: OpKind(GEMM), M: 4096, N: 64, K: 512, DType: BF16, After: []string{"ag"}}}},
		), Strategy{Decompose: 3}, "$.strategy.decompose", "does not split into 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.sc.Graph(tt.st)
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("err = %v, want a *ValidationError", err)
			}
			for _, f := range ve.Fields {
				if f.Path == tt.path && strings.Contains(f.Msg, tt.want) {
					return
				}
			}
			t.Errorf("errors %v lack %s: ...%s...", ve.Fields, tt.path, tt.want)
		})
	}
}
