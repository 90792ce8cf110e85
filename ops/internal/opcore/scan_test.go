package opcore_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/tensor"
)

var scanDtypes = []tensor.Dtype{tensor.Bool, tensor.Int8, tensor.Int16, tensor.Int32, tensor.Int64,
	tensor.Uint8, tensor.Uint16, tensor.Uint32, tensor.Uint64, tensor.Float16, tensor.Float32, tensor.Float64}

// scanDefault is the standard's default result dtype of a running sum.
func scanDefault(dt tensor.Dtype) tensor.Dtype {
	switch {
	case isFloatDt(dt):
		return dt
	case isUnsignedDt(dt) && dt != tensor.Bool:
		return tensor.Uint64
	}
	return tensor.Int64
}

// scanRef is the running sum (prod) of x along axis in dtype out, x's
// elements converted to out first; floats in float64, integers wrapping.
// mag is, per element, the running sum of |terms| (the float error bound's
// scale).
func scanRef(x arr, axis int, prod, inc bool, out tensor.Dtype) (want arr, mag []float64) {
	n := x.shape[axis]
	inner := numelOf(x.shape[axis+1:])
	outer := numelOf(x.shape[:axis])
	m := n
	if inc {
		m++
	}
	shape := append([]int(nil), x.shape...)
	shape[axis] = m
	want = arr{dt: out, shape: shape}
	size := outer * m * inner
	if isFloatDt(out) {
		want.f = make([]float64, size)
	} else {
		want.i = make([]int64, size)
	}
	mag = make([]float64, size)
	for o := range outer {
		for i := range inner {
			var fs, fm float64
			var is int64
			if prod {
				fs, fm, is = 1, 1, 1
			}
			for k := range m {
				if k >= m-n { // k - (m-n) is the element of x
					j := (o*n+k-(m-n))*inner + i
					var fv float64
					var iv int64
					if x.f != nil {
						fv, iv = x.f[j], int64(x.f[j])
					} else {
						fv, iv = float64(x.i[j]), x.i[j]
					}
					if !isFloatDt(out) {
						iv = wrapTo(out, iv)
					} else {
						fv = roundTo(out, fv)
					}
					if prod {
						fs, fm, is = fs*fv, fm*math.Abs(fv), is*iv
					} else {
						fs, fm, is = fs+fv, fm+math.Abs(fv), is+iv
					}
				}
				e := (o*m+k)*inner + i
				if isFloatDt(out) {
					want.f[e], mag[e] = fs, fm
					if prod { // each product rounds: the error grows with the count
						mag[e] *= float64(k + 1)
					}
				} else {
					want.i[e] = wrapTo(out, is)
				}
			}
		}
	}
	return want, mag
}

// scanCheck compares got with want: integers exactly; floats within
// tol*eps(out)*mag (the tree association's rounding) plus one ulp of the
// final rounding.
func scanCheck(t *testing.T, want, got arr, mag []float64, msg string) {
	t.Helper()
	require.Equal(t, want.dt, got.dt, msg)
	require.Equal(t, want.shape, got.shape, msg)
	if !isFloatDt(want.dt) {
		require.Equal(t, len(want.i), len(got.i), msg)
		if len(want.i) > 0 {
			require.Equal(t, want.i, got.i, msg)
		}
		return
	}
	eps := map[tensor.Dtype]float64{tensor.Float16: 0x1p-10, tensor.Float32: 0x1p-23, tensor.Float64: 0x1p-52}[want.dt]
	acc := eps
	if want.dt == tensor.Float16 {
		acc = 0x1p-23 // float16 accumulates in float32
	}
	bad := 0
	for k := range want.f {
		lim := 40*acc*mag[k] + eps*math.Abs(want.f[k])
		if d := math.Abs(got.f[k] - want.f[k]); !(d <= lim) {
			if bad < 5 {
				t.Errorf("%s: element %d: got %v, want %v (off %g, bound %g)", msg, k, got.f[k], want.f[k], d, lim)
			}
			bad++
		}
	}
	require.Zero(t, bad, "%s: elements off", msg)
}

func runScan(t *testing.T, m ops.Owner, name string, x *tensor.Tensor, at ops.Attrs) arr {
	t.Helper()
	outs, err := ops.Call(context.Background(), m, name, []*tensor.Tensor{x}, nil, at)
	require.NoError(t, err)
	defer func() { _ = outs[0].Close() }()
	return download(t, outs[0])
}

