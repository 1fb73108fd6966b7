package scenarios

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
)

// TestDeviceMemory checks each part of the footprint against the buffers
// the cuda backend allocates, written out from the scenario's fields.
func TestDeviceMemory(t *testing.T) {
	gemm := ComputeOp{Kind: GEMM, M: 4096, N: 2048, K: 1024, DType: BF16}
	fp8 := ComputeOp{Kind: GEMM, M: 4096, N: 2048, K: 1024, DType: FP8}
	const mib = 1 << 20
	for _, tc := range []struct {
		name                  string
		gpus                  int
		compute               ComputeOp
		coll                  Collective
		bytes                 int64
		st                    Strategy
		compute0, comm, extra int64
	}{
		{"bf16 gemm: A and B twice (timing and check), C, workspace", 2, gemm, AllGather, 64 * mib, Strategy{},
			2*(1024*4096*2+1024*2048*2) + 4096*2048*2 + GEMMWorkspaceBytes, 64*mib + 2*64*mib, 0},
		{"fp8 gemm writes bf16", 2, fp8, AllGather, 64 * mib, Strategy{},
			2*(1024*4096+1024*2048) + 4096*2048*2 + GEMMWorkspaceBytes, 64*mib + 2*64*mib, 0},
		{"stream op: input and output", 2, ComputeOp{Kind: Stream, Bytes: 1 << 30}, AllToAll, 64 * mib, Strategy{},
			2 << 30, 2 * 64 * mib, 0},
		{"all-gather on 8 GPUs receives 8 shards", 8, gemm, AllGather, 64 * mib, Strategy{},
			-1, 64*mib + 8*64*mib, 0},
		{"reduce-scatter on 8 GPUs sends 8 blocks", 8, gemm, ReduceScatter, 64 * mib, Strategy{},
			-1, 8*64*mib + 64*mib, 0},
		{"all-reduce", 4, gemm, AllReduce, 64 * mib, Strategy{}, -1, 2 * 64 * mib, 0},
		{"dma reduce-scatter stages the peers' blocks", 4, gemm, ReduceScatter, 64 * mib, Strategy{CommEngine: EngineDMA},
			-1, 4*64*mib + 64*mib, 3 * 64 * mib},
		{"dma all-reduce stages a 1/N block per peer", 4, gemm, AllReduce, 64 * mib, Strategy{CommEngine: EngineDMA},
			-1, 2 * 64 * mib, 3 * 16 * mib},
		{"dma all-gather needs no staging", 4, gemm, AllGather, 64 * mib, Strategy{CommEngine: EngineDMA},
			-1, 64*mib + 4*64*mib, 0},
		{"nccl-ce registers symmetric copies of both buffers", 2, gemm, AllToAll, 64 * mib, Strategy{CommEngine: EngineNCCLCE},
			-1, 2 * 64 * mib, 2 * 64 * mib},
		{"h2d: the device destination", 1, gemm, HostToDevice, 64 * mib, Strategy{}, -1, 64 * mib, 0},
		{"d2h on the copy engines: the device source", 1, gemm, DeviceToHost, 64 * mib, Strategy{CommEngine: EngineDMA}, -1, 64 * mib, 0},
		{"swap: a device buffer each way", 2, gemm, HostSwap, 64 * mib, Strategy{}, -1, 2 * 64 * mib, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := Scenario{Name: "x", GPUs: tc.gpus, Compute: tc.compute, Comm: CommOp{Collective: tc.coll, Bytes: ByteSize(tc.bytes)}}
			f := sc.DeviceMemory(tc.st)
			if tc.compute0 >= 0 && f.Compute != tc.compute0 {
				t.Errorf("compute %d, want %d", f.Compute, tc.compute0)
			}
			if f.Comm != tc.comm || f.Engine != tc.extra || f.Reserve != RuntimeReserveBytes {
				t.Errorf("comm %d engine %d reserve %d, want %d %d %d", f.Comm, f.Engine, f.Reserve, tc.comm, tc.extra, int64(RuntimeReserveBytes))
			}
			if f.Total() != f.Compute+f.Comm+f.Engine+f.Reserve {
				t.Errorf("total %d is not the sum of the parts", f.Total())
			}
		})
	}
}

