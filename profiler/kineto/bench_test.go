package kineto

import (
	"bytes"
	stdgzip "compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
)

// genTrace is a Kineto-style trace generated as it is read, so that a
// trace of hundreds of MB costs no memory or disk in the benchmark: each
// launch writes a python function, an aten::mm with its shapes, the
// runtime call, the kernel and the flow between them, and every eighth
// launch an NCCL all-gather with torch's collective arguments.
type genTrace struct {
	size, n int64 // bytes to write, bytes written
	i       int64
	buf     []byte
	done    bool
}

func newGenTrace(size int64) *genTrace {
	g := &genTrace{size: size, i: 1}
	g.buf = append(g.buf, `{"schemaVersion":1,"deviceProperties":[{"id":0,"name":"NVIDIA H200"}],"distributedInfo":{"backend":"nccl","rank":0,"world_size":2},"traceEvents":[`...)
	return g
}

func (g *genTrace) Read(p []byte) (int, error) {
	for len(g.buf) < len(p) && !g.done {
		g.next()
	}
	if len(g.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(p, g.buf)
	g.buf = g.buf[n:]
	g.n += int64(n)
	return n, nil
}

func (g *genTrace) next() {
	if g.n+int64(len(g.buf)) >= g.size {
		g.buf = append(g.buf, `{"ph":"i","name":"end","ts":0,"s":"g"}],"traceName":"generated"}`...)
		g.done = true
		return
	}
	i := g.i
	g.i++
	ts := 1_700_000_000_000_000 + i*50_000 // ns
	us := func(ns int64) string { return strconv.FormatInt(ns/1000, 10) + "." + fmt.Sprintf("%03d", ns%1000) }
	b := g.buf
	b = fmt.Appendf(b, `{"ph":"X","cat":"python_function","name":"torch/nn/modules/linear.py(125): forward","pid":7,"tid":7,"ts":%s,"dur":30.5,"args":{"Python parent id":%d,"Python id":%d}},`, us(ts), i, i+1)
	b = fmt.Appendf(b, `{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":7,"tid":7,"ts":%s,"dur":12.25,"args":{"External id":%d,"Record function id":0,"Input Dims":[[4096,8192],[8192,4096]],"Input type":["c10::BFloat16","c10::BFloat16"],"Input Strides":[[8192,1],[4096,1]],"Concrete Inputs":["",""],"Sequence number":%d}},`, us(ts+1000), i, i)
	b = fmt.Appendf(b, `{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":7,"tid":7,"ts":%s,"dur":4.1,"args":{"External id":%d,"cbid":211,"correlation":%d}},`, us(ts+2000), i, i)
	b = fmt.Appendf(b, `{"ph":"X","cat":"kernel","name":"nvjet_hsh_256x128_64x4_2x1_v_bz_coopB_NNN","pid":0,"tid":7,"ts":%s,"dur":41.3,"args":{"External id":%d,"queued":0,"device":0,"context":1,"stream":7,"correlation":%d,"registers per thread":168,"shared memory":232448,"blocks per SM":1,"warps per SM":12,"grid":[16,32,1],"block":[384,1,1],"est. achieved occupancy %%":19}},`, us(ts+3000), i, i)
	b = fmt.Appendf(b, `{"ph":"s","id":%d,"pid":7,"tid":7,"ts":%s,"cat":"ac2g","name":"ac2g"},{"ph":"f","id":%d,"pid":0,"tid":7,"ts":%s,"cat":"ac2g","name":"ac2g","bp":"e"},`, i, us(ts+2000), i, us(ts+3000))
	if i%8 == 0 {
		b = fmt.Appendf(b, `{"ph":"X","cat":"kernel","name":"ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)","pid":0,"tid":23,"ts":%s,"dur":120.5,"args":{"External id":%d,"device":0,"stream":23,"correlation":%d,"grid":[2,1,1],"block":[512,1,1],"Collective name":"_allgather_base","In msg nelems":4194304,"Out msg nelems":8388608,"Group size":2,"dtype":"BFloat16","Process Group Name":"0"}},`, us(ts+3500), -i, -i)
	}
	g.buf = b
}

// peakHeap samples the heap while f runs and returns the largest
// HeapInuse seen (and the one after a GC before f, to subtract).
func peakHeap(f func()) (peak, before uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before = ms.HeapInuse
	var stop atomic.Bool
	var wg sync.WaitGroup
	var max uint64
	wg.Go(func() {
		for !stop.Load() {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > max {
				max = ms.HeapInuse
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
	f()
	stop.Store(true)
	wg.Wait()
	return max, before
}

// BenchmarkReadLargeTrace reads and analyses a generated trace
// (C3LAB_BENCH_TRACE_MB, default 200 MB) and reports MB/s and the peak
// heap in MB, for the reader and (as the "before") the legacy
// encoding/json reader of legacy_test.go. The trace is generated once
// per run into a temporary file, outside the timed loop, so MB/s is the
// reader's:
//
//	go test -run x -bench LargeTrace -benchtime 1x -count 5 ./profiler/kineto
func BenchmarkReadLargeTrace(b *testing.B) {
	mb := int64(200)
	if v, err := strconv.ParseInt(os.Getenv("C3LAB_BENCH_TRACE_MB"), 10, 64); err == nil && v > 0 {
		mb = v
	}
	path := filepath.Join(b.TempDir(), "generated.json")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	size, err := io.Copy(f, newGenTrace(mb<<20))
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		b.Fatal(err)
	}
	for _, rd := range []struct {
		name string
		read func(io.Reader, string) (*Trace, error)
	}{{"reader=scan", Read}, {"reader=legacy", readLegacy}} {
		b.Run(rd.name, func(b *testing.B) {
			b.SetBytes(size)
			var peak, before uint64
			var ops int
			cpu0 := cpuTime()
			for b.Loop() {
				p, bf := peakHeap(func() {
					f, err := os.Open(path)
					if err != nil {
						b.Fatal(err)
					}
					defer f.Close()
					t, err := rd.read(f, path)
					if err != nil {
						b.Fatal(err)
					}
					r, err := Analyze(t, Select{})
					if err != nil {
						b.Fatal(err)
					}
					ops = r.ComputeOps + r.CommOps
				})
				peak, before = max(peak, p), bf
			}
			b.ReportMetric(float64(peak-min(before, peak))/(1<<20), "peak-heap-MB")
			b.ReportMetric(float64(ops), "gpu-ops")
			// On a loaded machine the process's CPU time varies less than
			// the wall time.
			b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}

// TestGeneratedTraceIsValid keeps the benchmark's generator honest: a
// small generated trace reads, and holds what it should.
func TestGeneratedTraceIsValid(t *testing.T) {
	tr, err := Read(newGenTrace(1<<20), "generated.json")
	if err != nil {
		t.Fatal(err)
	}
	r := mustAnalyze(t, tr, Select{})
	if r.ComputeOps == 0 || r.CommOps == 0 || r.ComputeOps < 7*r.CommOps || r.Unmapped != 0 {
		t.Errorf("%d compute, %d comm, %d unmapped", r.ComputeOps, r.CommOps, r.Unmapped)
	}
}

// BenchmarkGunzip is why Read takes klauspost/compress's gzip reader
// rather than the standard library's: both decompress the same generated
// trace (32 MB of JSON) to nothing; MB/s counts the decompressed bytes.
func BenchmarkGunzip(b *testing.B) {
	var z bytes.Buffer
	zw := stdgzip.NewWriter(&z)
	n, err := io.Copy(zw, newGenTrace(32<<20))
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		b.Fatal(err)
	}
	for _, lib := range []struct {
		name string
		open func(io.Reader) (io.Reader, error)
	}{
		{"lib=klauspost", func(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) }},
		{"lib=std", func(r io.Reader) (io.Reader, error) { return stdgzip.NewReader(r) }},
	} {
		b.Run(lib.name, func(b *testing.B) {
			b.SetBytes(n)
			for b.Loop() {
				zr, err := lib.open(bytes.NewReader(z.Bytes()))
				if err != nil {
					b.Fatal(err)
				}
				if m, err := io.Copy(io.Discard, zr); err != nil || m != n {
					b.Fatalf("%d of %d bytes: %v", m, n, err)
				}
			}
		})
	}
}

// cpuTime is the CPU time (user and system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
