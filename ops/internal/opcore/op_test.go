package opcore_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
)

// An Op's lifetime: Run twice, Close idempotent, use after Close is
// ErrClosed, its allocated output stays the caller's; a Manager closed
// under it makes its next use fail cleanly.
func TestOpLifetime(t *testing.T) {
	m, _ := testutil.Manager(t)
	ctx := context.Background()
	a, err := tensor.FromSlice(m, []float32{1, 2, 3})
	require.NoError(t, err)
	op, err := ops.Add(m, a, a, nil)
	require.NoError(t, err)
	assert.Equal(t, "add", op.Name())
	assert.Equal(t, 1, op.Dispatches())
	require.NoError(t, op.Run(ctx))
	require.NoError(t, op.Run(ctx))
	out := op.Out()
	require.NoError(t, op.Close())
	require.NoError(t, op.Close())
	assert.ErrorIs(t, op.Run(ctx), vkflow.ErrClosed)
	got, err := out.Float32s()
	require.NoError(t, err, "the output outlives the Op")
	assert.Equal(t, []float32{2, 4, 6}, got)

	s, err := sequence.New(m, 0)
	require.NoError(t, err)
	defer s.Close()
	assert.ErrorIs(t, op.Record(s).Err(), vkflow.ErrClosed, "recording a closed Op")

	var nilOp *ops.Op
	assert.NoError(t, nilOp.Close())
	assert.ErrorIs(t, nilOp.Run(ctx), vkflow.ErrInvalid)

	// A bad call allocates nothing that survives it.
	ints := tensorOf(t, m, []int32{1, 2, 3})
	before := m.MemStats()
	_, err = ops.Add(m, a, ints, nil)
	assert.ErrorIs(t, err, vkflow.ErrInvalid)
	assert.Equal(t, before, m.MemStats())
}

func TestOpAfterManagerClose(t *testing.T) {
	m, _ := testutil.Manager(t)
	a, err := tensor.FromSlice(m, []float32{1, 2, 3})
	require.NoError(t, err)
	op, err := ops.Exp(m, a, nil)
	require.NoError(t, err)
	require.NoError(t, m.Close())
	assert.ErrorIs(t, op.Run(context.Background()), vkflow.ErrClosed)
	assert.NoError(t, op.Close())
	_, err = ops.Exp(m, a, nil)
	assert.ErrorIs(t, err, vkflow.ErrClosed)
}

func tensorOf[T tensor.Elem](t *testing.T, m *vkflow.Manager, v []T) *tensor.Tensor {
	x, err := tensor.FromSlice(m, v)
	require.NoError(t, err)
	t.Cleanup(func() { _ = x.Close() })
	return x
}
