package opcore_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/graph"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/ops/internal/opcore"
	"github.com/vkflow/vkflow/tensor"
)

// mlpTape records, on two logical queues, a DAG with two matmul branches
// that meet in a product, a reduction and a mean:
//
//	q0: a1 = tanh(x·w1)          q1: a2 = sigmoid(x·w2 + b)
//	q0: y = mean(sum(a1·a2, axis 1)²)
func mlpTape(t *testing.T, m *vkflow.Manager, tp *ops.Tape, x, w1, w2, b *tensor.Tensor) *tensor.Tensor {
	call := func(name string, at ops.Attrs, in ...*tensor.Tensor) *tensor.Tensor {
		y, err := tp.Call1(name, at, in...)
		require.NoError(t, err, name)
		return y
	}
	tp.OnQueue(0)
	a1 := call("tanh", ops.Attrs{}, call("matmul", ops.Attrs{}, x, w1))
	tp.OnQueue(1)
	a2 := call("sigmoid", ops.Attrs{}, call("add", ops.Attrs{}, call("matmul", ops.Attrs{}, x, w2), b))
	tp.OnQueue(0)
	s := call("sum", ops.Attrs{Axes: []int{1}}, call("mul", ops.Attrs{}, a1, a2))
	return call("mean", ops.Attrs{}, call("mul", ops.Attrs{}, s, s))
}

func randTensor(t *testing.T, m *vkflow.Manager, rnd *rand.Rand, shape ...int) (*tensor.Tensor, []float64) {
	n := 1
	for _, d := range shape {
		n *= d
	}
	v := make([]float64, n)
	for i := range v {
		v[i] = rnd.Float64()*2 - 1
	}
	x, err := tensor.FromSlice(m, v, shape...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = x.Close() })
	return x, v
}

func readF64(t *testing.T, x *tensor.Tensor) []float64 {
	v, err := x.Float64s()
	require.NoError(t, err)
	return append([]float64(nil), v...)
}

func TestTapeGradMultiQueue(t *testing.T) {
	m, _ := testutil.Manager(t, vkflow.WithQueues(2, false))
	errs := tapeGradErrors(t, m)
	for i, e := range errs {
		assert.Less(t, e, 1e-6, "wrt %d: |VJP - finite differences|", i)
	}
}

// TestTapeGradMutation: the check above catches a wrong VJP in the
// backward graph (sigmoid's rule for tanh).
func TestTapeGradMutation(t *testing.T) {
	m, _ := testutil.Manager(t, vkflow.WithQueues(2, false))
	restore := opcore.SwapVJP("tanh", "sigmoid")
	defer restore()
	errs := tapeGradErrors(t, m)
	assert.Greater(t, max(errs[0], errs[1]), 1e-3, "a wrong VJP went unnoticed: %v", errs)
}

