package cuda

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/backends/dist/group"
	"github.com/c3lab/c3lab/backends/dist/launch"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
)

// One process per GPU on real GPUs: the test binary starts itself twice
// as the two ranks of a torchrun-style job on loopback (envProcChild says
// which test a child runs); rank 0 prints its results on a line starting
// with procResultTag.
const (
	envProcChild  = "C3LAB_PROC_CHILD"
	procResultTag = "C3LAB-PROC-RESULT "
)

// procResult is what rank 0 of a child job reports.
type procResult struct {
	// Skews are the start skews of every gated repetition (ns).
	Skews []int64 `json:"skews_ns,omitempty"`
	// CommNs is each collective's median comm time (ns).
	CommNs map[string]int64 `json:"comm_ns,omitempty"`
}

// procCollectives are the collectives checked across processes, 256 MiB each.
var procCollectives = []scenarios.Collective{scenarios.AllGather, scenarios.ReduceScatter, scenarios.AllReduce, scenarios.AllToAll}

const procCommBytes = 256 << 20

func procCommScenario(c scenarios.Collective) scenarios.Scenario {
	return scenarios.Scenario{Name: "pp-" + string(c), GPUs: 2,
		Compute: scenarios.ComputeOp{Kind: scenarios.GEMM, M: 1024, N: 1024, K: 1024, DType: scenarios.BF16},
		Comm:    scenarios.CommOp{Collective: c, Bytes: procCommBytes}}
}

func medianOf(v []int64) int64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// procChild runs the child's part when this process is a rank of a
// child job: it joins the job, opens its rank's GPU, runs what the test
// asks and exits.
func procChild(t *testing.T) bool {
	which := os.Getenv(envProcChild)
	if which == "" {
		return false
	}
	err := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		env, err := launch.Detect(os.Getenv)
		if err != nil {
			return err
		}
		g, err := group.Join(ctx, env, group.Options{})
		if err != nil {
			return err
		}
		defer g.Close()
		gctx, gcancel := g.Context(ctx)
		defer gcancel()
		b, err := Open(Options{Process: &Process{Peers: g, Context: gctx, LocalRank: env.LocalRank}})
		if err != nil {
			return err
		}
		defer b.Close()
		var res procResult
		switch which {
		case "skew":
			// Both ranks' GEMMs on one GPU: no NCCL, only the gate.
			sc := procCommScenario(scenarios.AllGather)
			sc.Compute = scenarios.ComputeOp{Kind: scenarios.GEMM, M: 4096, N: 4096, K: 4096, DType: scenarios.BF16}
			r, err := b.Run(gctx, backends.Experiment{Scenario: sc, Mode: backends.ModeCompute, Reps: 100, Warmup: 5}, nil)
			if err != nil {
				return err
			}
			res.Skews = r.StartSkews
		case "ipc":
			// Copy-engine collectives: each rank maps its peer's buffers
			// with CUDA IPC; verification checks every rank's output.
			res.CommNs = map[string]int64{}
			for _, c := range ipcCollectives {
				ns, _, err := medianComm(gctx, b, c, ipcStrategy)
				if err != nil {
					return fmt.Errorf("copy-engine %s: %w", c, err)
				}
				res.CommNs[string(c)] = ns
			}
		case "p2p":
			// p2p-load reductions: each rank's kernel loads its peer's
			// send buffer through a CUDA IPC mapping; verification checks
			// every rank's sums.
			res.CommNs = map[string]int64{}
			for _, c := range p2pCollectives {
				ns, _, err := medianComm(gctx, b, c, p2pStrategy)
				if err != nil {
					return fmt.Errorf("p2p-load %s: %w", c, err)
				}
				res.CommNs[string(c)] = ns
			}
		case "collectives":
			res.CommNs = map[string]int64{}
			for _, c := range procCollectives {
				// Verification before timing checks every rank's result.
				ns, r, err := medianComm(gctx, b, c, scenarios.Strategy{})
				if err != nil {
					return fmt.Errorf("%s: %w", c, err)
				}
				res.CommNs[string(c)] = ns
				res.Skews = append(res.Skews, r.StartSkews...)
			}
		default:
			return fmt.Errorf("unknown child test %q", which)
		}
		if env.Rank == 0 {
			out, _ := json.Marshal(res)
			fmt.Printf("%s%s\n", procResultTag, out)
		}
		return nil
	}()
	if err != nil {
		fmt.Fprintf(os.Stderr, "rank %s: %v\n", os.Getenv("RANK"), err)
		os.Exit(1)
	}
	os.Exit(0)
	return true
}

