package tui

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
)

func TestBar(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		w    int
		want string
	}{
		{0, 4, "░░░░"}, {1, 4, "████"}, {0.5, 4, "██░░"}, {0.3, 4, "█▎░░"}, {0.27, 4, "█▏░░"}, {2, 3, "███"}, {-1, 3, "░░░"}, {math.NaN(), 2, "░░"},
	} {
		f, e := bar(tc.f, tc.w)
		if f+e != tc.want {
			t.Errorf("bar(%v, %d) = %q, want %q", tc.f, tc.w, f+e, tc.want)
		}
	}
}

// TestTelemetryAverage checks the time weighting: a value that holds for
// three quarters of the repetition weighs three times the other.
func TestTelemetryAverage(t *testing.T) {
	r := &profiler.Result{
		Timeline: []backends.Span{{Device: 0, Start: 0, End: 400}},
		Samples: []backends.Sample{
			{Metric: backends.MetricSMUtil, Device: 0, Time: 0, Value: 1},
			{Metric: backends.MetricSMUtil, Device: 0, Time: 300, Value: 0},
			{Metric: backends.MetricSMUtil, Device: 1, Time: 0, Value: 0.5},
		},
	}
	tel := newTelemetry(r, 0)
	if got, ok := tel.avg(backends.MetricSMUtil); !ok || math.Abs(got-0.75) > 1e-9 {
		t.Errorf("avg = %v, %v; want 0.75", got, ok)
	}
	if _, ok := tel.avg(backends.MetricHBMUtil); ok {
		t.Error("a metric absent from the samples has an average")
	}
	if got := tel.series[backends.MetricSMUtil].resample(tel.end, 4); got[0] != 1 || got[3] != 0 {
		t.Errorf("resample = %v", got)
	}
}

func TestTimeAxis(t *testing.T) {
	axis, labels := timeAxis(2_000_000, 40)
	if len([]rune(axis)) != 40 || len([]rune(labels)) != 40 {
		t.Fatalf("axis %q labels %q", axis, labels)
	}
	if labels[:1] != "0" {
		t.Errorf("labels start %q", labels)
	}
	if niceStep(0.37) != 0.5 || niceStep(120) != 200 || niceStep(7) != 10 {
		t.Error("niceStep")
	}
}

func TestLayout(t *testing.T) {
	l := computeLayout(80, 24, 5)
	if l.wide || !l.tabbed || l.list.W+l.metrics.W != 80 || l.detail.Y+l.detail.H != 22 {
		t.Errorf("80x24: %+v", l)
	}
	l = computeLayout(160, 50, 5)
	if !l.wide || l.tabbed || l.list.H != 47 || l.why.Y+l.why.H != 48 || l.metrics.W+l.util.W+l.list.W != 160 {
		t.Errorf("160x50: %+v", l)
	}
	if !computeLayout(59, 30, 5).tooSmall || !computeLayout(100, 15, 5).tooSmall {
		t.Error("too small not detected")
	}
}

func TestDeviceSummary(t *testing.T) {
	h200 := backends.DeviceInfo{Name: "NVIDIA H200", Simulated: true}
	a100 := backends.DeviceInfo{Name: "NVIDIA A100"}
	devs := []backends.DeviceInfo{h200, h200, h200, h200, a100}
	for _, tc := range []struct{ got, want string }{
		{deviceSummary(devs[:4], 2), "2 x NVIDIA H200 (simulated)"},
		{deviceSummary(devs, 0), "4 x NVIDIA H200 (simulated) + 1 x NVIDIA A100"},
		{deviceShort(devs[:4], 9), "4 x H200 sim"},
		{deviceSummary(nil, 2), "no devices"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestMidTrunc(t *testing.T) {
	if got := midTrunc("llama3-70b-tp8-qkv-ag-224m", 15); got != "llama3-…ag-224m" {
		t.Errorf("midTrunc = %q", got)
	}
	if got := midTrunc("short", 15); got != "short" {
		t.Errorf("midTrunc = %q", got)
	}
}

// TestListScrolls moves the cursor through a suite longer than the list.
func TestListScrolls(t *testing.T) {
	m := fixedModel(t, 80, 24, scenarios.Strategy{})
	var suite []scenarios.Scenario
	for i := range 30 {
		sc := testSuite()[0]
		sc.Name = fmt.Sprintf("scenario-%02d", i)
		suite = append(suite, sc)
	}
	m.suite = suite
	for range 20 {
		m = press(m, "j")
	}
	if m.list.cursor != 20 || m.list.offset != 20-(m.lay.list.H-2)+1 {
		t.Errorf("cursor %d offset %d", m.list.cursor, m.list.offset)
	}
	if !strings.Contains(ansi.Strip(m.View().Content), "▸  scenario-20") {
		t.Errorf("cursor row not on screen:\n%s", ansi.Strip(m.View().Content))
	}
	for range 40 {
		m = press(m, "k")
	}
	if m.list.cursor != 0 || m.list.offset != 0 {
		t.Errorf("cursor %d offset %d after going up", m.list.cursor, m.list.offset)
	}
}
