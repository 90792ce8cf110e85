package graph_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/graph"
	"github.com/vkflow/vkflow/kernels"
	"github.com/vkflow/vkflow/timeline"
)

// A run is admitted whole or not at all: with room for two held submits,
// a run of four chained submits behind an unsignalled gate is refused with
// ErrBusy and none of it runs, not even after the gate opens (issue 22,
// item 2: half the graph ran). A run that fits is then admitted.
func TestRunAdmittedWholeOrNotAtAll(t *testing.T) {
	const n = 1024
	m, x, y, xv := newFixture(t, n, vkflow.WithMaxHeldSubmits(2))
	add, err := kernels.Add(m, y, x, y) // y = y + x
	require.NoError(t, err)
	g, err := graph.New(m)
	require.NoError(t, err)
	for range 4 {
		g.Dispatch(add)
	}
	e, err := g.Compile(graph.MaxNodesPerSubmit(1))
	require.NoError(t, err)
	gate, err := timeline.New(m, 0)
	require.NoError(t, err)

	p := e.RunAsync(graph.Wait(gate, 1))
	require.ErrorIs(t, p.Err(), vkflow.ErrBusy)
	assert.Empty(t, m.Runtime().Held(), "a refused run holds nothing")
	require.NoError(t, gate.Signal(1))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.ErrorIs(t, p.Wait(ctx), vkflow.ErrBusy)
	// An empty run of work on the queue, then read y: still zeros.
	require.NoError(t, e.Run(ctx, graph.Wait(gate, 1)), "the same run fits once nothing waits")
	yv, err := y.Float32s()
	require.NoError(t, err)
	assert.Equal(t, 4*xv[7], yv[7], "only the admitted run added x, four times")
}
