package main_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/c3lab/c3lab/recordings"
)

// labJob is a two-rank job of the real binary on loopback, started as
// torchrun starts one: rank 0's lab in a tmux session, rank 1 headless.
type labJob struct {
	x             *term
	rank1         *rankProc
	exit0, record string
	rank0Err      string
}

func startLabJob(t *testing.T, bin, dir string, extra ...string) *labJob {
	t.Helper()
	port := freePort(t)
	vars := func(r int) []string {
		return append(slices.Clone(extra), "RANK="+strconv.Itoa(r), "WORLD_SIZE=2", "LOCAL_RANK="+strconv.Itoa(r), "LOCAL_WORLD_SIZE=2",
			"MASTER_ADDR=127.0.0.1", "MASTER_PORT="+strconv.Itoa(port))
	}
	j := &labJob{exit0: filepath.Join(dir, "exit0"), record: filepath.Join(dir, "s.c3rec"), rank0Err: filepath.Join(dir, "rank0.err")}
	cmd := exec.Command(bin, "lab", "--backend", "sim")
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(), vars(1)...)
	p := &rankProc{cmd: cmd, out: &syncBuffer{}, errOut: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
	})
	j.rank1 = p
	shell := fmt.Sprintf("env %s %s lab --backend sim --record %s 2>%s; echo $? > %s; sleep 60",
		strings.Join(vars(0), " "), quote(bin), quote(j.record), quote(j.rank0Err), quote(j.exit0))
	j.x = startTerm(t, "ranks", 160, 45, shell)
	j.x.waitFor("rank 0's lab to say both ranks reported", 60*time.Second, func(s string) bool {
		return strings.Contains(s, "2/2 ranks reported")
	})
	return j
}

// TestE2ELabRanks runs the lab on rank 0 of a two-rank job: a knob turned
// there (o, launch order) is measured by rank 1 too (its recording, which
// rank 0 writes from what rank 1 sent, holds the new strategy, and rank
// 0's report after the lab prints rank 1's line for it); q ends both
// ranks with status 0. Killing rank 1 makes rank 0's lab name it and end
// with status 1.
func TestE2ELabRanks(t *testing.T) {
	bin, _ := e2eBinary(t)

	t.Run("a knob reaches rank 1, q ends both", func(t *testing.T) {
		dir := t.TempDir()
		j := startLabJob(t, bin, dir)
		if head, _, _ := strings.Cut(j.x.screen, "\n"); strings.Contains(head, "comm-first") {
			t.Fatalf("the lab starts in comm-first already; the test needs o to change it:\n%s", j.x.screen)
		}
		j.x.send("o")
		j.x.waitFor("the comm-first result on both ranks", 60*time.Second, func(s string) bool {
			head, _, _ := strings.Cut(s, "\n")
			return strings.Contains(head, "strategy comm-first") && strings.Contains(head, "2/2 ranks reported") && strings.Contains(head, "✓")
		})
		j.x.send("q")
		if code := j.x.waitExit(j.exit0, 15*time.Second); code != "0" {
			t.Fatalf("rank 0 exited %s; screen:\n%s", code, j.x.capture(true))
		}
		select {
		case <-j.rank1.done:
		case <-time.After(10 * time.Second):
			t.Fatal("rank 1 still runs 10 s after rank 0's lab quit")
		}
		if c := j.rank1.cmd.ProcessState.ExitCode(); c != 0 {
			t.Fatalf("rank 1 exited %d: %s", c, j.rank1.errOut)
		}
		if !strings.Contains(j.x.capture(true), "request 2:") || !strings.Contains(j.x.screen, "under comm-first") {
			t.Errorf("rank 0's report does not show rank 1 measuring comm-first:\n%s", j.x.screen)
		}
		rec, err := recordings.ReadAll(strings.TrimSuffix(j.record, ".c3rec") + ".rank1.c3rec")
		if err != nil {
			t.Fatalf("rank 1's recording: %v", err)
		}
		var strategies []string
		for _, ev := range rec.Events {
			if ev.Result != nil {
				strategies = append(strategies, ev.Result.Strategy.String())
			}
		}
		if len(strategies) < 2 || strategies[len(strategies)-1] != "comm-first" {
			t.Errorf("rank 1's recording holds results under %q; want the last under comm-first", strategies)
		}
	})

	for _, tc := range []struct {
		name string
		sig  syscall.Signal
		says string
	}{
		{"a killed rank is named and ends the lab", syscall.SIGKILL, "its connection closed"},
		{"a hung rank is named and ends the lab", syscall.SIGSTOP, "sent nothing for"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			j := startLabJob(t, bin, dir, "C3LAB_RANK_TIMEOUT=1s")
			pid := j.rank1.cmd.Process.Pid
			if err := j.rank1.cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if t.Failed() {
					b, _ := os.ReadFile(j.rank0Err)
					t.Logf("rank 0's stderr: %s", b)
				}
			})
			j.x.waitFor("the lab naming the lost rank", 10*time.Second, func(s string) bool {
				return strings.Contains(s, fmt.Sprintf("rank 1 (host %s, pid %d)", hostname(t), pid)) && strings.Contains(s, tc.says)
			})
			if code := j.x.waitExit(j.exit0, 10*time.Second); code != "1" {
				t.Fatalf("rank 0 exited %s after losing rank 1; want 1; screen:\n%s", code, j.x.capture(true))
			}
		})
	}
}

// TestE2ELabRankZeroLost: when rank 0, the lab's own process, dies, rank 1
// (headless) sees it within seconds, says which rank it lost and exits 1:
// no rank is left behind.
func TestE2ELabRankZeroLost(t *testing.T) {
	bin, _ := e2eBinary(t)
	dir := t.TempDir()
	j := startLabJob(t, bin, dir, "C3LAB_RANK_TIMEOUT=1s")
	pid := labProcess(t, bin, j.record)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-j.rank1.done:
	case <-time.After(15 * time.Second):
		t.Fatalf("rank 1 still runs 15 s after rank 0 was killed: %s", j.rank1.errOut)
	}
	if c := j.rank1.cmd.ProcessState.ExitCode(); c != 1 {
		t.Errorf("rank 1 exited %d after losing rank 0; want 1", c)
	}
	e := j.rank1.errOut.String()
	if !strings.Contains(e, "rank 0") {
		t.Errorf("rank 1 does not say it lost rank 0: %s", e)
	}
	t.Logf("rank 1: %s", strings.TrimSpace(e))
}

// labProcess is the pid of the process running bin with record among its
// arguments (rank 0's lab, not the shell that started it).
func labProcess(t *testing.T, bin, record string) int {
	t.Helper()
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if args[0] == bin && slices.Contains(args, record) {
			pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			if err == nil {
				return pid
			}
		}
	}
	t.Fatalf("no process of %s with %s among its arguments", bin, record)
	return 0
}

// TestLabRanksNoTerminal: rank 0's lab without a terminal refuses in one
// line, and rank 1, told the lab ended, leaves with status 0.
func TestLabRanksNoTerminal(t *testing.T) {
	bin := distBinary(t)
	ps := startRanks(t, bin, 2, nil, "lab", "--backend", "sim")
	waitAll(t, ps, 30*time.Second)
	if c := ps[0].code(); c != 2 || !strings.Contains(ps[0].errOut.String(), "the lab needs a terminal") {
		t.Errorf("rank 0 exited %d: %s", c, ps[0].errOut)
	}
	if c := ps[1].code(); c != 0 {
		t.Errorf("rank 1 exited %d: %s", c, ps[1].errOut)
	}
}
