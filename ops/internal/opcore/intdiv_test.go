package opcore_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/tensor"
)

// The references below mirror NumPy 1.24 (checked once by hand against
// numpy.floor_divide and numpy.remainder over every pair of the special
// values used here, and random ones, per dtype): floats follow
// npy_divmod, integers NumPy's integer loops. The tests compare bit for
// bit, signed zeros included.

// npDivmod is NumPy's npy_divmod in F's precision (float32 for float16
// and float32, as NumPy's loops compute): the floor quotient and the
// remainder with the divisor's sign. math.Mod is C's fmod, exact.
func npDivmod[F float32 | float64](a, b F) (F, F) {
	mod := F(math.Mod(float64(a), float64(b)))
	if b == 0 {
		return a / b, mod
	}
	div := F((a - mod) / b)
	if mod != 0 || mod != mod { // C's if (mod): true for NaN
		if (b < 0) != (mod < 0) {
			mod = F(mod + b)
			div = F(div - 1)
		}
	} else {
		mod = F(math.Copysign(0, float64(b)))
	}
	if div != 0 || div != div {
		fl := F(math.Floor(float64(div)))
		if F(div-fl) > 0.5 {
			fl = F(fl + 1)
		}
		return fl, mod
	}
	return F(math.Copysign(0, float64(a/b))), mod
}

// floorDiv is npDivmod's quotient but where one operand is infinite: there
// the array API standard's preferred floor(a/b) (as NumPy 2), ±inf for
// ±inf // finite and a signed zero for finite // ±inf, where NumPy 1.24
// gives NaN and -1.
func floorDiv[F float32 | float64](a, b F) F {
	ia, ib := math.IsInf(float64(a), 0), math.IsInf(float64(b), 0)
	switch {
	case b != 0 && ia && !ib && b == b:
		return a / b
	case ib && !ia && a == a && a != 0:
		return F(math.Copysign(0, float64(a)*float64(b)))
	}
	d, _ := npDivmod(a, b)
	return d
}

// floorDivFloat and remFloat are the float references for dt.
func floorDivFloat(dt tensor.Dtype) func(a, b float64) float64 {
	if dt == tensor.Float64 {
		return func(a, b float64) float64 { return floorDiv(a, b) }
	}
	return func(a, b float64) float64 { return float64(floorDiv(float32(a), float32(b))) }
}

func remFloat(dt tensor.Dtype) func(a, b float64) float64 {
	if dt == tensor.Float64 {
		return func(a, b float64) float64 { _, m := npDivmod(a, b); return m }
	}
	return func(a, b float64) float64 { _, m := npDivmod(float32(a), float32(b)); return float64(m) }
}

// floorDivInt is NumPy's integer floor_divide on values of dt (uint64 as
// its bit pattern): x // 0 = 0, MIN // -1 wraps to MIN (ref wraps).
func floorDivInt(dt tensor.Dtype, a, b int64) int64 {
	switch {
	case b == 0:
		return 0
	case dt == tensor.Uint64:
		return int64(uint64(a) / uint64(b))
	case b == -1:
		return -a
	}
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// remInt is NumPy's integer remainder: the divisor's sign, x % 0 = 0.
func remInt(dt tensor.Dtype, a, b int64) int64 {
	switch {
	case b == 0:
		return 0
	case dt == tensor.Uint64:
		return int64(uint64(a) % uint64(b))
	}
	r := a % b // Go: MIN % -1 is 0
	if r != 0 && (r < 0) != (b < 0) {
		r += b
	}
	return r
}

// truncDivInt and truncRemInt are C's / and %: the mutation the tests must
// catch.
func truncDivInt(_ tensor.Dtype, a, b int64) int64 {
	if b == 0 || b == -1 {
		return floorDivInt(tensor.Int64, a, b)
	}
	return a / b
}

func truncRemInt(_ tensor.Dtype, a, b int64) int64 {
	if b == 0 {
		return 0
	}
	return a % b
}

type divOp struct {
	name string
	fn   binFn
	f    func(dt tensor.Dtype) func(a, b float64) float64
	g    func(dt tensor.Dtype, a, b int64) int64
}

var divOps = []divOp{
	{"floor_divide", ops.FloorDivide, floorDivFloat, floorDivInt},
	{"remainder", ops.Remainder, remFloat, remInt},
}

// intLimits returns dt's smallest and largest values (uint64's largest as
// its bit pattern, -1).
func intLimits(dt tensor.Dtype) (int64, int64) {
	switch dt {
	case tensor.Int8:
		return math.MinInt8, math.MaxInt8
	case tensor.Int16:
		return math.MinInt16, math.MaxInt16
	case tensor.Int32:
		return math.MinInt32, math.MaxInt32
	case tensor.Int64:
		return math.MinInt64, math.MaxInt64
	case tensor.Uint8:
		return 0, math.MaxUint8
	case tensor.Uint16:
		return 0, math.MaxUint16
	case tensor.Uint32:
		return 0, math.MaxUint32
	}
	return 0, -1
}

// divSpecials are the operands every pair of which is tested: NaN, ±Inf,
// signed zeros, exact multiples, subnormals, and huge over tiny (many
// steps of the exact fmod).
func divSpecials(dt tensor.Dtype) arr {
	if isFloatDt(dt) {
		tiny := math.Float64frombits(1) // float64's smallest subnormal
		big := math.MaxFloat64
		if dt != tensor.Float64 {
			tiny, big = float64(math.Float32frombits(1)), math.MaxFloat32
		}
		if dt == tensor.Float16 {
			tiny, big = 5.960464477539063e-08, 65504
		}
		v := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 1, -1, 2.5, -2.5,
			7, -7, 0.1, -3, 1e30, -1e-30, tiny, -3 * tiny, big, -big, 1e-5, 6}
		return floats(dt, []int{len(v)}, v...)
	}
	lo, hi := intLimits(dt)
	v := []int64{lo, lo + 1, -7, -2, -1, 0, 1, 2, 3, 7, 100, hi - 1, hi}
	return ints(dt, []int{len(v)}, v...)
}

