package tui

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
)

func heatFixture() (rows, cols []string, cells [][]HeatCell) {
	rows = []string{"llama3-70b-tp-qkv-ag-224m-2gpu", "mixtral-8x22b-ep-o-proj-a2a-96m-2gpu", "llama3-8b-act-reload-h2d-gemm-decomp4-1gpu"}
	cols = []string{"baseline", "comm-first+prio", "comm-sms-32", "dma"}
	vals := [][]float64{{1.02, 1.49, 1.31, 0.93}, {1.00, 1.20, 1.42, math.NaN()}, {1.12, 1.14, 1.30, 1.61}}
	for _, r := range vals {
		var row []HeatCell
		for _, v := range r {
			row = append(row, HeatCell{Value: v, OK: !math.IsNaN(v)})
		}
		cells = append(cells, row)
	}
	return rows, cols, cells
}

func changeFixture(n int) []Change {
	var cs []Change
	for i := range n {
		d := float64((i*37)%23-11) / 200
		cs = append(cs, Change{Group: fmt.Sprintf("scenario-%02d-with-a-long-name-2gpu", i), Label: "comm-first+prio", Ratio: 1 + d, Significant: i%3 != 0})
	}
	cs = append(cs, Change{Group: "missing", Label: "dma", Ratio: math.NaN()})
	return cs
}

// TestPlotsGolden checks the command line's plots, plain, at several
// widths (-update rewrites the golden files); every line fits its width
// and plain output holds no escape sequence.
func TestPlotsGolden(t *testing.T) {
	rows, cols, cells := heatFixture()
	for _, w := range []int{60, 80, 120} {
		for _, tc := range []struct {
			name  string
			lines []string
		}{
			{"heatmap", UpliftHeatmap(rows, cols, cells, w, false)},
			{"change", ChangeChart("T_c3 change, new vs old", changeFixture(6), w, false)},
			{"change_many", ChangeChart("T_c3 change, new vs old", changeFixture(30), w, false)},
		} {
			t.Run(fmt.Sprintf("%s_%d", tc.name, w), func(t *testing.T) {
				out := strings.Join(tc.lines, "\n") + "\n"
				if strings.Contains(out, "\x1b") {
					t.Fatal("plain output holds an escape sequence")
				}
				for _, l := range tc.lines {
					if n := ansi.StringWidth(l); n > w {
						t.Errorf("a line of %d cells, past %d: %q", n, w, l)
					}
				}
				golden.RequireEqual(t, []byte(out))
			})
		}
	}
}

// TestPlotsColour: in colour the plots style their cells and fit too.
func TestPlotsColour(t *testing.T) {
	rows, cols, cells := heatFixture()
	for _, lines := range [][]string{UpliftHeatmap(rows, cols, cells, 80, true), ChangeChart("t", changeFixture(6), 80, true)} {
		out := strings.Join(lines, "\n")
		if !strings.Contains(out, "\x1b[") {
			t.Error("no styling in colour")
		}
		for _, l := range lines {
			if n := ansi.StringWidth(l); n > 80 {
				t.Errorf("a line of %d cells: %q", n, l)
			}
		}
	}
}

// TestHeatmapCells: each value lands on the right level, below 1x and
// missing cells apart, and each row names its best.
func TestHeatmapCells(t *testing.T) {
	rows, cols, cells := heatFixture()
	lines := UpliftHeatmap(rows, cols, cells, 120, false)
	if !strings.Contains(lines[2], "██") || !strings.Contains(lines[2], "--") || !strings.HasSuffix(lines[2], "1.49x comm-first+prio") {
		t.Errorf("row 1: %q", lines[2])
	}
	if !strings.Contains(lines[3], "··") || !strings.HasSuffix(lines[3], "1.42x comm-sms-32") {
		t.Errorf("row 2: %q", lines[3])
	}
	if !strings.HasSuffix(lines[4], "1.61x dma") {
		t.Errorf("row 3: %q", lines[4])
	}
}

// TestChangeChartLargest: past ChangeChartRows, the largest changes are
// drawn and a line says how many were left out.
func TestChangeChartLargest(t *testing.T) {
	cs := changeFixture(30)
	lines := ChangeChart("t", cs, 100, false)
	bars := 0
	for _, l := range lines {
		if strings.Contains(l, "%") && strings.Contains(l, "░") || strings.Contains(l, "█") {
			bars++
		}
	}
	if bars > ChangeChartRows {
		t.Errorf("%d bars, want at most %d", bars, ChangeChartRows)
	}
	if !strings.Contains(strings.Join(lines, "\n"), "left out") {
		t.Error("no line says what was left out")
	}
	if !strings.Contains(lines[1], "+") && !strings.Contains(lines[1], "-") {
		t.Errorf("first bar %q has no change", lines[1])
	}
}
