package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/c3lab/c3lab/profiler/report"
)

// TestHeaderTookIsHostTime checks that the time the last measurement took
// on the host never reads like a result (such as T_c3): wherever the header
// shows it, it says that measuring took it.
func TestHeaderTookIsHostTime(t *testing.T) {
	st := DefaultStyles(true)
	suite := testSuite()
	hs := headerState{backend: "fake", devices: deviceSummary(newFake().Devices(), 2), short: deviceShort(newFake().Devices(), 2),
		scenario: suite[0].Name, strategy: dmaStrategy(), took: 475 * time.Microsecond}
	took := report.Duration(float64(hs.took))
	shown := 0
	for w := 40; w <= 220; w++ {
		for _, h := range []headerState{hs, recordingTo(hs, st)} {
			line := ansi.Strip(headerLine(st, h, w))
			if strings.Contains(line, "measured in") {
				t.Fatalf("width %d: %q reads like a result", w, line)
			}
			if !strings.Contains(line, took) {
				continue
			}
			shown++
			if !strings.Contains(line, "measuring took "+took) {
				t.Errorf("width %d: %q shows the host time without saying what it is", w, line)
			}
		}
	}
	if shown == 0 {
		t.Error("the header never shows how long measuring took")
	}
}
