package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler/report"
	"github.com/c3lab/c3lab/scenarios"
)

// deviceSummary groups identical devices: "2 x NVIDIA H200 (simulated)".
// With 0 < gpus < len(devs) it describes the first gpus devices, those a
// scenario on gpus GPUs runs on.
func deviceSummary(devs []backends.DeviceInfo, gpus int) string {
	return devices(usedDevices(devs, gpus), false)
}

// deviceShort is deviceSummary for narrow headers: "2 x H200 sim".
func deviceShort(devs []backends.DeviceInfo, gpus int) string {
	return devices(usedDevices(devs, gpus), true)
}

// usedDevices is the first gpus devices, or all when gpus is out of range.
func usedDevices(devs []backends.DeviceInfo, gpus int) []backends.DeviceInfo {
	if gpus > 0 && gpus < len(devs) {
		return devs[:gpus]
	}
	return devs
}

func devices(devs []backends.DeviceInfo, short bool) string {
	type group struct {
		name string
		n    int
	}
	var groups []group
	for _, d := range devs {
		name := d.Name
		switch {
		case short:
			name = strings.TrimPrefix(name, "NVIDIA ")
			if d.Simulated {
				name += " sim"
			}
		case d.Simulated:
			name += " (simulated)"
		}
		if len(groups) > 0 && groups[len(groups)-1].name == name {
			groups[len(groups)-1].n++
			continue
		}
		groups = append(groups, group{name, 1})
	}
	parts := make([]string, 0, len(groups))
	for _, g := range groups {
		parts = append(parts, fmt.Sprintf("%d x %s", g.n, g.name))
	}
	if len(parts) == 0 {
		return "no devices"
	}
	return strings.Join(parts, " + ")
}

// headerState is what the header shows.
type headerState struct {
	backend  string
	devices  string
	short    string // devices for narrow headers
	scenario string
	strategy scenarios.Strategy
	running  bool
	spinner  string
	took     time.Duration // host time the last measurement took; 0 before the first
	failed   bool          // the last measurement failed
	rec      []string      // the recording indicator's forms (recForms); none when off
	ranks    []string      // the ranks' word on the last request (rankSummary); none in one process
}

// headerLine renders the top bar at width w: backend and devices, scenario
// and strategy on the left, the recording and running indicators on the
// right. It picks the most detailed form that fits, and cuts the left part
// last.
func headerLine(st Styles, h headerState, w int) string {
	var rights []string
	switch {
	case h.running:
		rights = []string{st.Spinner.Render(h.spinner) + " running…"}
	case h.failed:
		rights = []string{st.Error.Render("✗ failed (see below)"), st.Error.Render("✗ failed")}
	case h.took > 0:
		// Host wall time of the whole measurement (every run of it), not
		// a result: it says so, and the narrowest form drops it.
		took := report.Duration(float64(h.took))
		rights = []string{
			st.Dim.Render("✓ measuring took " + took + " (host time)"),
			st.Dim.Render("✓ measuring took " + took),
			st.Dim.Render("✓ done"),
		}
	default:
		rights = []string{""}
	}
	for _, extra := range [][]string{h.rec, h.ranks} {
		if len(extra) == 0 {
			continue
		}
		var both []string
		for _, r := range extra {
			for _, s := range rights {
				both = append(both, strings.TrimSuffix(r+"  "+s, "  "))
			}
		}
		rights = both
	}
	sep := st.Dim.Render(" │ ")
	tail := sep + st.Value.Render(h.scenario) + sep + st.Label.Render("strategy ") + st.Value.Render(h.strategy.String())
	short := sep + st.Value.Render(h.scenario) + sep + st.Value.Render(h.strategy.String())
	lefts := []string{
		st.Title.Render("c3lab") + sep + st.Header.Render(h.backend+" · "+h.devices) + tail,
		st.Header.Render(h.backend+" · "+h.devices) + tail,
		st.Header.Render(h.backend+" · "+h.devices) + short,
		st.Header.Render(h.backend+" · "+h.short) + short,
	}
	for _, left := range lefts {
		for _, right := range rights {
			if right != "" {
				right = " " + right
			}
			if ansi.StringWidth(left)+ansi.StringWidth(right) <= w {
				return spread(left, right, w)
			}
		}
	}
	right := rights[len(rights)-1]
	if right != "" {
		right = " " + right
	}
	return spread(lefts[len(lefts)-1], right, w)
}

// headerBar is the top bar as a component: it owns the spinner that turns
// while a measurement runs.
type headerBar struct {
	size
	spin spinner.Model
}

func newHeaderBar() headerBar {
	return headerBar{spin: spinner.New(spinner.WithSpinner(spinner.MiniDot))}
}

// Update turns the spinner while a measurement runs.
func (h *headerBar) Update(m *Model, msg tea.Msg) (tea.Cmd, bool) {
	tick, ok := msg.(spinner.TickMsg)
	if !ok || !m.running {
		return nil, false
	}
	var cmd tea.Cmd
	h.spin, cmd = h.spin.Update(tick)
	return cmd, false
}

// View is the top bar for the scenario on screen.
func (h *headerBar) View(m *Model) []string {
	name, gpus := "", 0
	if len(m.suite) > 0 {
		name, gpus = m.suite[m.active].Name, m.suite[m.active].GPUs
	}
	spin := h.spin
	spin.Style = m.styles.Spinner
	return []string{headerLine(m.styles, headerState{
		backend: m.name, devices: deviceSummary(m.devs, gpus), short: deviceShort(m.devs, gpus), scenario: name, strategy: m.strategy,
		running: m.running, spinner: spin.View(), took: m.took, failed: m.failed, rec: m.recIndicator(), ranks: m.rankIndicator(),
	}, h.w)}
}
