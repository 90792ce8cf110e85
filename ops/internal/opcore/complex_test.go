package opcore_test

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/tensor"
)

var cxDtypes = []tensor.Dtype{tensor.Complex64, tensor.Complex128}

// cxDivRef is a/b as Go computes it (Smith's algorithm with C99's
// recovery of infinities), for complex64 in complex128 then rounded.
func cxDivRef(a, b complex128) complex128 { return a / b }

// TestComplexBinary checks add, sub, mul and div of complex64 and
// complex128 against Go's complex128 arithmetic (complex64: computed in
// complex128 and rounded), over random values and every pair of special
// parts (signed zeros, ±Inf, NaN, the range's extremes).
func TestComplexBinary(t *testing.T) {
	m, _ := testutil.Manager(t)
	r := rand.New(rand.NewPCG(5, 1))
	for _, tc := range []struct {
		name string
		fn   func(o ops.Owner, a, b, out *tensor.Tensor) (*ops.Op, error)
		f    func(a, b complex128) complex128
		// scale is the error's scale for a and b (cancellation in a
		// part is relative to it), tol its multiple of eps.
		scale func(a, b complex128) float64
		tol   float64
	}{
		{"add", ops.Add, func(a, b complex128) complex128 { return a + b }, nil, 0.5},
		{"sub", ops.Sub, func(a, b complex128) complex128 { return a - b }, nil, 0.5},
		{"mul", ops.Mul, func(a, b complex128) complex128 { return a * b },
			func(a, b complex128) float64 { return cmplx.Abs(a) * cmplx.Abs(b) }, 3},
		{"div", ops.Div, cxDivRef,
			func(a, b complex128) float64 { return cmplx.Abs(a) / cmplx.Abs(b) }, 6},
	} {
		for _, dt := range cxDtypes {
			t.Run(fmt.Sprintf("%s/%v", tc.name, dt), func(t *testing.T) {
				a := cxInputs(r, dt, 300, 100)
				b := cxInputs(r, dt, 300, 100)
				// Every value of special parts against every other.
				sp := append([]complex128(nil), a[300:]...)
				for _, x := range sp {
					for _, y := range sp {
						a, b = append(a, x), append(b, y)
					}
				}
				want := make([]complex128, len(a))
				var scale []float64
				if tc.scale != nil {
					scale = make([]float64, len(a))
				}
				for i := range a {
					want[i] = cxRound(dt, tc.f(a[i], b[i]))
					if scale != nil {
						s := tc.scale(a[i], b[i])
						if math.IsNaN(s) {
							s = math.Inf(1) // exactly as Go
						}
						scale[i] = s
					}
				}
				op, err := tc.fn(m, cxUpload(t, m, dt, a), cxUpload(t, m, dt, b), nil)
				got, y := runOp(t, op, err)
				require.Equal(t, dt, y.Dtype())
				cxSame(t, dt, want, got, scale, tc.tol, tc.name)
			})
		}
	}
}

// TestComplexDivScaled shows the division does not overflow or underflow
// where the quotient is in range: a naive (ac+bd)/(c²+d²) gives NaN or 0
// for each of these.
func TestComplexDivScaled(t *testing.T) {
	m, _ := testutil.Manager(t)
	for _, dt := range cxDtypes {
		big, small := 1e300, 1e-300
		if dt == tensor.Complex64 {
			big, small = 1e30, 1e-30
		}
		a := []complex128{complex(big, big), complex(small, small), complex(big, -big), complex(1, 1), complex(3, 4)}
		b := []complex128{complex(2*big, 2*big), complex(small, 2*small), complex(0.5*big, 0), complex(big, big), complex(0, 0)}
		want := []complex128{0.5, complex(0.6, -0.2), complex(2, -2), complex(1/big, 0), complex(math.Inf(1), math.Inf(1))}
		op, err := ops.Div(m, cxUpload(t, m, dt, a), cxUpload(t, m, dt, b), nil)
		got, _ := runOp(t, op, err)
		cxSame(t, dt, want, got, nil, 4, fmt.Sprintf("div %v", dt))
	}
}