// pairs returns every pair (x, y) of xs's elements as two flat arrays.
func pairs(xs arr) (arr, arr) {
	n := xs.len()
	a, b := arr{dt: xs.dt, shape: []int{n * n}}, arr{dt: xs.dt, shape: []int{n * n}}
	for i := range n {
		for j := range n {
			if xs.f != nil {
				a.f, b.f = append(a.f, xs.f[i]), append(b.f, xs.f[j])
			} else {
				a.i, b.i = append(a.i, xs.i[i]), append(b.i, xs.i[j])
			}
		}
	}
	return a, b
}

// divOperands makes random dividends and divisors of dt: floats in
// [-100, 100] (a third of them integral, so that remainders are zero),
// integers over the whole range or small, with zeros and -1 among the
// divisors.
func divOperands(r *rand.Rand, dt tensor.Dtype, sa, sb []int) (arr, arr) {
	a, b := random(r, dt, sa, 100), random(r, dt, sb, 100)
	for k, x := range []arr{a, b} {
		for i := range x.len() {
			switch {
			case x.f != nil && i%3 == 0:
				x.f[i] = math.Round(x.f[i] / 4)
			case x.i != nil && i%2 == 0:
				x.i[i] = wrapTo(dt, int64(r.IntN(41))-20)
			case x.i != nil && k == 1 && i%7 == 1:
				x.i[i] = wrapTo(dt, -1)
			}
		}
	}
	return a, b
}

// sameBits checks got against want exactly: integers equal, floats the
// same bits (a NaN matches any NaN), so that the sign of zero counts.
func sameBits(t *testing.T, want, got arr, msg string) {
	t.Helper()
	require.Equal(t, want.dt, got.dt, msg)
	require.Equal(t, want.shape, got.shape, msg)
	require.Equal(t, mismatches(want, got), 0, "%s: want %v, got %v", msg, want, got)
}

// mismatches counts the elements where got differs from want, as
// sameBits compares them.
func mismatches(want, got arr) int {
	bad := 0
	for k := range want.i {
		if want.i[k] != got.i[k] {
			bad++
		}
	}
	for k, w := range want.f {
		g := got.f[k]
		if !(math.IsNaN(w) && math.IsNaN(g)) && math.Float64bits(w) != math.Float64bits(g) {
			bad++
		}
	}
	return bad
}

// divRef is op's reference over a0 and a1.
func divRef(op divOp, a0, a1 arr) arr {
	var f func(a, b float64) float64
	if isFloatDt(a0.dt) {
		f = op.f(a0.dt)
	}
	return ref(0, func(v ...float64) float64 { return f(v[0], v[1]) },
		func(v ...int64) int64 { return op.g(a0.dt, v[0], v[1]) }, a0, a1)
}

