// Package numfmt formats numbers for people. Its one rule: a value that
// rounds to zero prints as zero, never as "-0" (a tiny negative
// fraction, -0.0004, would otherwise read "-0.0 %").
package numfmt

import (
	"strconv"
	"strings"
)

// Fixed formats v with prec digits after the point, as fmt's %.*f does,
// except that a negative value that rounds to zero, and the negative zero
// itself, print without the minus sign.
func Fixed(v float64, prec int) string {
	s := strconv.FormatFloat(v, 'f', prec, 64)
	if rest, neg := strings.CutPrefix(s, "-"); neg && strings.Trim(rest, "0.") == "" {
		return rest
	}
	return s
}