// TestComplexUnary checks neg, conj, round, square, abs, sign, real and imag,
// signed zeros included (neg and conj flip sign bits exactly).
func TestComplexUnary(t *testing.T) {
	m, _ := testutil.Manager(t)
	r := rand.New(rand.NewPCG(5, 2))
	nan := math.NaN()
	for _, tc := range []struct {
		name  string
		fn    func(o ops.Owner, x, out *tensor.Tensor) (*ops.Op, error)
		f     func(x complex128) complex128
		real  bool // the result has the real dtype
		tol   float64
		scale func(x complex128) float64
	}{
		{"neg", ops.Neg, func(x complex128) complex128 { return -x }, false, 0, nil},
		{"conj", ops.Conj, cmplx.Conj, false, 0, nil},
		{"round", ops.Round, func(x complex128) complex128 {
			return complex(math.RoundToEven(real(x)), math.RoundToEven(imag(x)))
		}, false, 0, nil},
		{"square", ops.Square, func(x complex128) complex128 { return x * x }, false, 3,
			func(x complex128) float64 { return cmplx.Abs(x) * cmplx.Abs(x) }},
		{"abs", ops.Abs, func(x complex128) complex128 { return complex(math.Hypot(real(x), imag(x)), 0) }, true, 3, nil},
		{"real", ops.Real, func(x complex128) complex128 { return complex(real(x), 0) }, true, 0, nil},
		{"imag", ops.Imag, func(x complex128) complex128 { return complex(imag(x), 0) }, true, 0, nil},
		{"sign", ops.Sign, func(x complex128) complex128 {
			switch {
			case math.IsNaN(real(x)) || math.IsNaN(imag(x)):
				return complex(nan, nan)
			case x == 0:
				return 0
			}
			h := math.Hypot(real(x), imag(x))
			return complex(real(x)/h, imag(x)/h)
		}, false, 4, func(complex128) float64 { return 1 }},
	} {
		for _, dt := range cxDtypes {
			t.Run(fmt.Sprintf("%s/%v", tc.name, dt), func(t *testing.T) {
				x := cxInputs(r, dt, 500, 1e3)
				if tc.name == "abs" {
					// No overflow where |x| is in range.
					x = append(x, complex(cxSpecials(dt)[7], cxSpecials(dt)[7]), complex(3e38, 1e38))
				}
				want := make([]complex128, len(x))
				var scale []float64
				if tc.scale != nil {
					scale = make([]float64, len(x))
				}
				for i, v := range x {
					want[i] = cxRound(dt, tc.f(v))
					if scale != nil {
						scale[i] = tc.scale(v)
					}
				}
				op, err := tc.fn(m, cxUpload(t, m, dt, x), nil)
				got, y := runOp(t, op, err)
				if tc.real {
					require.Equal(t, dt.Real(), y.Dtype())
				} else {
					require.Equal(t, dt, y.Dtype())
				}
				cxSame(t, dt, want, got, scale, tc.tol, tc.name)
				if tc.tol == 0 {
					for i := range want {
						if !math.IsNaN(real(want[i])) && !math.IsNaN(imag(want[i])) && signbits(want[i]) != signbits(got[i]) {
							t.Errorf("%s %v: element %d: sign bits of %v, want those of %v", tc.name, dt, i, got[i], want[i])
						}
					}
				}
			})
		}
	}
}

