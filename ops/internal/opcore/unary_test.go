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

// Unary tolerances, in ULPs of the output dtype, against math's float64
// functions rounded to the dtype: abs, neg, relu and sqrt exact; exp, log
// and sigmoid 2; tanh 4 (it divides expm1(2x) by expm1(2x)+2); float16 1
// for every op (it computes in float32 and rounds once).
type unOp struct {
	name string
	fn   func(o ops.Owner, x, out *tensor.Tensor) (*ops.Op, error)
	f    func(x float64) float64
	g    func(dt tensor.Dtype, x int64) int64
	tol  float64
	lim  float64 // inputs in [-lim, lim]
}

func sigmoid(x float64) float64 {
	if x < 0 {
		e := math.Exp(x)
		return e / (1 + e)
	}
	return 1 / (1 + math.Exp(-x))
}

func relu(x float64) float64 {
	if x < 0 {
		return 0
	}
	return x
}

var unOps = []unOp{
	{"abs", ops.Abs, math.Abs, func(_ tensor.Dtype, x int64) int64 {
		if x < 0 {
			return -x
		}
		return x
	}, 0, 100},
	{"neg", ops.Neg, func(x float64) float64 { return -x }, func(_ tensor.Dtype, x int64) int64 { return -x }, 0, 100},
	{"exp", ops.Exp, math.Exp, nil, 2, 80},
	{"log", ops.Log, math.Log, nil, 2, 1e6},
	{"sqrt", ops.Sqrt, math.Sqrt, nil, 0, 1e6},
	{"tanh", ops.Tanh, math.Tanh, nil, 4, 12},
	{"sigmoid", ops.Sigmoid, sigmoid, nil, 2, 80},
	{"relu", ops.Relu, relu, func(dt tensor.Dtype, x int64) int64 {
		if x < 0 && !isUnsignedDt(dt) {
			return 0
		}
		return x
	}, 0, 100},
}

func unOpNamed(name string) unOp {
	for _, u := range unOps {
		if u.name == name {
			return u
		}
	}
	panic(name)
}

// unaryInput makes n inputs for u over dt: random in [-lim, lim] (log and
// sqrt: mostly positive), values near 0, and NaN, ±Inf and ±0.
func unaryInput(r *rand.Rand, u unOp, dt tensor.Dtype, shape []int) arr {
	lim := u.lim
	if dt == tensor.Float16 {
		lim = min(lim, 10)
	}
	x := random(r, dt, shape, lim)
	if !isFloatDt(dt) {
		return x
	}
	for i := range x.f {
		switch {
		case (u.name == "log" || u.name == "sqrt") && i%7 != 0:
			x.f[i] = math.Abs(x.f[i])
		case i%5 == 1:
			x.f[i] = roundTo(dt, x.f[i]*1e-4) // near 0
		}
	}
	specials := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 1, -1, 0.5, 1e-7}
	if len(x.f) > 3*len(specials) {
		for i, s := range specials {
			x.f[3*i] = roundTo(dt, s)
		}
	}
	return x
}

func checkUnary(t *testing.T, m *vkflow.Manager, u unOp, x arr) {
	t.Helper()
	want := ref(0, func(v ...float64) float64 { return u.f(v[0]) }, func(v ...int64) int64 { return u.g(x.dt, v[0]) }, x)
	op, err := u.fn(m, x.upload(t, m), nil)
	got := run(t, op, err)
	closeOut(t, op)
	same(t, want, got, tolFor(x.dt, u.tol), fmt.Sprintf("%s %v %v", u.name, x.dt, x.shape))
}

func TestUnaryFloat32(t *testing.T) {
	m, _ := testutil.Manager(t)
	r := rand.New(rand.NewPCG(2, 1))
	for _, u := range unOps {
		t.Run(u.name, func(t *testing.T) {
			for _, shape := range [][]int{{}, {1}, {3}, {1023}, {4096}} {
				checkUnary(t, m, u, unaryInput(r, u, tensor.Float32, shape))
			}
		})
	}
}

func TestUnaryDtypes(t *testing.T) {
	m, _ := testutil.Manager(t)
	r := rand.New(rand.NewPCG(2, 2))
	for _, tc := range []struct {
		dt  tensor.Dtype
		ops []string
	}{
		{tensor.Float16, []string{"exp", "log", "tanh", "sigmoid", "relu"}},
		{tensor.Float64, []string{"abs", "exp", "log", "sqrt", "tanh", "sigmoid"}},
		{tensor.Int8, []string{"abs", "neg", "relu"}},
		{tensor.Int64, []string{"abs", "relu"}},
		{tensor.Uint8, []string{"neg", "relu"}},
		{tensor.Uint32, []string{"abs"}},
	} {
		for _, name := range tc.ops {
			t.Run(fmt.Sprintf("%s/%v", name, tc.dt), func(t *testing.T) {
				checkUnary(t, m, unOpNamed(name), unaryInput(r, unOpNamed(name), tc.dt, []int{1031}))
			})
		}
	}
	// The most negative integer: abs and neg wrap, as in NumPy.
	x := ints(tensor.Int8, []int{3}, -128, -127, 127)
	checkUnary(t, m, unOpNamed("abs"), x)
	checkUnary(t, m, unOpNamed("neg"), x)
}

