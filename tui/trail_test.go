package tui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/c3lab/c3lab/profiler/report"
)

// TestTrailUsesItsWidth draws a scenario's trail of four strategies in
// the metrics panel of the layouts from 80 to 200 columns: it fills the
// width it has with as many points as fit (abbreviated when the full
// names do not all fit), never just the newest one where more fit, and
// marks the older points it leaves out.
func TestTrailUsesItsWidth(t *testing.T) {
	st := DefaultStyles(true)
	trail := []trailPoint{
		{"baseline", upliftAt(1.17, true, nil)}, {"comm-first", upliftAt(1.46, true, nil)},
		{"comm-first prio=-5", upliftAt(1.60, true, nil)}, {"comm-first dma", upliftAt(1.833, true, nil)},
	}
	for _, size := range [][2]int{{80, 24}, {120, 36}, {160, 50}, {200, 50}} {
		l := computeLayout(size[0], size[1], 5)
		w := l.metrics.W - 2
		labelW := metricsLabelW(w)
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			line := trailLine(st, trail, labelW, w)
			if got := ansi.StringWidth(line); got != w {
				t.Fatalf("trail is %d cells, want %d", got, w)
			}
			text := strings.TrimSpace(ansi.Strip(line)[labelW:])
			shown := strings.Count(text, "→") + 1
			if !strings.HasSuffix(text, "1.83x") || strings.Contains(text, "…x") {
				t.Fatalf("the newest point is not whole: %q", text)
			}
			if shown < len(trail) && !strings.HasPrefix(text, "… ") {
				t.Errorf("older points left out without a mark: %q", text)
			}
			// The width left must not hold the next older point.
			if shown < len(trail) {
				var more []string
				for _, p := range trail[len(trail)-shown-1:] {
					more = append(more, abbrevStrategy(p.strategy)+" "+report.Ratio(p.u))
				}
				next := strings.Join(more, " → ")
				if shown+1 < len(trail) {
					next = "… " + next
				}
				if ansi.StringWidth(next) <= w-labelW {
					t.Errorf("%d of %d points in %d cells, where %q fits", shown, len(trail), w-labelW, next)
				}
			}
			if w-labelW >= 36 && shown < 2 {
				t.Errorf("one point in %d cells: %q", w-labelW, text)
			}
		})
	}
}
