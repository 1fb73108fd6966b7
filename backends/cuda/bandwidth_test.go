package cuda

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/backends"
)

// smallProbe keeps the fake's copies cheap.
var smallProbe = bwProbe{hbmBytes: 1 << 20, linkBytes: 1 << 20}

// fakeNode is n fake GPUs with UUIDs under driver 13000.
func fakeNode(n int) *fakeGPU {
	f := newFakeGPU(n)
	for i := range f.devs {
		f.devs[i].UUID = fmt.Sprintf("GPU-%d", i)
		f.devs[i].Driver = 13000
	}
	return f
}

func (f *fakeGPU) count(fragment string) int {
	n := 0
	for _, l := range f.log {
		if strings.Contains(l, fragment) {
			n++
		}
	}
	return n
}

func TestMeasureBandwidths(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c3lab", "bandwidth.json")
	f := fakeNode(2)
	b := fakeBackend(t, f, Options{})
	var err error
	b.do(func() { err = b.measureBandwidths(path, smallProbe) })
	if err != nil {
		t.Fatal(err)
	}
	// The fake's stream op takes streamNs whatever its size; each copy
	// stream (one per copy engine, 3) moves linkBytes at 400 GB/s, all at once.
	wantHBM := 2 * float64(smallProbe.hbmBytes) / (float64(f.streamNs) / 1e9)
	wantLink := 3 * float64(smallProbe.linkBytes) / (float64(smallProbe.linkBytes/fakeCopyBytesPerNs) / 1e9)
	devs := b.Devices()
	for i, d := range devs {
		if d.HBMBandwidth != wantHBM || d.LinkBandwidth != wantLink {
			t.Errorf("GPU %d: HBM %.4g, link %.4g; want %.4g, %.4g", i, d.HBMBandwidth, d.LinkBandwidth, wantHBM, wantLink)
		}
	}
	if c := b.Capabilities(); c.HBMBandwidth != wantHBM {
		t.Errorf("capabilities HBM %.4g, want the measured %.4g", c.HBMBandwidth, wantHBM)
	}
	ops := f.count("stream-op")
	if ops != 2*(bwWarmup+bwReps) {
		t.Errorf("%d stream ops, want %d", ops, 2*(bwWarmup+bwReps))
	}
	if n := f.count("copy dev0->dev1"); n != 3*(bwWarmup+bwReps) {
		t.Errorf("%d copies out of GPU 0, want %d", n, 3*(bwWarmup+bwReps))
	}
	if len(f.bufs) != 0 {
		t.Errorf("%d buffers left", len(f.bufs))
	}

	// A second backend on the same GPUs reads the cache: no measurement.
	f2 := fakeNode(2)
	b2 := fakeBackend(t, f2, Options{})
	b2.do(func() { err = b2.measureBandwidths(path, smallProbe) })
	if err != nil || f2.count("stream-op") != 0 || f2.copies != 0 {
		t.Errorf("cached: %v, %d stream ops, %d copies", err, f2.count("stream-op"), f2.copies)
	}
	if d := b2.Devices()[1]; d.HBMBandwidth != wantHBM || d.LinkBandwidth != wantLink {
		t.Errorf("from the cache: %+v", d)
	}

	// A new driver measures again, and so does a node of more GPUs (the
	// link); a GPU not in the cache is measured and added.
	for name, change := range map[string]func(*fakeGPU) *fakeGPU{
		"driver":    func(f *fakeGPU) *fakeGPU { f.devs[0].Driver, f.devs[1].Driver = 13010, 13010; return f },
		"more GPUs": func(*fakeGPU) *fakeGPU { return fakeNode(3) },
		"new GPU":   func(f *fakeGPU) *fakeGPU { f.devs[1].UUID = "GPU-new"; return f },
	} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "bandwidth.json")
			data, _ := os.ReadFile(path)
			os.WriteFile(p, data, 0o644)
			g := change(fakeNode(2))
			bb := fakeBackend(t, g, Options{})
			bb.do(func() { err = bb.measureBandwidths(p, smallProbe) })
			if err != nil {
				t.Fatal(err)
			}
			want := len(g.devs)
			if name == "new GPU" {
				want = 1
			}
			if n := g.count("stream-op") / (bwWarmup + bwReps); n != want {
				t.Errorf("%d GPUs measured, want %d", n, want)
			}
			c := readBWCache(p)
			for _, d := range g.devs {
				if m, ok := c[d.UUID]; !ok || m.Driver != d.Driver {
					t.Errorf("the cache lacks %s under driver %d: %+v", d.UUID, d.Driver, c)
				}
			}
		})
	}
}

