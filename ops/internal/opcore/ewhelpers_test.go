package opcore_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/ops/internal/opstest"
	"github.com/vkflow/vkflow/tensor"
)

// arr is a host array of any dtype: floats in f, integers and bools in i
// (uint64 as its bit pattern).
type arr struct {
	dt    tensor.Dtype
	shape []int
	f     []float64
	i     []int64
}

func isFloatDt(dt tensor.Dtype) bool {
	return dt == tensor.Float16 || dt == tensor.Float32 || dt == tensor.Float64
}

func isUnsignedDt(dt tensor.Dtype) bool {
	return dt == tensor.Uint8 || dt == tensor.Uint16 || dt == tensor.Uint32 || dt == tensor.Uint64 || dt == tensor.Bool
}

func (a arr) len() int { return max(len(a.f), len(a.i)) }

// wrapTo keeps v's low bits as dt holds them, sign- or zero-extended.
func wrapTo(dt tensor.Dtype, v int64) int64 {
	switch dt {
	case tensor.Int8:
		return int64(int8(v))
	case tensor.Int16:
		return int64(int16(v))
	case tensor.Int32:
		return int64(int32(v))
	case tensor.Uint8:
		return int64(uint8(v))
	case tensor.Uint16:
		return int64(uint16(v))
	case tensor.Uint32:
		return int64(uint32(v))
	case tensor.Bool:
		if v != 0 {
			return 1
		}
	}
	return v
}

// floats makes a float array, rounding vals to dt.
func floats(dt tensor.Dtype, shape []int, vals ...float64) arr {
	a := arr{dt: dt, shape: shape, f: make([]float64, len(vals))}
	for i, v := range vals {
		a.f[i] = roundTo(dt, v)
	}
	return a
}

// ints makes an integer (or bool) array, wrapping vals to dt.
func ints(dt tensor.Dtype, shape []int, vals ...int64) arr {
	a := arr{dt: dt, shape: shape, i: make([]int64, len(vals))}
	for i, v := range vals {
		a.i[i] = wrapTo(dt, v)
	}
	return a
}

// random makes an array of n random values suited to dt: floats in
// [-lim, lim], integers over the whole range.
func random(r *rand.Rand, dt tensor.Dtype, shape []int, lim float64) arr {
	n := numelOf(shape)
	if isFloatDt(dt) {
		v := make([]float64, n)
		for i := range v {
			v[i] = (r.Float64()*2 - 1) * lim
		}
		return floats(dt, shape, v...)
	}
	v := make([]int64, n)
	for i := range v {
		v[i] = int64(r.Uint64())
	}
	return ints(dt, shape, v...)
}

func (a arr) bytes() []byte {
	size := a.dt.Size()
	b := make([]byte, a.len()*size)
	for k := range a.len() {
		p := b[k*size:]
		switch a.dt {
		case tensor.Float16:
			binary.LittleEndian.PutUint16(p, uint16(tensor.HalfFrom(float32(a.f[k]))))
		case tensor.Float32:
			binary.LittleEndian.PutUint32(p, math.Float32bits(float32(a.f[k])))
		case tensor.Float64:
			binary.LittleEndian.PutUint64(p, math.Float64bits(a.f[k]))
		default:
			var w [8]byte
			binary.LittleEndian.PutUint64(w[:], uint64(a.i[k]))
			copy(p[:size], w[:])
		}
	}
	return b
}

// upload makes a tensor holding a.
func (a arr) upload(t *testing.T, m ops.Owner) *tensor.Tensor {
	t.Helper()
	x, err := tensor.New(m, a.dt, a.shape)
	require.NoError(t, err)
	t.Cleanup(func() { _ = x.Close() })
	require.Equal(t, numelOf(a.shape), a.len(), "test data for shape %v", a.shape)
	require.NoError(t, x.WriteBytes(a.bytes()))
	return x
}

