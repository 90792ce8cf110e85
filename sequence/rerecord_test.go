package sequence_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/internal/kernels"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
)

// rerecordCase is two saxpy dispatches in one sequence, evaluated once,
// then both algorithms re-bound to new tensors, the second one's output
// closed: a Rerecord now fails at its second dispatch, after the first
// one's snapshot succeeded.
type rerecordCase struct {
	m              *vkflow.Manager
	v              *testutil.Validation
	x1, y1, x2, y2 *tensor.Tensor
	nx1, ny1, nx2  *tensor.Tensor // ny2 is closed
	axpy1, axpy2   *algorithm.Algorithm
	seq            *sequence.Sequence
}

func newRerecordCase(t *testing.T, extra func(*rerecordCase)) *rerecordCase {
	m, v := testutil.Manager(t)
	f := func(vals ...float32) *tensor.Tensor {
		x, err := tensor.FromSlice(m, vals)
		require.NoError(t, err)
		return x
	}
	c := &rerecordCase{m: m, v: v}
	c.x1, c.y1, c.x2, c.y2 = f(1, 2), f(0, 0), f(3, 4), f(0, 0)
	var err error
	c.axpy1, err = kernels.Saxpy(m, c.x1, c.y1)
	require.NoError(t, err)
	c.axpy2, err = kernels.Saxpy(m, c.x2, c.y2)
	require.NoError(t, err)
	c.seq, err = sequence.New(m, 0)
	require.NoError(t, err)
	c.seq.Dispatch(c.axpy1, float32(1)).Dispatch(c.axpy2, float32(1))
	if extra != nil {
		extra(c)
	}
	require.NoError(t, c.seq.Eval(ctx))

	var ny2 *tensor.Tensor
	c.nx1, c.ny1, c.nx2, ny2 = f(100, 100), f(0, 0), f(200, 200), f(0, 0)
	require.NoError(t, c.axpy1.Bind(c.nx1, c.ny1))
	require.NoError(t, c.axpy2.Bind(c.nx2, ny2))
	require.NoError(t, ny2.Close())
	require.ErrorIs(t, c.seq.Rerecord(), vkflow.ErrClosed)
	return c
}

// expect checks the tensors' values.
func (c *rerecordCase) expect(t *testing.T, want map[*tensor.Tensor][]float32) {
	t.Helper()
	for x, w := range want {
		got, err := x.Float32s()
		require.NoError(t, err)
		assert.Equal(t, w, got)
	}
}

// closeAll closes everything and checks that no object, allocation or
// reference is left (a leaked or doubly released reference shows in Live,
// MemStats, or a crash) and that the layer reported nothing.
func (c *rerecordCase) closeAll(t *testing.T) {
	for _, x := range []interface{ Close() error }{c.seq, c.axpy1, c.axpy2, c.x1, c.y1, c.x2, c.y2, c.nx1, c.ny1, c.nx2} {
		require.NoError(t, x.Close())
	}
	assert.Zero(t, c.m.MemStats().Allocations, "allocations left")
	assert.Zero(t, c.m.Runtime().Live(), "objects left")
	require.NoError(t, c.m.Close())
	assert.Empty(t, c.v.Messages())
}

// A Rerecord that fails at its second dispatch (a tensor newly bound to
// that algorithm was closed) changes nothing: the sequence still runs with
// its old bindings, and closing everything leaves nothing behind.
func TestRerecordAllOrNothing(t *testing.T) {
	c := newRerecordCase(t, func(c *rerecordCase) { c.seq.SyncLocal(c.y1, c.y2) })
	for i := 0; i < 2; i++ {
		require.NoError(t, c.seq.Eval(ctx), "the old bindings still run")
	}
	c.expect(t, map[*tensor.Tensor][]float32{c.y1: {3, 6}, c.y2: {9, 12}, c.ny1: {0, 0}})

	// With a live tensor bound instead, Rerecord succeeds and both
	// dispatches use their new bindings.
	require.NoError(t, c.axpy2.Bind(c.nx2, c.y2))
	require.NoError(t, c.seq.Rerecord())
	require.NoError(t, c.seq.Eval(ctx))
	c.expect(t, map[*tensor.Tensor][]float32{c.y1: {3, 6}, c.ny1: {100, 100}, c.y2: {209, 212}})
	c.closeAll(t)
}

// After a failed Rerecord, anything that rebuilds the command buffer
// (recording another op) still uses the old bindings of every dispatch, and
// every reference is released exactly once. (TestRerecordAllOrNothing
// cannot tell: its failed Rerecord is followed by a successful one, which
// hides a half-applied one.)
func TestRerecordFailureThenRebuild(t *testing.T) {
	c := newRerecordCase(t, nil)
	// A new op rebuilds the command buffer.
	require.NoError(t, c.seq.SyncLocal(c.y1, c.y2, c.ny1).Eval(ctx))
	c.expect(t, map[*tensor.Tensor][]float32{c.y1: {2, 4}, c.y2: {6, 8}, c.ny1: {0, 0}})
	c.closeAll(t)
}
