package graph_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/graph"
	"github.com/vkflow/vkflow/internal/kernels"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/sequence"
)

// Seeds the property test found failing, replayed in the variant that
// failed.

// Seed 589 (make soak): a copy reading a range of a dispatch's output got
// no barrier, because an earlier group's barrier covered a shorter range
// starting at the same byte (see TestBarrierCoversTheWholeRead).
func TestGraphPropertySeed589(t *testing.T) {
	ms := propManagers(t)
	propSeed(t, context.Background(), 589, propVariants(ms)[:1])
}

// The reduced seed 589. A dispatch writes y; a copy recorded first reads
// y[0,200) but runs in a later group (it also waits for a copy into w);
// a copy recorded after it reads y[0,100) and runs in an earlier group.
// The barrier before the earlier group makes y[0,100) visible; the later
// group must still get a barrier for y[100,200).
func TestBarrierCoversTheWholeRead(t *testing.T) {
	m, v := testutil.Manager(t)
	const n = 1024
	ts := mutTensors(t, m, n, 5)
	x, y, z, w, u := ts[0], ts[1], ts[2], ts[3], ts[4]
	saxpy, err := kernels.Saxpy(m, x, y)
	require.NoError(t, err)
	g, err := graph.New(m)
	require.NoError(t, err)
	g.Input(x, y)
	g.Dispatch(saxpy, float32(1)).Named("y+=x")                // level 0
	g.Fill(z, float32(7)).Named("fill z")                      // level 0
	g.Copy(z, w).Named("w=z")                                  // level 1
	g.Copy(y, w, sequence.Region{Len: 200}).Named("w[:200]=y") // level 2: reads y[0,200)
	g.Copy(y, u, sequence.Region{Len: 100}).Named("u[:100]=y") // level 1: reads y[0,100)
	e, err := g.Compile()
	require.NoError(t, err)
	t.Log(e.String())
	assert.NoError(t, graph.CheckSchedule(e))
	require.NoError(t, e.Run(context.Background()))
	require.NoError(t, e.Close())
	assert.Empty(t, v.Messages())
	want := ramp(n, 2) // y = x + y, both ramps
	wv, err := w.Float32s()
	require.NoError(t, err)
	assert.Equal(t, want[:200], wv[:200])
}
