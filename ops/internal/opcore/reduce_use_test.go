package opcore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/graph"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/ops/internal/opcore"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
)

// Reductions as parts of larger work: broken pass structures the checks
// must notice, graphs, sequences, the registry, staged memory.

// TestReduceMutations breaks the pass structure through test hooks and
// shows the checks above notice: without the last pass, or with one pass
// where several are needed, the results are wrong.
func TestReduceMutations(t *testing.T) {
	m, _ := testutil.Manager(t)
	for _, n := range []int{5, 70001} {
		// The largest values come last, so a pass that sees only a
		// segment's first chunk misses them.
		h := randomHost(tensor.Float32, []int{n}, 5)
		h.f[n-1] = 2
		x := upload(t, m, h)
		h2 := randomHost(tensor.Float32, []int{n, 3}, 6)
		for c := range 3 {
			h2.f[(n-1)*3+c] = 2
		}
		x2 := upload(t, m, h2)
		for _, mut := range []struct {
			name              string
			skipLast, onePass bool
		}{{"skip last pass", true, false}, {"one pass", false, true}} {
			if mut.onePass && n <= 16384 {
				continue // one pass is right there
			}
			t.Run(fmt.Sprintf("%s/%d", mut.name, n), func(t *testing.T) {
				restore := opcore.SetReduceHooks(opcore.ReduceHooks{SkipLast: mut.skipLast, OnePass: mut.onePass})
				defer restore()
				for _, kind := range []string{"sum", "max", "argmax"} {
					got := runReduce(t, m, kind, x, nil, false)
					assert.NotEmpty(t, compare(kind, got, reference(kind, h, []int{0}, false)), "%s: the mutation went unnoticed", kind)
					got = runReduce(t, m, kind, x2, []int{0}, false)
					assert.NotEmpty(t, compare(kind, got, reference(kind, h2, []int{0}, false)), "%s over axis 0: the mutation went unnoticed", kind)
				}
			})
		}
	}
}

// TestReduceComposes records a sum along axis 1 and a max of its result,
// as graph nodes and in a sequence.
func TestReduceComposes(t *testing.T) {
	m, _ := testutil.Manager(t)
	h := randomHost(tensor.Float32, []int{6, 20000}, 9)
	x := upload(t, m, h)
	sum, err := ops.Sum(m, x, []int{1}, false, nil)
	require.NoError(t, err)
	defer sum.Out().Close()
	defer sum.Close()
	mx, err := ops.Max(m, sum.Out(), nil, true, nil)
	require.NoError(t, err)
	defer mx.Out().Close()
	defer mx.Close()
	require.Equal(t, 2, sum.Dispatches())

	wantSum := reference("sum", h, []int{1}, false)
	wantMax := reference("max", wantSum.host, []int{0}, true)
	check := func(t *testing.T, sums, maxes []float32) {
		got := host{dt: tensor.Float32, shape: []int{6}, f: convNum[float64](sums)}
		assert.Empty(t, compare("sum", got, wantSum))
		// The max of the GPU's sums is exactly one of them.
		assert.Contains(t, sums, maxes[0])
		assert.InDelta(t, wantMax.f[0], float64(maxes[0]), depth(20000)*0x1p-24*20000)
	}

	t.Run("graph", func(t *testing.T) {
		g, err := graph.New(m)
		require.NoError(t, err)
		sum.AddTo(g)
		last := mx.AddTo(g)
		assert.NotZero(t, last)
		sums, maxes := make([]float32, 6), make([]float32, 1)
		g.Download(sum.Out(), sums)
		g.Download(mx.Out(), maxes)
		require.NoError(t, g.Err())
		e, err := g.Compile()
		require.NoError(t, err)
		defer e.Close()
		require.NoError(t, e.Run(context.Background()))
		check(t, sums, maxes)
	})
	t.Run("sequence", func(t *testing.T) {
		s, err := sequence.New(m, 0)
		require.NoError(t, err)
		defer s.Close()
		require.NoError(t, mx.Record(sum.Record(s)).SyncLocal(sum.Out(), mx.Out()).Eval(context.Background()))
		sums, err := sum.Out().Float32s()
		require.NoError(t, err)
		maxes, err := mx.Out().Float32s()
		require.NoError(t, err)
		check(t, sums, maxes)
	})
}

func TestReduceRegistry(t *testing.T) {
	m, _ := testutil.Manager(t)
	h := randomHost(tensor.Int16, []int{3, 4, 5}, 4)
	x := upload(t, m, h)
	for _, tc := range []struct {
		kind string
		at   ops.Attrs
	}{
		{"sum", ops.Attrs{Axes: []int{1, -1}, KeepDims: true}},
		{"max", ops.Attrs{}},
		{"min", ops.Attrs{Axes: []int{0}}},
		{"prod", ops.Attrs{Axes: []int{2}}},
		{"argmax", ops.Attrs{Axes: []int{-2}}},
		{"argmax", ops.Attrs{KeepDims: true}},
	} {
		assert.Contains(t, ops.Names(), tc.kind)
		outs, err := ops.Call(context.Background(), m, tc.kind, []*tensor.Tensor{x}, nil, tc.at)
		require.NoError(t, err)
		require.Len(t, outs, 1)
		got := downloadHost(t, outs[0])
		require.NoError(t, outs[0].Close())
		assert.Empty(t, compare(tc.kind, got, reference(tc.kind, h, normalize(tc.at.Axes, 3), tc.at.KeepDims)), "%s %+v", tc.kind, tc.at)
	}
}

// TestReduceStaged runs reductions and softmax with device memory that is
// not mapped, as on a discrete GPU: inputs and outputs go through the
// staging ring, partials stay in GPU-only scratch tensors.
func TestReduceStaged(t *testing.T) {
	m, _ := testutil.Manager(t, vkflow.WithStagedDeviceMemory())
	h := randomHost(tensor.Float32, []int{3, 20000}, 21)
	x := upload(t, m, h)
	for _, kind := range []string{"sum", "max", "argmax"} {
		checkReduce(t, m, kind, h, x, []int{1}, false)
		checkReduce(t, m, kind, h, x, []int{0}, true)
	}
	got := runSoftmax(t, m, x, 1)
	assert.Empty(t, softmaxMismatches(h, 1, got.f))
}
