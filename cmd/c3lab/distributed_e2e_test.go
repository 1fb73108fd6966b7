package main_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Several c3lab processes on loopback, started as torchrun starts them
// (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT), each on the
// simulator: the whole multi-process path, from the environment through
// the rendezvous, the start gate, the run and the gathering to rank 0's
// report and every rank's exit code.

// distBinary builds the real binary once per test.
func distBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("multi-process test skipped in -short mode")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go tool is not on PATH; the multi-process tests build the binary with it")
	}
	bin := filepath.Join(t.TempDir(), "c3lab")
	if out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// launcherVars are dropped from the test's own environment, so a test run
// under a launcher (a CI job under srun) starts clean ranks.
var launcherVars = []string{"OMPI_", "PMI_", "PMIX_", "MPI_LOCAL", "SLURM_", "RANK=", "WORLD_SIZE=", "LOCAL_RANK=", "LOCAL_WORLD_SIZE=", "MASTER_ADDR=", "MASTER_PORT=", "C3LAB_MASTER_", "TORCHELASTIC_"}

func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		keep := true
		for _, p := range launcherVars {
			if strings.HasPrefix(kv, p) {
				keep = false
			}
		}
		if keep {
			out = append(out, kv)
		}
	}
	return out
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// rankProc is one rank's process.
type rankProc struct {
	cmd         *exec.Cmd
	out, errOut *syncBuffer
	done        chan struct{}
	err         error
	ended       time.Time
}

func (p *rankProc) code() int {
	if p.cmd.ProcessState == nil {
		return -1
	}
	return p.cmd.ProcessState.ExitCode()
}

// startRanks starts world ranks of bin with args, torchrun-style, rank r
// with the variables of extra(r) added.
func startRanks(t *testing.T, bin string, world int, extra func(r int) []string, args ...string) []*rankProc {
	t.Helper()
	port := freePort(t)
	dir := t.TempDir()
	ps := make([]*rankProc, world)
	for r := range world {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Env = append(cleanEnv(), "RANK="+strconv.Itoa(r), "WORLD_SIZE="+strconv.Itoa(world), "LOCAL_RANK="+strconv.Itoa(r),
			"LOCAL_WORLD_SIZE="+strconv.Itoa(world), "MASTER_ADDR=127.0.0.1", "MASTER_PORT="+strconv.Itoa(port))
		if extra != nil {
			cmd.Env = append(cmd.Env, extra(r)...)
		}
		p := &rankProc{cmd: cmd, out: &syncBuffer{}, errOut: &syncBuffer{}, done: make(chan struct{})}
		cmd.Stdout, cmd.Stderr = p.out, p.errOut
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { p.err = cmd.Wait(); p.ended = time.Now(); close(p.done) }()
		ps[r] = p
		t.Cleanup(func() {
			p.cmd.Process.Kill()
			<-p.done
		})
	}
	return ps
}

// syncBuffer is a buffer the test may read while the process writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *syncBuffer) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Len()
}

func (s *syncBuffer) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.b.Bytes())
}

func waitAll(t *testing.T, ps []*rankProc, within time.Duration) {
	t.Helper()
	deadline := time.After(within)
	for r, p := range ps {
		select {
		case <-p.done:
		case <-deadline:
			t.Fatalf("rank %d still running after %v; stderr:\n%s", r, within, p.errOut)
		}
	}
}

// TestMultiProcess builds the binary once for every multi-process test.
func TestMultiProcess(t *testing.T) {
	bin := distBinary(t)
	t.Run("loopback", func(t *testing.T) { ranksOnLoopback(t, bin) })
	t.Run("lost rank", func(t *testing.T) { lostRankStopsTheOthers(t, bin) })
	t.Run("refusals", func(t *testing.T) { jobRefusals(t, bin) })
	t.Run("mpirun", func(t *testing.T) { underMpirun(t, bin) })
}

