// Package telemetry samples what each GPU's engines are doing while a
// scenario runs, through NVML (go-nvml): GPU performance monitoring (GPM)
// metrics for SM utilization and occupancy, tensor activity, DRAM bandwidth,
// NVLink and PCIe traffic, plus power, SM clock and memory in use.
//
// Sampling runs off the UI path in its own goroutine, at a configurable
// interval (100 ms by default; GPM needs two snapshots at least that far
// apart), and hands over one batch per tick. A metric a device or driver
// does not support is reported as unsupported with the reason, never as
// zero.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/c3lab/c3lab/backends"
)

// Metric names beyond the shared ones in package backends.
const (
	MetricSMOccupancy = "sm_occupancy"    // share of warp slots in use (0..1)
	MetricLinkTXBytes = "link_tx_bytes_s" // NVLink bytes sent per second
	MetricLinkRXBytes = "link_rx_bytes_s" // NVLink bytes received per second
	MetricPCIeTXBytes = "pcie_tx_bytes_s" // PCIe bytes sent per second
	MetricPCIeRXBytes = "pcie_rx_bytes_s" // PCIe bytes received per second
	MetricPowerW      = "power_w"         // board power in watts
	MetricSMClockMHz  = "sm_clock_mhz"    // SM clock
	MetricMemUsed     = "mem_used_bytes"  // device memory in use
)

// Units of every metric the sampler can report, for displays and exports.
func Units() map[string]string {
	return map[string]string{
		backends.MetricSMUtil: "fraction", MetricSMOccupancy: "fraction", backends.MetricTensorUtil: "fraction",
		backends.MetricHBMUtil: "fraction", backends.MetricLinkTXUtil: "fraction", backends.MetricLinkRXUtil: "fraction",
		backends.MetricPCIeTXUtil: "fraction", backends.MetricPCIeRXUtil: "fraction",
		MetricLinkTXBytes: "bytes/s", MetricLinkRXBytes: "bytes/s", MetricPCIeTXBytes: "bytes/s", MetricPCIeRXBytes: "bytes/s",
		MetricPowerW: "W", MetricSMClockMHz: "MHz", MetricMemUsed: "bytes",
	}
}

// gpmMetric maps a GPM metric id to a c3lab name and a scale from NVML's
// unit (percent, or MiB/s) to c3lab's (fraction, or bytes/s).
type gpmMetric struct {
	id    nvml.GpmMetricId
	name  string
	scale float64
}

// gpmMetrics lists the GPM metrics the sampler reads.
func gpmMetrics() []gpmMetric {
	return []gpmMetric{
		{nvml.GPM_METRIC_SM_UTIL, backends.MetricSMUtil, 0.01},
		{nvml.GPM_METRIC_SM_OCCUPANCY, MetricSMOccupancy, 0.01},
		{nvml.GPM_METRIC_ANY_TENSOR_UTIL, backends.MetricTensorUtil, 0.01},
		{nvml.GPM_METRIC_DRAM_BW_UTIL, backends.MetricHBMUtil, 0.01},
		{nvml.GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC, MetricLinkTXBytes, 1 << 20},
		{nvml.GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC, MetricLinkRXBytes, 1 << 20},
		{nvml.GPM_METRIC_PCIE_TX_PER_SEC, MetricPCIeTXBytes, 1 << 20},
		{nvml.GPM_METRIC_PCIE_RX_PER_SEC, MetricPCIeRXBytes, 1 << 20},
	}
}

// pcieLaneBytes is one PCIe lane's bandwidth per direction by generation,
// after line coding (8b/10b up to Gen 2, 128b/130b from Gen 3): Gen 5 x16
// carries 63 GB/s each way.
func pcieLaneBytes(gen int) float64 {
	switch gen {
	case 1:
		return 0.25e9
	case 2:
		return 0.5e9
	case 3:
		return 8e9 / 8 * 128 / 130
	case 4:
		return 16e9 / 8 * 128 / 130
	case 5:
		return 32e9 / 8 * 128 / 130
	case 6:
		return 64e9 / 8 * 242 / 256 // FLIT mode
	}
	return 0
}

// Status says whether one metric is available on one device, and why not.
type Status struct {
	Device    int    `json:"device"`
	Metric    string `json:"metric"`
	Supported bool   `json:"supported"`
	Reason    string `json:"reason,omitempty"`
}

// Config tunes the sampler.
type Config struct {
	// Interval between samples; 0 means DefaultInterval. GPM needs 100 ms.
	Interval time.Duration
	// Devices to sample (NVML indices); empty means all.
	Devices []int
	// LinkBandwidth is each device's NVLink bandwidth per direction over
	// all its links, bytes/s, by NVML index, as the backend reports it
	// (backends.DeviceInfo.LinkBandwidth): NVLink utilization is a share
	// of it. A device without one reports its link traffic in bytes/s
	// only, and says why not as a share.
	LinkBandwidth map[int]float64
}

