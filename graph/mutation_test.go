package graph_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/graph"
	"github.com/vkflow/vkflow/internal/kernels"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
)

// mutationGraph records a small graph on m in which node from and node to
// share bytes of one tensor, and both land in one command buffer.
type mutationGraph func(t *testing.T, m *vkflow.Manager) (g *graph.Graph, from, to int)

func mutTensors(t *testing.T, m *vkflow.Manager, n int, k int) []*tensor.Tensor {
	t.Helper()
	var ts []*tensor.Tensor
	for range k {
		x, err := tensor.FromSlice(m, ramp(n, 1))
		require.NoError(t, err)
		ts = append(ts, x)
	}
	return ts
}

// The mutation check: each graph has one edge between two nodes that
// share a command buffer. Compiled as is, the layer reports nothing;
// compiled with that inferred edge deleted (SetDropEdge), the barrier it
// implied is gone and synchronization validation reports the hazard, at
// vkCmdDispatch or vkCmdCopyBuffer. So the graph tests see a missing edge.
func TestDroppedEdgeDrawsHazard(t *testing.T) {
	const n = 4096
	tests := []struct {
		name   string
		build  mutationGraph
		hazard string
	}{
		{"dispatch writes y, dispatch reads y", func(t *testing.T, m *vkflow.Manager) (*graph.Graph, int, int) {
			ts := mutTensors(t, m, n, 3)
			x, y, z := ts[0], ts[1], ts[2]
			saxpy, err := kernels.Saxpy(m, x, y)
			require.NoError(t, err)
			add, err := kernels.Add(m, y, y, z)
			require.NoError(t, err)
			g, err := graph.New(m)
			require.NoError(t, err)
			g.Input(x, y)
			a := g.Dispatch(saxpy, float32(2))
			b := g.Dispatch(add)
			return g, a.ID(), b.ID()
		}, "SYNC-HAZARD-READ-AFTER-WRITE"},
		{"dispatch reads y, dispatch writes y", func(t *testing.T, m *vkflow.Manager) (*graph.Graph, int, int) {
			ts := mutTensors(t, m, n, 3)
			x, y, z := ts[0], ts[1], ts[2]
			add, err := kernels.Add(m, y, y, z)
			require.NoError(t, err)
			saxpy, err := kernels.Saxpy(m, x, y)
			require.NoError(t, err)
			g, err := graph.New(m)
			require.NoError(t, err)
			g.Input(x, y)
			a := g.Dispatch(add)
			b := g.Dispatch(saxpy, float32(1))
			return g, a.ID(), b.ID()
		}, "SYNC-HAZARD-WRITE-AFTER-READ"},
		{"fill y, dispatch reads and writes y", func(t *testing.T, m *vkflow.Manager) (*graph.Graph, int, int) {
			ts := mutTensors(t, m, n, 2)
			x, y := ts[0], ts[1]
			saxpy, err := kernels.Saxpy(m, x, y)
			require.NoError(t, err)
			g, err := graph.New(m)
			require.NoError(t, err)
			g.Input(x)
			a := g.Fill(y, float32(3))
			b := g.Dispatch(saxpy, float32(1))
			return g, a.ID(), b.ID()
		}, "SYNC-HAZARD-WRITE-AFTER-WRITE"},
		{"copy region into b, copy from an overlapping region of b", func(t *testing.T, m *vkflow.Manager) (*graph.Graph, int, int) {
			ts := mutTensors(t, m, n, 3)
			a, b, c := ts[0], ts[1], ts[2]
			g, err := graph.New(m)
			require.NoError(t, err)
			g.Input(a, b, c)
			p := g.Copy(a, b, sequence.Region{Src: 0, Dst: 100, Len: 100})
			q := g.Copy(b, c, sequence.Region{Src: 150, Dst: 0, Len: 20})
			return g, p.ID(), q.ID()
		}, "SYNC-HAZARD-READ-AFTER-WRITE"},
		{"copy from a region of b, copy into an overlapping region of b", func(t *testing.T, m *vkflow.Manager) (*graph.Graph, int, int) {
			ts := mutTensors(t, m, n, 3)
			a, b, c := ts[0], ts[1], ts[2]
			g, err := graph.New(m)
			require.NoError(t, err)
			g.Input(a, b, c)
			p := g.Copy(b, c, sequence.Region{Src: 150, Dst: 0, Len: 20})
			q := g.Copy(a, b, sequence.Region{Src: 0, Dst: 160, Len: 100})
			return g, p.ID(), q.ID()
		}, "SYNC-HAZARD-WRITE-AFTER-READ"},
	}
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Run("kept", func(t *testing.T) {
				m, v := testutil.Manager(t)
				g, from, to := tt.build(t, m)
				e, err := g.Compile()
				require.NoError(t, err)
				require.Equal(t, [][2]int{{from, to}}, graph.Edges(e), "the graph has exactly the edge under test")
				require.Contains(t, e.String(), "barrier")
				require.Len(t, strings.Split(strings.TrimSpace(e.String()), "submit ")[1:], 1, "one command buffer:\n%s", e)
				require.NoError(t, e.Run(ctx))
				require.NoError(t, e.Close())
				assert.Empty(t, v.Messages())
			})
			t.Run("dropped", func(t *testing.T) {
				m, v := testutil.Manager(t)
				v.Expect("SYNC-HAZARD")
				g, from, to := tt.build(t, m)
				e, err := g.Compile()
				require.NoError(t, err)
				k := slices.Index(graph.Edges(e), [2]int{from, to})
				require.GreaterOrEqual(t, k, 0)
				require.NoError(t, e.Close())
				require.Empty(t, v.Messages(), "the graph compiled as is draws no report")

				restore := graph.SetDropEdge(k)
				e, err = g.Compile()
				restore()
				require.NoError(t, err)
				assert.Empty(t, graph.Edges(e))
				assert.NotContains(t, e.String(), "barrier")
				require.NoError(t, e.Run(ctx))
				require.NoError(t, e.Close())
				msgs := v.Messages()
				require.NotEmpty(t, msgs, "deleting the edge drew no SYNC-HAZARD:\n%s", e)
				ids := make([]string, len(msgs))
				for i, msg := range msgs {
					ids[i] = msg.ID
				}
				assert.Contains(t, strings.Join(ids, " "), tt.hazard)
				t.Logf("reported: %v", ids)
			})
		})
	}
}