func ranksOnLoopback(t *testing.T, bin string) {
	t.Run("run --json: rank 0 reports for all", func(t *testing.T) {
		ps := startRanks(t, bin, 3, nil, "run", "--backend", "sim", "--json")
		waitAll(t, ps, 60*time.Second)
		for r, p := range ps {
			if p.code() != 0 {
				t.Fatalf("rank %d exited %d: %s", r, p.code(), p.errOut)
			}
			if r > 0 && (p.out.Len() > 0 || p.errOut.Len() > 0) {
				t.Errorf("rank %d printed %q / %q; only rank 0 reports", r, p.out, p.errOut)
			}
		}
		var doc struct {
			Launcher  string `json:"launcher"`
			WorldSize int    `json:"world_size"`
			Skew      int64  `json:"start_skew_ns"`
			Ranks     []struct {
				Rank     int             `json:"rank"`
				PID      int             `json:"pid"`
				ExitCode int             `json:"exit_code"`
				Released int64           `json:"released_unix_ns"`
				Output   json.RawMessage `json:"output"`
			} `json:"ranks"`
		}
		if err := json.Unmarshal(ps[0].out.Bytes(), &doc); err != nil {
			t.Fatalf("rank 0's output is not one JSON document: %v\n%s", err, ps[0].out)
		}
		if doc.Launcher != "torchrun" || doc.WorldSize != 3 || len(doc.Ranks) != 3 {
			t.Fatalf("launcher %q, world %d, %d ranks", doc.Launcher, doc.WorldSize, len(doc.Ranks))
		}
		for r, rep := range doc.Ranks {
			var res struct {
				Scenario struct{ Name string } `json:"scenario"`
				TC3      struct {
					Median float64 `json:"median_ns"`
				} `json:"t_c3"`
			}
			if err := json.Unmarshal(rep.Output, &res); err != nil || res.Scenario.Name == "" || res.TC3.Median <= 0 {
				t.Errorf("rank %d's gathered result: %v %+v", r, err, res)
			}
			if rep.Rank != r || rep.PID != ps[r].cmd.Process.Pid || rep.ExitCode != 0 || rep.Released == 0 {
				t.Errorf("rank %d's report: %+v", r, rep)
			}
		}
		t.Logf("start skew between 3 processes on this host: %v", time.Duration(doc.Skew))
	})
	t.Run("sweep: every rank's file, written by rank 0", func(t *testing.T) {
		dir := t.TempDir()
		out := filepath.Join(dir, "s.json")
		ps := startRanks(t, bin, 2, nil, "sweep", "--backend", "sim", "--scenarios", "llama3-70b-tp-qkv-ag-224m-2gpu", "--strategies", "baseline", "--reps", "2", "--out", out)
		waitAll(t, ps, 60*time.Second)
		for r, p := range ps {
			if p.code() != 0 {
				t.Fatalf("rank %d exited %d: %s", r, p.code(), p.errOut)
			}
		}
		for _, f := range []string{out, filepath.Join(dir, "s.rank1.json")} {
			b, err := os.ReadFile(f)
			if err != nil || !json.Valid(b) || !bytes.Contains(b, []byte("llama3-70b-tp-qkv-ag-224m-2gpu")) {
				t.Errorf("%s: %v", f, err)
			}
		}
		if !strings.Contains(ps[0].out.String(), "ranks      2 (torchrun), start skew") || !strings.Contains(ps[0].out.String(), "rank 1 ") {
			t.Errorf("rank 0's summary:\n%s", ps[0].out)
		}
		// The same command again is refused before anything runs: rank
		// 1's file is there.
		os.Remove(out)
		ps = startRanks(t, bin, 2, nil, "sweep", "--backend", "sim", "--scenarios", "llama3-70b-tp-qkv-ag-224m-2gpu", "--out", out)
		waitAll(t, ps, 30*time.Second)
		if ps[0].code() != 2 || !strings.Contains(ps[0].errOut.String(), "rank 1's --out") || !strings.Contains(ps[0].errOut.String(), "already exists") {
			t.Errorf("rank 0: exit %d, %s", ps[0].code(), ps[0].errOut)
		}
		if ps[1].code() != 1 || !strings.Contains(ps[1].errOut.String(), "rank 0 stopped the job before it started") {
			t.Errorf("rank 1: exit %d, %s", ps[1].code(), ps[1].errOut)
		}
	})
}

// A rank killed or hung mid-run stops the others within seconds, each
// saying which rank it was, with exit code 1.
func lostRankStopsTheOthers(t *testing.T, bin string) {
	for _, tc := range []struct {
		name string
		sig  syscall.Signal
		says string
		// within bounds the others' exit after the signal: a death is seen
		// at once, a hang after the store's silence (3 s).
		within time.Duration
	}{
		{"killed", syscall.SIGKILL, "is gone: its connection closed (the process ended or was killed)", 5 * time.Second},
		{"hung", syscall.SIGSTOP, "sent nothing for", 8 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The whole suite: far longer than the test waits.
			ps := startRanks(t, bin, 3, nil, "sweep", "--backend", "sim", "--out", "s.json")
			waitFor(t, ps[0], "sweep ", 60*time.Second) // rank 0 is past the start gate and measuring
			victim := ps[1]
			if err := victim.cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			signalled := time.Now()
			waitAll(t, []*rankProc{ps[0], ps[2]}, tc.within)
			want := fmt.Sprintf("rank 1 (host %s, pid %d) %s", hostname(t), victim.cmd.Process.Pid, tc.says)
			for _, r := range []int{0, 2} {
				p := ps[r]
				if p.code() != 1 || !strings.Contains(p.errOut.String(), want) {
					t.Errorf("rank %d: exit %d, stderr %q; want exit 1 and %q", r, p.code(), p.errOut, want)
				}
				if lines := strings.Count(strings.TrimSpace(lastLines(p.errOut.String())), "\n"); lines > 0 {
					t.Errorf("rank %d's error is %d lines", r, lines+1)
				}
				t.Logf("rank %d left %v after rank 1 was %s", r, p.ended.Sub(signalled).Round(time.Millisecond), tc.name)
			}
			victim.cmd.Process.Kill()
		})
	}
}

