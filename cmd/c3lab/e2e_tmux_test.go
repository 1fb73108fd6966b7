package main_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/c3lab/c3lab/scenarios"
)

// TestE2ETmux drives the real binary in a detached tmux session of 120x40:
// it waits for the first "% of ideal" figure, presses d (DMA offload),
// waits for the figure to change, presses q and checks the process exited.
// It uses a private tmux socket, so it never touches a user's tmux server.
func TestE2ETmux(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end tmux test skipped in -short mode")
	}
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux is not installed; the end-to-end lab test needs it")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go tool is not on PATH; the end-to-end lab test builds the binary with it")
	}

	dir := t.TempDir()
	bin := filepath.Join(dir, "c3lab")
	build := exec.Command(goTool, "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	// With no arguments the lab opens on the first built-in scenario. DMA
	// needs a pure-copy collective there; otherwise start on one that is.
	args := ""
	if suite := scenarios.Builtin(); len(suite) > 0 && !suite[0].Comm.Collective.IsPureCopy() {
		for _, sc := range suite {
			if sc.Comm.Collective.IsPureCopy() {
				args = " lab --scenario " + sc.Name
				t.Logf("first built-in scenario %s cannot use DMA; starting on %s", suite[0].Name, sc.Name)
				break
			}
		}
	}

	socket := fmt.Sprintf("c3lab-e2e-%d-%d", os.Getpid(), time.Now().UnixNano())
	tm := func(a ...string) (string, error) {
		cmd := exec.Command(tmux, append([]string{"-L", socket, "-f", "/dev/null"}, a...)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	socketPath := ""
	t.Cleanup(func() {
		// Kill the private server (and the session with it), then remove
		// the socket file it may leave behind.
		_, _ = tm("kill-server")
		if socketPath != "" && strings.Contains(socketPath, socket) {
			_ = os.Remove(socketPath)
		}
	})

	// The shell records the lab's exit status, so the test can tell that
	// the process ended (and how).
	exitFile := filepath.Join(dir, "exit-status")
	shell := fmt.Sprintf("%s%s; echo $? > %s", quote(bin), args, quote(exitFile))
	if out, err := tm("new-session", "-d", "-s", "lab", "-x", "120", "-y", "40", shell); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	if out, err := tm("display-message", "-p", "-t", "lab", "#{socket_path}"); err == nil {
		socketPath = strings.TrimSpace(out)
	}

	screen := ""
	capture := func() string {
		out, err := tm("capture-pane", "-p", "-t", "lab")
		if err == nil {
			screen = out
		}
		return screen
	}
	waitFor := func(what string, timeout time.Duration, cond func(string) bool) {
		t.Helper()
		deadline := time.Now().Add(timeout)
		for !cond(capture()) {
			if time.Now().After(deadline) {
				t.Fatalf("timed out after %s waiting for %s; screen:\n%s", timeout, what, screen)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	// The "% of ideal" figure on the metrics panel (above the status line,
	// which repeats it).
	fractionRE := regexp.MustCompile(`% of ideal[^0-9\-n]*(-?[0-9]+\.[0-9]%|n/a)`)
	fraction := func(s string) string {
		if m := fractionRE.FindStringSubmatch(s); m != nil {
			return m[1]
		}
		return ""
	}

	waitFor(`the first "% of ideal" figure`, 90*time.Second, func(s string) bool { return fraction(s) != "" })
	first := fraction(screen)
	t.Logf("first %% of ideal: %s", first)

	if out, err := tm("send-keys", "-t", "lab", "d"); err != nil {
		t.Fatalf("tmux send-keys d: %v\n%s", err, out)
	}
	waitFor("the figure to change after d", 90*time.Second, func(s string) bool {
		f := fraction(s)
		return f != "" && f != first
	})
	t.Logf("with dma: %s", fraction(screen))
	if !strings.Contains(screen, "dma") {
		t.Errorf("the screen does not show the dma strategy:\n%s", screen)
	}

	if out, err := tm("send-keys", "-t", "lab", "q"); err != nil {
		t.Fatalf("tmux send-keys q: %v\n%s", err, out)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		b, err := os.ReadFile(exitFile)
		if err == nil && strings.TrimSpace(string(b)) != "" {
			if code := strings.TrimSpace(string(b)); code != "0" {
				t.Errorf("the lab exited with status %s; screen:\n%s", code, capture())
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the lab did not exit after q; screen:\n%s", capture())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// quote quotes s for the shell tmux runs the command with.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestE2ETmuxReplay plays the session recorded on 2 x H200
// (recordings/samples/h200x2-lab.c3rec) back in the real binary, in a
// detached tmux session of 160x50: the utilization panel shows the
// recorded NVML telemetry (numbers, not n/a) at the first result and,
// after end, at the last; q quits.
func TestE2ETmuxReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end tmux test skipped in -short mode")
	}
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux is not installed; the end-to-end replay test needs it")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go tool is not on PATH; the end-to-end replay test builds the binary with it")
	}
	sample, err := filepath.Abs(filepath.Join("..", "..", "recordings", "samples", "h200x2-lab.c3rec"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "c3lab")
	if out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	socket := fmt.Sprintf("c3lab-e2e-replay-%d-%d", os.Getpid(), time.Now().UnixNano())
	tm := func(a ...string) (string, error) {
		out, err := exec.Command(tmux, append([]string{"-L", socket, "-f", "/dev/null"}, a...)...).CombinedOutput()
		return string(out), err
	}
	socketPath := ""
	t.Cleanup(func() {
		_, _ = tm("kill-server")
		if socketPath != "" && strings.Contains(socketPath, socket) {
			_ = os.Remove(socketPath)
		}
	})
	exitFile := filepath.Join(dir, "exit-status")
	shell := fmt.Sprintf("%s replay %s; echo $? > %s", quote(bin), quote(sample), quote(exitFile))
	if out, err := tm("new-session", "-d", "-s", "replay", "-x", "160", "-y", "50", shell); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	if out, err := tm("display-message", "-p", "-t", "replay", "#{socket_path}"); err == nil {
		socketPath = strings.TrimSpace(out)
	}
	screen := ""
	waitFor := func(what string, cond func(string) bool) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			if out, err := tm("capture-pane", "-p", "-t", "replay"); err == nil {
				screen = out
			}
			if cond(screen) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s; screen:\n%s", what, screen)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	// The utilization panel's NVML rows (labels padded to 10 cells), each
	// with its average: a percentage, or HBM in GB/s.
	row := regexp.MustCompile(`│(SMs       |tensor    |HBM       |NVLink TX |NVLink RX )[^│]*`)
	value := regexp.MustCompile(`[0-9]+(%| GB/s)`)
	telemetry := func(s string) bool {
		rows := row.FindAllString(s, -1)
		for _, r := range rows {
			if strings.Contains(r, "n/a") || !value.MatchString(r) {
				return false
			}
		}
		return len(rows) == 5 && strings.Contains(s, "recorded NVML")
	}
	waitFor("the first result with its recorded telemetry", func(s string) bool {
		return strings.Contains(s, "replay 1/82") && telemetry(s)
	})
	if out, err := tm("send-keys", "-t", "replay", "End"); err != nil {
		t.Fatalf("tmux send-keys End: %v\n%s", err, out)
	}
	waitFor("the last result with its recorded telemetry", func(s string) bool {
		return strings.Contains(s, "replay 82/82") && strings.Contains(s, "82 runs") && telemetry(s)
	})
	if out, err := tm("send-keys", "-t", "replay", "q"); err != nil {
		t.Fatalf("tmux send-keys q: %v\n%s", err, out)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		b, err := os.ReadFile(exitFile)
		if err == nil && strings.TrimSpace(string(b)) != "" {
			if code := strings.TrimSpace(string(b)); code != "0" {
				t.Errorf("replay exited with status %s; screen:\n%s", code, screen)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("replay did not exit after q; screen:\n%s", screen)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestE2ETmuxSweepUnwritableOut runs the real binary in a tmux terminal
// with a sweep whose --out folder does not exist: it must refuse before
// running anything, with one line that says what is wrong, exit 2, no
// sweep progress on the screen and no file made.
func TestE2ETmuxSweepUnwritableOut(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end tmux test skipped in -short mode")
	}
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux is not installed; the end-to-end test needs it")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go tool is not on PATH; the end-to-end test builds the binary with it")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "c3lab")
	if out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	socket := fmt.Sprintf("c3lab-e2e-sweep-%d-%d", os.Getpid(), time.Now().UnixNano())
	tm := func(a ...string) (string, error) {
		out, err := exec.Command(tmux, append([]string{"-L", socket, "-f", "/dev/null"}, a...)...).CombinedOutput()
		return string(out), err
	}
	socketPath := ""
	t.Cleanup(func() {
		_, _ = tm("kill-server")
		if socketPath != "" && strings.Contains(socketPath, socket) {
			_ = os.Remove(socketPath)
		}
	})

	missing := filepath.Join(dir, "nonexistent-dir")
	out := filepath.Join(missing, "x.json")
	exitFile := filepath.Join(dir, "exit-status")
	// The shell keeps the pane open after the command (sleep) so that the
	// screen can be read; the server is killed at the end of the test.
	shell := fmt.Sprintf("cd %s && %s sweep --backend sim --out %s; echo $? > %s; sleep 120",
		quote(dir), quote(bin), quote(out), quote(exitFile))
	if out, err := tm("new-session", "-d", "-s", "sweep", "-x", "250", "-y", "20", shell); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	if out, err := tm("display-message", "-p", "-t", "sweep", "#{socket_path}"); err == nil {
		socketPath = strings.TrimSpace(out)
	}

	code := ""
	deadline := time.Now().Add(60 * time.Second)
	for code == "" {
		if b, err := os.ReadFile(exitFile); err == nil {
			code = strings.TrimSpace(string(b))
		}
		if code == "" && time.Now().After(deadline) {
			screen, _ := tm("capture-pane", "-p", "-J", "-t", "sweep")
			t.Fatalf("the sweep did not end; screen:\n%s", screen)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// -J joins a line the terminal wrapped, so one line of output is one
	// line here.
	screen, err := tm("capture-pane", "-p", "-J", "-t", "sweep")
	if err != nil {
		t.Fatalf("tmux capture-pane: %v\n%s", err, screen)
	}
	var lines []string
	for _, l := range strings.Split(screen, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if code != "2" {
		t.Errorf("exit status %s, want 2 (a usage error); screen:\n%s", code, screen)
	}
	want := "c3lab sweep: --out: cannot write " + out + ": the folder " + missing + " does not exist"
	if len(lines) != 1 || !strings.HasPrefix(lines[0], want) {
		t.Errorf("want one line starting %q; screen:\n%s", want, screen)
	}
	if regexp.MustCompile(`sweep \d+/\d+`).MatchString(screen) {
		t.Errorf("the sweep ran (progress on the screen):\n%s", screen)
	}
	if _, err := os.Lstat(missing); err == nil {
		t.Errorf("%s was created", missing)
	}
}
