package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/backends/sim"
	"github.com/c3lab/c3lab/recordings"
)

// named is a simulator that calls itself something else and says what a
// backend of that kind would: the command must ask the capabilities, not
// the name, what the backend is.
type named struct {
	*sim.Backend
	name    string
	profile string
	local   bool
}

func (n named) Name() string { return n.name }

func (n named) Capabilities() backends.Capabilities {
	c := n.Backend.Capabilities()
	c.Profile, c.LocalGPUs = n.profile, n.local
	return c
}

// Whether --sim-gpus can resize the node, and which device profile a
// recording names, come from the backend's capabilities whatever it is
// called.
func TestBackendKindFromCapabilities(t *testing.T) {
	p := sim.DefaultProfile()
	p.MaxGPUs = 1
	small := sim.New(p)
	for _, tc := range []struct {
		b       named
		simGPUs bool   // the note suggests --sim-gpus
		profile string // the recording's header
	}{
		{named{small, "sim", "", false}, false, ""},
		{named{small, "other", "h200", false}, true, "h200"},
	} {
		_, note := runnableSuite(tc.b)
		if got := strings.Contains(note, "--sim-gpus"); got != tc.simGPUs {
			t.Errorf("%s (profile %q): the note suggests --sim-gpus: %v, want %v (%q)", tc.b.name, tc.b.profile, got, tc.simGPUs, note)
		}
		rf := recordFlags{path: filepath.Join(t.TempDir(), "s.c3rec")}
		rec, err := rf.open(tc.b, 1)
		if err != nil {
			t.Fatal(err)
		}
		_, stop := openNodeTelemetry(tc.b, rec)
		stop()
		if err := rec.Close(); err != nil {
			t.Fatal(err)
		}
		r, err := recordings.ReadAll(rf.path)
		if err != nil {
			t.Fatal(err)
		}
		if r.Header.Profile != tc.profile || r.Header.Backend != tc.b.name || r.Header.Devices[0].Libraries != nil {
			t.Errorf("%s: header %+v", tc.b.name, r.Header)
		}
		if len(r.Events) != 0 {
			t.Errorf("%s is not this node's GPUs, and telemetry was recorded: %+v", tc.b.name, r.Events)
		}
	}
}