// TestDeviceMemorySaturates feeds sizes whose products overflow int64.
func TestDeviceMemorySaturates(t *testing.T) {
	for _, sc := range []Scenario{
		{GPUs: 8, Compute: ComputeOp{Kind: GEMM, M: math.MaxInt32, N: math.MaxInt32, K: math.MaxInt32, DType: FP32}, Comm: CommOp{Collective: AllGather, Bytes: 1 << 62}},
		{GPUs: math.MaxInt32, Compute: ComputeOp{Kind: Stream, Bytes: math.MaxInt64}, Comm: CommOp{Collective: ReduceScatter, Bytes: math.MaxInt64}},
		{GPUs: -3, Compute: ComputeOp{Kind: GEMM, M: -1, N: 5, K: -7, DType: BF16}, Comm: CommOp{Collective: AllReduce, Bytes: -5}},
	} {
		for _, st := range []Strategy{{}, {CommEngine: EngineDMA}, {CommEngine: EngineNCCLCE}} {
			f := sc.DeviceMemory(st)
			for _, v := range []int64{f.Compute, f.Comm, f.Engine, f.Total()} {
				if v < 0 {
					t.Errorf("%+v under %s: negative part in %+v", sc, st, f)
				}
			}
			if f.Total() < f.Compute || f.Total() < f.Comm {
				t.Errorf("%+v under %s: total %d below a part (%+v)", sc, st, f.Total(), f)
			}
		}
	}
}

// TestValidateDeviceMemory refuses the trial run's impossible scenarios
// with the numbers, at the field that contributes most, and passes the
// largest scenarios of the suite on every GPU count the sweep offers.
func TestValidateDeviceMemory(t *testing.T) {
	gemm := ComputeOp{Kind: GEMM, M: 8192, N: 8192, K: 8192, DType: BF16}
	for _, tc := range []struct {
		name string
		sc   Scenario
		path string
		want []string // fragments of the message
	}{
		{"1 TiB per rank on 8 GPUs", Scenario{Name: "huge-ag", GPUs: 8, Compute: gemm, Comm: CommOp{Collective: AllGather, Bytes: 1 << 40}},
			"$.comm.bytes", []string{"9.0 TiB", "all-gather send and receive buffers 9.0 TiB", "NVIDIA H200 has 139.8 GiB", "fewer gpus"}},
		{"a 1048576^3 GEMM", Scenario{Name: "huge-gemm", GPUs: 2, Compute: ComputeOp{Kind: GEMM, M: 1 << 20, N: 1 << 20, K: 1 << 20, DType: BF16}, Comm: CommOp{Collective: AllReduce, Bytes: 1 << 20}},
			"$.compute", []string{fmtBytes(2*(2<<40+2<<40) + 2<<40 + GEMMWorkspaceBytes + 2<<20 + RuntimeReserveBytes), "per GPU", "139.8 GiB", "smaller m, n, k"}},
		{"500 GiB per rank", Scenario{Name: "composer", GPUs: 2, Compute: gemm, Comm: CommOp{Collective: AllReduce, Bytes: 500 << 30}},
			"$.comm.bytes", []string{"all-reduce send and receive buffers 1000.0 GiB", "139.8 GiB"}},
		{"a 100 GiB stream op", Scenario{Name: "stream", GPUs: 2, Compute: ComputeOp{Kind: Stream, Bytes: 100 << 30}, Comm: CommOp{Collective: AllGather, Bytes: 1 << 20}},
			"$.compute.bytes", []string{"stream input and output 200.0 GiB"}},
		{"nccl-ce windows tip it over", Scenario{Name: "ce", GPUs: 2, Compute: gemm, Comm: CommOp{Collective: AllToAll, Bytes: 40 << 30}, Strategy: Strategy{CommEngine: EngineNCCLCE}},
			"$.comm.bytes", []string{"NCCL copy-engine windows 80.0 GiB"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Validate(tc.sc, h200())
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("Validate = %v, want a refusal", err)
			}
			var got *FieldError
			for i := range ve.Fields {
				if strings.Contains(ve.Fields[i].Msg, "device memory") {
					got = &ve.Fields[i]
				}
			}
			if got == nil || len(ve.Fields) != 1 {
				t.Fatalf("fields %v, want one device memory problem", ve.Fields)
			}
			if got.Path != tc.path {
				t.Errorf("path %s, want %s", got.Path, tc.path)
			}
			for _, w := range tc.want {
				if !strings.Contains(got.Msg, w) {
					t.Errorf("message %q lacks %q", got.Msg, w)
				}
			}
			// Without a known memory size nothing is claimed.
			lim := h200()
			lim.MemoryBytes = 0
			if err := Validate(tc.sc, lim); err != nil {
				t.Errorf("with the memory unknown: %v", err)
			}
		})
	}
	for _, sc := range Builtin() {
		for gpus := 2; gpus <= 8; gpus++ {
			sc.GPUs = gpus
			for _, st := range []Strategy{{}, {CommEngine: EngineDMA}} {
				if err := CheckMemory(sc, st, h200()); err != nil {
					t.Errorf("%s on %d GPUs under %s: %v", sc.Name, gpus, st, err)
				}
			}
		}
	}
}

