package opcore_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/tensor"
)

// specialFloats are the inputs whose results the array API's special-case
// tables fix: signed zeros, infinities, NaN, halves (round's ties) and
// values around 1.
var specialFloats = []float64{
	math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 1, -1, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5,
	0.25, -0.75, 1e-30, -1e-30, 3, -3, 1e20, -1e20, 65504, 1e-5,
}

// boolArr makes a bool arr from f over the elements of x (floats or
// integers).
func boolArr(x arr, f func(v float64, i int64) bool) arr {
	out := arr{dt: tensor.Bool, shape: x.shape}
	for k := range x.len() {
		var v float64
		var i int64
		if x.f != nil {
			v = x.f[k]
		} else {
			i = x.i[k]
			v = float64(i)
		}
		b := int64(0)
		if f(v, i) {
			b = 1
		}
		out.i = append(out.i, b)
	}
	return out
}

func TestClassify(t *testing.T) {
	m, _ := testutil.Manager(t)
	fn := map[string]func(o ops.Owner, x, out *tensor.Tensor) (*ops.Op, error){
		"isnan": ops.IsNaN, "isinf": ops.IsInf, "isfinite": ops.IsFinite, "signbit": ops.Signbit,
	}
	ref := map[string]func(v float64, i int64) bool{
		"isnan":    func(v float64, _ int64) bool { return math.IsNaN(v) },
		"isinf":    func(v float64, _ int64) bool { return math.IsInf(v, 0) },
		"isfinite": func(v float64, _ int64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) },
		"signbit":  func(v float64, _ int64) bool { return math.Signbit(v) },
	}
	negNaN := math.Copysign(math.NaN(), -1)
	for _, dt := range []tensor.Dtype{tensor.Float16, tensor.Float32, tensor.Float64, tensor.Int8, tensor.Int32, tensor.Int64, tensor.Uint16, tensor.Uint64} {
		var x arr
		if isFloatDt(dt) {
			x = floats(dt, []int{len(specialFloats) + 1}, append(slices.Clone(specialFloats), negNaN)...)
		} else {
			x = ints(dt, []int{7}, 0, 1, -1, 127, -128, 1<<40, -(1 << 40))
		}
		for _, name := range []string{"isnan", "isinf", "isfinite", "signbit"} {
			op, err := fn[name](m, x.upload(t, m), nil)
			got := run(t, op, err)
			closeOut(t, op)
			f := ref[name]
			if isUnsignedDt(dt) { // a uint64 holds its bit pattern in arr.i
				f = func(v float64, i int64) bool { return name == "isfinite" }
			}
			sameBits(t, boolArr(x, f), got, fmt.Sprintf("%s %v", name, dt))
		}
	}
}

func TestSignRound(t *testing.T) {
	m, _ := testutil.Manager(t)
	sign := func(v float64) float64 {
		switch {
		case v > 0:
			return 1
		case v < 0:
			return -1
		case v == 0:
			return 0
		}
		return v
	}
	fn := map[string]func(o ops.Owner, x, out *tensor.Tensor) (*ops.Op, error){
		"sign": ops.Sign, "floor": ops.Floor, "ceil": ops.Ceil, "trunc": ops.Trunc, "round": ops.Round,
	}
	ref := map[string]func(float64) float64{
		"sign": sign, "floor": math.Floor, "ceil": math.Ceil, "trunc": math.Trunc, "round": math.RoundToEven,
	}
	r := rand.New(rand.NewPCG(7, 1))
	for _, dt := range []tensor.Dtype{tensor.Float16, tensor.Float32, tensor.Float64} {
		vals := slices.Clone(specialFloats)
		for range 200 {
			vals = append(vals, (r.Float64()*2-1)*1000, math.Round((r.Float64()*2-1)*100)+0.5)
		}
		x := floats(dt, []int{len(vals)}, vals...)
		for name, f := range ref {
			op, err := fn[name](m, x.upload(t, m), nil)
			got := run(t, op, err)
			closeOut(t, op)
			want := arr{dt: dt, shape: x.shape}
			for _, v := range x.f {
				want.f = append(want.f, f(v))
			}
			sameBits(t, want, got, fmt.Sprintf("%s %v", name, dt))
		}
	}
	// Integers: sign gives -1, 0, 1 (unsigned 0, 1); rounding is the
	// identity.
	for _, dt := range []tensor.Dtype{tensor.Int8, tensor.Int64, tensor.Uint8, tensor.Uint32} {
		x := ints(dt, []int{5}, 0, 1, -1, 100, -100)
		for name := range ref {
			op, err := fn[name](m, x.upload(t, m), nil)
			got := run(t, op, err)
			closeOut(t, op)
			want := arr{dt: dt, shape: x.shape}
			for _, v := range x.i {
				if name == "sign" {
					v = int64(sign(float64(v)))
				}
				want.i = append(want.i, v)
			}
			sameBits(t, want, got, fmt.Sprintf("%s %v", name, dt))
		}
	}
	_, err := ops.Floor(m, ints(tensor.Bool, []int{1}, 1).upload(t, m), nil)
	require.ErrorIs(t, err, vkflow.ErrInvalid)
}