// DefaultInterval is the sampling period.
const DefaultInterval = 100 * time.Millisecond

// Batch is one tick's samples for every device.
type Batch struct {
	At      time.Time
	Samples []backends.Sample
}

type device struct {
	index    int
	h        nvml.Device
	gpm      bool
	prev     nvml.GpmSample
	cur      nvml.GpmSample
	havePrev bool
	links    int                     // active NVLink links
	link     float64                 // NVLink bandwidth per direction, bytes/s; 0 when unknown
	pcie     float64                 // the PCIe link's bandwidth per direction, bytes/s; 0 when unknown
	req      *nvml.GpmMetricsGetType // reused: the struct holds 477 metric slots
}

// Sampler reads NVML telemetry. Create it with Open; Run it in a goroutine.
type Sampler struct {
	lib    nvml.Interface
	cfg    Config
	devs   []*device
	status []Status
	start  time.Time
}

// Open initialises NVML and finds what each device supports. Without NVML
// (no driver) it fails with a clear error; the lab then runs without live
// telemetry and says so.
func Open(lib nvml.Interface, cfg Config) (*Sampler, error) {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	hs, err := openDevices(lib, cfg.Devices, "live telemetry is off")
	if err != nil {
		return nil, err
	}
	s := &Sampler{lib: lib, cfg: cfg}
	for _, hd := range hs {
		d := &device{index: hd.index, h: hd.h, link: cfg.LinkBandwidth[hd.index]}
		s.probe(d)
		s.devs = append(s.devs, d)
	}
	return s, nil
}

// probe records what one device supports and prepares its GPM samples.
func (s *Sampler) probe(d *device) {
	mark := func(metric string, ok bool, reason string) {
		s.status = append(s.status, Status{Device: d.index, Metric: metric, Supported: ok, Reason: reason})
	}
	support, ret := d.h.GpmQueryDeviceSupport()
	gpmReason := ""
	switch {
	case ret != nvml.SUCCESS:
		gpmReason = fmt.Sprintf("GPM query failed: %v", ret)
	case support.IsSupportedDevice == 0:
		gpmReason = "GPM needs a Hopper or newer GPU"
	default:
		var r1, r2 nvml.Return
		d.prev, r1 = s.lib.GpmSampleAlloc()
		d.cur, r2 = s.lib.GpmSampleAlloc()
		if r1 != nvml.SUCCESS || r2 != nvml.SUCCESS {
			gpmReason = fmt.Sprintf("GPM sample allocation failed: %v / %v", r1, r2)
		} else {
			d.gpm = true
		}
	}
	for _, m := range gpmMetrics() {
		mark(m.name, d.gpm, gpmReason)
	}
	for link := range nvml.NVLINK_MAX_LINKS {
		if st, ret := d.h.GetNvLinkState(link); ret == nvml.SUCCESS && st == nvml.FEATURE_ENABLED {
			d.links++
		}
	}
	linkReason := gpmReason
	switch {
	case d.gpm && d.links == 0:
		linkReason = "no active NVLink"
	case d.gpm && d.link <= 0:
		linkReason = "the device's NVLink bandwidth is unknown to c3lab"
	}
	linkOK := d.gpm && d.links > 0 && d.link > 0
	mark(backends.MetricLinkTXUtil, linkOK, linkReason)
	mark(backends.MetricLinkRXUtil, linkOK, linkReason)
	// The link's most, not its current, generation and width: an idle GPU
	// trains its link down to save power.
	gen, r1 := d.h.GetMaxPcieLinkGeneration()
	width, r2 := d.h.GetMaxPcieLinkWidth()
	pcieReason := gpmReason
	switch {
	case r1 != nvml.SUCCESS || r2 != nvml.SUCCESS:
		pcieReason = fmt.Sprintf("PCIe link unknown: %v / %v", r1, r2)
	case pcieLaneBytes(gen) == 0 || width <= 0:
		pcieReason = fmt.Sprintf("PCIe Gen %d x%d has no known bandwidth", gen, width)
	default:
		d.pcie = pcieLaneBytes(gen) * float64(width)
	}
	mark(backends.MetricPCIeTXUtil, d.gpm && d.pcie > 0, pcieReason)
	mark(backends.MetricPCIeRXUtil, d.gpm && d.pcie > 0, pcieReason)
	_, ret = d.h.GetPowerUsage()
	mark(MetricPowerW, ret == nvml.SUCCESS, reason(ret))
	_, ret = d.h.GetClockInfo(nvml.CLOCK_SM)
	mark(MetricSMClockMHz, ret == nvml.SUCCESS, reason(ret))
	_, ret = d.h.GetMemoryInfo()
	mark(MetricMemUsed, ret == nvml.SUCCESS, reason(ret))
}

