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

// stdPromotion is the array API standard's promotion table, written
// independently of ops.ResultType: within a kind the wider dtype; a
// signed and an unsigned integer promote to the narrowest signed dtype at
// least as wide as the signed one and wider than the unsigned one.
func stdPromotion(a, b tensor.Dtype) (tensor.Dtype, bool) {
	kind := func(dt tensor.Dtype) string {
		switch {
		case dt == tensor.Bool:
			return "bool"
		case isFloatDt(dt):
			return "float"
		case isUnsignedDt(dt):
			return "uint"
		}
		return "int"
	}
	ka, kb := kind(a), kind(b)
	switch {
	case a == b:
		return a, true
	case ka == kb:
		if a.Size() > b.Size() {
			return a, true
		}
		return b, true
	case ka == "uint" && kb == "int", ka == "int" && kb == "uint":
		s, u := a, b
		if ka == "uint" {
			s, u = b, a
		}
		for _, c := range []tensor.Dtype{tensor.Int8, tensor.Int16, tensor.Int32, tensor.Int64} {
			if c.Size() >= s.Size() && c.Size() > u.Size() {
				return c, true
			}
		}
	}
	return 0, false
}

func TestPromotionTable(t *testing.T) {
	// Spot checks from the standard's table.
	for _, tc := range []struct {
		a, b, want tensor.Dtype
		ok         bool
	}{
		{tensor.Int8, tensor.Uint8, tensor.Int16, true},
		{tensor.Uint8, tensor.Int8, tensor.Int16, true},
		{tensor.Uint16, tensor.Int16, tensor.Int32, true},
		{tensor.Uint32, tensor.Int8, tensor.Int64, true},
		{tensor.Int64, tensor.Uint32, tensor.Int64, true},
		{tensor.Int32, tensor.Uint8, tensor.Int32, true},
		{tensor.Uint8, tensor.Uint64, tensor.Uint64, true},
		{tensor.Int16, tensor.Int64, tensor.Int64, true},
		{tensor.Float16, tensor.Float32, tensor.Float32, true},
		{tensor.Float64, tensor.Float16, tensor.Float64, true},
		{tensor.Bool, tensor.Bool, tensor.Bool, true},
		{tensor.Uint64, tensor.Int64, 0, false},
		{tensor.Int8, tensor.Uint64, 0, false},
		{tensor.Int32, tensor.Float32, 0, false},
		{tensor.Float16, tensor.Uint8, 0, false},
		{tensor.Bool, tensor.Int8, 0, false},
		{tensor.Float32, tensor.Bool, 0, false},
	} {
		got, ok := ops.ResultType(tc.a, tc.b)
		assert.Equal(t, tc.ok, ok, "%v %v", tc.a, tc.b)
		assert.Equal(t, tc.want, got, "%v %v", tc.a, tc.b)
	}
	for _, a := range tensor.Dtypes() {
		for _, b := range tensor.Dtypes() {
			want, wok := stdPromotion(a, b)
			got, ok := ops.ResultType(a, b)
			assert.Equal(t, wok, ok, "%v %v", a, b)
			assert.Equal(t, want, got, "%v %v", a, b)
		}
	}
}

// promoOp is an op of the promotion test, with its host references on
// the promoted dtype.
type promoOp struct {
	name  string
	fn    binFn
	isCmp bool
	takes func(dt tensor.Dtype) bool
	f     func(x, y float64) float64
	g     func(dt tensor.Dtype, x, y int64) int64
}

