package graph_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/graph"
	"github.com/vkflow/vkflow/internal/kernels"
)

// A Node carries its graph's identity: an Exec refuses the zero Node and
// a node of another graph (even one with an index the Exec has, and one of
// an Exec compiled from another graph over the same algorithm) with
// ErrInvalid, and changes nothing. Issue 22, item 1.
func TestSetPushRefusesForeignNodes(t *testing.T) {
	const n = 256
	m, x, y, xv := newFixture(t, n)
	ctx := context.Background()
	saxpy, err := kernels.Saxpy(m, x, y)
	require.NoError(t, err)

	g, _ := graph.New(m)
	g.Fill(y, float32(0))
	s := g.Dispatch(saxpy, float32(1))
	out := make([]float32, n)
	g.Download(y, out)
	e, err := g.Compile()
	require.NoError(t, err)

	other, _ := graph.New(m)
	other.Fill(y, float32(0))
	foreign := other.Dispatch(saxpy, float32(5)) // index 1: s's index
	require.Equal(t, s.ID(), foreign.ID())
	eo, err := other.Compile()
	require.NoError(t, err)

	cases := []struct {
		name string
		node graph.Node
	}{
		{"zero Node", graph.Node{}},
		{"node of another graph, same index", foreign},
		{"node of another graph, index 0", other.Fill(x, float32(0))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := e.SetPush(c.node, float32(1000))
			require.ErrorIs(t, err, vkflow.ErrInvalid)
			assert.Contains(t, err.Error(), "SetPush")
		})
	}
	// A node of e's graph recorded after Compile is not one of e's nodes.
	late := g.Dispatch(saxpy, float32(2))
	require.ErrorIs(t, e.SetPush(late, float32(1000)), vkflow.ErrInvalid)
	// Nothing changed: y = 0 + 1*x.
	require.NoError(t, e.Run(ctx))
	for i := range out {
		require.Equal(t, xv[i], out[i], "element %d", i)
	}
	// The other Exec refuses e's node the same way.
	require.ErrorIs(t, eo.SetPush(s, float32(1000)), vkflow.ErrInvalid)
	// e's own node still works.
	require.NoError(t, e.SetPush(s, float32(3)))
	require.NoError(t, e.Run(ctx))
	assert.Equal(t, 3*xv[7], out[7])
}

// The report's example: node 0 is the dispatch, so the zero Node and a
// foreign node 0 both name an index the Exec has.
func TestSetPushZeroNodeOnDispatchZero(t *testing.T) {
	const n = 64
	m, x, y, xv := newFixture(t, n)
	ctx := context.Background()
	saxpy, err := kernels.Saxpy(m, x, y)
	require.NoError(t, err)
	g, _ := graph.New(m)
	g.Dispatch(saxpy, float32(1))
	e, err := g.Compile()
	require.NoError(t, err)
	other, _ := graph.New(m)
	foreign := other.Dispatch(saxpy, float32(5))
	require.ErrorIs(t, e.SetPush(graph.Node{}, float32(100)), vkflow.ErrInvalid)
	require.ErrorIs(t, e.SetPush(foreign, float32(1000)), vkflow.ErrInvalid)
	require.NoError(t, e.Run(ctx))
	got, err := y.Float32s()
	require.NoError(t, err)
	for i := range got {
		require.Equal(t, xv[i], got[i], "element %d: y = 0 + 1*x", i)
	}
}

// After refuses the zero Node and a node of another graph: Compile
// returns ErrInvalid naming the problem.
func TestAfterRefusesForeignNodes(t *testing.T) {
	m, x, y, _ := newFixture(t, 64)
	other, _ := graph.New(m)
	foreign := other.Fill(x, float32(1))
	for _, c := range []struct {
		name string
		dep  graph.Node
		msg  string
	}{
		{"zero Node", graph.Node{}, "the zero Node"},
		{"node of another graph", foreign, "not a node of this graph"},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, _ := graph.New(m)
			g.Fill(x, float32(1))
			g.Fill(y, float32(2)).After(c.dep)
			_, err := g.Compile()
			require.ErrorIs(t, err, vkflow.ErrInvalid)
			assert.Contains(t, err.Error(), c.msg)
		})
	}
}

// DOT labels every node with its index and kind, and a named node with
// its name too, as documented. Issue 22, item 4.
func TestDOTLabelsKindAndName(t *testing.T) {
	m, x, y, _ := newFixture(t, 64)
	saxpy, err := kernels.Saxpy(m, x, y)
	require.NoError(t, err)
	g, _ := graph.New(m)
	g.Fill(y, float32(0)).Named("init")
	g.Dispatch(saxpy, float32(1))
	g.Copy(y, x).Named("back")
	e, err := g.Compile()
	require.NoError(t, err)
	dot := e.DOT()
	for _, want := range []string{`n0 [label="0 fill init\nest. `, `n1 [label="1 dispatch\nest. `, `n2 [label="2 copy back\nest. `} {
		assert.Contains(t, dot, want)
	}
}
