package opcore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/internal/fault"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/timeline"
	"github.com/vkflow/vkflow/vk"
)

// An eager call on a tensor whose producer failed is refused with the
// producer's failure (the CUDA user's sticky error), queues nothing, and
// the stream goes on working; once the tensor is written again it is
// usable (issue 22, item 11).
func TestStreamRefusesFailedInput(t *testing.T) {
	m, _ := testutil.Manager(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := ops.NewStream(m)
	require.NoError(t, err)
	defer s.Close()
	x, err := tensor.FromSlice(m, []float32{1, 2, 3, 4})
	require.NoError(t, err)
	y, err := tensor.FromSlice(m, []float32{10, 20, 30, 40})
	require.NoError(t, err)
	gate, err := timeline.New(m, 0)
	require.NoError(t, err)
	seq, err := sequence.New(m, 0)
	require.NoError(t, err)
	defer seq.Close()
	seq.Fill(x, float32(5))
	p := seq.Submit(ctx, sequence.Wait(gate, 1))
	fault.Start()
	fault.Fail(fault.QueueSubmit, 1, int32(vk.ErrorOutOfDeviceMemory), false)
	require.NoError(t, gate.Signal(1))
	fault.Stop()
	require.ErrorIs(t, p.Wait(ctx), vk.ErrOutOfDeviceMemory)

	_, err = s.Call("add", []*tensor.Tensor{x, y}, nil, ops.Attrs{})
	assert.ErrorIs(t, err, vk.ErrOutOfDeviceMemory)
	assert.ErrorIs(t, x.Wait(ctx), vk.ErrOutOfDeviceMemory)
	require.NoError(t, s.Synchronize(ctx), "nothing was queued")

	outs, err := s.Call("add", []*tensor.Tensor{y, y}, nil, ops.Attrs{})
	require.NoError(t, err, "the stream goes on")
	require.NoError(t, outs[0].Wait(ctx))
	// Written again, x is usable.
	_, err = s.Call("add", []*tensor.Tensor{y, y}, []*tensor.Tensor{x}, ops.Attrs{})
	require.NoError(t, err)
	require.NoError(t, x.Wait(ctx))
	got, err := x.Float32s()
	require.NoError(t, err)
	assert.Equal(t, []float32{20, 40, 60, 80}, got)
}