var promoOps = []promoOp{
	{"add", ops.Add, false, func(dt tensor.Dtype) bool { return dt != tensor.Bool },
		binOpNamed("add").f, binOpNamed("add").g},
	{"mul", ops.Mul, false, func(dt tensor.Dtype) bool { return dt != tensor.Bool },
		binOpNamed("mul").f, binOpNamed("mul").g},
	{"maximum", ops.Maximum, false, func(dt tensor.Dtype) bool { return dt != tensor.Bool },
		binOpNamed("maximum").f, binOpNamed("maximum").g},
	{"equal", ops.Equal, true, func(tensor.Dtype) bool { return true },
		func(x, y float64) float64 { return b2f(x == y) },
		func(_ tensor.Dtype, x, y int64) int64 { return int64(b2f(x == y)) }},
	{"bitwise_and", ops.BitwiseAnd, false, func(dt tensor.Dtype) bool { return !isFloatDt(dt) },
		nil, func(_ tensor.Dtype, x, y int64) int64 { return x & y }},
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// as converts x to dt on the host: every promotion is value-preserving,
// so this only relabels (and checks that).
func as(t *testing.T, x arr, dt tensor.Dtype) arr {
	t.Helper()
	if isFloatDt(dt) {
		y := floats(dt, x.shape, x.f...)
		require.Equal(t, x.f, y.f, "%v to %v must be exact", x.dt, dt)
		return y
	}
	y := ints(dt, x.shape, x.i...)
	if dt == tensor.Uint64 || x.dt != tensor.Uint64 {
		require.Equal(t, x.i, y.i, "%v to %v must be exact", x.dt, dt)
	}
	return y
}

// TestPromotion runs add, multiply, maximum, equal and bitwise_and over
// every pair of dtypes: a pair with a promotion computes as the host does
// on inputs converted to the promoted dtype, and gives that dtype (bool
// for equal); a pair without one, or a promoted dtype the op refuses, is
// ErrInvalid naming the dtypes.
func TestPromotion(t *testing.T) {
	m, _ := testutil.Manager(t)
	r := rand.New(rand.NewPCG(23, 5))
	dts := tensor.Dtypes()
	require.Len(t, dts, 12) // 11 numeric dtypes and bool
	for _, p := range promoOps {
		t.Run(p.name, func(t *testing.T) {
			for _, da := range dts {
				for _, db := range dts {
					msg := fmt.Sprintf("%s(%v, %v)", p.name, da, db)
					// Strided (a [2, 3] with b [3]) and flat layouts.
					sa, sb := []int{2, 3}, []int{3}
					if (da+db)%2 == 0 {
						sa, sb = []int{5}, []int{5}
					}
					a, b := random(r, da, sa, 100), random(r, db, sb, 100)
					if p.name == "equal" && len(a.i) == len(b.i) && len(a.i) > 0 {
						b.i[1] = wrapTo(db, a.i[1]) // some equal pairs
					}
					ta, tb := a.upload(t, m), b.upload(t, m)
					op, err := p.fn(m, ta, tb, nil)
					pd, ok := stdPromotion(da, db)
					if !ok {
						require.ErrorIs(t, err, vkflow.ErrInvalid, msg)
						require.ErrorContains(t, err, fmt.Sprintf("%v and %v", da, db), msg)
						require.ErrorContains(t, err, "no promotion", msg)
						continue
					}
					if !p.takes(pd) {
						require.ErrorIs(t, err, vkflow.ErrInvalid, msg)
						require.ErrorContains(t, err, "not supported", msg)
						continue
					}
					outDt := pd
					if p.isCmp {
						outDt = tensor.Bool
					}
					var f func(v ...float64) float64
					if p.f != nil {
						f = func(v ...float64) float64 { return p.f(v[0], v[1]) }
					}
					g := func(v ...int64) int64 { return p.g(pd, v[0], v[1]) }
					want := ref(outDt, f, g, as(t, a, pd), as(t, b, pd))
					got := run(t, op, err)
					closeOut(t, op)
					require.Equal(t, 1, op.Dispatches(), "%s: the conversion is in the op's kernel", msg)
					same(t, want, got, tolFor(pd, tolExact), msg)
				}
			}
		})
	}
}

// TestPromotionWhere checks Where's a and b promote (cond stays bool).
func TestPromotionWhere(t *testing.T) {
	m, _ := testutil.Manager(t)
	cond := ints(tensor.Bool, []int{4}, 1, 0, 1, 0)
	for _, tc := range []struct {
		a, b arr
		want arr
	}{
		{ints(tensor.Int8, []int{4}, -1, -2, -3, -4), ints(tensor.Uint8, []int{4}, 200, 201, 202, 203),
			ints(tensor.Int16, []int{4}, -1, 201, -3, 203)},
		{ints(tensor.Uint32, []int{4}, 1<<32-1, 0, 7, 0), ints(tensor.Int32, []int{1}, -5),
			ints(tensor.Int64, []int{4}, 1<<32-1, -5, 7, -5)},
		{floats(tensor.Float16, []int{4}, 0.5, 0.5, 0.5, 0.5), floats(tensor.Float64, []int{4}, 1e300, math.Pi, 0, 1.0/3),
			floats(tensor.Float64, []int{4}, 0.5, math.Pi, 0.5, 1.0/3)},
	} {
		op, err := ops.Where(m, cond.upload(t, m), tc.a.upload(t, m), tc.b.upload(t, m), nil)
		got := run(t, op, err)
		closeOut(t, op)
		same(t, tc.want, got, 0, fmt.Sprintf("where(%v, %v)", tc.a.dt, tc.b.dt))
	}
	_, err := ops.Where(m, cond.upload(t, m), ints(tensor.Uint64, []int{4}, 1, 2, 3, 4).upload(t, m),
		ints(tensor.Int64, []int{1}, 1).upload(t, m), nil)
	require.ErrorIs(t, err, vkflow.ErrInvalid)
	require.ErrorContains(t, err, "uint64 and int64")
}
