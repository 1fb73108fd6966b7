package tui

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/c3lab/c3lab/scenarios"
)

// longMessage is an error as long as the trial run's replay errors.
const longMessage = "the recording has no concurrent run of llama3-70b-tp8-qkv-ag-224m under comm-first prio=-5 dma (recorded strategies: baseline; comm-first prio=-5; comm_sms=32; dma; nccl-ce)"

// words splits plain text into its words.
func words(s string) []string { return strings.Fields(s) }

// TestStatusLineCutsAtWords renders long messages of every tone at several
// widths: each line is exactly the width, keeps whole words only, and says
// where the rest is; a message that fits is left whole.
func TestStatusLineCutsAtWords(t *testing.T) {
	st := DefaultStyles(true)
	for _, kind := range []statusKind{statusInfo, statusWarn, statusError} {
		for _, w := range []int{60, 80, 120, 160, 200} {
			t.Run(fmt.Sprintf("%d_%d", kind, w), func(t *testing.T) {
				line := statusLine(st, status{kind, longMessage}, w, "?")
				if got := ansi.StringWidth(line); got != w {
					t.Fatalf("line is %d cells, want %d", got, w)
				}
				plainLine := strings.TrimRight(ansi.Strip(line), " ")
				prefix := map[statusKind]string{statusError: "error: ", statusWarn: "! "}[kind]
				cut := ansi.StringWidth(prefix+longMessage) > w
				if got := strings.HasSuffix(plainLine, " … (? shows all)"); got != cut {
					t.Errorf("hint to the full text %v, want %v: %q", got, cut, plainLine)
				}
				body := strings.TrimSuffix(strings.TrimPrefix(plainLine, prefix), " … (? shows all)")
				if !strings.HasPrefix(longMessage, body) || (len(body) < len(longMessage) && longMessage[len(body)] != ' ') {
					t.Errorf("not whole words of the message: %q", body)
				}
				if c := statusCut(status{kind, longMessage}, w); c != cut {
					t.Errorf("statusCut = %v, want %v", c, cut)
				}
			})
		}
	}
	short := statusLine(st, status{statusWarn, "p: the replay backend cannot set stream priorities"}, 80, "?")
	if !strings.Contains(ansi.Strip(short), "cannot set stream priorities") || strings.Contains(short, "shows all") {
		t.Errorf("a short message changed: %q", ansi.Strip(short))
	}
}

// TestHelpOverlayUsesItsWidth renders the help overlay at many widths: no
// description is cut, every word of every description shows, no line is
// wider than the overlay.
func TestHelpOverlayUsesItsWidth(t *testing.T) {
	st := DefaultStyles(true)
	groups := helpGroups(DefaultKeyMap(), dmaStrategy(), h200Caps(), "fake", helpView{n: 2})
	for _, w := range []int{36, 56, 76, 80, 116, 160, 196} {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			lines := helpOverlayLines(st, groups, w, 200)
			text := ansi.Strip(strings.Join(lines, "\n"))
			for i, l := range lines {
				if got := ansi.StringWidth(l); got > w {
					t.Errorf("line %d is %d cells, over %d: %q", i, got, w, ansi.Strip(l))
				}
			}
			if strings.Contains(text, "…") {
				t.Errorf("something is cut:\n%s", text)
			}
			// Every word of every description, in order (the knobs'
			// values may stand between the lines of one).
			all := words(text)
			for _, g := range groups {
				for _, e := range g.entries {
					if !inOrder(all, words(e.desc)) {
						t.Errorf("%q is not shown whole:\n%s", e.desc, text)
					}
				}
			}
		})
	}
}

// inOrder reports whether want's words occur in all, in order, with
// anything in between.
func inOrder(all, want []string) bool {
	i := 0
	for _, w := range all {
		if i < len(want) && w == want[i] {
			i++
		}
	}
	return i == len(want)
}

// TestTooSmallWraps says what the lab needs in whole words on a terminal
// too small for it.
func TestTooSmallWraps(t *testing.T) {
	for _, sz := range [][2]int{{50, 12}, {30, 8}, {59, 20}} {
		m := fixedModel(t, sz[0], sz[1], scenarios.Strategy{})
		out := m.View().Content
		checkScreen(t, out, sz[0], sz[1])
		text := ansi.Strip(out)
		want := fmt.Sprintf("terminal %dx%d is too small: c3lab needs %dx%d (q quits)", sz[0], sz[1], minWidth, minHeight)
		if strings.Join(words(text), " ") != want {
			t.Errorf("%dx%d: %q, want %q", sz[0], sz[1], text, want)
		}
	}
}

// TestComposerWrapsErrors shows a long validation error in whole words,
// below its field when it does not fit beside it.
func TestComposerWrapsErrors(t *testing.T) {
	st := DefaultStyles(true)
	cp := newComposer(testSuite()[0])
	sc, _ := cp.scenario(h200Caps().Limits)
	sc.Comm.Bytes = 500 << 30
	cp = newComposer(sc)
	_, cp.errs = cp.scenario(h200Caps().Limits)
	msg := cp.errs["$.comm.bytes"]
	if msg == "" {
		t.Fatal("no error for 500 GiB per rank")
	}
	for _, w := range []int{56, 76, 96} {
		lines := composerLines(st, cp, w)
		text := ansi.Strip(strings.Join(lines, "\n"))
		for i, l := range lines {
			if got := ansi.StringWidth(l); got > w {
				t.Errorf("%d: line %d is %d cells: %q", w, i, got, ansi.Strip(l))
			}
		}
		if !strings.Contains(strings.Join(words(text), " "), strings.Join(words(msg), " ")) || strings.Contains(text, "…") {
			t.Errorf("%d: the error is not whole:\n%s", w, text)
		}
	}
}

// TestFlowLongErrorReachable fails a measurement with a message longer
// than the status line: the line keeps whole words and points to help,
// which shows the whole message.
func TestFlowLongErrorReachable(t *testing.T) {
	fake := newFake()
	tm, obs := startLab(t, fake, 80, 24)
	obs.wait(t, tm, "the first measurement", idle)
	fake.mu.Lock()
	fake.fail = errors.New(longMessage)
	fake.mu.Unlock()
	tm.Type("r")
	s := obs.wait(t, tm, "the error", func(s snapshot) bool { return !s.running && s.status.kind == statusError })
	if !strings.Contains(s.screen, "(? shows all)") {
		t.Errorf("the status line does not say where the rest is:\n%s", s.screen)
	}
	tm.Type("?")
	s = obs.wait(t, tm, "the help overlay", func(s snapshot) bool { return s.showHelp })
	scr := strings.ReplaceAll(s.screen, "│", " ")
	if !strings.Contains(scr, "last message") {
		t.Errorf("help does not show the last message:\n%s", s.screen)
	}
	for _, w := range words(longMessage) {
		if !strings.Contains(scr, w) {
			t.Errorf("help lacks %q of the message:\n%s", w, s.screen)
		}
	}
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEscape})
	tm.Type("q")
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
}
