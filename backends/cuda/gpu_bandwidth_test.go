package cuda

import (
	"path/filepath"
	"testing"

	"github.com/c3lab/c3lab/backends"
)

// TestGPUBandwidths measures HBM and (with 2+ GPUs) NVLink bandwidth on the
// real GPUs, afresh into a temporary cache, and prints the numbers; where
// the device table knows the model they must be within a factor of two of
// its figures. It skips without a driver.
func TestGPUBandwidths(t *testing.T) {
	b := openGPU(t)
	if b.measureErr != nil {
		t.Errorf("measuring at Open: %v", b.measureErr)
	}
	path := filepath.Join(t.TempDir(), "bandwidth.json")
	var err error
	b.do(func() { err = b.measureBandwidths(path, defaultBWProbe()) })
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range b.Devices() {
		m := b.measured[i]
		t.Logf("GPU %d %s (%s, driver %d): HBM %.3f TB/s (read + write), NVLink out %.1f GB/s over %d copy streams",
			i, d.Name, m.UUID, m.Driver, m.HBM/1e12, m.Link/1e9, max(b.devs[i].CopyEngines, 1))
		if d.HBMBandwidth != m.HBM || m.HBM <= 0 {
			t.Errorf("GPU %d reports HBM %.4g, measured %.4g", i, d.HBMBandwidth, m.HBM)
		}
		if len(b.devs) > 1 && len(b.devs[i].Peers) > 0 && m.Link <= 0 {
			t.Errorf("GPU %d has peers and no measured link", i)
		}
		if f, ok := backends.FactsOf(d.Name); ok {
			if r := m.HBM / f.HBMBandwidth; r < 0.5 || r > 2 {
				t.Errorf("GPU %d HBM %.3g is %.2fx the device table's", i, m.HBM, r)
			}
			if r := m.Link / f.LinkBandwidth; m.Link > 0 && (r < 0.2 || r > 2) {
				t.Errorf("GPU %d NVLink %.3g is %.2fx the device table's", i, m.Link, r)
			}
		}
	}
	if got := readBWCache(path); len(got) != len(b.devs) {
		t.Errorf("%d GPUs cached, want %d", len(got), len(b.devs))
	}
}
