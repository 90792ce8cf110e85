package sequence_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/internal/fault"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/vk"
)

// A prelude whose re-recording failed is not reused for the barriers it
// held before: its command buffer is no longer executable.
func TestPreludeRecordFailure(t *testing.T) {
	m, _ := testutil.Manager(t)
	ctx := context.Background()
	a, err := tensor.New(m, tensor.Float32, []int{64})
	require.NoError(t, err)
	b, err := tensor.New(m, tensor.Float32, []int{64})
	require.NoError(t, err)
	w, err := sequence.New(m, 0)
	require.NoError(t, err)
	r, err := sequence.New(m, 0)
	require.NoError(t, err)
	w.Fill(a, float32(3))
	r.Copy(a, b)
	require.NoError(t, w.Eval(ctx))
	require.NoError(t, r.Eval(ctx)) // prelude: a read after write
	require.NoError(t, w.Eval(ctx))
	require.NoError(t, r.Eval(ctx)) // the prelude re-recorded: a RAW, b WAW
	fault.Start()
	fault.Fail(fault.EndCommandBuffer, 1, int32(vk.ErrorOutOfHostMemory), false)
	err = r.Eval(ctx) // b WAW only: re-recording the prelude fails
	fired := fault.Fired(fault.EndCommandBuffer)
	fault.Stop()
	require.Equal(t, 1, fired)
	require.ErrorIs(t, err, vk.ErrOutOfHostMemory)
	require.NoError(t, w.Eval(ctx))
	require.NoError(t, r.Eval(ctx)) // a RAW, b WAW again
	got, err := b.Float32s()
	require.NoError(t, err)
	require.Equal(t, float32(3), got[63])
	for _, c := range []interface{ Close() error }{w, r, a, b} {
		require.NoError(t, c.Close())
	}
}
