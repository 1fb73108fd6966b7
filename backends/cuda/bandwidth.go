package cuda

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// measuredBW is what the backend measured of one GPU at start: the HBM
// bandwidth its stream op reaches and, on a node of 2+ GPUs with peer
// access, the NVLink bandwidth its peer copies reach out of it. They
// replace the device table's constants (backends.DeviceFacts) in
// DeviceInfo and Capabilities, so the bound uses this device's numbers.
type measuredBW struct {
	UUID string `json:"uuid"`
	Name string `json:"name"`
	// Driver is the CUDA driver's version (cuDriverGetVersion) the numbers
	// were measured under; a different driver measures again.
	Driver int `json:"driver_version"`
	// HBM is the stream op's bytes read + written per second.
	HBM float64 `json:"hbm_bandwidth"`
	// Link is the bytes per second copies move from this GPU to its peers
	// (one copy stream per copy engine, at once); 0 when not measured (one
	// GPU, no peer access).
	Link float64 `json:"link_bandwidth,omitempty"`
	// LinkPeers is how many GPUs the node had when Link was measured: a
	// node that gains a GPU measures the link again.
	LinkPeers int       `json:"link_peers,omitempty"`
	At        time.Time `json:"measured_at"`
}

// bwCacheVersion is the cache file's format; another version is ignored.
const bwCacheVersion = 1

// bwCacheFile is the cache of measured bandwidths, keyed by GPU UUID.
type bwCacheFile struct {
	Version int                   `json:"version"`
	Devices map[string]measuredBW `json:"devices"`
}

// bandwidthCachePath is where measured bandwidths are kept: c3lab/
// bandwidth.json under the user's cache directory ($XDG_CACHE_HOME, else
// ~/.cache); "" when there is none.
func bandwidthCachePath() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "c3lab", "bandwidth.json")
}

// readBWCache reads the cache; a missing, unreadable, damaged or other
// version's file is an empty cache (it is rewritten after measuring).
func readBWCache(path string) map[string]measuredBW {
	out := map[string]measuredBW{}
	if path == "" {
		return out
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return out
	}
	var f bwCacheFile
	if json.Unmarshal(data, &f) != nil || f.Version != bwCacheVersion {
		return out
	}
	for uuid, m := range f.Devices {
		if uuid != "" && m.UUID == uuid && m.HBM > 0 && m.Link >= 0 {
			out[uuid] = m
		}
	}
	return out
}