func reason(ret nvml.Return) string {
	if ret == nvml.SUCCESS {
		return ""
	}
	return ret.Error()
}

// Status lists every metric of every device with whether it is supported.
func (s *Sampler) Status() []Status { return s.status }

// Interval is the sampling period in force.
func (s *Sampler) Interval() time.Duration { return s.cfg.Interval }

// Tick takes one sample of every device at time now. GPM metrics come from
// the previous tick's snapshot to this one, so the first tick has none.
func (s *Sampler) Tick(now time.Time) Batch {
	if s.start.IsZero() {
		s.start = now
	}
	t := now.Sub(s.start).Nanoseconds()
	b := Batch{At: now}
	add := func(dev int, metric string, v float64) {
		b.Samples = append(b.Samples, backends.Sample{Rep: -1, Metric: metric, Device: dev, Time: t, Value: v})
	}
	for _, d := range s.devs {
		if d.gpm {
			s.gpm(d, add)
		}
		if p, ret := d.h.GetPowerUsage(); ret == nvml.SUCCESS {
			add(d.index, MetricPowerW, float64(p)/1000)
		}
		if c, ret := d.h.GetClockInfo(nvml.CLOCK_SM); ret == nvml.SUCCESS {
			add(d.index, MetricSMClockMHz, float64(c))
		}
		if m, ret := d.h.GetMemoryInfo(); ret == nvml.SUCCESS {
			add(d.index, MetricMemUsed, float64(m.Used))
		}
	}
	return b
}

// gpm reads the metrics between the previous snapshot and a new one.
func (s *Sampler) gpm(d *device, add func(int, string, float64)) {
	if ret := d.cur.Get(d.h); ret != nvml.SUCCESS {
		return
	}
	if d.havePrev {
		metrics := gpmMetrics()
		if d.req == nil {
			d.req = &nvml.GpmMetricsGetType{}
		}
		req := d.req
		*req = nvml.GpmMetricsGetType{NumMetrics: uint32(len(metrics)), Sample1: d.prev, Sample2: d.cur}
		for i, m := range metrics {
			req.Metrics[i].MetricId = uint32(m.id)
		}
		if ret := s.lib.GpmMetricsGet(req); ret == nvml.SUCCESS {
			for i, m := range metrics {
				v := req.Metrics[i].Value * m.scale
				// A metric over an interval with no activity can come back
				// as NaN (DRAM bandwidth on an idle H200 did): no sample.
				if req.Metrics[i].NvmlReturn != uint32(nvml.SUCCESS) || math.IsNaN(v) || math.IsInf(v, 0) {
					continue
				}
				add(d.index, m.name, v)
				switch {
				case d.links > 0 && d.link > 0 && m.name == MetricLinkTXBytes:
					add(d.index, backends.MetricLinkTXUtil, v/d.link)
				case d.links > 0 && d.link > 0 && m.name == MetricLinkRXBytes:
					add(d.index, backends.MetricLinkRXUtil, v/d.link)
				case d.pcie > 0 && m.name == MetricPCIeTXBytes:
					add(d.index, backends.MetricPCIeTXUtil, v/d.pcie)
				case d.pcie > 0 && m.name == MetricPCIeRXBytes:
					add(d.index, backends.MetricPCIeRXUtil, v/d.pcie)
				}
			}
		}
	}
	d.prev, d.cur = d.cur, d.prev
	d.havePrev = true
}

// Run samples every Interval until ctx ends, sending each batch to out. A
// consumer that falls behind loses batches rather than slowing sampling
// (the count of dropped batches is returned).
func (s *Sampler) Run(ctx context.Context, out chan<- Batch) (dropped int) {
	tick := time.NewTicker(s.cfg.Interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return dropped
		case now := <-tick.C:
			b := s.Tick(now)
			select {
			case out <- b:
			default:
				dropped++
			}
		}
	}
}

// Close frees the GPM snapshots and shuts NVML down.
func (s *Sampler) Close() error {
	var errs []error
	for _, d := range s.devs {
		if d.gpm {
			if ret := s.lib.GpmSampleFree(d.prev); ret != nvml.SUCCESS {
				errs = append(errs, fmt.Errorf("freeing a GPM sample: %v", ret))
			}
			if ret := s.lib.GpmSampleFree(d.cur); ret != nvml.SUCCESS {
				errs = append(errs, fmt.Errorf("freeing a GPM sample: %v", ret))
			}
		}
	}
	s.devs = nil
	if ret := s.lib.Shutdown(); ret != nvml.SUCCESS {
		errs = append(errs, fmt.Errorf("NVML shutdown: %v", ret))
	}
	return errors.Join(errs...)
}
