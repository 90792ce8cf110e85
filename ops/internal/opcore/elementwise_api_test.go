package opcore_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/graph"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/vk"
)

func TestElementwiseErrors(t *testing.T) {
	m, _ := testutil.Manager(t)
	newT := func(dt tensor.Dtype, shape ...int) *tensor.Tensor {
		x, err := tensor.New(m, dt, shape)
		require.NoError(t, err)
		t.Cleanup(func() { _ = x.Close() })
		return x
	}
	f3, f3b, f4 := newT(tensor.Float32, 3), newT(tensor.Float32, 3), newT(tensor.Float32, 4)
	i3, b3, d3 := newT(tensor.Int32, 3), newT(tensor.Bool, 3), newT(tensor.Float64, 3)
	closed := newT(tensor.Float32, 3)
	require.NoError(t, closed.Close())
	// Alternating stretched dimensions do not merge: 16 dimensions.
	alt1, alt2 := make([]int, 16), make([]int, 16)
	for i := range alt1 {
		alt1[i], alt2[i] = 1+i%2, 2-i%2
	}
	wide1, wide2 := newT(tensor.Uint8, alt1...), newT(tensor.Uint8, alt2...)

	for _, tc := range []struct {
		name string
		f    func() (*ops.Op, error)
		err  error
		msgs []string
	}{
		{"mismatched dtypes", func() (*ops.Op, error) { return ops.Add(m, f3, i3, nil) }, vkflow.ErrInvalid,
			[]string{"float32 and int32", "Cast"}},
		{"unbroadcastable", func() (*ops.Op, error) { return ops.Mul(m, f3, f4, nil) }, vkflow.ErrInvalid,
			[]string{"cannot be broadcast"}},
		{"out shape", func() (*ops.Op, error) { return ops.Add(m, f3, f3b, f4) }, vkflow.ErrInvalid,
			[]string{"shape [4], want [3]"}},
		{"out dtype", func() (*ops.Op, error) { return ops.Less(m, f3, f3b, f3) }, vkflow.ErrInvalid,
			[]string{"float32, want bool"}},
		{"integer to exp", func() (*ops.Op, error) { return ops.Exp(m, i3, nil) }, vkflow.ErrInvalid,
			[]string{"int32", "Cast"}},
		{"integer to div", func() (*ops.Op, error) { return ops.Div(m, i3, i3, nil) }, vkflow.ErrInvalid,
			[]string{"int32", "Cast"}},
		{"bool to add", func() (*ops.Op, error) { return ops.Add(m, b3, b3, nil) }, vkflow.ErrInvalid,
			[]string{"bool"}},
		{"bool to exp", func() (*ops.Op, error) { return ops.Exp(m, b3, nil) }, vkflow.ErrInvalid,
			[]string{"bool"}},
		{"float64 and int32", func() (*ops.Op, error) { return ops.Pow(m, d3, i3, nil) }, vkflow.ErrInvalid,
			[]string{"float64 and int32", "no promotion"}},
		{"closed input", func() (*ops.Op, error) { return ops.Add(m, f3, closed, nil) }, vkflow.ErrClosed, nil},
		{"closed output", func() (*ops.Op, error) { return ops.Neg(m, f3, closed) }, vkflow.ErrClosed, nil},
		{"nil input", func() (*ops.Op, error) { return ops.Sub(m, f3, nil, nil) }, vkflow.ErrInvalid,
			[]string{"input 1 is nil"}},
		{"nil owner", func() (*ops.Op, error) { return ops.Add(nil, f3, f3, nil) }, vkflow.ErrInvalid, nil},
		{"where cond", func() (*ops.Op, error) { return ops.Where(m, f3, f3, f3, nil) }, vkflow.ErrInvalid,
			[]string{"cond is float32, want bool"}},
		{"where dtypes", func() (*ops.Op, error) { return ops.Where(m, b3, f3, i3, nil) }, vkflow.ErrInvalid,
			[]string{"float32 and int32"}},
		{"rank", func() (*ops.Op, error) { return ops.Equal(m, wide1, wide2, nil) }, vkflow.ErrInvalid,
			[]string{"16 dimensions after merging"}},
		{"registry inputs", func() (*ops.Op, error) {
			return ops.Prepare(m, "add", []*tensor.Tensor{f3}, nil, ops.Attrs{})
		}, vkflow.ErrInvalid, []string{"1 inputs, want 2"}},
		{"registry outputs", func() (*ops.Op, error) {
			return ops.Prepare(m, "exp", []*tensor.Tensor{f3}, []*tensor.Tensor{nil, nil}, ops.Attrs{})
		}, vkflow.ErrInvalid, []string{"2 outputs given"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			op, err := tc.f()
			require.ErrorIs(t, err, tc.err)
			assert.Nil(t, op)
			for _, msg := range tc.msgs {
				assert.Contains(t, err.Error(), msg)
			}
		})
	}
}

func TestElementwiseRegistry(t *testing.T) {
	names := ops.Names()
	for _, n := range []string{"add", "sub", "mul", "div", "pow", "minimum", "maximum", "equal", "not_equal",
		"less", "less_equal", "greater", "greater_equal", "abs", "neg", "exp", "log", "sqrt", "tanh", "sigmoid",
		"relu", "where", "clip", "cast"} {
		assert.Contains(t, names, n)
	}
}

