package cuda

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/c3lab/c3lab/scenarios"
)

// Test data: small values whose products and sums are easy to check.
//
// GEMM operands are pseudo-random values of magnitude 0.5..2 with random
// sign, exactly representable in every element type. Collective data are
// whole numbers in [-8, 8] in bf16, so sums over up to 8 ranks stay exact
// and the check can demand bit equality.

// mix is a 64-bit hash (splitmix64's finaliser) used as a cheap,
// deterministic random source.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// period is the length after which test data repeat: a prime, so that
// repeats never line up with matrix or buffer dimensions, and short enough
// that gigabytes of data are built by copying one period.
const period = 65521

// operandValue is element i of GEMM operand `which` on device dev.
func operandValue(dev, which int, i int64) float64 {
	h := mix(uint64(dev)<<56 ^ uint64(which)<<48 ^ uint64(i%period))
	// 0.5 .. 2 in steps every element type represents exactly: 1 + m/8 or
	// (1 + m/8)/2 with m in 0..7, and a random sign.
	v := (1 + float64(h&7)/8) / float64(1+(h>>3&1))
	if h>>4&1 == 1 {
		v = -v
	}
	return v
}

// encode writes v (exactly representable) as element type d.
func encode(d scenarios.DType, v float64, out []byte) {
	switch d {
	case scenarios.FP32:
		binary.LittleEndian.PutUint32(out, math.Float32bits(float32(v)))
	case scenarios.FP16:
		binary.LittleEndian.PutUint16(out, fp16Bits(v))
	case scenarios.FP8:
		out[0] = fp8e4m3Bits(v)
	default:
		binary.LittleEndian.PutUint16(out, uint16(math.Float32bits(float32(v))>>16))
	}
}

// decode reads one element of type d (bf16, fp16, fp32; fp8 GEMMs write bf16).
func decode(d scenarios.DType, in []byte) float64 {
	switch d {
	case scenarios.FP32:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(in)))
	case scenarios.FP16:
		return fp16Value(binary.LittleEndian.Uint16(in))
	}
	return float64(math.Float32frombits(uint32(binary.LittleEndian.Uint16(in)) << 16))
}

// fp16Bits encodes a normal value of magnitude 2^-14..65504 exactly
// representable in fp16 (enough for the test data).
func fp16Bits(v float64) uint16 {
	bits := math.Float32bits(float32(v))
	sign := uint16(bits>>16) & 0x8000
	exp := int(bits>>23&0xff) - 127 + 15
	mant := uint16(bits>>13) & 0x3ff
	if v == 0 {
		return sign
	}
	return sign | uint16(exp)<<10 | mant
}

func fp16Value(b uint16) float64 {
	sign := 1.0
	if b&0x8000 != 0 {
		sign = -1
	}
	exp := int(b >> 10 & 0x1f)
	mant := float64(b & 0x3ff)
	if exp == 0 {
		return sign * mant / 1024 * math.Pow(2, -14)
	}
	return sign * (1 + mant/1024) * math.Pow(2, float64(exp-15))
}

// fp8e4m3Bits encodes a normal value exactly representable in e4m3 (bias 7).
func fp8e4m3Bits(v float64) byte {
	bits := math.Float32bits(float32(v))
	sign := byte(bits>>24) & 0x80
	if v == 0 {
		return sign
	}
	exp := int(bits>>23&0xff) - 127 + 7
	mant := byte(bits>>20) & 0x7
	return sign | byte(exp)<<3 | mant
}

// operandBytes builds a GEMM operand of n elements for one device.
func operandBytes(d scenarios.DType, dev, which int, n int64) []byte {
	size := d.Size()
	one := make([]byte, period*size)
	for i := range int64(period) {
		encode(d, operandValue(dev, which, i), one[i*size:])
	}
	return repeat(one, n*size)
}

// timingOperandBytes builds a GEMM operand for the timed runs: random
// signs, exponents for magnitudes 0.25..4 and every mantissa bit random, as
// real activations and weights (and torch.randn) have. A GEMM's power draw,
// and so its clock under the power cap, depends on how many bits toggle:
// the few-bit check operands ran up to a fifth faster than random data.
func timingOperandBytes(d scenarios.DType, dev, which int, n int64) []byte {
	size := d.Size()
	one := make([]byte, period*size)
	for i := range int64(period) {
		h := mix(uint64(dev)<<56 ^ uint64(which)<<48 ^ 1<<40 ^ uint64(i))
		sign, exp := h>>63, h>>61&3 // exp: 0..3 above the smallest exponent
		switch d {
		case scenarios.FP32:
			binary.LittleEndian.PutUint32(one[i*size:], uint32(sign<<31|(125+exp)<<23|h&(1<<23-1)))
		case scenarios.FP16:
			binary.LittleEndian.PutUint16(one[i*size:], uint16(sign<<15|(13+exp)<<10|h&(1<<10-1)))
		case scenarios.FP8:
			one[i] = byte(sign<<7 | (5+exp)<<3 | h&7) // e4m3, bias 7: never the NaN pattern
		default: // bf16
			binary.LittleEndian.PutUint16(one[i*size:], uint16(sign<<15|(125+exp)<<7|h&(1<<7-1)))
		}
	}
	return repeat(one, n*size)
}

// repeat fills n bytes with copies of one period of data.
func repeat(one []byte, n int64) []byte {
	out := make([]byte, n)
	for pos := 0; pos < len(out); {
		pos += copy(out[pos:], one)
	}
	return out
}

