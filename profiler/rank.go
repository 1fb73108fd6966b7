package profiler

// Outranks reports whether result a ranks above result b, both of one
// scenario under two strategies: by the uplift U over the serial default
// (higher first) when both have it, else by T_c3 (shorter first), which
// orders strategies of one scenario the same way. Never by F: a strategy
// that speeds up an op's isolated run (copy engines, a partition)
// changes F's denominator. A result without a concurrent run ranks below
// one with it.
func Outranks(a, b Result) bool {
	ca, cb := a.TC3.N > 0 && a.TC3.Median > 0, b.TC3.N > 0 && b.TC3.Median > 0
	switch {
	case !ca || !cb:
		return ca && !cb
	case a.Uplift > 0 && b.Uplift > 0:
		return a.Uplift > b.Uplift
	}
	return a.TC3.Median < b.TC3.Median
}
