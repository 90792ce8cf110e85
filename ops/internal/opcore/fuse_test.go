package opcore_test

import (
	"context"
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

// stepper returns a function that runs an op as soon as it is built and
// returns it; the op and its output are closed when the test ends.
func stepper(t *testing.T) func(*ops.Op, error) *ops.Op {
	return func(op *ops.Op, err error) *ops.Op {
		t.Helper()
		require.NoError(t, err)
		t.Cleanup(func() { _ = op.Close(); _ = op.Out().Close() })
		require.NoError(t, op.Run(context.Background()))
		return op
	}
}

// A fused expression computes exactly what the chain of ops computes, in
// one dispatch: each step rounds (float16) or wraps (int8) as the op
// would store it.
func TestFuse(t *testing.T) {
	m, _ := testutil.Manager(t)
	r := rand.New(rand.NewPCG(4, 1))
	fuse := func(t *testing.T, e ops.Expr) arr {
		op, err := ops.Fuse(m, e, nil)
		require.NoError(t, err)
		assert.Equal(t, 1, op.Dispatches())
		got := run(t, op, err)
		closeOut(t, op)
		return got
	}

	t.Run("sigmoid(a*w+b) float32", func(t *testing.T) {
		a := random(r, tensor.Float32, []int{3, 4}, 5).upload(t, m)
		w := random(r, tensor.Float32, []int{4}, 5).upload(t, m)
		b := random(r, tensor.Float32, []int{}, 5).upload(t, m)
		step := stepper(t)
		mul := step(ops.Mul(m, a, w, nil))
		add := step(ops.Add(m, mul.Out(), b, nil))
		want := step(ops.Sigmoid(m, add.Out(), nil))
		got := fuse(t, ops.Apply("sigmoid", ops.Apply("add", ops.Apply("mul", ops.Input(a), ops.Input(w)), ops.Input(b))))
		same(t, download(t, want.Out()), got, 0)
	})

	t.Run("exp(x)*2-x float16", func(t *testing.T) {
		xa := random(r, tensor.Float16, []int{1027}, 6)
		xa.f[0], xa.f[1] = math.NaN(), math.Inf(1)
		x := xa.upload(t, m)
		two := floats(tensor.Float16, []int{}, 2).upload(t, m)
		step := stepper(t)
		e := step(ops.Exp(m, x, nil))
		p := step(ops.Mul(m, e.Out(), two, nil))
		want := step(ops.Sub(m, p.Out(), x, nil))
		xe := ops.Input(x)
		got := fuse(t, ops.Apply("sub", ops.Apply("mul", ops.Apply("exp", xe), ops.Scalar(2)), xe))
		same(t, download(t, want.Out()), got, 0)
	})

	t.Run("int8 wraps at each step", func(t *testing.T) {
		a := random(r, tensor.Int8, []int{1000}, 0).upload(t, m)
		b := random(r, tensor.Int8, []int{1000}, 0).upload(t, m)
		zero := ints(tensor.Int8, []int{}, 0).upload(t, m)
		step := stepper(t)
		s := step(ops.Add(m, a, b, nil))
		p := step(ops.Mul(m, s.Out(), a, nil))
		want := step(ops.Less(m, p.Out(), zero, nil))
		ae := ops.Input(a)
		got := fuse(t, ops.Apply("less", ops.Apply("mul", ops.Apply("add", ae, ops.Input(b)), ae), ops.Scalar(0)))
		same(t, download(t, want.Out()), got, 0)
	})

	t.Run("where and cast, vec4", func(t *testing.T) {
		a := random(r, tensor.Float32, []int{4096}, 10).upload(t, m)
		b := random(r, tensor.Int32, []int{4096}, 0).upload(t, m)
		zero := floats(tensor.Float32, []int{}, 0).upload(t, m)
		step := stepper(t)
		lt := step(ops.Less(m, a, zero, nil))
		ng := step(ops.Neg(m, a, nil))
		cb := step(ops.Cast(m, b, tensor.Float32, nil))
		want := step(ops.Where(m, lt.Out(), ng.Out(), cb.Out(), nil))
		ae := ops.Input(a)
		got := fuse(t, ops.Apply("where", ops.Apply("less", ae, ops.Scalar(0)), ops.Apply("neg", ae), ops.AsType(ops.Input(b), tensor.Float32)))
		same(t, download(t, want.Out()), got, 0)
	})
}

func TestFuseErrors(t *testing.T) {
	m, _ := testutil.Manager(t)
	f := floats(tensor.Float32, []int{3}, 1, 2, 3).upload(t, m)
	i := ints(tensor.Int8, []int{3}, 1, 2, 3).upload(t, m)
	for _, tc := range []struct {
		name string
		e    ops.Expr
		msg  string
	}{
		{"zero Expr", ops.Expr{}, "nil Expr"},
		{"unknown op", ops.Apply("frobnicate", ops.Input(f)), `"frobnicate" is not an element-wise op`},
		{"arity", ops.Apply("add", ops.Input(f)), "add takes 2 operands, got 1"},
		{"dtypes", ops.Apply("add", ops.Input(f), ops.Input(i)), "float32 and int8"},
		{"class", ops.Apply("exp", ops.Input(i)), "int8"},
		{"scalars only", ops.Apply("add", ops.Scalar(1), ops.Scalar(2)), "needs an operand that is not a scalar"},
		{"scalar range", ops.Apply("add", ops.Input(i), ops.Scalar(300)), "300 is not representable in int8"},
		{"where cond", ops.Apply("where", ops.Input(f), ops.Input(f), ops.Input(f)), "cond is float32"},
		{"nil tensor", ops.Input(nil), "nil tensor"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			op, err := ops.Fuse(m, tc.e, nil)
			require.ErrorIs(t, err, vkflow.ErrInvalid)
			assert.Nil(t, op)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}