// TestParseDeviceMemory reports a file that does not fit at the line of
// the field to change.
func TestParseDeviceMemory(t *testing.T) {
	src := edit(t, "gpus: 2", "gpus: 8")
	src = strings.Replace(src, "256MiB", "1TiB", 1)
	_, err := Parse([]byte(src), "big.yaml", h200())
	var fe *FileError
	if !errors.As(err, &fe) || len(fe.Problems) != 1 {
		t.Fatalf("Parse = %v, want one problem", err)
	}
	p := fe.Problems[0]
	if p.Line != 11 || p.Path != "$.comm.bytes" || !strings.Contains(p.Msg, "139.8 GiB") {
		t.Errorf("problem %+v, want line 11 at $.comm.bytes with the device's memory", p)
	}
}

// TestDeviceMemoryGraph adds up a format-2 scenario's ops: one buffer set
// per op whatever its count, a decomposed op's whole buffers (its chunks
// are slices of them), one workspace per GEMM op, and the check operands
// of the largest GEMM only (GEMMs are verified one at a time).
func TestDeviceMemoryGraph(t *testing.T) {
	const mib = 1 << 20
	big := StreamOp{Name: "big", Kind: OpKind(GEMM), M: 4096, N: 2048, K: 1024, DType: BF16, Count: 16, After: []string{"ag"}, Decompose: 4}
	small := StreamOp{Kind: OpKind(GEMM), M: 1024, N: 1024, K: 1024, DType: FP8}
	st := StreamOp{Name: "st", Kind: OpKind(Stream), Bytes: 256 * mib, Count: 3}
	ag := StreamOp{Name: "ag", Kind: OpKind(AllGather), Bytes: 2 * mib}
	rs := StreamOp{Name: "rs", Kind: OpKind(ReduceScatter), Bytes: 16 * mib, Count: 64}
	sc := Scenario{Name: "g", GPUs: 4, Streams: []StreamSpec{
		{Name: "tp", Ops: []StreamOp{ag, rs}},
		{Name: "compute", Ops: []StreamOp{big, small, st}},
	}}
	bigBuf := int64(1024*4096*2+1024*2048*2) + 4096*2048*2 + GEMMWorkspaceBytes
	bigCheck := int64(1024*4096*2 + 1024*2048*2)
	smallBuf := int64(1024*1024+1024*1024) + 1024*1024*2 + GEMMWorkspaceBytes
	agBuf, rsBuf := int64(2*mib+4*2*mib), int64(4*16*mib+16*mib)
	for _, tc := range []struct {
		name   string
		st     Strategy
		engine int64
	}{
		{"sm", Strategy{}, 0},
		{"dma stages the reduce-scatter's peers' blocks", Strategy{CommEngine: EngineDMA}, 3 * 16 * mib},
		{"decomposed by the strategy: the same buffers", Strategy{Decompose: 8}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := sc.DeviceMemory(tc.st)
			if want := bigBuf + smallBuf + 2*256*mib + bigCheck; f.Compute != want {
				t.Errorf("compute %d, want %d", f.Compute, want)
			}
			if f.Comm != agBuf+rsBuf || f.Engine != tc.engine || f.Reserve != RuntimeReserveBytes {
				t.Errorf("comm %d engine %d reserve %d, want %d %d %d", f.Comm, f.Engine, f.Reserve, agBuf+rsBuf, tc.engine, int64(RuntimeReserveBytes))
			}
			want := []OpMemory{
				{"ag", "$.streams[0].ops[0]", agBuf},
				{"rs", "$.streams[0].ops[1]", rsBuf + tc.engine},
				{"big", "$.streams[1].ops[0]", bigBuf},
				{"compute.2", "$.streams[1].ops[1]", smallBuf},
				{"st", "$.streams[1].ops[2]", 2 * 256 * mib},
			}
			if !reflect.DeepEqual(f.Ops, want) {
				t.Errorf("ops %+v\nwant %+v", f.Ops, want)
			}
		})
	}
	// A pair has no per-op list, and the same parts as before.
	if f := (Scenario{GPUs: 2, Compute: small.AsCompute(), Comm: ag.AsComm()}).DeviceMemory(Strategy{}); f.Ops != nil || f.Compute != smallBuf+2*mib {
		t.Errorf("pair footprint %+v", f)
	}
}

