package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/c3lab/c3lab/scenarios"
)

// fractionRE finds the "% of ideal" figure on the metrics panel (above the
// status line, which repeats it).
var fractionRE = regexp.MustCompile(`% of ideal[^0-9\-n]*(-?[0-9]+\.[0-9]%|n/a)`)

func fraction(s string) string {
	if m := fractionRE.FindStringSubmatch(s); m != nil {
		return m[1]
	}
	return ""
}

// labDMA drives the lab in x: it waits for the first "% of ideal" figure,
// presses d (DMA offload), waits for the figure to change, presses q and
// checks the process exited with status 0 (the shell writes it to exitFile).
func labDMA(t *testing.T, x *term, exitFile string) {
	t.Helper()
	x.waitFor(`the first "% of ideal" figure`, 90*time.Second, func(s string) bool { return fraction(s) != "" })
	first := fraction(x.screen)
	t.Logf("first %% of ideal: %s", first)
	x.send("d")
	x.waitFor("the figure to change after d", 90*time.Second, func(s string) bool {
		f := fraction(s)
		return f != "" && f != first
	})
	t.Logf("with dma: %s", fraction(x.screen))
	if !strings.Contains(x.screen, "dma") {
		t.Errorf("the screen does not show the dma strategy:\n%s", x.screen)
	}
	x.send("q")
	if code := x.waitExit(exitFile, 15*time.Second); code != "0" {
		t.Errorf("the lab exited with status %s; screen:\n%s", code, x.capture(false))
	}
}

// TestE2ETmux drives the real binary in a detached tmux session of 120x40:
// the lab opens on the first built-in scenario (or the first whose
// collective copy engines can carry), d turns DMA offload on and changes
// the figure, q quits.
func TestE2ETmux(t *testing.T) {
	bin, dir := e2eBinary(t)
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
	exitFile := filepath.Join(dir, "exit-status")
	x := startTerm(t, "lab", 120, 40, fmt.Sprintf("%s%s; echo $? > %s", quote(bin), args, quote(exitFile)))
	labDMA(t, x, exitFile)
}

// TestE2ETmuxOneGPU opens the lab on a simulated one-GPU node
// (--sim-gpus 1), as a user at a one-GPU box sees it: it starts on a host
// copy, says it left the collectives out, shows PCIe where a collective
// shows NVLink, and d moves the copy to the copy engines.
func TestE2ETmuxOneGPU(t *testing.T) {
	bin, dir := e2eBinary(t)
	exitFile := filepath.Join(dir, "exit-status")
	x := startTerm(t, "onegpu", 160, 45, fmt.Sprintf("%s lab --backend sim --sim-gpus 1; echo $? > %s", quote(bin), quote(exitFile)))
	x.waitFor("the list's note on what one GPU cannot run", 60*time.Second, func(s string) bool {
		return strings.Contains(s, "Scenarios 1/12 · 61 need more GPUs")
	})
	x.waitFor("the PCIe rows of the first host copy", 60*time.Second, func(s string) bool {
		return strings.Contains(s, "PCIe TX") && strings.Contains(s, "PCIe RX") && strings.Contains(s, "act-offload-d2h")
	})
	if strings.Contains(x.screen, "NVLink") || strings.Contains(x.screen, "-ag-") {
		t.Errorf("a one-GPU lab shows NVLink or a collective:\n%s", x.screen)
	}
	// The simulator's figures carry its error on held-out H200 runs of
	// the same kind (h2d and d2h copies on one GPU).
	x.waitFor("the simulator's held-out error beside its figures", 60*time.Second, func(s string) bool {
		return strings.Contains(s, "model err") && strings.Contains(s, "held-out NVIDIA H200")
	})
	labDMA(t, x, exitFile)
}

// TestE2ETmuxReplay plays the session recorded on 2 x H200
// (recordings/samples/h200x2-lab.c3rec) back in the real binary, in a
// detached tmux session of 160x50: the utilization panel shows the
// recorded NVML telemetry (numbers, not n/a) at the first result and,
// after end, at the last; q quits.
func TestE2ETmuxReplay(t *testing.T) {
	bin, dir := e2eBinary(t)
	sample, err := filepath.Abs(filepath.Join("..", "..", "recordings", "samples", "h200x2-lab.c3rec"))
	if err != nil {
		t.Fatal(err)
	}
	exitFile := filepath.Join(dir, "exit-status")
	x := startTerm(t, "replay", 160, 50, fmt.Sprintf("%s replay %s; echo $? > %s", quote(bin), quote(sample), quote(exitFile)))
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
	x.waitFor("the first result with its recorded telemetry", 60*time.Second, func(s string) bool {
		return strings.Contains(s, "replay 1/82") && telemetry(s)
	})
	x.send("End")
	x.waitFor("the last result with its recorded telemetry", 60*time.Second, func(s string) bool {
		return strings.Contains(s, "replay 82/82") && strings.Contains(s, "82 runs") && telemetry(s)
	})
	x.send("q")
	if code := x.waitExit(exitFile, 15*time.Second); code != "0" {
		t.Errorf("replay exited with status %s; screen:\n%s", code, x.screen)
	}
}

// TestE2ETmuxSweepUnwritableOut runs the real binary in a tmux terminal
// with a sweep whose --out folder does not exist: it must refuse before
// running anything, with one line that says what is wrong, exit 2, no
// sweep progress on the screen and no file made.
func TestE2ETmuxSweepUnwritableOut(t *testing.T) {
	bin, dir := e2eBinary(t)
	missing := filepath.Join(dir, "nonexistent-dir")
	out := filepath.Join(missing, "x.json")
	exitFile := filepath.Join(dir, "exit-status")
	// The shell keeps the pane open after the command (sleep) so that the
	// screen can be read; the server is killed at the end of the test.
	x := startTerm(t, "sweep", 250, 20, fmt.Sprintf("cd %s && %s sweep --backend sim --out %s; echo $? > %s; sleep 120",
		quote(dir), quote(bin), quote(out), quote(exitFile)))
	code := x.waitExit(exitFile, 60*time.Second)
	screen := x.capture(true)
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