// TestComplexClassify checks isnan, isinf and isfinite by the array API's
// rules for complex numbers, and equal and not_equal.
func TestComplexClassify(t *testing.T) {
	m, _ := testutil.Manager(t)
	r := rand.New(rand.NewPCG(5, 3))
	b2c := func(b bool) complex128 {
		if b {
			return 1
		}
		return 0
	}
	for _, dt := range cxDtypes {
		x := cxInputs(r, dt, 20, 10)
		y := append([]complex128(nil), x...)
		for i := range y {
			if i%3 == 0 {
				y[i] = complex(real(y[i]), imag(y[i])+1)
			}
		}
		for _, tc := range []struct {
			name string
			fn   func(o ops.Owner, x, out *tensor.Tensor) (*ops.Op, error)
			f    func(x complex128) bool
		}{
			{"isnan", ops.IsNaN, func(v complex128) bool { return math.IsNaN(real(v)) || math.IsNaN(imag(v)) }},
			{"isinf", ops.IsInf, func(v complex128) bool { return math.IsInf(real(v), 0) || math.IsInf(imag(v), 0) }},
			{"isfinite", ops.IsFinite, func(v complex128) bool {
				fin := func(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
				return fin(real(v)) && fin(imag(v))
			}},
		} {
			want := make([]complex128, len(x))
			for i, v := range x {
				want[i] = b2c(tc.f(v))
			}
			op, err := tc.fn(m, cxUpload(t, m, dt, x), nil)
			got, _ := runOp(t, op, err)
			require.Equal(t, want, got, "%s %v", tc.name, dt)
		}
		for _, tc := range []struct {
			name string
			fn   func(o ops.Owner, a, b, out *tensor.Tensor) (*ops.Op, error)
			not  bool
		}{{"equal", ops.Equal, false}, {"not_equal", ops.NotEqual, true}} {
			want := make([]complex128, len(x))
			for i := range x {
				want[i] = b2c((x[i] == y[i]) != tc.not)
			}
			op, err := tc.fn(m, cxUpload(t, m, dt, x), cxUpload(t, m, dt, y), nil)
			got, _ := runOp(t, op, err)
			require.Equal(t, want, got, "%s %v", tc.name, dt)
		}
	}
}

// TestComplexCastPromote checks casts to and between complex dtypes, the
// refusal of complex to real, and mixed-dtype arithmetic by the array API's
// promotion.
func TestComplexCastPromote(t *testing.T) {
	m, _ := testutil.Manager(t)
	f32, err := tensor.FromSlice(m, []float32{1.5, -0, float32(math.Inf(-1)), 3e38})
	require.NoError(t, err)
	defer f32.Close()
	i32, err := tensor.FromSlice(m, []int32{-7, 0, 1 << 30, 5})
	require.NoError(t, err)
	defer i32.Close()
	bl, err := tensor.FromSlice(m, []bool{true, false, true, false})
	require.NoError(t, err)
	defer bl.Close()
	for _, dt := range cxDtypes {
		for _, tc := range []struct {
			x    *tensor.Tensor
			want []complex128
		}{
			{f32, []complex128{1.5, 0, complex(math.Inf(-1), 0), complex(float64(float32(3e38)), 0)}},
			{i32, []complex128{-7, 0, 1 << 30, 5}},
			{bl, []complex128{1, 0, 1, 0}},
		} {
			op, err := ops.Cast(m, tc.x, dt, nil)
			got, _ := runOp(t, op, err)
			require.Equal(t, tc.want, got, "cast %v to %v", tc.x.Dtype(), dt)
			for _, v := range got {
				require.False(t, math.Signbit(imag(v)), "imaginary part +0")
			}
		}
	}
	c := []complex128{complex(1.25, -2), complex(1e300, 1e-300), 0, complex(0, math.NaN())}
	x128 := cxUpload(t, m, tensor.Complex128, c)
	op, err := ops.Cast(m, x128, tensor.Complex64, nil)
	got, _ := runOp(t, op, err)
	want := make([]complex128, len(c))
	for i, v := range c {
		want[i] = cxRound(tensor.Complex64, v)
	}
	cxSame(t, tensor.Complex64, want, got, nil, 0, "complex128 to complex64")
	op, err = ops.Cast(m, x128, tensor.Bool, nil)
	got, _ = runOp(t, op, err)
	require.Equal(t, []complex128{1, 1, 0, 1}, got, "complex to bool")

	_, err = ops.Cast(m, x128, tensor.Float64, nil)
	require.ErrorIs(t, err, core.ErrInvalid)
	require.ErrorContains(t, err, "take real or abs first")

	for _, tc := range []struct {
		a, b, want tensor.Dtype
		ok         bool
	}{
		{tensor.Complex64, tensor.Complex128, tensor.Complex128, true},
		{tensor.Float32, tensor.Complex64, tensor.Complex64, true},
		{tensor.Float16, tensor.Complex64, tensor.Complex64, true},
		{tensor.Float64, tensor.Complex64, tensor.Complex128, true},
		{tensor.Complex128, tensor.Float32, tensor.Complex128, true},
		{tensor.Int32, tensor.Complex64, 0, false},
		{tensor.Complex128, tensor.Bool, 0, false},
	} {
		got, ok := ops.ResultType(tc.a, tc.b)
		require.Equal(t, tc.ok, ok, "%v with %v", tc.a, tc.b)
		require.Equal(t, tc.want, got, "%v with %v", tc.a, tc.b)
	}

	// float32 + complex128, computed in complex128 in one kernel.
	x := cxUpload(t, m, tensor.Complex128, []complex128{complex(1, 2), complex(-1, 0.5), 0, complex(4, math.Inf(1))})
	op, err = ops.Add(m, f32, x, nil)
	got, y := runOp(t, op, err)
	require.Equal(t, tensor.Complex128, y.Dtype())
	require.Equal(t, []complex128{complex(2.5, 2), complex(-1, 0.5), complex(math.Inf(-1), 0), complex(float64(float32(3e38))+4, math.Inf(1))}, got)
	_, err = ops.Add(m, i32, x, nil)
	require.ErrorIs(t, err, core.ErrInvalid)
	_, err = ops.Less(m, x, x, nil)
	require.ErrorIs(t, err, core.ErrInvalid)
	_, err = ops.Maximum(m, x, x, nil)
	require.ErrorIs(t, err, core.ErrInvalid)
	_, err = ops.Floor(m, x, nil)
	require.ErrorIs(t, err, core.ErrInvalid)

	// where over complex64 and float32: complex64.
	cond, err := tensor.FromSlice(m, []bool{true, false, false, true})
	require.NoError(t, err)
	defer cond.Close()
	x64 := cxUpload(t, m, tensor.Complex64, []complex128{complex(1, 2), complex(3, 4), complex(5, 6), complex(7, 8)})
	op, err = ops.Where(m, cond, x64, f32, nil)
	got, y = runOp(t, op, err)
	require.Equal(t, tensor.Complex64, y.Dtype())
	require.Equal(t, []complex128{complex(1, 2), 0, complex(math.Inf(-1), 0), complex(7, 8)}, got)
}