// outputType is the element type a GEMM writes (fp8 GEMMs write bf16).
func outputType(d scenarios.DType) scenarios.DType {
	if d == scenarios.FP8 {
		return scenarios.BF16
	}
	return d
}

// checkGEMM compares sampled entries of D = A^T B (A is K x M, B is K x N,
// column-major) with a host reference and returns the first mismatch.
func checkGEMM(g gemmSpec, dev int, d []byte) error { return checkGEMMRows(g, dev, 0, d) }

// checkGEMMRows is checkGEMM for the rows from rowOff of a larger GEMM's
// check operands: A's row i is the operand's row rowOff+i (a chunk of a
// decomposed GEMM), D is the chunk's own M x N block.
func checkGEMMRows(g gemmSpec, dev int, rowOff int64, d []byte) error {
	out := outputType(g.DType)
	size := out.Size()
	// Accumulation is fp32 and the output rounds to its type: allow the
	// output's rounding of the largest partial magnitude.
	ulp := map[scenarios.DType]float64{scenarios.BF16: 1.0 / 128, scenarios.FP16: 1.0 / 1024, scenarios.FP32: 1e-6}[out]
	for s := range 64 {
		h := mix(uint64(s) ^ 0xc3)
		i, j := int64(h%uint64(g.M)), int64((h>>32)%uint64(g.N))
		var ref, mag float64
		for k := range int64(g.K) {
			p := operandValue(dev, 0, k+(rowOff+i)*int64(g.K)) * operandValue(dev, 1, k+j*int64(g.K))
			ref += p
			mag += math.Abs(p)
		}
		got := decode(out, d[(i+j*int64(g.M))*size:])
		if math.Abs(got-ref) > ulp*math.Max(math.Abs(ref), 1)+1e-4*mag {
			return fmt.Errorf("GEMM %dx%dx%d %s on GPU %d: D[%d,%d] = %g, want %g", g.M, g.N, g.K, g.DType, dev, rowOff+i, j, got, ref)
		}
	}
	return nil
}

// commValue is element e of rank r's send buffer: a whole number in [-8, 8].
func commValue(r int, e int64) int {
	return int(mix(uint64(r)<<40^uint64(e%period))%17) - 8
}

// bf16Int encodes a small integer as bf16 bits.
func bf16Int(v int) uint16 { return uint16(math.Float32bits(float32(v)) >> 16) }

// sendBytes builds rank r's send buffer of n bf16 elements.
func sendBytes(r int, n int64) []byte {
	one := make([]byte, 2*period)
	for e := range int64(period) {
		binary.LittleEndian.PutUint16(one[2*e:], bf16Int(commValue(r, e)))
	}
	return repeat(one, 2*n)
}

// sendElems is the element count of each rank's send buffer.
func sendElems(c collective, ranks int) int64 {
	switch c.Kind {
	case scenarios.ReduceScatter, scenarios.AllToAll:
		return c.Count * int64(ranks)
	}
	return c.Count
}

// recvElems is the element count of each rank's receive buffer.
func recvElems(c collective, ranks int) int64 {
	switch c.Kind {
	case scenarios.AllGather, scenarios.AllToAll:
		return c.Count * int64(ranks)
	}
	return c.Count
}

// expectedPeriod returns one period of rank r's expected receive buffer,
// starting at element offset `from` of a block that comes from rank q
// (all-gather, all-to-all) or is reduced over all ranks.
func expectedPeriod(c collective, ranks, r, q int, from int64) []byte {
	one := make([]byte, 2*period)
	for i := range int64(period) {
		var v int
		switch c.Kind {
		case scenarios.AllGather:
			v = commValue(q, from+i)
		case scenarios.AllToAll:
			v = commValue(q, int64(r)*c.Count+from+i)
		case scenarios.ReduceScatter:
			for p := range ranks {
				v += commValue(p, int64(r)*c.Count+from+i)
			}
		case scenarios.AllReduce:
			for p := range ranks {
				v += commValue(p, from+i)
			}
		}
		binary.LittleEndian.PutUint16(one[2*i:], bf16Int(v))
	}
	return one
}

// checkCollective compares rank r's receive buffer with the expected result,
// block by block at memory speed (test data repeat every period elements).
func checkCollective(c collective, ranks, r int, recv []byte) error {
	n := recvElems(c, ranks)
	if int64(len(recv)) < 2*n {
		return fmt.Errorf("%s: rank %d received %d bytes, want %d", c.Kind, r, len(recv), 2*n)
	}
	blocks := 1
	if c.Kind == scenarios.AllGather || c.Kind == scenarios.AllToAll {
		blocks = ranks // block q came from rank q
	}
	blockElems := n / int64(blocks)
	for q := range blocks {
		want := expectedPeriod(c, ranks, r, q, 0)
		got := recv[int64(q)*2*blockElems : int64(q+1)*2*blockElems]
		for off := int64(0); off < 2*blockElems; off += 2 * period {
			end := min(off+2*period, 2*blockElems)
			if !bytes.Equal(got[off:end], want[:end-off]) {
				for e := off / 2; e < end/2; e++ {
					w := binary.LittleEndian.Uint16(want[2*(e-off/2):])
					if g := binary.LittleEndian.Uint16(got[2*e:]); g != w {
						return fmt.Errorf("%s on %d GPUs: rank %d element %d is %g, want %g", c.Kind, ranks, r, int64(q)*blockElems+e,
							decode(scenarios.BF16, got[2*e:]), decode(scenarios.BF16, want[2*(e-off/2):]))
					}
				}
			}
		}
	}
	return nil
}