func checkDiv(t *testing.T, m *vkflow.Manager, op divOp, a0, a1 arr) {
	t.Helper()
	o, err := op.fn(m, a0.upload(t, m), a1.upload(t, m), nil)
	got := run(t, o, err)
	closeOut(t, o)
	sameBits(t, divRef(op, a0, a1), got, fmt.Sprintf("%s %v %v x %v", op.name, a0.dt, a0.shape, a1.shape))
}

func numericDtypes() []tensor.Dtype {
	var dts []tensor.Dtype
	for _, dt := range tensor.Dtypes() {
		if dt != tensor.Bool {
			dts = append(dts, dt)
		}
	}
	return dts
}

// Every numeric dtype: every pair of the special operands, random ones
// (flat, vec4 for 32-bit dtypes), broadcast shapes, 0-d and empty.
func TestFloorDivideRemainder(t *testing.T) {
	m, _ := testutil.Manager(t)
	r := rand.New(rand.NewPCG(5, 1))
	for _, op := range divOps {
		for _, dt := range numericDtypes() {
			t.Run(fmt.Sprintf("%s/%v", op.name, dt), func(t *testing.T) {
				a0, a1 := pairs(divSpecials(dt))
				checkDiv(t, m, op, a0, a1)
				for _, s := range [][2][]int{
					{{1023}, {1023}}, {{4096}, {4096}}, {{3, 1}, {1, 4}}, {{2, 3, 4}, {4}}, {{6, 8}, {8}},
					{{}, {5}}, {{5}, {}}, {{}, {}}, {{0, 3}, {3}}, {{2, 0}, {}},
				} {
					a0, a1 := divOperands(r, dt, s[0], s[1])
					checkDiv(t, m, op, a0, a1)
				}
			})
		}
	}
}

// Values checked against NumPy 1.24, written out, so that a wrong
// reference cannot pass unnoticed; but inf // 1, -1 // inf and 1 // -inf
// are the array API standard's inf, -0 and -0 (NumPy 1.24: NaN, -1, -1).
func TestFloorDivideRemainderNumPy(t *testing.T) {
	m, _ := testutil.Manager(t)
	inf, nan, nz := math.Inf(1), math.NaN(), math.Copysign(0, -1)
	for _, tc := range []struct {
		dt         tensor.Dtype
		a, b       []float64
		floor, rem []float64
	}{
		{tensor.Float32,
			[]float64{inf, nan, 1, -1, 0, nz, 5, -5, 7.5, 1e30, -1, 1, 0, 3, -3, -7, 7, -6, 6},
			[]float64{1, 1, inf, inf, inf, inf, 0, 0, -2, 1e-30, -inf, -inf, 0, nz, nz, 2, -2, 3, -3},
			[]float64{inf, nan, 0, nz, 0, nz, inf, -inf, -4, inf, 0, nz, nan, -inf, inf, -4, -4, -2, -2},
			[]float64{nan, nan, 1, inf, 0, 0, nan, nan, -0.5, float64(float32(8.166816e-31)), -1, -inf, nan, nan, nan, 1, -1, 0, nz}},
		{tensor.Float16, []float64{7, -7, 0.5}, []float64{2, 2, -0.25}, []float64{3, -4, -2}, []float64{1, 1, nz}},
		{tensor.Int8, []float64{-128, -128, 7, -7, 7, -7, 0, 5}, []float64{-1, 0, 2, 2, -2, -2, -3, 0},
			[]float64{-128, 0, 3, -4, -4, 3, 0, 0}, []float64{0, 0, 1, 1, -1, -1, 0, 0}},
		{tensor.Int32, []float64{math.MinInt32, math.MinInt32, -7, 7}, []float64{-1, 0, 2, -2},
			[]float64{math.MinInt32, 0, -4, -4}, []float64{0, 0, 1, -1}},
		{tensor.Int64, []float64{math.MinInt64, -7}, []float64{-1, 2}, []float64{math.MinInt64, -4}, []float64{0, 1}},
		{tensor.Uint8, []float64{7, 5, 0, 255}, []float64{2, 0, 0, 7}, []float64{3, 0, 0, 36}, []float64{1, 0, 0, 3}},
	} {
		t.Run(tc.dt.String(), func(t *testing.T) {
			mk := func(v []float64) arr {
				if isFloatDt(tc.dt) {
					return floats(tc.dt, []int{len(v)}, v...)
				}
				i := make([]int64, len(v))
				for k, x := range v {
					i[k] = int64(x)
				}
				return ints(tc.dt, []int{len(v)}, i...)
			}
			a, b := mk(tc.a), mk(tc.b)
			for k, op := range divOps {
				want := mk([][]float64{tc.floor, tc.rem}[k])
				sameBits(t, want, divRef(op, a, b), op.name+" reference")
				o, err := op.fn(m, a.upload(t, m), b.upload(t, m), nil)
				got := run(t, o, err)
				closeOut(t, o)
				sameBits(t, want, got, op.name)
			}
		})
	}
}

