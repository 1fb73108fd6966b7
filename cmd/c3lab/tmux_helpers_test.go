package main_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// e2eBinary skips the test where an end-to-end run cannot happen (-short,
// no tmux, no go tool) and builds the real binary into a new folder; it
// returns the binary and the folder.
func e2eBinary(t *testing.T) (bin, dir string) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end tmux test skipped in -short mode")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed; the end-to-end tests need it")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go tool is not on PATH; the end-to-end tests build the binary with it")
	}
	dir = t.TempDir()
	bin = filepath.Join(dir, "c3lab")
	if out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin, dir
}

// term is a detached tmux session running a shell command, on a private
// tmux socket, so a test never touches a user's tmux server. The server
// and its socket file go when the test ends.
type term struct {
	t      *testing.T
	socket string
	name   string
	// screen is the pane as last captured.
	screen string
}

// startTerm opens a w x h session called name that runs shell.
func startTerm(t *testing.T, name string, w, h int, shell string) *term {
	t.Helper()
	x := &term{t: t, socket: fmt.Sprintf("c3lab-e2e-%s-%d-%d", name, os.Getpid(), time.Now().UnixNano()), name: name}
	socketPath := ""
	t.Cleanup(func() {
		_, _ = x.tmux("kill-server")
		if socketPath != "" && strings.Contains(socketPath, x.socket) {
			_ = os.Remove(socketPath)
		}
	})
	if out, err := x.tmux("new-session", "-d", "-s", name, "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), shell); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	if out, err := x.tmux("display-message", "-p", "-t", name, "#{socket_path}"); err == nil {
		socketPath = strings.TrimSpace(out)
	}
	return x
}

// tmux runs a tmux command on the private server.
func (x *term) tmux(a ...string) (string, error) {
	out, err := exec.Command("tmux", append([]string{"-L", x.socket, "-f", "/dev/null"}, a...)...).CombinedOutput()
	return string(out), err
}

// capture reads the pane (joined: a line the terminal wrapped is one line).
func (x *term) capture(joined bool) string {
	args := []string{"capture-pane", "-p", "-t", x.name}
	if joined {
		args = append(args, "-J")
	}
	if out, err := x.tmux(args...); err == nil {
		x.screen = out
	}
	return x.screen
}

// send types keys into the session.
func (x *term) send(keys ...string) {
	x.t.Helper()
	if out, err := x.tmux(append([]string{"send-keys", "-t", x.name}, keys...)...); err != nil {
		x.t.Fatalf("tmux send-keys %v: %v\n%s", keys, err, out)
	}
}

// waitFor polls the screen until cond holds, failing after timeout.
func (x *term) waitFor(what string, timeout time.Duration, cond func(string) bool) {
	x.t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond(x.capture(false)) {
		if time.Now().After(deadline) {
			x.t.Fatalf("timed out after %s waiting for %s; screen:\n%s", timeout, what, x.screen)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitExit waits for the shell to write the command's exit status to file
// (`...; echo $? > file`) and returns it.
func (x *term) waitExit(file string, timeout time.Duration) string {
	x.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if b, err := os.ReadFile(file); err == nil && strings.TrimSpace(string(b)) != "" {
			return strings.TrimSpace(string(b))
		}
		if time.Now().After(deadline) {
			x.t.Fatalf("the command did not exit within %s; screen:\n%s", timeout, x.capture(true))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// quote quotes s for the shell tmux runs the command with.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
