package sim

import (
	"context"
	"math"
	"testing"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// A host copy on the copy engines runs at PCIe speed, takes no SM, and
// shows as PCIe utilization in its direction (received for h2d, sent for
// d2h, both for a swap); the copy kernel holds SMs and is slower both ways.
func TestHostCopyModel(t *testing.T) {
	p := H200()
	b := New(p)
	dma := scenarios.Strategy{CommEngine: scenarios.EngineDMA}
	for _, tc := range []struct {
		coll     scenarios.Collective
		st       scenarios.Strategy
		gbs      float64 // expected bytes over PCIe / time, GB/s (within 1 %)
		tx, rx   float64 // PCIe utilization while copying
		smsWhile bool    // the copy holds SMs
	}{
		{scenarios.HostToDevice, dma, p.PCIeBandwidth / 1e9, 0, p.PCIeBandwidth / p.PCIeLinkBandwidth, false},
		{scenarios.DeviceToHost, dma, p.PCIeBandwidth / 1e9, p.PCIeBandwidth / p.PCIeLinkBandwidth, 0, false},
		{scenarios.HostSwap, dma, p.PCIeDuplexBandwidth / 1e9, p.PCIeDuplexBandwidth / 2 / p.PCIeLinkBandwidth, p.PCIeDuplexBandwidth / 2 / p.PCIeLinkBandwidth, false},
		{scenarios.HostSwap, scenarios.Strategy{CommEngine: scenarios.EngineDMA, CopyEngines: 1}, p.PCIeBandwidth / 1e9, -1, -1, false},
		{scenarios.HostToDevice, scenarios.Strategy{}, p.HostCopyKernelBandwidth / 1e9, 0, p.HostCopyKernelBandwidth / p.PCIeLinkBandwidth, true},
		{scenarios.HostSwap, scenarios.Strategy{}, p.HostCopyKernelDuplexBandwidth / 1e9, -1, -1, true},
	} {
		sc := scenarios.Scenario{Name: "x", GPUs: 1, Compute: scenarios.ComputeOp{Kind: scenarios.Stream, Bytes: 1 << 20},
			Comm: scenarios.CommOp{Collective: tc.coll, Bytes: 1 << 30}}
		var sink backends.Collector
		res, err := b.Run(context.Background(), backends.Experiment{Scenario: sc, Strategy: tc.st, Mode: backends.ModeComm, Reps: 1}, &sink)
		if err != nil {
			t.Fatalf("%s %s: %v", tc.coll, tc.st, err)
		}
		gbs := float64(sc.Comm.SizeBytes(1)) / float64(res.Reps[0].Comm)
		if math.Abs(gbs/tc.gbs-1) > 0.01 {
			t.Errorf("%s %s: %.1f GB/s, want %.1f", tc.coll, tc.st, gbs, tc.gbs)
		}
		peak := map[string]float64{}
		for _, s := range sink.SampleList {
			peak[s.Metric] = max(peak[s.Metric], s.Value)
		}
		for _, m := range []struct {
			name string
			want float64
		}{{backends.MetricPCIeTXUtil, tc.tx}, {backends.MetricPCIeRXUtil, tc.rx}} {
			if m.want >= 0 && math.Abs(peak[m.name]-m.want) > 0.01 {
				t.Errorf("%s %s: %s peaks at %.3f, want %.3f", tc.coll, tc.st, m.name, peak[m.name], m.want)
			}
		}
		if got := peak[backends.MetricSMsComm] > 0; got != tc.smsWhile {
			t.Errorf("%s %s: copy holds SMs %v, want %v", tc.coll, tc.st, got, tc.smsWhile)
		}
	}
}
