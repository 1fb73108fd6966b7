package profiler

// Order is how two results of one scenario compare (Compare).
type Order int

// Orders. NotToldApart is the zero value: two results whose intervals
// overlap are not ranked.
const (
	NotToldApart Order = iota
	Better
	Worse
)

// String is "better", "worse" or "not told apart".
func (o Order) String() string {
	switch o {
	case Better:
		return "better"
	case Worse:
		return "worse"
	}
	return "not told apart"
}

// Compare says whether result a is better or worse than result b, both
// of one scenario under two strategies, or whether they cannot be told
// apart: by the uplift U over the serial default (higher is better) when
// both have it, else by T_c3 (shorter is better), which orders the
// strategies of one scenario the same way. Never by F: a strategy that
// speeds up an op's isolated run (copy engines, a partition) changes F's
// denominator. Two results whose 95 % intervals of the figure overlap are
// not told apart; a result without an interval (a deterministic backend,
// a recording without rounds) stands for its value alone, so two such
// results are told apart unless equal. A result without a concurrent run
// is worse than one with it.
func Compare(a, b Result) Order {
	ca, cb := a.TC3.N > 0 && a.TC3.Median > 0, b.TC3.N > 0 && b.TC3.Median > 0
	switch {
	case ca && !cb:
		return Better
	case !ca && cb:
		return Worse
	case !ca:
		return NotToldApart
	}
	ia, ib := tc3Interval(a), tc3Interval(b)
	va, vb := -a.TC3.Median, -b.TC3.Median
	// Shorter is better: compare the negated times.
	ia, ib = Interval{-ia.Hi, -ia.Lo}, Interval{-ib.Hi, -ib.Lo}
	if a.Uplift > 0 && b.Uplift > 0 {
		ia, ib, va, vb = upliftInterval(a), upliftInterval(b), a.Uplift, b.Uplift
	}
	switch {
	case ia.Overlaps(ib):
		return NotToldApart
	case va > vb:
		return Better
	case va < vb:
		return Worse
	}
	return NotToldApart
}

// tc3Interval is T_c3's interval, or T_c3 alone without one.
func tc3Interval(r Result) Interval {
	if r.CI != nil && r.CI.TC3.Valid() {
		return r.CI.TC3
	}
	return Interval{r.TC3.Median, r.TC3.Median}
}

// upliftInterval is U's interval, or U alone without one.
func upliftInterval(r Result) Interval {
	if r.CI != nil && r.CI.U.Valid() {
		return r.CI.U
	}
	return Interval{r.Uplift, r.Uplift}
}

// Outranks reports whether result a ranks above result b (Compare says
// Better): by U, else T_c3, and only when their intervals do not
// overlap.
func Outranks(a, b Result) bool { return Compare(a, b) == Better }

// Leads reports whether a's figure (U, else T_c3) is ahead of b's,
// intervals aside: what picks the strategy reported first among those
// not told apart.
func Leads(a, b Result) bool {
	ca, cb := a.TC3.N > 0 && a.TC3.Median > 0, b.TC3.N > 0 && b.TC3.Median > 0
	switch {
	case !ca || !cb:
		return ca && !cb
	case a.Uplift > 0 && b.Uplift > 0:
		return a.Uplift > b.Uplift
	}
	return a.TC3.Median < b.TC3.Median
}
