package scenarios

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// The host-copy scenarios run on one GPU, say in their name what copy they
// make, and cover every copy kind, both compute kinds and each class.
// hostCopyScenarios is hostCopySuite as the suite holds it, on one GPU.
func hostCopyScenarios() []Scenario {
	var out []Scenario
	for _, b := range hostCopySuite() {
		out = append(out, b.on(b.home()))
	}
	return out
}

func TestHostCopySuite(t *testing.T) {
	suite := hostCopyScenarios()
	abbrev := map[Collective]string{HostToDevice: "-h2d-", DeviceToHost: "-d2h-", HostSwap: "-swap-"}
	builtin := map[string]bool{}
	for _, sc := range Builtin() {
		builtin[sc.Name] = true
	}
	one := h200()
	one.MaxGPUs = 1
	kinds := map[Collective]int{}
	streams := 0
	for _, sc := range suite {
		t.Run(sc.Name, func(t *testing.T) {
			if !builtin[sc.Name] {
				t.Errorf("not in Builtin")
			}
			if err := Validate(sc, one); err != nil {
				t.Errorf("invalid on a one-GPU H200 node: %v", err)
			}
			if sc.GPUs != 1 || sc.Profile != "h200" || sc.Reps != 0 || sc.Strategy != (Strategy{}) {
				t.Errorf("want gpus 1, profile h200, no reps and the default strategy; got %d, %q, %d, %v", sc.GPUs, sc.Profile, sc.Reps, sc.Strategy)
			}
			if !strings.Contains(sc.Name, abbrev[sc.Comm.Collective]) || !strings.HasSuffix(sc.Name, sizeSuffix(sc.Comm.Bytes)+"-1gpu") {
				t.Errorf("name should say the copy (%s) and end in its size and GPU count, %s-1gpu", abbrev[sc.Comm.Collective], sizeSuffix(sc.Comm.Bytes))
			}
			if d := sc.Description; !strings.HasSuffix(d, ". "+sc.Runs()+".") || strings.Count(d, ". ") != 1 || len(d) < 40 {
				t.Errorf("description %q should be one sentence of what it shows, then what it runs", d)
			}
			if !strings.Contains(sc.Source, "shapes from one GPU") {
				t.Errorf("source %q should say it runs on one GPU", sc.Source)
			}
			if sc.Comm.Bytes < 16<<20 || sc.Comm.Bytes > 1<<30 || sc.Comm.Bytes%16 != 0 {
				t.Errorf("size %s is outside 16MiB..1GiB or not whole 16-byte words", sc.Comm.Bytes)
			}
		})
		kinds[sc.Comm.Collective]++
		if sc.Compute.Kind == Stream {
			streams++
		}
	}
	for _, k := range HostCopies {
		if kinds[k] < 2 {
			t.Errorf("%d %s scenarios, want at least 2", kinds[k], k)
		}
	}
	if streams < 1 {
		t.Error("no stream op next to a host copy")
	}
}

// TestHostCopySuiteClasses checks the host-copy scenarios' classes on one
// H200 by the rates measured there, as suite_host.go's table says.
func TestHostCopySuiteClasses(t *testing.T) {
	doc, err := os.ReadFile("suite_host.go")
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	var table strings.Builder
	for _, sc := range hostCopyScenarios() {
		row, class := pairTable(sc)
		counts[class]++
		fmt.Fprintf(&table, "//\t%s\n", row)
		if !regexp.MustCompile(`(?m)^//\t` + regexp.QuoteMeta(row) + `$`).Match(doc) {
			t.Errorf("suite_host.go's table lacks the row: %s", row)
		}
	}
	t.Logf("classes on one H200 by measured rates (ms):\n%s", table.String())
	for _, class := range []string{ClassGEMMLong, ClassBalanced, ClassCommLong} {
		if counts[class] < 2 {
			t.Errorf("%d %s host-copy scenarios, want at least 2", counts[class], class)
		}
	}
}