// download reads x back.
func download(t *testing.T, x *tensor.Tensor) arr {
	t.Helper()
	dt := x.Dtype()
	size := dt.Size()
	b := make([]byte, x.Len()*size)
	require.NoError(t, x.ReadBytes(b))
	a := arr{dt: dt, shape: x.Shape()}
	for k := range x.Len() {
		p := b[k*size:]
		switch dt {
		case tensor.Float16:
			a.f = append(a.f, float64(tensor.Half(binary.LittleEndian.Uint16(p)).Float32()))
		case tensor.Float32:
			a.f = append(a.f, float64(math.Float32frombits(binary.LittleEndian.Uint32(p))))
		case tensor.Float64:
			a.f = append(a.f, math.Float64frombits(binary.LittleEndian.Uint64(p)))
		default:
			var w [8]byte
			copy(w[:], p[:size])
			a.i = append(a.i, wrapTo(dt, int64(binary.LittleEndian.Uint64(w[:]))))
		}
	}
	return a
}

// bcastShape is NumPy's broadcast shape.
func bcastShape(shapes ...[]int) []int {
	rank := 0
	for _, s := range shapes {
		rank = max(rank, len(s))
	}
	out := make([]int, rank)
	for i := range out {
		out[i] = 1
	}
	for _, s := range shapes {
		for i, d := range s {
			if d != 1 {
				out[rank-len(s)+i] = d
			}
		}
	}
	return out
}

// at returns the flat index into an array of shape in of the element that
// flat index i of out reads under broadcasting.
func at(in, out []int, i int) int {
	idx, stride := 0, 1
	for d := len(out) - 1; d >= 0; d-- {
		c := i % out[d]
		i /= out[d]
		if k := d - (len(out) - len(in)); k >= 0 {
			if in[k] != 1 {
				idx += c * stride
			}
			stride *= in[k]
		}
	}
	return idx
}

// ref computes the reference of an element-wise op over xs broadcast
// together: f on floats (the result rounded to outDt) or g on integers;
// a nil function leaves the element zero. outDt 0 is the inputs' dtype.
func ref(outDt tensor.Dtype, f func(v ...float64) float64, g func(v ...int64) int64, xs ...arr) arr {
	shapes := make([][]int, len(xs))
	for k, x := range xs {
		shapes[k] = x.shape
	}
	shape := bcastShape(shapes...)
	n := numelOf(shape)
	if outDt == 0 {
		outDt = xs[0].dt
	}
	out := arr{dt: outDt, shape: shape}
	fv := make([]float64, len(xs))
	iv := make([]int64, len(xs))
	for i := range n {
		for k, x := range xs {
			j := at(x.shape, shape, i)
			if x.f != nil {
				fv[k] = x.f[j]
			} else {
				iv[k] = x.i[j]
				fv[k] = float64(x.i[j])
			}
		}
		switch {
		case isFloatDt(outDt) && f != nil:
			out.f = append(out.f, roundTo(outDt, f(fv...)))
		case isFloatDt(outDt):
			out.f = append(out.f, 0)
		case xs[0].f != nil && f != nil:
			out.i = append(out.i, wrapTo(outDt, int64(f(fv...))))
		case g != nil:
			out.i = append(out.i, wrapTo(outDt, g(iv...)))
		default:
			out.i = append(out.i, 0)
		}
	}
	return out
}

// ulps is the distance in units in the last place of dt between a and b
// (0 when both are NaN, or both the same infinity).
func ulps(dt tensor.Dtype, a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) {
		if math.IsNaN(a) && math.IsNaN(b) {
			return 0
		}
		return math.Inf(1)
	}
	if a == b {
		return 0
	}
	ord := func(v float64) int64 {
		var bits int64
		switch dt {
		case tensor.Float16:
			bits = int64(tensor.HalfFrom(float32(v)))
			if bits&0x8000 != 0 {
				bits = -(bits & 0x7fff)
			}
		case tensor.Float32:
			bits = int64(math.Float32bits(float32(v)))
			if bits&(1<<31) != 0 {
				bits = -(bits & (1<<31 - 1))
			}
		default:
			u := math.Float64bits(v)
			bits = int64(u &^ (1 << 63))
			if u>>63 != 0 {
				bits = -bits
			}
		}
		return bits
	}
	x, y := ord(a), ord(b)
	if (x < 0) != (y < 0) { // opposite signs: far apart anyway
		return math.Abs(float64(x) - float64(y))
	}
	return math.Abs(float64(x - y))
}

