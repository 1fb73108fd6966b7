package tui

import (
	"bytes"
	"regexp"
	"testing"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
)

// TestNoColor renders the screen as a NO_COLOR terminal gets it (the ASCII
// profile: no colours, text attributes kept) and checks that no colour is
// left and the text is the same as the golden's, which is what a user
// without colour reads.
func TestNoColor(t *testing.T) {
	if p := colorprofile.Env([]string{"NO_COLOR=1", "TERM=xterm-256color"}); p != colorprofile.ASCII {
		t.Fatalf("NO_COLOR gives profile %v, want ASCII", p)
	}
	m := press(fixedModel(t, 160, 50, dmaStrategy()), "?")
	content := m.View().Content
	var buf bytes.Buffer
	w := &colorprofile.Writer{Forward: &buf, Profile: colorprofile.ASCII}
	if _, err := w.WriteString(content); err != nil {
		t.Fatal(err)
	}
	colour := regexp.MustCompile(`\x1b\[[0-9;]*(3[0-9]|4[0-9]|9[0-7]|10[0-7])(;[0-9;]*)?m`)
	if loc := colour.FindStringIndex(buf.String()); loc != nil {
		t.Errorf("colour left under NO_COLOR: %q", buf.String()[loc[0]:min(loc[1]+20, buf.Len())])
	}
	if ansi.Strip(buf.String()) != ansi.Strip(content) {
		t.Error("the ASCII profile changed the text")
	}
}
