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

// chainGrad records y = sum(sin(tanh(x·w)²)·x) on a tape, builds its
// backward graph, runs forward and backward twice (new x and w the second
// time) and returns the backward graph and the largest relative error of
// the gradients against the analytic ones, over both runs.
func chainGrad(t *testing.T, m *vkflow.Manager) (*ops.Backward, float64) {
	ctx := context.Background()
	const n = 256
	x, err := tensor.New(m, tensor.Float64, []int{n})
	require.NoError(t, err)
	w, err := tensor.New(m, tensor.Float64, []int{n})
	require.NoError(t, err)
	dy1, err := tensor.New(m, tensor.Float64, []int{})
	require.NoError(t, err)
	require.NoError(t, tensor.Write(dy1, []float64{1}))
	t.Cleanup(func() { _, _, _ = x.Close(), w.Close(), dy1.Close() })

	g, err := graph.New(m)
	require.NoError(t, err)
	tp, err := ops.NewTape(m, g)
	require.NoError(t, err)
	call := func(name string, in ...*tensor.Tensor) *tensor.Tensor {
		y, err := tp.Call1(name, ops.Attrs{}, in...)
		require.NoError(t, err, name)
		return y
	}
	b := call("tanh", call("mul", x, w))
	y := call("sum", call("mul", call("sin", call("mul", b, b)), x))
	g.Input(x, w)
	bw, err := tp.Grad([]*tensor.Tensor{y}, []*tensor.Tensor{dy1}, []*tensor.Tensor{x, w})
	require.NoError(t, err)
	fwd, err := g.Compile(graph.Queues(0, 1))
	require.NoError(t, err)
	bwd, err := bw.Graph.Compile(graph.Queues(0, 1))
	require.NoError(t, err)
	t.Cleanup(func() { _, _, _ = fwd.Close(), bwd.Close(), tp.Close() })

	rnd := rand.New(rand.NewPCG(5, 6))
	worst := 0.0
	for run := 0; run < 2; run++ {
		xv, wv := make([]float64, n), make([]float64, n)
		for i := range xv {
			xv[i], wv[i] = rnd.Float64()*3-1.5, rnd.Float64()*3-1.5
		}
		require.NoError(t, tensor.Write(x, xv))
		require.NoError(t, tensor.Write(w, wv))
		require.NoError(t, fwd.Run(ctx))
		require.NoError(t, bwd.Run(ctx))
		gx, gw := readF64(t, bw.Grads[0]), readF64(t, bw.Grads[1])
		for i := range xv {
			bi := math.Tanh(xv[i] * wv[i])
			c := bi * bi
			inner := math.Cos(c) * 2 * bi * (1 - bi*bi) * xv[i] // d/da of sin(tanh(a)²)·x
			wantX := inner*wv[i] + math.Sin(c)
			wantW := inner * xv[i]
			worst = max(worst, math.Abs(gx[i]-wantX)/math.Max(1, math.Abs(wantX)),
				math.Abs(gw[i]-wantW)/math.Max(1, math.Abs(wantW)))
		}
	}
	return bw, worst
}

// TestTapeGradReusesDeadBuffers: the backward graph's ops write dead
// buffers instead of allocating (a chain of same-shape values), on two
// queues, and the gradients stay exact over two runs.
func TestTapeGradReusesDeadBuffers(t *testing.T) {
	m, _ := testutil.Manager(t, vkflow.WithQueues(2, false))
	bw, worst := chainGrad(t, m)
	assert.Less(t, worst, 1e-12, "gradient vs analytic")
	assert.Positive(t, bw.ReusedBytes, "no output took a dead buffer")
	assert.Positive(t, bw.AllocatedBytes)
	t.Logf("backward graph: %d bytes allocated, %d bytes reused (%.0f%% less memory than without reuse)",
		bw.AllocatedBytes, bw.ReusedBytes, 100*float64(bw.ReusedBytes)/float64(bw.AllocatedBytes+bw.ReusedBytes))
}

// TestTapeGradReuseMutation: the check above catches a buffer handed on
// while a later step still reads it.
func TestTapeGradReuseMutation(t *testing.T) {
	m, _ := testutil.Manager(t, vkflow.WithQueues(2, false))
	defer opcore.SetGradPoolIgnoresLiveness(true)()
	_, worst := chainGrad(t, m)
	assert.Greater(t, worst, 1e-3, "a live buffer was reused and the gradient did not change")
}
