package cuda

import (
	"testing"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// The backend reports what the driver says of each GPU and, for a device
// model c3lab knows, the bandwidths of the device table; for one it does
// not know, none (and no bound metric), never another device's.
func TestDeviceFactsFromTheDeviceTable(t *testing.T) {
	want := backends.H200Facts()
	known := newFakeGPU(2)
	for i := range known.devs {
		known.devs[i].Name = want.Name
	}
	unknown := newFakeGPU(2)
	for _, tc := range []struct {
		name string
		f    *fakeGPU
		want backends.DeviceFacts
	}{
		{"known", known, want},
		{"unknown", unknown, backends.DeviceFacts{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := fakeBackend(t, tc.f, Options{})
			for _, d := range b.Devices() {
				if d.HBMBandwidth != tc.want.HBMBandwidth || d.LinkBandwidth != tc.want.LinkBandwidth || d.PCIeLinkBandwidth != tc.want.PCIeLinkBandwidth {
					t.Errorf("GPU %d (%s): bandwidths %g %g %g, want %+v", d.Index, d.Name, d.HBMBandwidth, d.LinkBandwidth, d.PCIeLinkBandwidth, tc.want)
				}
				if d.SMStep != tc.f.devs[d.Index].SMStep || d.HighestPriority != tc.f.devs[d.Index].PriorityGreatest {
					t.Errorf("GPU %d: SM step %d, priority %d; the driver says %d, %d", d.Index, d.SMStep, d.HighestPriority, tc.f.devs[d.Index].SMStep, tc.f.devs[d.Index].PriorityGreatest)
				}
			}
			if got := b.Capabilities().HBMBandwidth; got != tc.want.HBMBandwidth {
				t.Errorf("capabilities' HBM bandwidth %g, want %g", got, tc.want.HBMBandwidth)
			}
		})
	}
}

// Without green contexts a GPU has no partition step and the backend no
// SM partitions; with them, its step.
func TestPartitionsNeedGreenContexts(t *testing.T) {
	f := newFakeGPU(2)
	for i := range f.devs {
		f.devs[i].Green = false
	}
	b := fakeBackend(t, f, Options{})
	if d := b.Devices()[0]; d.SMStep != 0 || b.Capabilities().Has(scenarios.CapSMPartition) {
		t.Errorf("without green contexts: step %d, partitions %v", d.SMStep, b.Capabilities().Has(scenarios.CapSMPartition))
	}
	g := fakeBackend(t, newFakeGPU(2), Options{})
	if !g.Capabilities().Has(scenarios.CapSMPartition) || g.Devices()[0].SMStep != g.Capabilities().Limits.SMStep {
		t.Errorf("with green contexts: %+v", g.Devices()[0])
	}
}

// The partition step follows the compute capability, as the driver API
// documents cuDevSmResourceSplitByCount's granularity.
func TestSMPartitionStep(t *testing.T) {
	for _, tc := range []struct{ major, want int }{{10, 8}, {9, 8}, {8, 4}, {7, 2}, {6, 1}} {
		if got := smPartitionStep(tc.major); got != tc.want {
			t.Errorf("compute capability %d.x: step %d, want %d", tc.major, got, tc.want)
		}
	}
}
