package render_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/graph"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/ops/internal/opstest"
	"github.com/vkflow/vkflow/ops/render"
	"github.com/vkflow/vkflow/tensor"
)

// benchScene is the benchmark's scene: 64 triangles over 256 x 256,
// vertices uniform over the image (large, overlapping triangles).
func benchScene(n, size int) scene {
	rng := rand.New(rand.NewPCG(11, 12))
	s := scene{n: n, tri: make([]float64, n*6), rgba: make([]float64, n*4)}
	for i := range s.tri {
		s.tri[i] = rng.Float64() * float64(size)
	}
	for i := range s.rgba {
		s.rgba[i] = rng.Float64()
	}
	return s
}

// BenchmarkSoftRender times the forward graph, the backward graph and
// both of a render of 64 triangles into 256 x 256, float32, batch 8, on
// two logical queues (no host transfers: the graphs only); both-1q is the
// same render with the rasterizer and the blender on one queue (on
// lavapipe both run on its one physical queue).
func BenchmarkSoftRender(b *testing.B) {
	m, _ := testutil.Manager(b, vkflow.WithQueues(2, false))
	fwd, bwd := benchGraphs(b, m, 1)
	fwd1, bwd1 := benchGraphs(b, m, 0)
	ctx := context.Background()
	run := func(b *testing.B, ex ...*graph.Exec) {
		for range b.N {
			for _, e := range ex {
				require.NoError(b, e.Run(ctx))
			}
		}
	}
	run(b, fwd, bwd) // lavapipe compiles its shaders at the first dispatch
	b.Run("forward", func(b *testing.B) { run(b, fwd) })
	b.Run("backward", func(b *testing.B) { run(b, bwd) })
	b.Run("both", func(b *testing.B) { run(b, fwd, bwd) })
	b.Run("both-1q", func(b *testing.B) { run(b, fwd1, bwd1) })
}

// benchGraphs records the benchmark's render with the blender on queue
// blend and compiles its forward and backward graphs.
func benchGraphs(b *testing.B, m *vkflow.Manager, blend int) (fwd, bwd *graph.Exec) {
	const n, size = 64, 256
	s := benchScene(n, size)
	tri, err := tensor.FromSlice(m, opstest.Conv(s.tri, toF32), n, 3, 2)
	require.NoError(b, err)
	rgba, err := tensor.FromSlice(m, opstest.Conv(s.rgba, toF32), n, 4)
	require.NoError(b, err)
	dy, err := tensor.FromSlice(m, opstest.Conv(make([]float64, size*size*4), toF32), size, size, 4)
	require.NoError(b, err)
	g, err := graph.New(m)
	require.NoError(b, err)
	tp, err := ops.NewTape(m, g)
	require.NoError(b, err)
	b.Cleanup(func() { _ = tp.Close() })
	img, err := render.SoftRender(tp, tri, rgba, render.Options{Height: size, Width: size, BlendQueue: blend})
	require.NoError(b, err)
	g.Input(tri, rgba)
	bw, err := tp.Grad([]*tensor.Tensor{img}, []*tensor.Tensor{dy}, []*tensor.Tensor{tri, rgba})
	require.NoError(b, err)
	fwd, err = g.Compile(graph.Queues(0, 1))
	require.NoError(b, err)
	bwd, err = bw.Graph.Compile(graph.Queues(0, 1))
	require.NoError(b, err)
	b.Cleanup(func() {
		_ = fwd.Close()
		_ = bwd.Close()
	})
	return fwd, bwd
}

func toF32(v float64) float32 { return float32(v) }
