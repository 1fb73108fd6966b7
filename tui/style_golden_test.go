package tui

import (
	"bytes"
	"fmt"
	"image/color"
	"regexp"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
)

// throughProfile is s as a terminal of colour profile p receives it: the
// writer bubbletea puts between the lab and the terminal, with the profile
// fixed instead of detected, so the bytes are the same on every machine.
func throughProfile(tb testing.TB, s string, p colorprofile.Profile) string {
	tb.Helper()
	var buf bytes.Buffer
	w := &colorprofile.Writer{Forward: &buf, Profile: p}
	if _, err := w.WriteString(s); err != nil {
		tb.Fatal(err)
	}
	return buf.String()
}

// styledGolden compares render's output, through profile p, with the
// golden file, after checking that a second render gives the same bytes
// (a style golden must not depend on map order or the clock) and that the
// text is the text the stripped goldens hold.
func styledGolden(t *testing.T, render func() string, p colorprofile.Profile) {
	t.Helper()
	out := render()
	if again := render(); again != out {
		t.Fatalf("two renders differ:\n%q\n%q", out, again)
	}
	got := throughProfile(t, out, p)
	if ansi.Strip(got) != ansi.Strip(out) {
		t.Errorf("the %v profile changed the text", p)
	}
	golden.RequireEqual(t, got)
}

// TestStyleGolden keeps the styles the stripped goldens drop: every panel
// and bar at two widths, and whole screens, as a true-colour terminal
// receives them, so a colour or attribute regression shows as a diff
// (`cat` a golden file to see it in colour). One screen also goes through
// the 256- and 16-colour profiles and the ASCII profile NO_COLOR gives,
// and one is drawn for a light background. `go test ./tui -update`
// regenerates them.
func TestStyleGolden(t *testing.T) {
	st := DefaultStyles(true)
	for _, w := range []int{80, 160} {
		for _, p := range goldenPanels(st) {
			t.Run(fmt.Sprintf("panel_%s_%d", p.name, w), func(t *testing.T) {
				styledGolden(t, func() string {
					lines := p.lines(w - 2)
					box := box(st, p.title, lines, w, len(lines)+2)
					plain(t, box, w)
					return strings.Join(box, "\n")
				}, colorprofile.TrueColor)
			})
		}
		for name := range goldenBars(st, w) {
			t.Run(fmt.Sprintf("bar_%s_%d", name, w), func(t *testing.T) {
				styledGolden(t, func() string {
					line := goldenBars(st, w)[name]
					plain(t, []string{line}, w)
					return line
				}, colorprofile.TrueColor)
			})
		}
	}

	screens := map[string]goldenScreen{}
	for _, s := range goldenScreens() {
		screens[s.name] = s
	}
	light := func(m Model) Model {
		nm, _ := m.Update(tea.BackgroundColorMsg{Color: color.White})
		return nm.(Model)
	}
	extra := []goldenScreen{
		{"120x40_sweep", 120, 40, screens["80x24"].st, func(m Model) Model { return press(m, "s") }},
		{"120x40_composer", 120, 40, screens["80x24"].st, func(m Model) Model { return press(m, "n") }},
		{"120x40_dma_light", 120, 40, dmaStrategy(), light},
		{"120x40_help_light", 120, 40, dmaStrategy(), func(m Model) Model { return press(light(m), "?") }},
	}
	for _, tc := range []struct {
		screen  goldenScreen
		profile colorprofile.Profile
	}{
		{screens["80x24"], colorprofile.TrueColor},
		{screens["160x50"], colorprofile.TrueColor},
		{screens["120x40_dma"], colorprofile.TrueColor},
		{screens["80x24_tab_why"], colorprofile.TrueColor},
		{screens["80x24_help"], colorprofile.TrueColor},
		{screens["80x24_zoomed_gpu1"], colorprofile.TrueColor},
		{screens["160x50_help"], colorprofile.TrueColor},
		{screens["200x50_history"], colorprofile.TrueColor},
		{screens["160x50"], colorprofile.ANSI256},
		{screens["160x50"], colorprofile.ANSI},
		{screens["160x50_help"], colorprofile.ASCII},
		{extra[0], colorprofile.TrueColor},
		{extra[1], colorprofile.TrueColor},
		{extra[2], colorprofile.TrueColor},
		{extra[3], colorprofile.TrueColor},
	} {
		t.Run(fmt.Sprintf("screen_%s_%s", tc.screen.name, strings.ToLower(tc.profile.String())), func(t *testing.T) {
			styledGolden(t, func() string {
				out := tc.screen.screen(t)
				checkScreen(t, out, tc.screen.w, tc.screen.h)
				return out
			}, tc.profile)
		})
	}
}

// sgrColour matches an SGR sequence that sets a colour (foreground,
// background, bright, 256-colour or true colour).
var sgrColour = regexp.MustCompile(`\x1b\[[0-9;:]*(3[0-9]|4[0-9]|9[0-7]|10[0-7])([;:][0-9;:]*)?m`)

// TestStyleGoldenProfiles checks what the profiles do to a screen: the true
// colour render has colours, the ASCII one (NO_COLOR) none but keeps the
// bold and reverse attributes, and every profile keeps the text.
func TestStyleGoldenProfiles(t *testing.T) {
	out := press(fixedModel(t, 160, 50, dmaStrategy()), "?").View().Content
	for _, tc := range []struct {
		p      colorprofile.Profile
		colour bool
	}{
		{colorprofile.TrueColor, true},
		{colorprofile.ANSI256, true},
		{colorprofile.ANSI, true},
		{colorprofile.ASCII, false},
	} {
		got := throughProfile(t, out, tc.p)
		if has := sgrColour.MatchString(got); has != tc.colour {
			t.Errorf("%v: colour in the output %v, want %v", tc.p, has, tc.colour)
		}
		if !strings.Contains(got, "\x1b[1m") || !strings.Contains(got, "\x1b[1;7m") {
			t.Errorf("%v: bold or reverse (the list cursor) lost", tc.p)
		}
		if ansi.Strip(got) != ansi.Strip(out) {
			t.Errorf("%v: the text changed", tc.p)
		}
	}
}
