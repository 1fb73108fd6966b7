package telemetry

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"

	"github.com/c3lab/c3lab/backends"
)

// node builds a mock NVML with n GPUs. hopper selects GPM support; links
// is the number of active NVLink links per GPU. Every call the sampler
// makes is stubbed (an unstubbed call panics).
func node(n int, hopper bool, links int) (*mock.Interface, *int) {
	freed := 0
	devs := make([]*mock.Device, n)
	for i := range devs {
		devs[i] = &mock.Device{
			GpmQueryDeviceSupportFunc: func() (nvml.GpmSupport, nvml.Return) {
				if hopper {
					return nvml.GpmSupport{IsSupportedDevice: 1}, nvml.SUCCESS
				}
				return nvml.GpmSupport{}, nvml.SUCCESS
			},
			GetNvLinkStateFunc: func(l int) (nvml.EnableState, nvml.Return) {
				if l < links {
					return nvml.FEATURE_ENABLED, nvml.SUCCESS
				}
				return nvml.FEATURE_DISABLED, nvml.SUCCESS
			},
			GetPowerUsageFunc: func() (uint32, nvml.Return) { return 612_000, nvml.SUCCESS },
			GetClockInfoFunc:  func(nvml.ClockType) (uint32, nvml.Return) { return 1980, nvml.SUCCESS },
			GetMemoryInfoFunc: func() (nvml.Memory, nvml.Return) { return nvml.Memory{Used: 8 << 30}, nvml.SUCCESS },
			// An H200 on PCIe Gen 5 x16.
			GetMaxPcieLinkGenerationFunc: func() (int, nvml.Return) { return 5, nvml.SUCCESS },
			GetMaxPcieLinkWidthFunc:      func() (int, nvml.Return) { return 16, nvml.SUCCESS },
		}
	}
	lib := &mock.Interface{
		InitFunc:           func() nvml.Return { return nvml.SUCCESS },
		ShutdownFunc:       func() nvml.Return { return nvml.SUCCESS },
		DeviceGetCountFunc: func() (int, nvml.Return) { return n, nvml.SUCCESS },
		DeviceGetHandleByIndexFunc: func(i int) (nvml.Device, nvml.Return) {
			return devs[i], nvml.SUCCESS
		},
		GpmSampleAllocFunc: func() (nvml.GpmSample, nvml.Return) {
			return &mock.GpmSample{GetFunc: func(nvml.Device) nvml.Return { return nvml.SUCCESS }}, nvml.SUCCESS
		},
		GpmSampleFreeFunc: func(nvml.GpmSample) nvml.Return { freed++; return nvml.SUCCESS },
		GpmMetricsGetFunc: func(req *nvml.GpmMetricsGetType) nvml.Return {
			for i := range req.NumMetrics {
				m := &req.Metrics[i]
				switch nvml.GpmMetricId(m.MetricId) {
				case nvml.GPM_METRIC_SM_UTIL:
					m.Value = 50
				case nvml.GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC:
					m.Value = 100_000 // MiB/s
				case nvml.GPM_METRIC_PCIE_RX_PER_SEC:
					m.NvmlReturn = uint32(nvml.ERROR_NOT_SUPPORTED)
				case nvml.GPM_METRIC_DRAM_BW_UTIL:
					m.Value = math.NaN() // what an idle H200 reported

				default:
					m.Value = 10
				}
			}
			return nvml.SUCCESS
		},
	}
	return lib, &freed
}

func values(b Batch) map[string]float64 {
	out := map[string]float64{}
	for _, s := range b.Samples {
		if s.Device == 0 {
			out[s.Metric] = s.Value
		}
	}
	return out
}

// linkBW is an H200's NVLink bandwidth per direction: 18 NVLink 4 links.
const linkBW = 18 * 26.5625e9

func TestSamplerOnHopper(t *testing.T) {
	lib, freed := node(2, true, 18)
	s, err := Open(lib, Config{LinkBandwidth: map[int]float64{0: linkBW, 1: linkBW}})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(100, 0)
	first := values(s.Tick(t0))
	if _, ok := first[backends.MetricSMUtil]; ok {
		t.Error("the first tick has GPM metrics; it has no earlier snapshot to compare with")
	}
	if first[MetricPowerW] != 612 || first[MetricSMClockMHz] != 1980 || first[MetricMemUsed] != 8<<30 {
		t.Errorf("power/clock/memory: %v", first)
	}
	b := s.Tick(t0.Add(100 * time.Millisecond))
	v := values(b)
	if v[backends.MetricSMUtil] != 0.5 {
		t.Errorf("sm_util %v, want 0.5 (NVML's 50 %%)", v[backends.MetricSMUtil])
	}
	if want := 100_000.0 * (1 << 20); v[MetricLinkTXBytes] != want {
		t.Errorf("link tx %v bytes/s, want %v", v[MetricLinkTXBytes], want)
	}
	if want := 100_000.0 * (1 << 20) / linkBW; math.Abs(v[backends.MetricLinkTXUtil]-want) > 1e-12 {
		t.Errorf("link tx util %v, want %v", v[backends.MetricLinkTXUtil], want)
	}
	if _, ok := v[MetricPCIeRXBytes]; ok {
		t.Error("a metric NVML failed to read was reported (it must be absent, not zero)")
	}
	// PCIe as a share of the Gen 5 x16 link, 63 GB/s each way.
	if want := 10.0 * (1 << 20) / (16 * 32e9 / 8 * 128 / 130); math.Abs(v[backends.MetricPCIeTXUtil]-want) > 1e-12 {
		t.Errorf("pcie tx util %v, want %v", v[backends.MetricPCIeTXUtil], want)
	}
	if _, ok := v[backends.MetricPCIeRXUtil]; ok {
		t.Error("PCIe RX utilization reported from a PCIe RX rate NVML failed to read")
	}
	if hbm, ok := v[backends.MetricHBMUtil]; ok {
		t.Errorf("a NaN from NVML was reported as %v (it must be absent)", hbm)
	}
	for _, smp := range b.Samples {
		if smp.Time != int64(100*time.Millisecond) || smp.Rep != -1 {
			t.Errorf("sample %+v: want t=100ms, rep -1", smp)
			break
		}
	}
	for _, st := range s.Status() {
		if !st.Supported {
			t.Errorf("%s on GPU %d unsupported on a Hopper mock: %s", st.Metric, st.Device, st.Reason)
		}
	}
	if err := s.Close(); err != nil || *freed != 4 {
		t.Errorf("close: %v, %d GPM samples freed, want 4", err, *freed)
	}
}

