package doctor

import (
	"reflect"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
)

// pci is a PCI info with the given bus id.
func pci(bus string) nvml.PciInfo {
	var p nvml.PciInfo
	for i, c := range []byte(bus) {
		p.BusId[i] = int8(c)
	}
	return p
}

// gpu is a mock GPU on bus with one NVLink link per entry of links, each
// naming the bus at its far end ("" for one whose far end NVML cannot
// tell); gpm says whether it has GPM (nil: the query fails).
func gpu(name, bus string, links []string, gpm *bool) *mock.Device {
	return &mock.Device{
		GetNameFunc:    func() (string, nvml.Return) { return name, nvml.SUCCESS },
		GetUUIDFunc:    func() (string, nvml.Return) { return "GPU-" + bus, nvml.SUCCESS },
		GetPciInfoFunc: func() (nvml.PciInfo, nvml.Return) { return pci(bus), nvml.SUCCESS },
		GetNvLinkStateFunc: func(l int) (nvml.EnableState, nvml.Return) {
			if l < len(links) {
				return nvml.FEATURE_ENABLED, nvml.SUCCESS
			}
			return nvml.FEATURE_DISABLED, nvml.SUCCESS
		},
		GetNvLinkRemotePciInfoFunc: func(l int) (nvml.PciInfo, nvml.Return) {
			if links[l] == "" {
				return nvml.PciInfo{}, nvml.ERROR_NOT_SUPPORTED
			}
			return pci(links[l]), nvml.SUCCESS
		},
		GpmQueryDeviceSupportFunc: func() (nvml.GpmSupport, nvml.Return) {
			if gpm == nil {
				return nvml.GpmSupport{}, nvml.ERROR_NOT_SUPPORTED
			}
			if *gpm {
				return nvml.GpmSupport{IsSupportedDevice: 1}, nvml.SUCCESS
			}
			return nvml.GpmSupport{}, nvml.SUCCESS
		},
	}
}

// node is a mock NVML holding devs; handleErr fails the handle of that
// index (-1: none), countErr the device count.
func node(init, countErr nvml.Return, handleErr int, devs ...*mock.Device) *mock.Interface {
	return &mock.Interface{
		InitFunc:                   func() nvml.Return { return init },
		ShutdownFunc:               func() nvml.Return { return nvml.SUCCESS },
		SystemGetDriverVersionFunc: func() (string, nvml.Return) { return "580.95", nvml.SUCCESS },
		SystemGetNVMLVersionFunc:   func() (string, nvml.Return) { return "13.580.95", nvml.SUCCESS },
		DeviceGetCountFunc:         func() (int, nvml.Return) { return len(devs), countErr },
		DeviceGetHandleByIndexFunc: func(i int) (nvml.Device, nvml.Return) {
			if i == handleErr {
				return nil, nvml.ERROR_GPU_IS_LOST
			}
			return devs[i], nvml.SUCCESS
		},
	}
}

func TestProbeNVML(t *testing.T) {
	yes, no := true, false
	const a, b = "00000000:01:00.0", "00000000:02:00.0"
	// Two GPUs joined by two links, GPU 0 with a third link NVML cannot
	// trace (a switch); GPU 1 without GPM.
	pair := func() []*mock.Device {
		return []*mock.Device{gpu("H200", a, []string{b, b, ""}, &yes), gpu("H200", b, []string{a, a}, &no)}
	}
	for _, tc := range []struct {
		name string
		lib  *mock.Interface
		want NVMLReport
		// wantErr is in the report's error, or in a device's notes.
		wantErr string
	}{
		{"no library", node(nvml.ERROR_LIBRARY_NOT_FOUND, nvml.SUCCESS, -1), NVMLReport{}, "NVML unavailable"},
		{"two linked GPUs", node(nvml.SUCCESS, nvml.SUCCESS, -1, pair()...), NVMLReport{
			Available: true, Driver: "580.95", Version: "13.580.95",
			Devices: []NVMLDevice{
				{Index: 0, Name: "H200", UUID: "GPU-" + a, NVLinksActive: 3, NVLinkPeers: map[int]int{1: 2, -1: 1}, GPM: true},
				{Index: 1, Name: "H200", UUID: "GPU-" + b, NVLinksActive: 2, NVLinkPeers: map[int]int{0: 2}},
			}}, ""},
		{"the device count fails", node(nvml.SUCCESS, nvml.ERROR_UNKNOWN, -1, pair()...), NVMLReport{Available: true, Driver: "580.95", Version: "13.580.95"}, "counting GPUs"},
		{"no GPM answer", node(nvml.SUCCESS, nvml.SUCCESS, -1, gpu("H200", a, nil, nil)), NVMLReport{
			Available: true, Driver: "580.95", Version: "13.580.95",
			Devices: []NVMLDevice{{Index: 0, Name: "H200", UUID: "GPU-" + a, NVLinkPeers: map[int]int{}}}}, "GPM query failed"},
		{"a lost GPU", node(nvml.SUCCESS, nvml.SUCCESS, 1, pair()...), NVMLReport{
			Available: true, Driver: "580.95", Version: "13.580.95",
			Devices: []NVMLDevice{
				// GPU 1 has no handle: its bus is unknown, so GPU 0's links lead nowhere known.
				{Index: 1},
				{Index: 0, Name: "H200", UUID: "GPU-" + a, NVLinksActive: 3, NVLinkPeers: map[int]int{-1: 3}, GPM: true},
			}}, "no handle"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ProbeNVML(tc.lib)
			msgs := got.Error
			for i := range got.Devices {
				msgs += " " + strings.Join(got.Devices[i].Notes, " ")
				got.Devices[i].Notes = nil
			}
			if tc.wantErr != "" && !strings.Contains(msgs, tc.wantErr) || tc.wantErr == "" && strings.TrimSpace(msgs) != "" {
				t.Errorf("errors and notes %q, want %q", msgs, tc.wantErr)
			}
			got.Error = ""
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("report\n%+v\nwant\n%+v", got, tc.want)
			}
			if tc.lib.InitFunc() == nvml.SUCCESS && len(tc.lib.ShutdownCalls()) != 1 {
				t.Errorf("NVML shut down %d times, want once", len(tc.lib.ShutdownCalls()))
			}
		})
	}
}