// scanInput makes test data: for prod, values that keep the running
// products finite (floats near ±1, small integers).
func scanInput(r *rand.Rand, dt tensor.Dtype, shape []int, prod bool) arr {
	if !prod || dt == tensor.Bool {
		return random(r, dt, shape, 4)
	}
	n := numelOf(shape)
	if isFloatDt(dt) {
		v := make([]float64, n)
		for i := range v {
			v[i] = (1 + 0.01*(r.Float64()*2-1)) * float64(1-2*(r.IntN(2)))
		}
		return floats(dt, shape, v...)
	}
	v := make([]int64, n)
	for i := range v {
		v[i] = int64(r.IntN(7)) - 3
	}
	return ints(dt, shape, v...)
}

func TestCumulativeScan(t *testing.T) {
	m, _ := testutil.Manager(t)
	r := rand.New(rand.NewPCG(7, 11))
	cases := []struct {
		shape []int
		axis  int
	}{
		{[]int{1}, 0},
		{[]int{7}, 0},
		{[]int{2048}, 0},       // one full block
		{[]int{2049}, 0},       // just over
		{[]int{5000}, -1},      // three blocks: a second level
		{[]int{3, 4100, 2}, 1}, // strided rows crossing blocks
		{[]int{4, 5}, 0},
		{[]int{4, 0}, 1}, // empty
		{[]int{0, 3}, 1}, // no rows
	}
	for _, name := range []string{"cumulative_sum", "cumulative_prod"} {
		prod := name == "cumulative_prod"
		for _, dt := range scanDtypes {
			for _, tc := range cases {
				for _, inc := range []bool{false, true} {
					msg := fmt.Sprintf("%s/%v/%v/axis%d/inc=%v", name, dt, tc.shape, tc.axis, inc)
					x := scanInput(r, dt, tc.shape, prod)
					ax := tc.axis
					if ax < 0 {
						ax += len(tc.shape)
					}
					want, mag := scanRef(x, ax, prod, inc, scanDefault(dt))
					got := runScan(t, m, name, x.upload(t, m), ops.Attrs{Axes: []int{tc.axis}, IncludeInitial: inc})
					scanCheck(t, want, got, mag, msg)
				}
			}
		}
	}
}

// TestCumulativeScanDtype: an explicit result dtype converts each element
// first (integers wrap, float16 accumulates in float32).
func TestCumulativeScanDtype(t *testing.T) {
	m, _ := testutil.Manager(t)
	r := rand.New(rand.NewPCG(3, 5))
	for _, tc := range []struct{ in, out tensor.Dtype }{
		{tensor.Int16, tensor.Int8}, {tensor.Int32, tensor.Float64}, {tensor.Float32, tensor.Float16},
		{tensor.Uint8, tensor.Int32}, {tensor.Bool, tensor.Uint8}, {tensor.Float64, tensor.Float32},
	} {
		for _, name := range []string{"cumulative_sum", "cumulative_prod"} {
			prod := name == "cumulative_prod"
			x := scanInput(r, tc.in, []int{3000}, prod)
			want, mag := scanRef(x, 0, prod, false, tc.out)
			got := runScan(t, m, name, x.upload(t, m), ops.Attrs{Dtype: tc.out})
			scanCheck(t, want, got, mag, fmt.Sprintf("%s/%v->%v", name, tc.in, tc.out))
		}
	}
}

// TestCumulativeScanLong crosses three levels (more than 2048*2048
// elements along the axis).
func TestCumulativeScanLong(t *testing.T) {
	m, _ := testutil.Manager(t)
	n := 2048*2048 + 3001
	x := ints(tensor.Int32, []int{n}, make([]int64, n)...)
	for i := range x.i {
		x.i[i] = int64(i%7) - 3
	}
	want, mag := scanRef(x, 0, false, true, tensor.Int64)
	got := runScan(t, m, "cumulative_sum", x.upload(t, m), ops.Attrs{IncludeInitial: true})
	scanCheck(t, want, got, mag, "long")
}

func TestCumulativeScanErrors(t *testing.T) {
	m, _ := testutil.Manager(t)
	x := floats(tensor.Float32, []int{2, 3}, 1, 2, 3, 4, 5, 6).upload(t, m)
	s := floats(tensor.Float32, []int{}, 1).upload(t, m)
	for _, tc := range []struct {
		in   *tensor.Tensor
		at   ops.Attrs
		want string
	}{
		{x, ops.Attrs{}, "give an axis"},
		{x, ops.Attrs{Axes: []int{2}}, "axis"},
		{x, ops.Attrs{Axes: []int{0, 1}}, "one axis"},
		{x, ops.Attrs{Axes: []int{0}, Dtype: tensor.Bool}, "numeric"},
		{s, ops.Attrs{}, "0-d"},
	} {
		_, err := ops.Call(context.Background(), m, "cumulative_sum", []*tensor.Tensor{tc.in}, nil, tc.at)
		require.ErrorIs(t, err, vkflow.ErrInvalid)
		require.ErrorContains(t, err, tc.want)
	}
}