// NVLink utilization is a share of the link bandwidth the backend
// reports for the device: without one the sampler reports the traffic in
// bytes/s only, and says why there is no share.
func TestSamplerLinkShareNeedsTheDevicesBandwidth(t *testing.T) {
	lib, _ := node(2, true, 18)
	s, err := Open(lib, Config{LinkBandwidth: map[int]float64{1: linkBW}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Tick(time.Unix(100, 0))
	v := values(s.Tick(time.Unix(100, 0).Add(100 * time.Millisecond)))
	if _, ok := v[backends.MetricLinkTXUtil]; ok || v[MetricLinkTXBytes] == 0 {
		t.Errorf("device 0, bandwidth unknown: link util %v (want none), bytes/s %v (want some)", v[backends.MetricLinkTXUtil], v[MetricLinkTXBytes])
	}
	for _, st := range s.Status() {
		if st.Metric != backends.MetricLinkTXUtil {
			continue
		}
		if want := st.Device == 1; st.Supported != want || (!want && !strings.Contains(st.Reason, "bandwidth is unknown")) {
			t.Errorf("link util status %+v", st)
		}
	}
}

func TestSamplerBeforeHopperSaysWhy(t *testing.T) {
	lib, _ := node(1, false, 0)
	s, err := Open(lib, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Tick(time.Unix(0, 0))
	v := values(s.Tick(time.Unix(1, 0)))
	if _, ok := v[backends.MetricSMUtil]; ok {
		t.Error("sm_util reported without GPM")
	}
	if v[MetricPowerW] == 0 {
		t.Error("power missing: it does not need GPM")
	}
	found := false
	for _, st := range s.Status() {
		if st.Metric == backends.MetricTensorUtil {
			found = true
			if st.Supported || !strings.Contains(st.Reason, "Hopper") {
				t.Errorf("tensor_util status %+v", st)
			}
		}
	}
	if !found {
		t.Error("no status for tensor_util")
	}
}

func TestSamplerWithoutNVML(t *testing.T) {
	lib := &mock.Interface{InitFunc: func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND }}
	if _, err := Open(lib, Config{}); err == nil || !strings.Contains(err.Error(), "NVML is unavailable") {
		t.Errorf("error %v", err)
	}
	lib2, _ := node(2, true, 18)
	if _, err := Open(lib2, Config{Devices: []int{5}}); err == nil || !strings.Contains(err.Error(), "GPU 5") {
		t.Errorf("bad device: %v", err)
	}
}

// A consumer that does not keep up loses batches; sampling goes on.
func TestRunDropsRatherThanBlocks(t *testing.T) {
	lib, _ := node(1, true, 18)
	s, err := Open(lib, Config{Interval: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Millisecond)
	defer cancel()
	out := make(chan Batch, 1)
	if dropped := s.Run(ctx, out); dropped == 0 {
		t.Error("nothing dropped although nobody read the batches")
	}
	if len(out) != 1 {
		t.Errorf("%d batches buffered, want 1", len(out))
	}
}

func TestHistory(t *testing.T) {
	h := NewHistory(3)
	for i := range 5 {
		h.Add(Batch{Samples: []backends.Sample{{Device: 0, Metric: "m", Time: int64(i), Value: float64(i)}}})
	}
	got := h.Series(0, "m")
	if len(got) != 3 || got[0].Value != 2 || got[2].Value != 4 {
		t.Errorf("series %v, want the last three, oldest first", got)
	}
	if last, ok := h.Last(0, "m"); !ok || last.Value != 4 {
		t.Errorf("last %v %v", last, ok)
	}
	if h.Series(1, "m") != nil {
		t.Error("an unknown series has samples")
	}
	if _, ok := h.Last(0, "x"); ok {
		t.Error("an unknown series has a last sample")
	}
}

// BenchmarkTick is the sampler's cost per tick for 2 GPUs and every metric
// (against the mock: c3lab's own overhead, not NVML's).
func BenchmarkTick(b *testing.B) {
	lib, _ := node(2, true, 18)
	s, err := Open(lib, Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	t := time.Unix(0, 0)
	for b.Loop() {
		t = t.Add(100 * time.Millisecond)
		s.Tick(t)
	}
}

func TestPCIeLaneBytes(t *testing.T) {
	for _, tc := range []struct {
		gen        int
		x16GBPerS  float64 // one direction, x16, GB/s
		unknownGen bool
	}{{3, 15.75, false}, {4, 31.51, false}, {5, 63.02, false}, {6, 121.0, false}, {0, 0, true}, {9, 0, true}} {
		got := 16 * pcieLaneBytes(tc.gen) / 1e9
		if math.Abs(got-tc.x16GBPerS) > 0.01 || (got == 0) != tc.unknownGen {
			t.Errorf("Gen %d x16: %.2f GB/s, want %.2f", tc.gen, got, tc.x16GBPerS)
		}
	}
}