// Two ops recorded into a graph run as one DAG: (a + b) * c.
func TestElementwiseGraph(t *testing.T) {
	m, _ := testutil.Manager(t)
	a := floats(tensor.Float32, []int{2, 3}, 1, 2, 3, 4, 5, 6)
	b := floats(tensor.Float32, []int{3}, 10, 20, 30)
	c := floats(tensor.Float32, []int{}, -2)
	sum, err := ops.Add(m, a.upload(t, m), b.upload(t, m), nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = sum.Close(); _ = sum.Out().Close() })
	prod, err := ops.Mul(m, sum.Out(), c.upload(t, m), nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = prod.Close(); _ = prod.Out().Close() })
	assert.Equal(t, 1, sum.Dispatches())

	g, err := graph.New(m)
	require.NoError(t, err)
	sum.AddTo(g)
	prod.AddTo(g)
	got := make([]float32, 6)
	g.Download(prod.Out(), got)
	ex, err := g.Compile()
	require.NoError(t, err)
	t.Cleanup(func() { _ = ex.Close() })
	for range 2 {
		require.NoError(t, ex.Run(context.Background()))
		assert.Equal(t, []float32{-22, -44, -66, -28, -50, -72}, got)
	}
}

// An output may be an input of the same shape: the op works in place.
func TestElementwiseInPlace(t *testing.T) {
	m, _ := testutil.Manager(t)
	a := floats(tensor.Float32, []int{5}, 1, 2, 3, 4, 5)
	ta := a.upload(t, m)
	tb := floats(tensor.Float32, []int{}, 0.5).upload(t, m)
	op, err := ops.Add(m, ta, tb, ta)
	require.NoError(t, err)
	t.Cleanup(func() { _ = op.Close() })
	require.NoError(t, op.Run(context.Background()))
	require.NoError(t, op.Run(context.Background()))
	same(t, floats(tensor.Float32, []int{5}, 2, 3, 4, 5, 6), download(t, ta), 0)

	neg, err := ops.Neg(m, ta, ta)
	same(t, floats(tensor.Float32, []int{5}, -2, -3, -4, -5, -6), run(t, neg, err), 0)
}

// Ops on tensors that go through the staging ring (as on a discrete GPU).
func TestElementwiseStaged(t *testing.T) {
	m, _ := testutil.Manager(t, vkflow.WithStagedDeviceMemory())
	a := floats(tensor.Float32, []int{3, 1}, 1, 2, 3)
	b := floats(tensor.Float32, []int{1, 4}, 1, 2, 3, 4)
	op, err := ops.Maximum(m, a.upload(t, m), b.upload(t, m), nil)
	got := run(t, op, err)
	closeOut(t, op)
	same(t, ref(0, func(v ...float64) float64 { return max(v[0], v[1]) }, nil, a, b), got, 0)
}

// A zero-length dimension gives an empty output and no dispatch.
func TestElementwiseEmpty(t *testing.T) {
	m, _ := testutil.Manager(t)
	x, err := tensor.New(m, tensor.Float32, []int{0, 3})
	require.NoError(t, err)
	t.Cleanup(func() { _ = x.Close() })
	y := floats(tensor.Float32, []int{3}, 1, 2, 3).upload(t, m)
	for _, f := range []func() (*ops.Op, error){
		func() (*ops.Op, error) { return ops.Add(m, x, y, nil) },
		func() (*ops.Op, error) { return ops.Exp(m, x, nil) },
		func() (*ops.Op, error) { return ops.Cast(m, x, tensor.Int8, nil) },
	} {
		op, err := f()
		require.NoError(t, err)
		assert.Equal(t, 0, op.Dispatches())
		assert.Equal(t, []int{0, 3}, op.Out().Shape())
		assert.Equal(t, 0, op.Out().Len())
		require.NoError(t, op.Run(context.Background()))
		require.NoError(t, op.Close())
		require.NoError(t, op.Out().Close())
	}
}

// On a device opened without shaderFloat64 and shaderFloat16: float32 pow
// falls back to the driver's exp2(y*log2|x|) (looser: 16 ULPs over these
// small exponents), and float16 arithmetic is ErrUnsupported naming the
// feature, though float16 storage works.
func TestElementwiseFeatures(t *testing.T) {
	m, _ := testutil.Manager(t, vkflow.WithFeatures(vk.Features{TimelineSemaphore: true, StorageBuffer16BitAccess: true}))
	r := rand.New(rand.NewPCG(5, 1))
	a0, a1 := operands(r, "pow", tensor.Float32, []int{1023}, []int{1023})
	b := binOpNamed("pow")
	b.tol = 16
	checkBinary(t, m, b, a0, a1)

	h, err := tensor.New(m, tensor.Float16, []int{4})
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close() })
	for _, f := range []func() (*ops.Op, error){
		func() (*ops.Op, error) { return ops.Exp(m, h, nil) },
		func() (*ops.Op, error) { return ops.Add(m, h, h, nil) },
		func() (*ops.Op, error) { return ops.Cast(m, a0.upload(t, m), tensor.Float16, nil) },
	} {
		_, err := f()
		require.ErrorIs(t, err, vkflow.ErrUnsupported)
		assert.Contains(t, err.Error(), "shaderFloat16")
	}
}
