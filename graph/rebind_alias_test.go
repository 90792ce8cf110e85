package graph_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/dlpack"
	"github.com/vkflow/vkflow/graph"
	"github.com/vkflow/vkflow/tensor"
)

// vulkanView imports src's kDLVulkan export: a second tensor handle on
// src's VkBuffer. Closing the view deletes the export.
func vulkanView(t *testing.T, m *vkflow.Manager, src *tensor.Tensor) *tensor.Tensor {
	t.Helper()
	ctx := context.Background()
	ex, err := dlpack.Export(ctx, src, dlpack.Options{Device: &dlpack.Device{Type: dlpack.Vulkan, ID: int32(m.Device().Index)}})
	require.NoError(t, err)
	view, copied, err := dlpack.Import(ctx, m, ex)
	require.NoError(t, err)
	require.False(t, copied)
	require.Equal(t, src.Allocation().Buffer, view.Allocation().Buffer)
	t.Cleanup(func() { view.Close() })
	return view
}

// Rebind keeps the hazards of the memory the nodes touch: replacing src
// leaves the nodes on its view (the same VkBuffer) ordered among
// themselves, and the nodes now on the new tensor ordered among
// themselves, with the barriers that needs. Synchronization validation
// fails the test on a missed barrier. Issue 22, item 3.
func TestRebindKeepsViewHazards(t *testing.T) {
	const n = 1024
	ctx := context.Background()
	for _, q := range []int{1, 2} {
		for _, c := range []struct {
			name   string
			rebind func(src, view *tensor.Tensor) *tensor.Tensor // which handle Rebind replaces
			out    float32                                       // what the copy then reads
			host   float32                                       // what the download then reads
		}{
			{"the producer", func(src, _ *tensor.Tensor) *tensor.Tensor { return src }, 7, 2},
			{"the view", func(_, view *tensor.Tensor) *tensor.Tensor { return view }, 2, 2}, // src keeps run 1's 2s
		} {
			t.Run(fmt.Sprintf("%d queues/%s", q, c.name), func(t *testing.T) {
				m, _, _, _ := newFixture(t, 4, vkflow.WithQueues(q, false))
				src := mustNew(t, m, tensor.Float32, n)
				view := vulkanView(t, m, src)
				out := mustNew(t, m, tensor.Float32, n)
				spare, err := tensor.FromSlice(m, constant(n, 7))
				require.NoError(t, err)

				g, _ := graph.New(m)
				g.Fill(view, float32(1))
				g.Copy(src, out) // reads what the fill of the view wrote
				g.Fill(view, float32(2))
				host := make([]float32, n)
				g.Download(view, host)
				e, err := g.Compile()
				require.NoError(t, err)
				require.NoError(t, e.Run(ctx))
				assert.Equal(t, constant(n, 2), host)
				assert.Equal(t, constant(n, 1), floats(t, out))

				// Nodes on the rebound handle now touch spare; the others
				// still touch src's buffer and still conflict with each other.
				require.NoError(t, e.Rebind(c.rebind(src, view), spare))
				require.NoError(t, graph.CheckSchedule(e), "every edge of the rebound graph is ordered by the kept schedule")
				// The edges are those of the rebound graph: the nodes on the
				// rebound handle no longer depend on the ones on the other.
				rebound, _ := graph.New(m)
				for _, nd := range []func(g *graph.Graph, src, view *tensor.Tensor){
					func(g *graph.Graph, _, v *tensor.Tensor) { g.Fill(v, float32(1)) },
					func(g *graph.Graph, s, _ *tensor.Tensor) { g.Copy(s, out) },
					func(g *graph.Graph, _, v *tensor.Tensor) { g.Fill(v, float32(2)) },
					func(g *graph.Graph, _, v *tensor.Tensor) { g.Download(v, host) },
				} {
					s, v := src, view
					if c.name == "the producer" {
						s = spare
					} else {
						v = spare
					}
					nd(rebound, s, v)
				}
				fresh, err := rebound.Compile()
				require.NoError(t, err)
				assert.ElementsMatch(t, graph.Edges(fresh), graph.Edges(e))
				for range 2 {
					require.NoError(t, e.Run(ctx))
				}
				assert.Equal(t, constant(n, c.host), host)
				assert.Equal(t, constant(n, c.out), floats(t, out))
			})
		}
	}
}

// Rebind refuses a new tensor over memory the graph already touches,
// through another handle: a view of another tensor of the graph, or of
// the old tensor itself. Either would add dependencies the schedule lacks.
func TestRebindRefusesAliases(t *testing.T) {
	const n = 256
	m, _, _, _ := newFixture(t, 4)
	a := mustNew(t, m, tensor.Float32, n)
	b := mustNew(t, m, tensor.Float32, n)
	g, _ := graph.New(m)
	g.Fill(a, float32(1))
	g.Copy(a, b)
	e, err := g.Compile()
	require.NoError(t, err)
	for _, c := range []struct {
		name     string
		old, new *tensor.Tensor
	}{
		{"a view of another tensor of the graph", a, vulkanView(t, m, b)},
		{"a view of the old tensor", a, vulkanView(t, m, a)},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := e.Rebind(c.old, c.new)
			require.ErrorIs(t, err, vkflow.ErrInvalid)
			assert.Contains(t, err.Error(), "already used")
		})
	}
	require.NoError(t, e.Run(context.Background()))
	assert.Equal(t, constant(n, 1), floats(t, b))
}

func constant(n int, v float32) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = v
	}
	return s
}

func floats(t *testing.T, x *tensor.Tensor) []float32 {
	t.Helper()
	s, err := x.Float32s()
	require.NoError(t, err)
	return s
}
