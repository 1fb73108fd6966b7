package scenarios

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ByteSize is a number of bytes. In YAML and on the command line it is a
// plain integer or a number with a unit: B, KiB, MiB, GiB, TiB (powers of
// 1024) or KB, MB, GB, TB (powers of 1000), as in "256MiB" or "1.5 GiB".
type ByteSize int64

var byteUnits = []struct {
	suffix string
	factor float64
}{
	// Longest suffixes first so "MiB" is not read as "B".
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40},
	{"b", 1},
}

// ParseByteSize reads a size such as "4096", "256MiB", "1.5GiB" or "64 MB".
func ParseByteSize(s string) (ByteSize, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if t == "" {
		return 0, fmt.Errorf("empty size; %s", byteSizeHint)
	}
	factor := 1.0
	for _, u := range byteUnits {
		if strings.HasSuffix(t, u.suffix) {
			factor = u.factor
			t = strings.TrimSpace(strings.TrimSuffix(t, u.suffix))
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a size; %s", s, byteSizeHint)
	}
	b := v * factor
	if b > maxByteSizeFloat || b < -maxByteSizeFloat {
		return 0, fmt.Errorf("%q is too large a size; %s", s, byteSizeHint)
	}
	if b != math.Trunc(b) {
		return 0, fmt.Errorf("%q is not a whole number of bytes; %s", s, byteSizeHint)
	}
	return ByteSize(b), nil
}

// byteSizeHint ends every size error with what is allowed.
const byteSizeHint = "want a byte count such as 268435456 or 256MiB"

// maxByteSizeFloat bounds sizes read as floats so that the conversion to
// int64 is exact and cannot overflow (2^62 bytes, far beyond any device).
const maxByteSizeFloat = 1 << 62

// String formats the size with the largest binary unit that divides it
// exactly ("256MiB", "1GiB", "1000B"), so it parses back to the same value.
func (b ByteSize) String() string {
	if b == 0 {
		return "0B"
	}
	units := []struct {
		name   string
		factor int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}}
	for _, u := range units {
		if int64(b)%u.factor == 0 {
			return fmt.Sprintf("%d%s", int64(b)/u.factor, u.name)
		}
	}
	return fmt.Sprintf("%dB", int64(b))
}

// Human formats the size to three significant figures for display ("1.5GiB").
func (b ByteSize) Human() string {
	v := float64(b)
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for math.Abs(v) >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f%s", v, units[i])
	}
	return fmt.Sprintf("%.3g%s", v, units[i])
}

// MarshalYAML writes the size in its exact unit form.
func (b ByteSize) MarshalYAML() (any, error) { return b.String(), nil }

// UnmarshalYAML accepts an integer or a size string.
func (b *ByteSize) UnmarshalYAML(unmarshal func(any) error) error {
	var raw any
	if err := unmarshal(&raw); err != nil {
		return err
	}
	switch v := raw.(type) {
	case nil:
		// An empty value ("bytes:") is unset, like a missing field.
		*b = 0
		return nil
	case uint64:
		if v > math.MaxInt64/2 {
			return fmt.Errorf("%d is too large a size; %s", v, byteSizeHint)
		}
		*b = ByteSize(v)
		return nil
	case int64:
		*b = ByteSize(v)
		return nil
	case int:
		*b = ByteSize(v)
		return nil
	case float64:
		// NaN fails every comparison, so test for the good case.
		if !(v == math.Trunc(v)) {
			return fmt.Errorf("%v is not a whole number of bytes; %s", v, byteSizeHint)
		}
		if v > maxByteSizeFloat || v < -maxByteSizeFloat {
			return fmt.Errorf("%v is too large a size; %s", v, byteSizeHint)
		}
		*b = ByteSize(v)
		return nil
	case string:
		p, err := ParseByteSize(v)
		if err != nil {
			return err
		}
		*b = p
		return nil
	}
	return fmt.Errorf("%v is not a size; %s", raw, byteSizeHint)
}

// Set implements flag.Value.
func (b *ByteSize) Set(s string) error {
	p, err := ParseByteSize(s)
	if err != nil {
		return err
	}
	*b = p
	return nil
}