// Accesses to disjoint regions of one tensor get no edge and no barrier,
// and the layer, which tracks buffer ranges, agrees that they need none.
func TestDisjointRegionsNeedNoBarrier(t *testing.T) {
	m, v := testutil.Manager(t)
	ts := mutTensors(t, m, 4096, 3)
	a, b, c := ts[0], ts[1], ts[2]
	g, err := graph.New(m)
	require.NoError(t, err)
	g.Input(a, b, c)
	g.Copy(a, b, sequence.Region{Src: 0, Dst: 100, Len: 100})
	g.Copy(b, c, sequence.Region{Src: 200, Dst: 0, Len: 50})
	g.Copy(a, b, sequence.Region{Src: 0, Dst: 300, Len: 10})
	g.Copy(b, c, sequence.Region{Src: 0, Dst: 100, Len: 100}) // reads [0,100): overlaps none of the writes
	e, err := g.Compile()
	require.NoError(t, err)
	assert.Empty(t, graph.Edges(e))
	assert.NotContains(t, e.String(), "barrier")
	require.NoError(t, e.Run(context.Background()))
	require.NoError(t, e.Close())
	assert.Empty(t, v.Messages())
	bv, err := b.Float32s()
	require.NoError(t, err)
	cv, err := c.Float32s()
	require.NoError(t, err)
	want := ramp(4096, 1)
	assert.Equal(t, want[0], bv[100])
	assert.Equal(t, want[99], bv[199])
	assert.Equal(t, want[200], cv[0])
	assert.Equal(t, want[0], cv[100])
}