func TestMeasureBandwidthsOneGPU(t *testing.T) {
	f := fakeNode(1)
	b := fakeBackend(t, f, Options{})
	var err error
	b.do(func() { err = b.measureBandwidths(filepath.Join(t.TempDir(), "bw.json"), smallProbe) })
	if err != nil {
		t.Fatal(err)
	}
	// No peer: the link keeps the device table's number (none for a fake).
	if d := b.Devices()[0]; d.HBMBandwidth <= 0 || d.LinkBandwidth != 0 || f.copies != 0 {
		t.Errorf("one GPU: %+v, %d copies", d, f.copies)
	}
}

func TestMeasureBandwidthsNoUUIDNoCache(t *testing.T) {
	f := newFakeGPU(2) // no UUIDs
	b := fakeBackend(t, f, Options{})
	p := filepath.Join(t.TempDir(), "bw.json")
	var err error
	b.do(func() { err = b.measureBandwidths(p, smallProbe) })
	if err != nil {
		t.Fatal(err)
	}
	if _, serr := os.Stat(p); !os.IsNotExist(serr) {
		t.Errorf("GPUs without a UUID were cached: %v", serr)
	}
	if b.Devices()[0].HBMBandwidth <= 0 {
		t.Error("not measured")
	}
}

func TestBadBandwidthCache(t *testing.T) {
	good := bwCacheFile{Version: bwCacheVersion, Devices: map[string]measuredBW{"GPU-0": {UUID: "GPU-0", Name: "Fake H200", Driver: 13000, HBM: 4e12, Link: 4e11, LinkPeers: 2}}}
	data, _ := json.Marshal(good)
	tests := []struct {
		name    string
		content string
		want    int
	}{
		{"good", string(data), 1},
		{"empty", "", 0},
		{"not JSON", "\x00\xffgarbage{", 0},
		{"truncated", string(data[:len(data)/2]), 0},
		{"other version", strings.Replace(string(data), `"version":1`, `"version":99`, 1), 0},
		{"wrong types", `{"version":1,"devices":{"GPU-0":{"hbm_bandwidth":"fast"}}}`, 0},
		{"null devices", `{"version":1,"devices":null}`, 0},
		{"key not its UUID", `{"version":1,"devices":{"GPU-0":{"uuid":"GPU-9","hbm_bandwidth":1e12}}}`, 0},
		{"zero bandwidth", `{"version":1,"devices":{"GPU-0":{"uuid":"GPU-0","hbm_bandwidth":0}}}`, 0},
		{"negative link", `{"version":1,"devices":{"GPU-0":{"uuid":"GPU-0","hbm_bandwidth":1e12,"link_bandwidth":-1}}}`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "bw.json")
			if err := os.WriteFile(p, []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			if got := readBWCache(p); len(got) != tt.want {
				t.Errorf("%d entries, want %d", len(got), tt.want)
			}
			// A bad file is measured over and rewritten.
			f := fakeNode(2)
			b := fakeBackend(t, f, Options{})
			var err error
			b.do(func() { err = b.measureBandwidths(p, smallProbe) })
			if err != nil {
				t.Fatal(err)
			}
			if got := readBWCache(p); len(got) != 2 {
				t.Errorf("after measuring, %d cached", len(got))
			}
		})
	}
	if got := readBWCache(filepath.Join(t.TempDir(), "missing.json")); len(got) != 0 {
		t.Error("a missing file has entries")
	}
	if got := readBWCache(""); len(got) != 0 {
		t.Error("no path has entries")
	}
}

func TestBandwidthCacheUnwritable(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	os.WriteFile(blocker, nil, 0o644)
	f := fakeNode(2)
	b := fakeBackend(t, f, Options{})
	var err error
	b.do(func() { err = b.measureBandwidths(filepath.Join(blocker, "bw.json"), smallProbe) })
	if err == nil || !strings.Contains(err.Error(), "bandwidth cache") {
		t.Errorf("an unwritable cache: %v", err)
	}
	// The numbers were measured all the same.
	if b.Devices()[0].HBMBandwidth <= 0 {
		t.Error("not measured")
	}
}

func TestBandwidthCachePathIsXDG(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "/somewhere")
	if got := bandwidthCachePath(); got != "/somewhere/c3lab/bandwidth.json" {
		t.Errorf("path %q", got)
	}
}

// The device table's numbers stand until something is measured.
func TestDevicesWithoutMeasurement(t *testing.T) {
	f := fakeNode(2)
	for i := range f.devs {
		f.devs[i].Name = "NVIDIA H200"
	}
	b := fakeBackend(t, f, Options{})
	if d := b.Devices()[0]; d.HBMBandwidth != backends.H200Facts().HBMBandwidth || d.LinkBandwidth != backends.H200Facts().LinkBandwidth {
		t.Errorf("unmeasured H200: %+v", d)
	}
}