// writeBWCache replaces the cache file (write to a temporary file, rename).
func writeBWCache(path string, devs map[string]measuredBW) error {
	if path == "" {
		return errors.New("no cache directory")
	}
	data, err := json.MarshalIndent(bwCacheFile{Version: bwCacheVersion, Devices: devs}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("creating the bandwidth cache directory: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".bandwidth-*.json")
	if err != nil {
		return fmt.Errorf("writing the bandwidth cache: %w", err)
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing the bandwidth cache: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing the bandwidth cache: %w", err)
	}
	return nil
}

// cached reports whether m holds for device d under driver and a node of
// gpus GPUs: the same device, driver, and a link measured when one can be.
func (m measuredBW) holds(d devInfo, driver, gpus int) bool {
	if m.UUID != d.UUID || m.Name != d.Name || m.Driver != driver || m.HBM <= 0 {
		return false
	}
	if len(d.Peers) > 0 && (m.Link <= 0 || m.LinkPeers != gpus) {
		return false
	}
	return true
}

// bwProbe sizes the bandwidth measurements.
type bwProbe struct {
	hbmBytes  int64 // the stream op's buffer (read once, written once)
	linkBytes int64 // one copy stream's copy to a peer
}

// defaultBWProbe moves 2 GiB through HBM and 256 MiB per copy stream: long
// enough (hundreds of microseconds) that launch costs do not count.
func defaultBWProbe() bwProbe { return bwProbe{hbmBytes: 1 << 30, linkBytes: 1 << 28} }

// Repetitions of the bandwidth measurements.
const (
	bwWarmup = 2
	bwReps   = 7
)

// measureBandwidths fills b.measured for every GPU (on the worker): from
// the cache at path where it holds (same UUID, name and driver), measured
// otherwise and written back. A GPU without a UUID is measured and not
// cached. A failed measurement leaves that GPU on the device table's
// numbers and is returned (the backend works without it).
func (b *Backend) measureBandwidths(path string, p bwProbe) error {
	cache := readBWCache(path)
	driver := 0
	if len(b.devs) > 0 {
		driver = b.devs[0].Driver
	}
	b.measured = map[int]measuredBW{}
	changed := false
	var errs []error
	for i, d := range b.devs {
		if m, ok := cache[d.UUID]; ok && d.UUID != "" && m.holds(d, driver, len(b.devs)) {
			b.measured[i] = m
			continue
		}
		m := measuredBW{UUID: d.UUID, Name: d.Name, Driver: driver, At: time.Now().UTC()}
		var err error
		if m.HBM, err = b.measureHBM(i, p.hbmBytes); err != nil {
			errs = append(errs, fmt.Errorf("measuring GPU %d's HBM bandwidth: %w", i, err))
			continue
		}
		if len(d.Peers) > 0 {
			if m.Link, err = b.measureLink(i, p.linkBytes); err != nil {
				errs = append(errs, fmt.Errorf("measuring GPU %d's NVLink bandwidth: %w", i, err))
				m.Link = 0
			} else {
				m.LinkPeers = len(b.devs)
			}
		}
		b.measured[i] = m
		if d.UUID != "" {
			cache[d.UUID] = m
			changed = true
		}
	}
	if changed && path != "" {
		if err := writeBWCache(path, cache); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// measureHBM times c3lab's stream op on GPU dev: bytes read + written per
// second, the median of bwReps after bwWarmup.
func (b *Backend) measureHBM(dev int, n int64) (float64, error) {
	g := b.g
	if free, err := g.FreeMemory(dev); err == nil && free/4 < 2*n {
		n = max(free/8, 1<<20) / 16 * 16
	}
	in, err := g.Alloc(dev, n)
	if err != nil {
		return 0, err
	}
	defer g.Free(in)
	out, err := g.Alloc(dev, n)
	if err != nil {
		return 0, err
	}
	defer g.Free(out)
	s, err := g.Stream(dev, streamSpec{})
	if err != nil {
		return 0, err
	}
	return b.timeRate(dev, []streamID{s}, 2*n, func() error { return g.StreamOp(s, in, out, n) })
}

// measureLink times copies from GPU dev to its peers, one copy stream per
// copy engine (at least one), all at once, each to the next peer in turn:
// the bytes leaving dev per second, the median of bwReps.
func (b *Backend) measureLink(dev int, n int64) (float64, error) {
	g := b.g
	d := b.devs[dev]
	nstreams := max(d.CopyEngines, 1)
	var bufs []bufID
	defer func() {
		for _, x := range bufs {
			g.Free(x)
		}
	}()
	alloc := func(on int) (bufID, error) {
		x, err := g.Alloc(on, n)
		if err == nil {
			bufs = append(bufs, x)
		}
		return x, err
	}
	type job struct {
		s        streamID
		src, dst bufID
	}
	var jobs []job
	streams := make([]streamID, nstreams)
	for k := range nstreams {
		s, err := g.Stream(dev, streamSpec{})
		if err != nil {
			return 0, err
		}
		src, err := alloc(dev)
		if err != nil {
			return 0, err
		}
		dst, err := alloc(d.Peers[k%len(d.Peers)])
		if err != nil {
			return 0, err
		}
		streams[k] = s
		jobs = append(jobs, job{s, src, dst})
	}
	return b.timeRate(dev, streams, int64(nstreams)*n, func() error {
		for _, j := range jobs {
			if err := g.CopyPeer(j.dst, 0, j.src, 0, n, j.s); err != nil {
				return err
			}
		}
		return nil
	})
}

// timeRate runs enqueue (work on streams of GPU dev) bwWarmup times
// untimed, then bwReps times between events that fence every stream, and
// returns bytes per second of the median repetition.
func (b *Backend) timeRate(dev int, streams []streamID, bytes int64, enqueue func() error) (float64, error) {
	g := b.g
	start, err := g.Event(dev)
	if err != nil {
		return 0, err
	}
	ends := make([]eventID, len(streams)) // ends[0] is unused: end is stream 0's
	for i := 1; i < len(ends); i++ {
		if ends[i], err = g.Event(dev); err != nil {
			return 0, err
		}
	}
	end, err := g.Event(dev)
	if err != nil {
		return 0, err
	}
	// The events go to the spares for the graphs to use (events live
	// until Close).
	defer func() { b.spareEvents[dev] = append(b.spareEvents[dev], append([]eventID{start, end}, ends[1:]...)...) }()
	var times []int64
	for rep := range bwWarmup + bwReps {
		// Every stream starts after the start event and the last one ends
		// after every stream's work.
		if err := g.Record(start, streams[0]); err != nil {
			return 0, err
		}
		for _, s := range streams[1:] {
			if err := g.Wait(s, start); err != nil {
				return 0, err
			}
		}
		if err := enqueue(); err != nil {
			return 0, err
		}
		for i, s := range streams[1:] {
			if err := g.Record(ends[i+1], s); err != nil {
				return 0, err
			}
			if err := g.Wait(streams[0], ends[i+1]); err != nil {
				return 0, err
			}
		}
		if err := g.Record(end, streams[0]); err != nil {
			return 0, err
		}
		if err := g.Synchronize(dev); err != nil {
			return 0, err
		}
		ns, err := g.Elapsed(start, end)
		if err != nil {
			return 0, err
		}
		if rep >= bwWarmup {
			times = append(times, ns)
		}
	}
	slices.Sort(times)
	med := times[len(times)/2]
	if med <= 0 {
		return 0, fmt.Errorf("%d bytes took %d ns", bytes, med)
	}
	return float64(bytes) / (float64(med) / 1e9), nil
}