// lastLines is what follows the sweep's progress lines.
func lastLines(s string) string {
	var keep []string
	for l := range strings.SplitSeq(s, "\n") {
		if l != "" && !strings.HasPrefix(l, "sweep ") && !strings.HasPrefix(l, "c3lab: ") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

func hostname(t *testing.T) string {
	h, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// waitFor waits until p's stderr holds s.
func waitFor(t *testing.T, p *rankProc, s string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			t.Fatalf("rank ended (exit %d) before saying %q: %s", p.code(), s, p.errOut)
		default:
		}
		if strings.Contains(p.errOut.String(), s) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no %q within %v: %s", s, within, p.errOut)
}

// A job that cannot form is refused in one line, on every rank, fast.
func jobRefusals(t *testing.T, bin string) {
	t.Run("world sizes disagree", func(t *testing.T) {
		ps := startRanks(t, bin, 2, func(r int) []string {
			if r == 1 {
				return []string{"WORLD_SIZE=3"}
			}
			return nil
		}, "run", "--backend", "sim")
		waitAll(t, ps, 20*time.Second)
		want := "rank 1 says the world has 3 ranks, rank 0 says 2: start every rank with the same world size"
		for r, p := range ps {
			if p.code() != 1 || !strings.Contains(p.errOut.String(), want) || strings.Count(p.errOut.String(), "\n") != 1 {
				t.Errorf("rank %d: exit %d, %q", r, p.code(), p.errOut)
			}
		}
	})
	t.Run("a rank never comes", func(t *testing.T) {
		// Long enough for rank 1's process to start and join on a loaded
		// 2-core machine (1s was once too short, and the message named
		// rank 1 as well).
		ps := startRanks(t, bin, 2, func(int) []string { return []string{"WORLD_SIZE=3", "C3LAB_JOIN_TIMEOUT=4s"} }, "run", "--backend", "sim")
		waitAll(t, ps, 30*time.Second)
		want := "rank 2 did not join within 4s (is the world size 3 right? did every rank start?)"
		for r, p := range ps {
			if p.code() != 1 || !strings.Contains(p.errOut.String(), want) {
				t.Errorf("rank %d: exit %d, %q", r, p.code(), p.errOut)
			}
		}
	})
	t.Run("port in use", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		port := ln.Addr().(*net.TCPAddr).Port
		ps := startRanks(t, bin, 1, func(int) []string {
			return []string{"WORLD_SIZE=2", "MASTER_PORT=" + strconv.Itoa(port)}
		}, "run", "--backend", "sim")
		waitAll(t, ps, 20*time.Second)
		want := fmt.Sprintf("c3lab run: rank 0 cannot serve the store on 127.0.0.1:%d: the port is in use", port)
		if p := ps[0]; p.code() != 1 || !strings.HasPrefix(p.errOut.String(), want) || strings.Count(p.errOut.String(), "\n") != 1 {
			t.Errorf("exit %d, %q", p.code(), p.errOut)
		}
	})
	t.Run("an environment that contradicts itself", func(t *testing.T) {
		ps := startRanks(t, bin, 1, func(int) []string { return []string{"RANK=2"} }, "run", "--backend", "sim")
		waitAll(t, ps, 20*time.Second)
		want := "c3lab run: torchrun environment: rank 2 is not below the world size 1\n"
		if p := ps[0]; p.code() != 2 || p.errOut.String() != want {
			t.Errorf("exit %d, %q", p.code(), p.errOut)
		}
	})
}

// Under Open MPI's mpirun, with no MASTER_ADDR, rank 0's address goes
// through MPI (libmpi loaded at run time). Runs where mpirun is installed
// (CI installs Debian's openmpi-bin).
func underMpirun(t *testing.T, bin string) {
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		t.Skip("mpirun is not installed")
	}
	cmd := exec.Command(mpirun, "--oversubscribe", "-np", "2", bin, "run", "--backend", "sim", "--json")
	cmd.Env = append(cleanEnv(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", "OMPI_MCA_btl=self,tcp", "OMPI_MCA_plm_rsh_agent=false")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(90 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("mpirun did not end: %s", errOut.String())
	}
	if err != nil {
		t.Fatalf("mpirun: %v\n%s\n%s", err, out.String(), errOut.String())
	}
	var doc struct {
		Launcher  string `json:"launcher"`
		WorldSize int    `json:"world_size"`
		Ranks     []struct {
			ExitCode int `json:"exit_code"`
		} `json:"ranks"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if doc.Launcher != "mpirun" || doc.WorldSize != 2 || len(doc.Ranks) != 2 || doc.Ranks[1].ExitCode != 0 {
		t.Errorf("%+v", doc)
	}
}
