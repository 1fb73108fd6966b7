// Package doctor is what `c3lab doctor` asks the node's management
// library: NVML's view of the driver, each GPU's NVLink links and peers,
// and whether GPU performance monitoring is there. The cuda backend's own
// view (libraries, devices, peer access) is cuda.Probe.
package doctor

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// NVMLDevice is what NVML says about one GPU.
type NVMLDevice struct {
	Index int    `json:"index"`
	Name  string `json:"name"`
	UUID  string `json:"uuid"`
	// NVLinksActive counts the GPU's active NVLink links (18 on H200).
	NVLinksActive int `json:"nvlinks_active"`
	// NVLinkPeers maps each peer GPU index to the links that reach it
	// directly (a peer reached through NVSwitch shows under -1).
	NVLinkPeers map[int]int `json:"nvlink_peers,omitempty"`
	// GPM is whether GPU performance monitoring metrics (SM, tensor, DRAM,
	// NVLink utilization) are available.
	GPM bool `json:"gpm"`
	// Notes holds what could not be read and why.
	Notes []string `json:"notes,omitempty"`
}

// NVMLReport is NVML's view of the node, for c3lab doctor.
type NVMLReport struct {
	Available bool         `json:"available"`
	Error     string       `json:"error,omitempty"`
	Driver    string       `json:"driver,omitempty"`
	Version   string       `json:"nvml_version,omitempty"`
	Devices   []NVMLDevice `json:"devices,omitempty"`
}

// ProbeNVML asks NVML for the driver version, each GPU's NVLink links and
// peers, and GPM support; lib is nvml.New() (libnvidia-ml.so.1, loaded at
// run time) outside tests. A machine without the library gets a report
// saying so, not an error.
func ProbeNVML(lib nvml.Interface) NVMLReport {
	if ret := lib.Init(); ret != nvml.SUCCESS {
		return NVMLReport{Error: fmt.Sprintf("NVML unavailable: %v", ret)}
	}
	defer lib.Shutdown()
	r := NVMLReport{Available: true}
	r.Driver, _ = lib.SystemGetDriverVersion()
	r.Version, _ = lib.SystemGetNVMLVersion()
	n, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		r.Error = fmt.Sprintf("counting GPUs: %v", ret)
		return r
	}
	busToIndex := map[string]int{}
	handles := make([]nvml.Device, n)
	for i := range n {
		h, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			r.Devices = append(r.Devices, NVMLDevice{Index: i, Notes: []string{fmt.Sprintf("no handle: %v", ret)}})
			continue
		}
		handles[i] = h
		if pci, ret := h.GetPciInfo(); ret == nvml.SUCCESS {
			busToIndex[busID(pci)] = i
		}
	}
	for i, h := range handles {
		if h == nil {
			continue
		}
		d := NVMLDevice{Index: i, NVLinkPeers: map[int]int{}}
		d.Name, _ = h.GetName()
		d.UUID, _ = h.GetUUID()
		for link := range nvml.NVLINK_MAX_LINKS {
			state, ret := h.GetNvLinkState(link)
			if ret != nvml.SUCCESS || state != nvml.FEATURE_ENABLED {
				continue
			}
			d.NVLinksActive++
			peer := -1
			if pci, ret := h.GetNvLinkRemotePciInfo(link); ret == nvml.SUCCESS {
				if p, ok := busToIndex[busID(pci)]; ok {
					peer = p
				}
			}
			d.NVLinkPeers[peer]++
		}
		if s, ret := h.GpmQueryDeviceSupport(); ret == nvml.SUCCESS {
			d.GPM = s.IsSupportedDevice != 0
		} else {
			d.Notes = append(d.Notes, fmt.Sprintf("GPM query failed: %v", ret))
		}
		r.Devices = append(r.Devices, d)
	}
	return r
}

// busID turns NVML's fixed-size bus id into a string key.
func busID(p nvml.PciInfo) string {
	b := make([]byte, 0, len(p.BusId))
	for _, c := range p.BusId {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(b)
}
