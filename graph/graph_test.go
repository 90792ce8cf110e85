package graph_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/graph"
	"github.com/vkflow/vkflow/internal/kernels"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/timeline"
)

func ramp(n int, scale float32) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(i%97) * scale
	}
	return v
}

// A chain of dependent saxpy dispatches replays with the right values,
// run after run, in one submit.
func TestChain(t *testing.T) {
	m, _ := testutil.Manager(t)
	ctx := context.Background()
	const n, steps = 4096, 50
	xv := ramp(n, 1)
	x, err := tensor.FromSlice(m, xv)
	require.NoError(t, err)
	y, err := tensor.New(m, tensor.Float32, []int{n})
	require.NoError(t, err)
	saxpy, err := kernels.Saxpy(m, x, y)
	require.NoError(t, err)
	g, err := graph.New(m)
	require.NoError(t, err)
	g.Input(x)
	g.Fill(y, float32(0))
	for range steps {
		g.Dispatch(saxpy, float32(1))
	}
	out := make([]float32, n)
	g.Download(y, out)
	e, err := g.Compile()
	require.NoError(t, err)
	assert.Empty(t, e.Warnings())
	t.Log(e.String())
	for run := 0; run < 3; run++ {
		require.NoError(t, e.Run(ctx))
		for i := range out {
			if want := xv[i] * steps; out[i] != want {
				t.Fatalf("run %d: y[%d] = %v, want %v", run, i, out[i], want)
			}
		}
	}
	require.NoError(t, e.Close())
	require.NoError(t, e.Close())
}

// A diamond on two logical queues: both branches read a, the join reads
// both. Every run's result is exact, runs back to back.
func TestDiamondTwoQueues(t *testing.T) {
	m, _ := testutil.Manager(t, vkflow.WithQueues(2, false))
	ctx := context.Background()
	const n = 1 << 16
	av := ramp(n, 1)
	a, err := tensor.FromSlice(m, av)
	require.NoError(t, err)
	b, _ := tensor.New(m, tensor.Float32, []int{n})
	c, _ := tensor.New(m, tensor.Float32, []int{n})
	d, _ := tensor.New(m, tensor.Float32, []int{n})
	ab, err := kernels.Add(m, a, a, b) // b = 2a
	require.NoError(t, err)
	ac, err := kernels.Multiply(m, a, a, c) // c = a*a
	require.NoError(t, err)
	bd, err := kernels.Add(m, b, c, d) // d = b + c
	require.NoError(t, err)
	g, _ := graph.New(m)
	g.Input(a)
	g.Dispatch(ab).Named("b=2a")
	g.Dispatch(ac).Named("c=a*a")
	g.Dispatch(bd).Named("d=b+c")
	out := make([]float32, n)
	g.Download(d, out)
	e, err := g.Compile(graph.Place(graph.PlaceSpread))
	require.NoError(t, err)
	s := e.String()
	t.Log(s)
	assert.Contains(t, s, "waits queue")
	// The first run waits for a timeline the host signals only after the
	// next two were tried, so that it is still in flight then, however
	// fast the GPU.
	gate, err := timeline.New(m, 0)
	require.NoError(t, err)
	ps := []graph.Pending{e.RunAsync(graph.Wait(gate, 1))}
	for range 2 {
		ps = append(ps, e.RunAsync())
	}
	require.ErrorIs(t, ps[1].Wait(ctx), vkflow.ErrPending, "a graph with a download runs one at a time")
	require.ErrorIs(t, ps[2].Wait(ctx), vkflow.ErrPending)
	require.NoError(t, gate.Signal(1))
	require.NoError(t, ps[0].Wait(ctx))
	require.NoError(t, e.Run(ctx))
	for i := range out {
		if want := 2*av[i] + av[i]*av[i]; out[i] != want {
			t.Fatalf("d[%d] = %v, want %v", i, out[i], want)
		}
	}
}