// same checks got against want: integers bit-exact, floats within tol
// ULPs of got's dtype.
func same(t *testing.T, want, got arr, tol float64, msg ...any) {
	t.Helper()
	require.Equal(t, want.dt, got.dt, msg...)
	require.Equal(t, want.shape, got.shape, msg...)
	if !isFloatDt(want.dt) {
		require.Equal(t, want.i, got.i, msg...)
		return
	}
	require.Len(t, got.f, len(want.f), msg...)
	bad := 0
	for k := range want.f {
		if d := ulps(want.dt, want.f[k], got.f[k]); d > tol {
			if bad < 5 {
				t.Errorf("%s: element %d: got %v, want %v (%v ULPs, tolerance %v)", fmt.Sprint(msg...), k, got.f[k], want.f[k], d, tol)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Fatalf("%s: %d of %d elements off", fmt.Sprint(msg...), bad, len(want.f))
	}
}

// Go's math.Pow is off by up to about 20 ULPs of float64 for large
// exponents, so float64 pow is checked against exp(y*log x) in 300-bit
// big.Float arithmetic.
const bigPrec = 300

// bigExp is e**x by halving x below 1/1000, a Taylor series and squaring.
func bigExp(x *big.Float) *big.Float {
	x = new(big.Float).SetPrec(bigPrec).Set(x)
	lim := big.NewFloat(1e-3)
	n := 0
	for new(big.Float).Abs(x).Cmp(lim) > 0 {
		x.Quo(x, big.NewFloat(2))
		n++
	}
	sum := new(big.Float).SetPrec(bigPrec).SetFloat64(1)
	term := new(big.Float).SetPrec(bigPrec).SetFloat64(1)
	for i := int64(1); i < 40; i++ {
		term.Mul(term, x)
		term.Quo(term, new(big.Float).SetPrec(bigPrec).SetInt64(i))
		sum.Add(sum, term)
	}
	for ; n > 0; n-- {
		sum.Mul(sum, sum)
	}
	return sum
}

// bigLog is log x (x > 0) by Newton's method from math.Log.
func bigLog(x float64) *big.Float {
	l := new(big.Float).SetPrec(bigPrec).SetFloat64(math.Log(x))
	bx := new(big.Float).SetPrec(bigPrec).SetFloat64(x)
	for range 4 {
		e := bigExp(l)
		num := new(big.Float).SetPrec(bigPrec).Sub(bx, e)
		num.Quo(num, new(big.Float).SetPrec(bigPrec).Add(bx, e))
		l.Add(l, num.Mul(num, big.NewFloat(2)))
	}
	return l
}

// powRef is C's pow, exact to float64 rounding where math.Pow is not:
// math.Pow's special cases, else ±exp(y*log|x|) in big.Float.
func powRef(x, y float64) float64 {
	ax := math.Abs(x)
	if y == 0 || x == 1 || math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) || ax == 0 ||
		(x < 0 && y != math.Trunc(y)) {
		return math.Pow(x, y)
	}
	l := bigLog(ax)
	l.Mul(l, new(big.Float).SetPrec(bigPrec).SetFloat64(y))
	if new(big.Float).Abs(l).Cmp(big.NewFloat(800)) > 0 { // past the float64 range
		return math.Pow(x, y)
	}
	r, _ := bigExp(l).Float64()
	if x < 0 && math.Mod(y, 2) != 0 {
		r = -r
	}
	return r
}

// Shared with the op packages' tests (internal/opstest).
var (
	numelOf = opstest.NumelOf
	roundTo = opstest.RoundTo
)

// Shared with the op packages' tests (internal/opstest).
var (
	linTensor = opstest.LinTensor
	linRead   = opstest.LinRead
	linRandom = opstest.LinRandom
	wrap      = opstest.Wrap
)
