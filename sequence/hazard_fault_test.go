package sequence_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/internal/fault"
	"github.com/vkflow/vkflow/internal/kernels"
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
	c, err := tensor.New(m, tensor.Float32, []int{64})
	require.NoError(t, err)
	saxpy, err := kernels.Saxpy(m, c, a)
	require.NoError(t, err)
	w, err := sequence.New(m, 0)
	require.NoError(t, err)
	r, err := sequence.New(m, 0)
	require.NoError(t, err)
	x, err := sequence.New(m, 0)
	require.NoError(t, err)
	w.Fill(a, float32(3))
	r.Copy(a, b)
	x.Dispatch(saxpy, float32(1)) // a += c, a compute write
	require.NoError(t, w.Eval(ctx))
	require.NoError(t, r.Eval(ctx)) // prelude: a read after a transfer write
	require.NoError(t, w.Eval(ctx))
	require.NoError(t, r.Eval(ctx)) // the prelude re-recorded: a RAW, b WAW
	require.NoError(t, x.Eval(ctx))
	fault.Start()
	fault.Fail(fault.EndCommandBuffer, 1, int32(vk.ErrorOutOfHostMemory), false)
	// a read after a compute write, b WAW: re-recording the prelude fails.
	// (b WAW alone, a resubmit of r's, would need no prelude: r's command
	// buffer begins with that barrier.)
	err = r.Eval(ctx)
	fired := fault.Fired(fault.EndCommandBuffer)
	fault.Stop()
	require.Equal(t, 1, fired)
	require.ErrorIs(t, err, vk.ErrOutOfHostMemory)
	require.NoError(t, w.Eval(ctx))
	require.NoError(t, r.Eval(ctx)) // a RAW after the fill, b WAW again
	got, err := b.Float32s()
	require.NoError(t, err)
	require.Equal(t, float32(3), got[63])
	for _, c := range []interface{ Close() error }{w, r, x, saxpy, a, b, c} {
		require.NoError(t, c.Close())
	}
}