// TestValidateDeviceMemoryGraph refuses a graph that does not fit, at the
// op that holds the most, and does not count an op's instances or chunks
// as more buffers.
func TestValidateDeviceMemoryGraph(t *testing.T) {
	gemm := func(name string, count int) StreamOp {
		return StreamOp{Name: name, Kind: OpKind(GEMM), M: 40960, N: 40960, K: 40960, DType: BF16, Count: count} // A, B and C of 3.125 GiB each
	}
	ag := StreamOp{Name: "ag", Kind: OpKind(AllGather), Bytes: 1 << 30, Count: 1000}
	fits := Scenario{Name: "fits", GPUs: 2, Streams: []StreamSpec{
		{Name: "compute", Ops: []StreamOp{gemm("g", 3000)}},
		{Name: "comm", Ops: []StreamOp{ag}},
	}}
	if err := Validate(fits, h200()); err != nil {
		t.Errorf("3000 instances of one GEMM share its buffers: %v", err)
	}
	chunked := fits
	chunked.Streams = []StreamSpec{
		{Name: "tp", Ops: []StreamOp{{Name: "ag", Kind: OpKind(AllGather), Bytes: 40960 * 40960}}},
		{Name: "compute", Ops: []StreamOp{{Name: "g", Kind: OpKind(GEMM), M: 40960, N: 40960, K: 40960, DType: BF16, After: []string{"ag"}, Decompose: 64}}},
	}
	if err := Validate(chunked, h200()); err != nil {
		t.Errorf("64 chunks are slices of one pair's buffers: %v", err)
	}
	var ops []StreamOp
	for i := range 16 {
		ops = append(ops, gemm(fmt.Sprintf("g%d", i), 1))
	}
	huge := Scenario{Name: "huge", GPUs: 2, Streams: []StreamSpec{
		{Name: "compute", Ops: ops},
		{Name: "comm", Ops: []StreamOp{{Name: "ar", Kind: OpKind(AllReduce), Bytes: 1 << 30}}},
	}}
	err := Validate(huge, h200())
	var ve *ValidationError
	if !errors.As(err, &ve) || len(ve.Fields) != 1 {
		t.Fatalf("Validate = %v, want one memory problem", err)
	}
	// Each GEMM: A, B, C of 3.125 GiB and a 64 MiB workspace; the check
	// operands of one: 6.25 GiB.
	const operand = 40960 * 40960 * 2
	total := fmtBytes(16*(3*operand+GEMMWorkspaceBytes) + 2*operand + 2<<30 + RuntimeReserveBytes)
	for _, w := range []string{"needs " + total, "16 compute ops' buffers", "1 communication ops' device buffers 2.0 GiB", "NVIDIA H200 has 139.8 GiB", "the largest op, g0, holds 9.4 GiB"} {
		if !strings.Contains(ve.Fields[0].Msg, w) {
			t.Errorf("message %q lacks %q", ve.Fields[0].Msg, w)
		}
	}
	if ve.Fields[0].Path != "$.streams[0].ops[0]" {
		t.Errorf("path %s, want the largest op's", ve.Fields[0].Path)
	}
}
