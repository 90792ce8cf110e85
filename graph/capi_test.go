package graph_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/graph"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/tensor"
)

// A read of a tensor that no node writes and Input did not declare draws
// one warning, whether the tensor is read once or twice (found through
// the C API's warnings text: a single read drew none).
func TestWarnsUnwrittenRead(t *testing.T) {
	m, _ := testutil.Manager(t)
	for _, reads := range []int{1, 2} {
		x, err := tensor.New(m, tensor.Float32, []int{64})
		require.NoError(t, err)
		ys := make([]*tensor.Tensor, reads)
		g, err := graph.New(m)
		require.NoError(t, err)
		for i := range ys {
			ys[i], err = tensor.New(m, tensor.Float32, []int{64})
			require.NoError(t, err)
			g.Copy(x, ys[i])
		}
		e, err := g.Compile()
		require.NoError(t, err)
		assert.Len(t, e.Warnings(), 1, "%d reads: %q", reads, e.Warnings())
		if w := e.Warnings(); len(w) == 1 {
			assert.Contains(t, w[0], "node 0 copy", "the first read is named")
		}
		require.NoError(t, e.Close())
	}
}

// A run that completed on the GPU but was not waited for keeps its
// results: a later RunAsync must not hand its staging buffers to the next
// run before the first run's downloads are read (found while making
// Python's run_async + PendingError test deterministic).
func TestUnwaitedRunKeepsItsDownload(t *testing.T) {
	m, _ := testutil.Manager(t)
	ctx := context.Background()
	const n = 256
	x, err := tensor.New(m, tensor.Float32, []int{n})
	require.NoError(t, err)
	y, err := tensor.New(m, tensor.Float32, []int{n})
	require.NoError(t, err)
	in, out := make([]float32, n), make([]float32, n)
	g, err := graph.New(m)
	require.NoError(t, err)
	g.Upload(x, in)
	g.Copy(x, y)
	g.Download(y, out)
	e, err := g.Compile()
	require.NoError(t, err)
	defer e.Close()
	done := func(p graph.Pending) {
		deadline := time.Now().Add(10 * time.Second)
		for !p.Done() && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		require.True(t, p.Done())
	}
	for i := range in {
		in[i] = 1
	}
	p1 := e.RunAsync()
	done(p1)
	for i := range in {
		in[i] = 2
	}
	p2 := e.RunAsync() // run 1 is complete on the GPU: accepted
	done(p2)
	require.NoError(t, p1.Wait(ctx))
	assert.Equal(t, float32(1), out[0], "run 1's Wait gives run 1's result")
	require.NoError(t, p2.Wait(ctx))
	assert.Equal(t, float32(2), out[0])
}

// A Wait that failed to copy a run's downloads (the Exec was closed first)
// fails the same way every time: a second Wait must not report success
// with the host slices never written.
func TestWaitAfterCloseKeepsFailing(t *testing.T) {
	m, _ := testutil.Manager(t)
	ctx := context.Background()
	x, err := tensor.FromSlice(m, []float32{1, 2, 3, 4})
	require.NoError(t, err)
	out := make([]float32, 4)
	g, err := graph.New(m)
	require.NoError(t, err)
	g.Download(x, out)
	e, err := g.Compile()
	require.NoError(t, err)
	p := e.RunAsync()
	require.NoError(t, e.Close())
	for i := range 2 {
		err := p.Wait(ctx)
		if err == nil {
			assert.Equal(t, []float32{1, 2, 3, 4}, out, "Wait %d succeeded: the downloads must be there", i)
		} else {
			assert.ErrorIs(t, err, vkflow.ErrClosed, "Wait %d", i)
		}
	}
}
