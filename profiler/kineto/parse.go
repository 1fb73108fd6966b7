// Package kineto reads PyTorch profiler (Kineto) traces, Chrome's trace
// JSON as torch.profiler writes it, and turns a rank's step into c3lab's
// figures (ARCHITECTURE.md's T_serial, T_ideal, S_real, F, exposed
// communication) and into a format-2 scenario.
//
// It lives under profiler/ because it measures: it is the reverse of
// profiler/export (which writes Chrome traces), its figures come from the
// profiler's metric code, and it imports scenarios (to write one) but no
// backend.
//
// A trace is read as a stream (read.go): a byte scanner (scan.go) checks
// the JSON text through a window of a few hundred KB, the fields of each
// event that the analysis needs are converted and the rest skipped, and
// only what the analysis uses is kept (GPU activities, the shapes of the
// CPU ops that launched them, step annotations, launch times), so traces
// of hundreds of MB import in memory bounded by what is kept, not by the
// text. BenchmarkReadLargeTrace measures it against the encoding/json
// reader it replaced (legacy_test.go).
package kineto

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// OpKind says what a GPU activity is.
type OpKind uint8

// GPU activity kinds, from the event's category.
const (
	// Kernel is a CUDA kernel (cat "kernel").
	Kernel OpKind = iota
	// Memcpy is a copy (cat "gpu_memcpy").
	Memcpy
	// Memset is a fill (cat "gpu_memset").
	Memset
)

func (k OpKind) String() string {
	switch k {
	case Memcpy:
		return "memcpy"
	case Memset:
		return "memset"
	}
	return "kernel"
}

// GPUOp is one GPU activity of a trace. Times are nanoseconds on the
// trace's clock.
type GPUOp struct {
	Kind   OpKind
	Name   string
	Start  int64
	Dur    int64
	Device int
	Stream int
	// Correlation links the op to the runtime call that launched it;
	// ExternalID to the CPU op (aten::mm, record_param_comms) around it.
	Correlation int64
	ExternalID  int64
	// Bytes is a memcpy's or memset's size.
	Bytes int64
	// Grid and Block are a kernel's launch dimensions (x*y*z).
	Grid, Block int64
	// Comm is what the trace says of a collective on the kernel itself
	// (recent torch versions copy record_param_comms' arguments there).
	Comm *CommArgs
}

// End is Start + Dur.
func (o GPUOp) End() int64 { return o.Start + o.Dur }

// CommArgs is a collective's description as torch records it
// ("Collective name", "In msg nelems", "Out msg nelems", "dtype",
// "Group size", "Process Group Name").
type CommArgs struct {
	Name      string
	InNelems  int64
	OutNelems int64
	DType     string
	GroupSize int
	Group     string
}

// CPUOp is what the analysis keeps of a CPU op: its name and what its
// arguments say of the work, parsed as it is read.
type CPUOp struct {
	Name string
	// GEMM is the shape when the op is a matrix multiply whose input
	// dimensions were recorded (record_shapes=True).
	GEMM *GEMMShape
	// InputBytes is the sum of its tensor inputs' sizes (0 when unknown).
	InputBytes int64
	// Comm is the collective's description on a record_param_comms op.
	Comm *CommArgs
}

// GEMMShape is C[M,N] = A[M,K] x B[K,N] in DType (c3lab's names), with
// batched products folded into M.
type GEMMShape struct {
	M, N, K int
	DType   string
}

// Span is an annotation: a ProfilerStep#N or a user's record_function.
type Span struct {
	Name       string
	Start, Dur int64
	// GPU is true for a gpu_user_annotation (the GPU time of the
	// annotated region), false for the CPU annotation.
	GPU bool
}

// Trace is what one trace file holds for the analysis.
type Trace struct {
	// File is the path it was read from.
	File string
	// Rank and WorldSize come from distributedInfo; -1 and 0 when absent.
	Rank, WorldSize int
	// Backend is distributedInfo's backend ("nccl").
	Backend string
	// Devices names the GPUs of deviceProperties, by id.
	Devices map[int]string
	// Ops are the GPU activities, in file order.
	Ops []GPUOp
	// CPU holds the CPU ops that carry shapes or collective arguments, by
	// External id.
	CPU map[int64]CPUOp
	// Launch is each runtime call's start, by correlation id (to place a
	// kernel in the step that launched it).
	Launch map[int64]int64
	// Steps are the ProfilerStep#N annotations, CPU and GPU.
	Steps []Span
	// Events counts the events read; Skipped counts events by category
	// that the analysis does not use (python functions, flows, ...).
	Events  int
	Skipped map[string]int
	// Gzip says the file was gzip-compressed (byte offsets in errors are
	// then of the decompressed text).
	Gzip bool
	// Bytes is the size of the JSON text read.
	Bytes int64
}