func TestWhere(t *testing.T) {
	m, _ := testutil.Manager(t)
	r := rand.New(rand.NewPCG(2, 3))
	pick := func(v ...float64) float64 {
		if v[0] != 0 {
			return v[1]
		}
		return v[2]
	}
	ipick := func(v ...int64) int64 {
		if v[0] != 0 {
			return v[1]
		}
		return v[2]
	}
	for _, tc := range []struct {
		dt         tensor.Dtype
		sc, sa, sb []int
		name       string
	}{
		{tensor.Float32, []int{3, 1}, []int{1, 4}, []int{}, "broadcast"},
		{tensor.Float32, []int{1023}, []int{1023}, []int{1023}, "flat"},
		{tensor.Int64, []int{2, 3}, []int{3}, []int{2, 1}, "int64"},
		{tensor.Bool, []int{5}, []int{5}, []int{}, "bool"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := random(r, tensor.Bool, tc.sc, 0)
			a, b := random(r, tc.dt, tc.sa, 10), random(r, tc.dt, tc.sb, 10)
			want := ref(tc.dt, pick, ipick, c, a, b)
			op, err := ops.Where(m, c.upload(t, m), a.upload(t, m), b.upload(t, m), nil)
			got := run(t, op, err)
			closeOut(t, op)
			same(t, want, got, 0, tc.name)
		})
	}
}

func TestClip(t *testing.T) {
	m, _ := testutil.Manager(t)
	f := func(v float64) *float64 { return &v }
	clip := func(x float64, lo, hi *float64) float64 {
		if lo != nil {
			x = math.Max(x, *lo)
		}
		if hi != nil {
			x = math.Min(x, *hi)
		}
		return x
	}
	xf := floats(tensor.Float32, []int{9}, math.NaN(), math.Inf(-1), math.Inf(1), -3, -0.5, 0, 0.5, 2, 7)
	for _, tc := range []struct {
		name   string
		x      arr
		lo, hi *float64
	}{
		{"both", xf, f(-1), f(1)},
		{"lo only", xf, f(0), nil},
		{"hi only", xf, nil, f(0.25)},
		{"none", xf, nil, nil},
		{"lo > hi gives hi", xf, f(3), f(-2)},
		{"float16", floats(tensor.Float16, []int{4}, math.NaN(), -70000, 3, 1e4), f(-2), f(1e10)},
		{"int8", ints(tensor.Int8, []int{5}, -128, -5, 0, 5, 127), f(-100), f(3)},
		{"uint64", ints(tensor.Uint64, []int{3}, 0, 1<<40, -1), f(5), f(1 << 50)},
		{"int64 0-d", ints(tensor.Int64, []int{}, -9), f(-3), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := ref(0, func(v ...float64) float64 { return clip(v[0], tc.lo, tc.hi) }, nil, tc.x)
			if !isFloatDt(tc.x.dt) {
				want = tc.x
				want.i = append([]int64(nil), tc.x.i...)
				for i, v := range want.i {
					if tc.lo != nil && ltInt(tc.x.dt, v, int64(*tc.lo)) {
						v = int64(*tc.lo)
					}
					if tc.hi != nil && ltInt(tc.x.dt, int64(uint64(*tc.hi)), v) {
						v = int64(uint64(*tc.hi))
					}
					want.i[i] = v
				}
			}
			op, err := ops.Clip(m, tc.x.upload(t, m), tc.lo, tc.hi, nil)
			got := run(t, op, err)
			closeOut(t, op)
			same(t, want, got, 0, tc.name)
		})
	}
	// The registry reads Attrs.Min and Attrs.Max.
	x := xf.upload(t, m)
	outs, err := ops.Call(t.Context(), m, "clip", []*tensor.Tensor{x}, nil, ops.Attrs{Min: f(-1), Max: f(1)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = outs[0].Close() })
	same(t, ref(0, func(v ...float64) float64 { return clip(v[0], f(-1), f(1)) }, nil, xf), download(t, outs[0]), 0)

	// Bounds x's dtype cannot hold are errors.
	xi := ints(tensor.Int8, []int{2}, 1, 2).upload(t, m)
	for _, tc := range []struct {
		name   string
		x      *tensor.Tensor
		lo, hi *float64
		msg    string
	}{
		{"out of range", xi, f(-1), f(300), "300 is not representable in int8"},
		{"fraction", xi, f(1.5), nil, "1.5 is not representable in int8"},
		{"NaN", x, f(math.NaN()), nil, "lo bound is NaN"},
		{"bool", ints(tensor.Bool, []int{1}, 1).upload(t, m), f(0), nil, "bool"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ops.Clip(m, tc.x, tc.lo, tc.hi, nil)
			require.ErrorIs(t, err, vkflow.ErrInvalid)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}
