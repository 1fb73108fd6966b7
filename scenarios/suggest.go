package scenarios

import (
	"slices"
	"strings"
)

// Closest returns up to n of candidates that look most like query, best
// first, for "did you mean" messages. Matching ignores case. Candidates
// rank in tiers: equal apart from case and punctuation; containing the
// query of two or more characters (or contained in it, if of three or more); holding the query's characters in order
// ("llama70b-ag" in "llama3-70b-tp-qkv-ag-224m"); and finally within a
// small edit distance (insertions, deletions, substitutions and swaps of
// neighbours, at most a third of the query's length). Within a tier the
// smaller edit distance wins, then the earlier candidate. Candidates too
// far from the query are never returned, so the result may be empty.
func Closest(query string, candidates []string, n int) []string {
	q := strings.ToLower(strings.TrimSpace(query))
	if n <= 0 || q == "" {
		return nil
	}
	type match struct {
		name       string
		tier, dist int
		order      int
	}
	var found []match
	seen := map[string]bool{}
	for i, cand := range candidates {
		if seen[cand] {
			continue
		}
		seen[cand] = true
		c := strings.ToLower(cand)
		dist := editDistance(q, c)
		tier := -1
		switch {
		case c == q || alnum(c) == alnum(q):
			tier = 0
		case (len(q) >= 2 && strings.Contains(c, q)) || (len(c) >= 3 && strings.Contains(q, c)):
			tier = 1
		case len(q) >= 3 && isSubsequence(q, c):
			tier = 2
		case dist <= max(1, len([]rune(q))/3):
			tier = 3
		}
		if tier >= 0 {
			found = append(found, match{name: cand, tier: tier, dist: dist, order: i})
		}
	}
	slices.SortStableFunc(found, func(a, b match) int {
		if a.tier != b.tier {
			return a.tier - b.tier
		}
		if a.dist != b.dist {
			return a.dist - b.dist
		}
		return a.order - b.order
	})
	out := make([]string, 0, min(n, len(found)))
	for _, m := range found[:min(n, len(found))] {
		out = append(out, m.name)
	}
	return out
}

// alnum keeps only the letters and digits of s.
func alnum(s string) string {
	return strings.Map(func(r rune) rune {
		if ('a' <= r && r <= 'z') || ('0' <= r && r <= '9') || r > 127 {
			return r
		}
		return -1
	}, s)
}

// isSubsequence reports whether the runes of q appear in s in order.
func isSubsequence(q, s string) bool {
	rs := []rune(s)
	i := 0
	for _, r := range q {
		for i < len(rs) && rs[i] != r {
			i++
		}
		if i == len(rs) {
			return false
		}
		i++
	}
	return true
}

// editDistance is the optimal-string-alignment distance between a and b:
// the fewest insertions, deletions, substitutions and swaps of adjacent
// runes that turn a into b.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// Three rows suffice: the swap looks two rows back.
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