// tapeGradErrors builds mlpTape on two queues, its backward graph, runs
// both, and returns per input |directional derivative - finite
// differences|, relative where large.
func tapeGradErrors(t *testing.T, m *vkflow.Manager) []float64 {
	ctx := context.Background()
	rnd := rand.New(rand.NewPCG(3, 4))
	x, _ := randTensor(t, m, rnd, 4, 3)
	w1, _ := randTensor(t, m, rnd, 3, 5)
	w2, _ := randTensor(t, m, rnd, 3, 5)
	b, _ := randTensor(t, m, rnd, 5)
	dy, err := tensor.New(m, tensor.Float64, []int{})
	require.NoError(t, err)
	require.NoError(t, tensor.Write(dy, []float64{1}))
	t.Cleanup(func() { _ = dy.Close() })

	g, err := graph.New(m)
	require.NoError(t, err)
	tp, err := ops.NewTape(m, g)
	require.NoError(t, err)
	y := mlpTape(t, m, tp, x, w1, w2, b)
	g.Input(x, w1, w2, b)
	wrt := []*tensor.Tensor{x, w1, w2, b}
	bw, err := tp.Grad([]*tensor.Tensor{y}, []*tensor.Tensor{dy}, wrt)
	require.NoError(t, err)
	require.Len(t, bw.Grads, 4)
	assert.NotEmpty(t, bw.Saved)
	assert.Positive(t, bw.SavedBytes)

	fwd, err := g.Compile(graph.Queues(0, 1))
	require.NoError(t, err)
	bwd, err := bw.Graph.Compile(graph.Queues(0, 1))
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = fwd.Close()
		_ = bwd.Close()
		_ = tp.Close()
	})
	assert.Contains(t, bwd.String(), ": queue 1", "the backward graph uses both queues:\n%s", bwd.String())

	require.NoError(t, fwd.Run(ctx))
	require.NoError(t, bwd.Run(ctx))
	grads := make([][]float64, len(wrt))
	for i, gt := range bw.Grads {
		require.NoError(t, gt.Wait(ctx))
		grads[i] = readF64(t, gt)
	}

	// Finite differences through the same forward graph: a direction per
	// input, written on the host between runs.
	loss := func() float64 {
		require.NoError(t, fwd.Run(ctx))
		require.NoError(t, y.Wait(ctx))
		return readF64(t, y)[0]
	}
	const eps = 1e-6
	var errs []float64
	for i, w := range wrt {
		base := readF64(t, w)
		dir := make([]float64, len(base))
		for k := range dir {
			dir[k] = rnd.Float64()*2 - 1
		}
		shift := func(s float64) {
			v := make([]float64, len(base))
			for k := range v {
				v[k] = base[k] + s*dir[k]
			}
			require.NoError(t, tensor.Write(w, v))
		}
		shift(eps)
		lp := loss()
		shift(-eps)
		lm := loss()
		shift(0)
		num := (lp - lm) / (2 * eps)
		ana := 0.0
		for k := range dir {
			ana += grads[i][k] * dir[k]
		}
		errs = append(errs, math.Abs(num-ana)/math.Max(1, math.Abs(num)))
	}

	// A second backward run after a forward run gives the same gradients.
	require.NoError(t, fwd.Run(ctx))
	require.NoError(t, bwd.Run(ctx))
	for i, gt := range bw.Grads {
		require.NoError(t, gt.Wait(ctx))
		assert.Equal(t, grads[i], readF64(t, gt))
	}
	return errs
}

func TestTapeGradRefused(t *testing.T) {
	m, _ := testutil.Manager(t)
	rnd := rand.New(rand.NewPCG(1, 2))
	x, _ := randTensor(t, m, rnd, 3, 3)
	g, err := graph.New(m)
	require.NoError(t, err)
	tp, err := ops.NewTape(m, g)
	require.NoError(t, err)
	t.Cleanup(func() { _ = tp.Close() })
	xx, err := tp.Call1("matmul", ops.Attrs{Perm: nil}, x, x)
	require.NoError(t, err)
	c, err := tp.Call1("nextafter", ops.Attrs{}, xx, xx)
	require.NoError(t, err)
	s, err := tp.Call1("sum", ops.Attrs{}, c)
	require.NoError(t, err)
	dy, err := tensor.New(m, tensor.Float64, []int{})
	require.NoError(t, err)
	require.NoError(t, tensor.Write(dy, []float64{1}))
	t.Cleanup(func() { _ = dy.Close() })
	before := m.MemStats()

	_, err = tp.Grad([]*tensor.Tensor{s}, []*tensor.Tensor{dy}, []*tensor.Tensor{x})
	require.ErrorIs(t, err, ops.ErrNoGradient)
	assert.Contains(t, err.Error(), "nextafter")
	assert.Equal(t, before.Allocations, m.MemStats().Allocations, "a refused Grad kept tensors")

	// Bad arguments.
	_, err = tp.Grad([]*tensor.Tensor{s}, nil, []*tensor.Tensor{x})
	assert.ErrorIs(t, err, vkflow.ErrInvalid)
	_, err = tp.Grad([]*tensor.Tensor{s}, []*tensor.Tensor{x}, []*tensor.Tensor{x})
	assert.ErrorIs(t, err, vkflow.ErrInvalid)
	_, err = tp.Call("nonzero", ops.Attrs{}, x)
	assert.ErrorIs(t, err, vkflow.ErrInvalid)

	// A gradient the outputs do not depend on is zeros; Close is idempotent
	// and a closed tape refuses.
	other, _ := randTensor(t, m, rnd, 2)
	bw, err := tp.Grad([]*tensor.Tensor{xx}, []*tensor.Tensor{x}, []*tensor.Tensor{other})
	require.NoError(t, err)
	assert.Equal(t, 0, bw.Graph.Len(), "no backward work for an unrelated tensor")
	assert.Equal(t, []float64{0, 0}, readF64(t, bw.Grads[0]))
	require.NoError(t, tp.Close())
	require.NoError(t, tp.Close())
	_, err = tp.Call("exp", ops.Attrs{}, x)
	assert.ErrorIs(t, err, vkflow.ErrClosed)
}