// Error is a trace that cannot be read: what was wrong and at which byte
// of the JSON text (of the decompressed text for a gzip file).
type Error struct {
	File   string
	Offset int64
	Gzip   bool
	Msg    string
	Err    error
}

func (e *Error) Error() string {
	where := fmt.Sprintf("byte %d", e.Offset)
	if e.Gzip {
		where += " of the decompressed text"
	}
	return fmt.Sprintf("%s: %s at %s: %s", e.File, e.Msg, where, e.hint())
}

func (e *Error) hint() string {
	switch {
	case errors.Is(e.Err, io.ErrUnexpectedEOF), errors.Is(e.Err, io.EOF):
		return "the file ends early (truncated? let torch.profiler finish writing it)"
	case e.Err != nil:
		return e.Err.Error()
	}
	return "not a Kineto trace (torch.profiler's Chrome trace JSON)"
}

func (e *Error) Unwrap() error { return e.Err }

// ReadFile reads the trace at path, gzip or plain.
func ReadFile(path string) (*Trace, error) { return ReadFileProgress(path, nil) }

// Progress is told how many bytes of a trace file have been read, of its
// size.
type Progress func(read, size int64)

// ReadFileProgress is ReadFile, calling progress (when not nil) as it
// reads: every few MB and at the end of the file.
func ReadFileProgress(path string, progress Progress) (*Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("trace: %s is not a regular file", path)
	}
	var each func(int64)
	if progress != nil && err == nil {
		size := st.Size()
		each = func(n int64) { progress(n, size) }
	}
	return readProgress(f, path, each)
}

// rawNum is a number's text (a quoted one's without its quotes), for
// micros.
type rawNum string

// micros converts a Chrome trace time in microseconds ("1700000000123.456")
// to nanoseconds, exactly for decimal text.
func micros(n rawNum) (int64, bool) {
	s := string(n)
	if s == "" {
		return 0, false
	}
	whole, frac, dot := strings.Cut(s, ".")
	if dot && !strings.ContainsAny(s, "eE") && len(frac) <= 3 && whole != "" && whole != "-" {
		w, err := strconv.ParseInt(whole, 10, 64)
		if err != nil || w > math.MaxInt64/1000 || w < math.MinInt64/1000 {
			return 0, false
		}
		f := int64(0)
		if frac != "" {
			fv, err := strconv.ParseInt(frac, 10, 64)
			if err != nil || fv < 0 {
				return 0, false
			}
			f = fv
			for i := len(frac); i < 3; i++ {
				f *= 10
			}
		}
		if strings.HasPrefix(whole, "-") {
			f = -f
		}
		return w*1000 + f, true
	}
	if !dot && !strings.ContainsAny(s, "eE") {
		w, err := strconv.ParseInt(s, 10, 64)
		if err != nil || w > math.MaxInt64/1000 || w < math.MinInt64/1000 {
			return 0, false
		}
		return w * 1000, true
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(x) || math.Abs(x*1000) > 9e18 {
		return 0, false
	}
	return int64(math.Round(x * 1000)), true
}

func prod(v []int64) int64 {
	if len(v) == 0 {
		return 0
	}
	n := int64(1)
	for _, x := range v {
		if x < 0 || (x > 0 && n > math.MaxInt64/x) {
			return 0
		}
		n *= x
	}
	return n
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// parseDims reads "Input Dims": one entry per input, a list of sizes for
// a tensor, [] for a scalar or None; a tensor list is nested one deeper
// and is kept as nil (it has no one shape).
func parseDims(raw json.RawMessage) [][]int64 {
	var entries []json.RawMessage
	if json.Unmarshal(raw, &entries) != nil {
		return nil
	}
	out := make([][]int64, len(entries))
	for i, e := range entries {
		var d []int64
		if json.Unmarshal(bytes.TrimSpace(e), &d) == nil {
			out[i] = d
		}
	}
	return out
}