// A mutation check: C's truncating / and % as the reference differ from
// the kernels' results on negative operands, so the comparison can fail.
func TestFloorDivideNotTruncating(t *testing.T) {
	m, _ := testutil.Manager(t)
	a := ints(tensor.Int32, []int{4}, -7, 7, -7, 7)
	b := ints(tensor.Int32, []int{4}, 2, -2, -2, 2)
	for k, op := range divOps {
		o, err := op.fn(m, a.upload(t, m), b.upload(t, m), nil)
		got := run(t, o, err)
		closeOut(t, o)
		sameBits(t, divRef(op, a, b), got, op.name)
		trunc := divRef(divOp{op.name, op.fn, nil, []func(tensor.Dtype, int64, int64) int64{truncDivInt, truncRemInt}[k]}, a, b)
		assert.Equal(t, 2, mismatches(trunc, got), "%s: C's truncating result must differ for mixed signs", op.name)
	}
}

// Floor division and remainder fuse (each helper defined once): a // b *
// b + a % b is a wherever b is nonzero and nothing overflows.
func TestFloorDivideFuse(t *testing.T) {
	m, _ := testutil.Manager(t)
	for _, dt := range []tensor.Dtype{tensor.Int32, tensor.Float64, tensor.Float32} {
		a := random(rand.New(rand.NewPCG(5, 2)), dt, []int{257}, 100)
		b := random(rand.New(rand.NewPCG(5, 3)), dt, []int{257}, 100)
		for i := range b.i {
			a.i[i], b.i[i] = wrapTo(dt, a.i[i]%1000), wrapTo(dt, b.i[i]%50|1)
		}
		ae, be := ops.Input(a.upload(t, m)), ops.Input(b.upload(t, m))
		e := ops.Apply("add", ops.Apply("mul", ops.Apply("floor_divide", ae, be), be), ops.Apply("remainder", ae, be))
		o, err := ops.Fuse(m, e, nil)
		got := run(t, o, err)
		closeOut(t, o)
		want := ref(0, func(v ...float64) float64 {
			d, r := floorDivFloat(dt)(v[0], v[1]), remFloat(dt)(v[0], v[1])
			if dt == tensor.Float32 {
				return float64(float32(float32(d)*float32(v[1])) + float32(r))
			}
			return d*v[1] + r
		}, func(v ...int64) int64 { return floorDivInt(dt, v[0], v[1])*v[1] + remInt(dt, v[0], v[1]) }, a, b)
		sameBits(t, want, got, "fused "+dt.String())
		if dt == tensor.Int32 {
			assert.Equal(t, a.i, got.i)
		}
	}
}

// Bool is not numeric; dtypes must match.
func TestFloorDivideErrors(t *testing.T) {
	m, _ := testutil.Manager(t)
	bl := ints(tensor.Bool, []int{2}, 0, 1).upload(t, m)
	i3 := ints(tensor.Int32, []int{2}, 0, 1).upload(t, m)
	f3 := floats(tensor.Float32, []int{2}, 0, 1).upload(t, m)
	for _, tc := range []struct {
		name string
		f    func() (*ops.Op, error)
		msg  string
	}{
		{"bool", func() (*ops.Op, error) { return ops.FloorDivide(m, bl, bl, nil) }, "dtype bool is not supported"},
		{"remainder bool", func() (*ops.Op, error) { return ops.Remainder(m, bl, bl, nil) }, "dtype bool"},
		{"mixed", func() (*ops.Op, error) { return ops.Remainder(m, i3, f3, nil) }, "int32 and float32"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			op, err := tc.f()
			require.ErrorIs(t, err, vkflow.ErrInvalid)
			assert.Nil(t, op)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}