// runProcJob starts two ranks of this test binary and returns rank 0's
// result; visible, when set, is both ranks' CUDA_VISIBLE_DEVICES.
func runProcJob(t *testing.T, test, which, visible string) procResult {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	type child struct {
		cmd *exec.Cmd
		out bytes.Buffer
	}
	var kids []*child
	for r := range 2 {
		k := &child{cmd: exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.timeout=5m")}
		k.cmd.Env = append(os.Environ(), envProcChild+"="+which, "RANK="+strconv.Itoa(r), "WORLD_SIZE=2", "LOCAL_RANK="+strconv.Itoa(r),
			"LOCAL_WORLD_SIZE=2", "MASTER_ADDR=127.0.0.1", "MASTER_PORT="+strconv.Itoa(port))
		if visible != "" {
			k.cmd.Env = append(k.cmd.Env, "CUDA_VISIBLE_DEVICES="+visible)
		}
		k.cmd.Stdout, k.cmd.Stderr = &k.out, &k.out
		if err := k.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		kids = append(kids, k)
	}
	for r, k := range kids {
		if err := k.cmd.Wait(); err != nil {
			t.Fatalf("rank %d: %v\n%s", r, err, k.out.String())
		}
	}
	sc := bufio.NewScanner(&kids[0].out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), procResultTag); ok {
			var res procResult
			if err := json.Unmarshal([]byte(rest), &res); err != nil {
				t.Fatal(err)
			}
			return res
		}
	}
	t.Fatalf("rank 0 printed no result:\n%s", kids[0].out.String())
	return procResult{}
}

// TestGPUPerProcessOneGPUSkew: two processes on one GPU, released by the
// gate they share, without NCCL: the spread of their first kernels'
// %globaltimer stamps. It checks the cross-process mechanism (the shared
// gate page, the stamp kernel, the exchange of stamps), not the 5 µs
// target: without MPS one GPU runs one process's context at a time, so
// the second process's first kernel waits for the first's work and a
// context switch (on one H200: 330 µs, a 4096^3 GEMM's 0.2 ms plus the
// switch). The target is checked between processes on separate GPUs
// (TestGPUPerProcessTwoGPUCollectives). The figures go to
// $C3LAB_SKEW_OUT as JSON when it is set.
func TestGPUPerProcessOneGPUSkew(t *testing.T) {
	if procChild(t) {
		return
	}
	openGPU(t) // skips without a driver
	res := runProcJob(t, "TestGPUPerProcessOneGPUSkew", "skew", "0")
	if len(res.Skews) == 0 {
		t.Fatal("no start skew was measured")
	}
	med, hi := medianOf(res.Skews), slices.Max(res.Skews)
	t.Logf("start skew between two processes on one GPU (time-sliced contexts) over %d gated repetitions: median %.2f µs, max %.2f µs", len(res.Skews), float64(med)/1e3, float64(hi)/1e3)
	writeReport(t, "C3LAB_SKEW_OUT", "per-process-1gpu", map[string]any{"skews_ns": res.Skews, "median_ns": med, "max_ns": hi,
		"note": "two processes share one GPU: their contexts are time-sliced, so the skew holds the first process's work and a context switch; the 5 us target is for processes on separate GPUs"})
	// Both processes stamped after one release: a gate that failed to
	// hold or to open would give no stamps or a skew of a whole
	// repetition's timeout.
	if hi > 10_000_000 {
		t.Errorf("max start skew %.2f ms: the processes did not leave the gate together", float64(hi)/1e6)
	}
}

// TestGPUPerProcessTwoGPUCollectives: one process per GPU on two GPUs:
// every collective, verified on every rank, timed at 256 MiB against the
// same collective from one process driving both GPUs (busbw ratio). The
// figures go to $C3LAB_PROC_OUT as JSON when it is set.
func TestGPUPerProcessTwoGPUCollectives(t *testing.T) {
	if procChild(t) {
		return
	}
	single := singleProcessMedians(t, procCollectives, scenarios.Strategy{}, "")
	res := runProcJob(t, "TestGPUPerProcessTwoGPUCollectives", "collectives", "")
	report := map[string]any{"single_ns": single, "per_process_ns": res.CommNs, "bytes": procCommBytes}
	ratios := map[string]float64{}
	for _, c := range procCollectives {
		one, pp := single[string(c)], res.CommNs[string(c)]
		if pp == 0 {
			t.Errorf("%s: no per-process time", c)
			continue
		}
		// busbw is bytes over time times a factor both share: the ratio
		// of busbw is the inverse ratio of times.
		ratios[string(c)] = float64(one) / float64(pp)
		t.Logf("%s 256 MiB: one process %.1f µs, one process per GPU %.1f µs: per-process busbw %.3fx", c, float64(one)/1e3, float64(pp)/1e3, ratios[string(c)])
	}
	report["busbw_ratio"] = ratios
	if len(res.Skews) == 0 {
		t.Error("no start skew was measured")
	} else {
		med := medianOf(res.Skews)
		report["skew_median_ns"] = med
		t.Logf("start skew between the two GPUs' processes: median %.2f µs (target 5 µs)", float64(med)/1e3)
		if med > 5000 {
			t.Errorf("median start skew %.2f µs between processes on separate GPUs; the target is 5 µs", float64(med)/1e3)
		}
	}
	writeReport(t, "C3LAB_PROC_OUT", "per-process-2gpu", report)
}

