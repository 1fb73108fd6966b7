package compare

import (
	"cmp"
	"math"
	"slices"
)

// exactLimit is the largest n1+n2 for which the Mann-Whitney p-value is
// exact (without ties): the count of arrangements, C(50, 25), is still
// exact in a float64.
const exactLimit = 50

// MannWhitney is the two-sided p-value of the Mann-Whitney U test (the
// Wilcoxon rank-sum test) that samples x and y come from one
// distribution, as benchstat reports it: exact for small samples without
// ties, else the normal approximation with the tie and continuity
// corrections. NaN when a sample is empty; 1 when every value is alike.
func MannWhitney(x, y []float64) float64 {
	n1, n2 := len(x), len(y)
	if n1 == 0 || n2 == 0 {
		return math.NaN()
	}
	type obs struct {
		v     float64
		fromX bool
	}
	all := make([]obs, 0, n1+n2)
	for _, v := range x {
		all = append(all, obs{v, true})
	}
	for _, v := range y {
		all = append(all, obs{v, false})
	}
	slices.SortFunc(all, func(a, b obs) int { return cmp.Compare(a.v, b.v) })
	// Mid-ranks; tieSum is the sum over tie groups of t^3 - t.
	var r1, tieSum float64
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		rank := float64(i+j+1) / 2 // ranks i+1 .. j
		for k := i; k < j; k++ {
			if all[k].fromX {
				r1 += rank
			}
		}
		t := float64(j - i)
		tieSum += t*t*t - t
		i = j
	}
	u := r1 - float64(n1*(n1+1))/2
	if tieSum == 0 && n1+n2 <= exactLimit {
		return exactP(n1, n2, u)
	}
	n := float64(n1 + n2)
	mu := float64(n1*n2) / 2
	variance := float64(n1*n2) / 12 * ((n + 1) - tieSum/(n*(n-1)))
	if variance <= 0 {
		return 1
	}
	z := (math.Abs(u-mu) - 0.5) / math.Sqrt(variance)
	if z <= 0 {
		return 1
	}
	return math.Min(1, math.Erfc(z/math.Sqrt2))
}

// exactP is the two-sided p-value of U = u for samples of n1 and n2
// without ties: twice the smaller tail of U's distribution, which counts
// the arrangements of the two samples by U (f(m, n, k) = f(m-1, n, k-n) +
// f(m, n-1, k)).
func exactP(n1, n2 int, u float64) float64 {
	// prev[n] and cur[n] hold the counts for m-1 and m values of x.
	prev := make([][]float64, n2+1)
	for n := range prev {
		prev[n] = []float64{1} // m = 0: U is 0
	}
	for m := 1; m <= n1; m++ {
		cur := make([][]float64, n2+1)
		cur[0] = []float64{1} // n = 0: U is 0
		for n := 1; n <= n2; n++ {
			c := make([]float64, m*n+1)
			for k := range c {
				if k-n >= 0 && k-n < len(prev[n]) {
					c[k] += prev[n][k-n]
				}
				if k < len(cur[n-1]) {
					c[k] += cur[n-1][k]
				}
			}
			cur[n] = c
		}
		prev = cur
	}
	counts := prev[n2]
	var total, lo, hi float64
	for k, c := range counts {
		total += c
		if float64(k) <= u {
			lo += c
		}
		if float64(k) >= u {
			hi += c
		}
	}
	return math.Min(1, 2*math.Min(lo, hi)/total)
}
