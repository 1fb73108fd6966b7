package native

import (
	"errors"
	"strings"
	"testing"
)

// Without NVIDIA's libraries every opener fails with a typed error naming
// the library and what needs it; with them, it loads.
func TestOpenersNameWhatIsMissing(t *testing.T) {
	for _, tc := range []struct {
		lib  string
		open func() error
	}{
		{"libcuda.so.1", func() error { _, err := OpenDriver(); return err }},
		{"libcublasLt.so.13", func() error { _, err := OpenCUBLASLt(); return err }},
		{"libnccl.so.2", func() error { _, err := OpenNCCL(); return err }},
		{"libnvrtc.so.13", func() error { _, err := OpenNVRTC(); return err }},
		{"libcupti.so.13", func() error { _, err := ProbeCUPTI(); return err }},
		{"libcupti.so.13", func() error {
			c, err := StartCUPTI()
			if err == nil {
				c.Stop()
			}
			return err
		}},
	} {
		err := tc.open()
		if err == nil {
			t.Logf("%s loaded (this machine has it)", tc.lib)
			continue
		}
		var ml *MissingLibraryError
		if !errors.As(err, &ml) {
			t.Fatalf("%s: error %T %v, want *MissingLibraryError", tc.lib, err, err)
		}
		if ml.Library != tc.lib || ml.NeededFor == "" || !strings.Contains(err.Error(), tc.lib) {
			t.Errorf("%s: unhelpful error %q", tc.lib, err)
		}
	}
}

func TestKernelSourcesAreEmbedded(t *testing.T) {
	src, err := KernelSource("stream.cu")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(src, `extern "C" __global__`) || !strings.Contains(src, StreamKernel) {
		t.Errorf("stream.cu lacks the kernel %s", StreamKernel)
	}
	if _, err := KernelSource("nope.cu"); err == nil {
		t.Error("a missing kernel source gave no error")
	}
}

func TestVersionString(t *testing.T) {
	for code, want := range map[int]string{22803: "2.28.3", 22703: "2.27.3", 21805: "2.18.5"} {
		if got := VersionString(code); got != want {
			t.Errorf("VersionString(%d) = %s, want %s", code, got, want)
		}
	}
}