// logicalRef is all (and) or any (or) of x != 0 along axes.
func logicalRef(x arr, axes []int, keepDims, and bool) arr {
	rank := len(x.shape)
	var red []int
	if axes == nil {
		for d := range rank {
			red = append(red, d)
		}
	}
	for _, a := range axes {
		red = append(red, (a+rank)%rank)
	}
	var outShape, keep []int
	for d, n := range x.shape {
		switch {
		case !slices.Contains(red, d):
			outShape, keep = append(outShape, n), append(keep, d)
		case keepDims:
			outShape = append(outShape, 1)
		}
	}
	if outShape == nil {
		outShape = []int{}
	}
	nOut := 1
	for _, d := range keep {
		nOut *= x.shape[d]
	}
	res := make([]int64, nOut)
	if and {
		for k := range res {
			res[k] = 1
		}
	}
	for k := range x.len() {
		// the output index of element k: its kept coordinates
		rem, o, stride := k, 0, 1
		coord := make([]int, rank)
		for d := rank - 1; d >= 0; d-- {
			coord[d] = rem % x.shape[d]
			rem /= x.shape[d]
		}
		for j := len(keep) - 1; j >= 0; j-- {
			o += coord[keep[j]] * stride
			stride *= x.shape[keep[j]]
		}
		var nz bool
		if x.f != nil {
			nz = x.f[k] != 0 || math.IsNaN(x.f[k])
		} else {
			nz = x.i[k] != 0
		}
		switch {
		case and && !nz:
			res[o] = 0
		case !and && nz:
			res[o] = 1
		}
	}
	return arr{dt: tensor.Bool, shape: outShape, i: res}
}

func TestAllAny(t *testing.T) {
	m, _ := testutil.Manager(t)
	r := rand.New(rand.NewPCG(7, 2))
	for _, tc := range []struct {
		dt    tensor.Dtype
		shape []int
		axes  []int
		keep  bool
	}{
		{tensor.Bool, []int{}, nil, false},
		{tensor.Bool, []int{0}, nil, false},
		{tensor.Bool, []int{3, 0}, []int{1}, false},
		{tensor.Float32, []int{0, 4}, []int{0}, true},
		{tensor.Bool, []int{5, 7}, nil, false},
		{tensor.Bool, []int{5, 7}, []int{0}, true},
		{tensor.Bool, []int{5, 7}, []int{-1}, false},
		{tensor.Bool, []int{2, 3, 4}, []int{0, 2}, false},
		{tensor.Bool, []int{2, 3, 4}, []int{}, false},
		{tensor.Float16, []int{6, 33}, []int{1}, false},
		{tensor.Float32, []int{40000}, nil, false},
		{tensor.Float32, []int{3, 20000}, []int{1}, true},
		{tensor.Float64, []int{9, 10}, []int{0}, false},
		{tensor.Int8, []int{100, 3}, []int{0}, false},
		{tensor.Int64, []int{8, 8}, nil, true},
		{tensor.Uint32, []int{4, 300}, []int{1}, false},
	} {
		n := numelOf(tc.shape)
		var x arr
		if isFloatDt(tc.dt) {
			v := make([]float64, n)
			for k := range v {
				switch r.IntN(8) {
				case 0:
					v[k] = math.NaN()
				case 1:
					v[k] = math.Copysign(0, -1)
				case 2, 3:
					v[k] = r.Float64() - 0.5
				default:
					v[k] = 0
				}
			}
			x = floats(tc.dt, tc.shape, v...)
		} else {
			v := make([]int64, n)
			for k := range v {
				if r.IntN(20) != 0 {
					v[k] = 1 + int64(r.IntN(3))
				}
			}
			x = ints(tc.dt, tc.shape, v...)
		}
		for _, and := range []bool{true, false} {
			name, f := "any", ops.Any
			if and {
				name, f = "all", ops.All
			}
			msg := fmt.Sprintf("%s %v %v axes %v keep %v", name, tc.dt, tc.shape, tc.axes, tc.keep)
			op, err := f(m, x.upload(t, m), tc.axes, tc.keep, nil)
			require.NoError(t, err, msg)
			t.Cleanup(func() { _ = op.Close(); _ = op.Out().Close() })
			require.NoError(t, op.Run(context.Background()), msg)
			sameBits(t, logicalRef(x, tc.axes, tc.keep, and), download(t, op.Out()), msg)
		}
	}
	// All-true and all-false inputs, through the registry.
	x := ints(tensor.Bool, []int{50000}, make([]int64, 50000)...)
	outs, err := ops.Call(context.Background(), m, "any", []*tensor.Tensor{x.upload(t, m)}, nil, ops.Attrs{})
	require.NoError(t, err)
	sameBits(t, ints(tensor.Bool, []int{}, 0), download(t, outs[0]), "any of zeros")
	require.NoError(t, outs[0].Close())
	_, err = ops.All(m, x.upload(t, m), []int{1}, false, nil)
	require.ErrorIs(t, err, vkflow.ErrInvalid)
}
