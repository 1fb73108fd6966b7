package sim

import (
	_ "embed"
	"fmt"
)

// FittedH200Name names the calibrated H200 profile built into c3lab: the
// profile file profiles/h200-fit.yaml, which c3lab calibrate fitted to
// the committed H200 sweeps and c3lab validate scores held out (CI holds
// its figures). Without a GPU, c3lab's commands run the simulator on it
// unless --sim-profile names another.
const FittedH200Name = "h200-fit"

//go:embed profiles/h200-fit.yaml
var fittedH200YAML []byte

// FittedH200 returns the calibrated H200 profile file built into c3lab
// (FittedH200Name), parsed and checked like any profile file.
func FittedH200() (ProfileFile, error) {
	pf, err := ReadProfileFile(fittedH200YAML)
	if err != nil {
		return ProfileFile{}, fmt.Errorf("the built-in %s profile: %w", FittedH200Name, err)
	}
	pf.label = FittedH200Name
	return pf, nil
}
