package graph_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/graph"
	"github.com/vkflow/vkflow/internal/kernels"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/tensor"
)

// ring records the pattern of examples/rasterblend in miniature, on two
// pinned queues: for each pass i, "raster" (a fill of the slot's scalar,
// then frame[i mod k] = scalar*ones) on queue 0 and "blend" (img +=
// frame[i mod k]) on queue 1. After the graph, img has grown by
// 1+2+...+passes.
func ring(t *testing.T, m *vkflow.Manager, n, k, passes int) (*graph.Graph, *tensor.Tensor) {
	t.Helper()
	ones := make([]float32, n)
	for i := range ones {
		ones[i] = 1
	}
	onesT, err := tensor.FromSlice(m, ones)
	require.NoError(t, err)
	img, err := tensor.New(m, tensor.Float32, []int{n})
	require.NoError(t, err)
	scal, frames := make([]*tensor.Tensor, k), make([]*tensor.Tensor, k)
	raster, blend := make([]*algorithm.Algorithm, k), make([]*algorithm.Algorithm, k)
	for s := range k {
		scal[s], err = tensor.New(m, tensor.Float32, []int{n})
		require.NoError(t, err)
		frames[s], err = tensor.New(m, tensor.Float32, []int{n}, tensor.In(tensor.Storage))
		require.NoError(t, err)
		raster[s], err = kernels.Multiply(m, scal[s], onesT, frames[s])
		require.NoError(t, err)
		blend[s], err = kernels.Saxpy(m, frames[s], img)
		require.NoError(t, err)
	}
	g, err := graph.New(m)
	require.NoError(t, err)
	g.Input(onesT, img) // img accumulates over runs
	for i := range passes {
		s := i % k
		g.Fill(scal[s], float32(i+1)).OnQueue(0)
		g.Dispatch(raster[s]).OnQueue(0)
		g.Dispatch(blend[s], float32(1)).OnQueue(1)
	}
	require.NoError(t, g.Err())
	return g, img
}

// The design the brief suggests for rasterblend: K passes in one
// graph, runs handed over back to back with RunAsync; the cross-run order
// must keep run r+1's rasters from overwriting frames run r's blends still
// read (a write-after-read across queues and runs) and keep the blends'
// accumulation in order. Validation (synchronization included) must stay
// quiet and the sum must be exact.
func TestExamplesRingRunsBackToBack(t *testing.T) {
	m, _ := testutil.Manager(t, vkflow.WithQueues(2, false))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const n, runs = 4096, 6
	for _, k := range []int{1, 2, 3} {
		g, img := ring(t, m, n, k, k)
		e, err := g.Compile()
		require.NoError(t, err)
		require.Empty(t, e.Warnings())
		var ps []graph.Pending
		for range runs {
			ps = append(ps, e.RunAsync())
		}
		for r, p := range ps {
			require.NoError(t, p.Wait(ctx), "K=%d run %d", k, r)
		}
		got, err := img.Float32s()
		require.NoError(t, err)
		want := float32(runs * k * (k + 1) / 2)
		for i, v := range got {
			if v != want {
				t.Fatalf("K=%d: img[%d] = %v, want %v", k, i, v, want)
			}
		}
		require.NoError(t, e.Close())
	}
}

// The whole render in one graph over a ring of K slots, as
// examples/rasterblend records it: the pass count need not be a multiple
// of K, and two back-to-back runs must add up exactly.
func TestExamplesRingWholeRender(t *testing.T) {
	m, _ := testutil.Manager(t, vkflow.WithQueues(2, false))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const n, passes = 4096, 7
	g, img := ring(t, m, n, 3, passes)
	e, err := g.Compile()
	require.NoError(t, err)
	t.Log(e.String())
	p0, p1 := e.RunAsync(), e.RunAsync()
	require.NoError(t, p0.Wait(ctx))
	require.NoError(t, p1.Wait(ctx))
	got, err := img.Float32s()
	require.NoError(t, err)
	want := float32(2 * passes * (passes + 1) / 2)
	for i, v := range got {
		if v != want {
			t.Fatalf("img[%d] = %v, want %v", i, v, want)
		}
	}
	require.NoError(t, e.Close())
}

// Observation, not a defect: in the ring, pass i ≥ K costs three submits
// instead of the two the hand-written timeline version uses. The fill of the
// slot's scalar needs no wait, so it opens a segment of its own on queue 0;
// the raster after it needs blend i-K's segment, which the open segment's
// clock does not cover, so it opens another one that waits. Adding the wait
// to the open segment instead (it has no consumer on another queue yet)
// would save a submit per pass at the price of starting the fill later.
// Set VKFLOW_REPRO=1 to run this check of the two-submits-per-pass schedule.
func TestExamplesRingSubmitsPerPass(t *testing.T) {
	if os.Getenv("VKFLOW_REPRO") == "" {
		t.Skip("schedule improvement, not a defect: set VKFLOW_REPRO=1")
	}
	m, _ := testutil.Manager(t, vkflow.WithQueues(2, false))
	const k, passes = 2, 8
	g, _ := ring(t, m, 1024, k, passes)
	e, err := g.Compile()
	require.NoError(t, err)
	defer func() { require.NoError(t, e.Close()) }()
	s := e.String()
	t.Log(s)
	// One raster and one blend submit per pass.
	require.Contains(t, s, "submits on queues [0 1]")
	require.Regexp(t, `\b16 submits on queues`, s)
}