// ipcCollectives are the copy-engine collectives checked across
// processes, 256 MiB each, on the copy engines (ipcStrategy).
var ipcCollectives = []scenarios.Collective{scenarios.AllGather, scenarios.AllToAll}

var ipcStrategy = scenarios.Strategy{CommEngine: scenarios.EngineDMA}

// medianComm runs collective c alone (verified first) under st and
// returns its median comm time and the run (its start skews).
func medianComm(ctx context.Context, b *Backend, c scenarios.Collective, st scenarios.Strategy) (int64, backends.RunResult, error) {
	r, err := b.Run(ctx, backends.Experiment{Scenario: procCommScenario(c), Strategy: st, Mode: backends.ModeComm, Reps: 20, Warmup: 3}, nil)
	if err != nil {
		return 0, r, err
	}
	var comm []int64
	for _, rep := range r.Reps {
		comm = append(comm, rep.Comm)
	}
	return medianOf(comm), r, nil
}

// singleProcessMedians opens the backend in this process (every GPU; it
// skips below two), times each collective alone under st (medianComm),
// and closes the backend before it returns, so that the ranks started
// next find the GPUs free. what prefixes the collective in errors.
func singleProcessMedians(t *testing.T, colls []scenarios.Collective, st scenarios.Strategy, what string) map[string]int64 {
	t.Helper()
	b := openGPU(t)
	needGPUs(t, b, 2)
	single := map[string]int64{}
	for _, c := range colls {
		ns, _, err := medianComm(context.Background(), b, c, st)
		if err != nil {
			t.Fatalf("one process, %s%s: %v", what, c, err)
		}
		single[string(c)] = ns
	}
	if err := b.Close(); err != nil {
		t.Fatalf("closing the one-process backend: %v", err)
	}
	return single
}

// ipcBusBWTolerance is the target: copy-engine collectives
// across processes within 3 % of one process's busbw.
const ipcBusBWTolerance = 0.03

// TestGPUPerProcessTwoGPUCopyEngine: one process per GPU on two GPUs, the
// copy-engine all-gather and all-to-all through CUDA IPC (each rank
// pushes into its peer's mapped output and raises the peer's IPC-mapped
// flags), verified on every rank, timed at 256 MiB against the same
// collective from one process driving both GPUs. The figures go to
// $C3LAB_IPC_OUT as JSON when it is set.
func TestGPUPerProcessTwoGPUCopyEngine(t *testing.T) {
	if procChild(t) {
		return
	}
	single := singleProcessMedians(t, ipcCollectives, ipcStrategy, "copy-engine ")
	res := runProcJob(t, "TestGPUPerProcessTwoGPUCopyEngine", "ipc", "")
	report := map[string]any{"single_ns": single, "per_process_ns": res.CommNs, "bytes": procCommBytes, "strategy": "comm_engine dma",
		"tolerance": ipcBusBWTolerance}
	ratios, busbw := map[string]float64{}, map[string]map[string]float64{}
	for _, c := range ipcCollectives {
		one, pp := single[string(c)], res.CommNs[string(c)]
		if pp == 0 || one == 0 {
			t.Errorf("copy-engine %s: no time (one process %d ns, per process %d ns)", c, one, pp)
			continue
		}
		size := procCommScenario(c).Comm.SizeBytes(2)
		bw := func(ns int64) float64 { return profiler.BusBW(c, 2, profiler.AlgBW(size, float64(ns)/1e9)) / 1e9 }
		busbw[string(c)] = map[string]float64{"single_GBps": bw(one), "per_process_GBps": bw(pp)}
		ratios[string(c)] = float64(one) / float64(pp)
		t.Logf("copy-engine %s 256 MiB: one process %.1f µs (busbw %.1f GB/s), one process per GPU through CUDA IPC %.1f µs (%.1f GB/s): ratio %.3f",
			c, float64(one)/1e3, bw(one), float64(pp)/1e3, bw(pp), ratios[string(c)])
		if ratios[string(c)] < 1-ipcBusBWTolerance {
			t.Errorf("copy-engine %s across processes: busbw %.1f%% of one process's; the target is within %.0f%%", c, 100*ratios[string(c)], 100*ipcBusBWTolerance)
		}
	}
	report["busbw_ratio"], report["busbw"] = ratios, busbw
	writeReport(t, "C3LAB_IPC_OUT", "per-process-ipc", report)
}
