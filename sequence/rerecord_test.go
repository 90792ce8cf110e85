package sequence_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/kernels"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
)

// A Rerecord that fails at its second dispatch (a tensor newly bound to
// that algorithm was closed) changes nothing: the sequence still runs with
// its old bindings, and closing everything leaves no object, allocation or
// reference behind (a leaked or doubly released reference shows in Live,
// MemStats, or a crash).
func TestRerecordAllOrNothing(t *testing.T) {
	m, v := testutil.Manager(t)
	f := func(vals ...float32) *tensor.Tensor {
		x, err := tensor.FromSlice(m, vals)
		require.NoError(t, err)
		return x
	}
	x1, y1, x2, y2 := f(1, 2), f(0, 0), f(3, 4), f(0, 0)
	axpy1, err := kernels.Saxpy(m, x1, y1)
	require.NoError(t, err)
	axpy2, err := kernels.Saxpy(m, x2, y2)
	require.NoError(t, err)
	seq, err := sequence.New(m, 0)
	require.NoError(t, err)
	seq.Dispatch(axpy1, float32(1)).Dispatch(axpy2, float32(1)).SyncLocal(y1, y2)
	require.NoError(t, seq.Eval(ctx))

	// New bindings for both algorithms; the second one's tensor is closed
	// before Rerecord, so its snapshot fails after the first one's succeeded.
	nx1, ny1, nx2, ny2 := f(100, 100), f(0, 0), f(200, 200), f(0, 0)
	require.NoError(t, axpy1.Bind(nx1, ny1))
	require.NoError(t, axpy2.Bind(nx2, ny2))
	require.NoError(t, ny2.Close())
	err = seq.Rerecord()
	require.ErrorIs(t, err, vkflow.ErrClosed)

	for i := 0; i < 2; i++ {
		require.NoError(t, seq.Eval(ctx), "the old bindings still run")
	}
	for _, c := range []struct {
		t    *tensor.Tensor
		want []float32
	}{{y1, []float32{3, 6}}, {y2, []float32{9, 12}}, {ny1, []float32{0, 0}}} {
		got, err := c.t.Float32s()
		require.NoError(t, err)
		assert.Equal(t, c.want, got)
	}

	// With a live tensor bound instead, Rerecord succeeds and both
	// dispatches use their new bindings.
	require.NoError(t, axpy2.Bind(nx2, y2))
	require.NoError(t, seq.Rerecord())
	require.NoError(t, seq.Eval(ctx))
	for _, c := range []struct {
		t    *tensor.Tensor
		want []float32
	}{{y1, []float32{3, 6}}, {ny1, []float32{100, 100}}, {y2, []float32{209, 212}}} {
		got, err := c.t.Float32s()
		require.NoError(t, err)
		assert.Equal(t, c.want, got)
	}

	for _, c := range []interface{ Close() error }{seq, axpy1, axpy2, x1, y1, x2, y2, nx1, ny1, nx2} {
		require.NoError(t, c.Close())
	}
	assert.Zero(t, m.MemStats().Allocations, "allocations left")
	assert.Zero(t, m.Runtime().Live(), "objects left")
	require.NoError(t, m.Close())
	assert.Empty(t, v.Messages())
}

// After a failed Rerecord, anything that rebuilds the command buffer
// (recording another op) still uses the old bindings of every dispatch, and
// every reference is released exactly once. (TestRerecordAllOrNothing
// cannot tell: its failed Rerecord is followed by a successful one, which
// hides a half-applied one.)
func TestRerecordFailureThenRebuild(t *testing.T) {
	m, v := testutil.Manager(t)
	f := func(vals ...float32) *tensor.Tensor {
		x, err := tensor.FromSlice(m, vals)
		require.NoError(t, err)
		return x
	}
	x1, y1, x2, y2 := f(1, 2), f(0, 0), f(3, 4), f(0, 0)
	axpy1, err := kernels.Saxpy(m, x1, y1)
	require.NoError(t, err)
	axpy2, err := kernels.Saxpy(m, x2, y2)
	require.NoError(t, err)
	seq, err := sequence.New(m, 0)
	require.NoError(t, err)
	seq.Dispatch(axpy1, float32(1)).Dispatch(axpy2, float32(1))
	require.NoError(t, seq.Eval(ctx))

	nx1, ny1, nx2, ny2 := f(100, 100), f(0, 0), f(200, 200), f(0, 0)
	require.NoError(t, axpy1.Bind(nx1, ny1))
	require.NoError(t, axpy2.Bind(nx2, ny2))
	require.NoError(t, ny2.Close())
	require.ErrorIs(t, seq.Rerecord(), vkflow.ErrClosed)

	// A new op rebuilds the command buffer.
	require.NoError(t, seq.SyncLocal(y1, y2, ny1).Eval(ctx))
	for _, c := range []struct {
		t    *tensor.Tensor
		want []float32
	}{{y1, []float32{2, 4}}, {y2, []float32{6, 8}}, {ny1, []float32{0, 0}}} {
		got, err := c.t.Float32s()
		require.NoError(t, err)
		assert.Equal(t, c.want, got)
	}

	for _, c := range []interface{ Close() error }{seq, axpy1, axpy2, x1, y1, x2, y2, nx1, ny1, nx2} {
		require.NoError(t, c.Close())
	}
	assert.Zero(t, m.MemStats().Allocations, "allocations left")
	assert.Zero(t, m.Runtime().Live(), "objects left")
	require.NoError(t, m.Close())
	assert.Empty(t, v.Messages())
}
