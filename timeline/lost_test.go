package timeline_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/fault"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/timeline"
	"github.com/vkflow/vkflow/vk"
)

// Device loss met by a host Signal's check of pending GPU signals is
// sticky like any other.
func TestHostSignalDeviceLostIsSticky(t *testing.T) {
	m, _ := testutil.Manager(t)
	ctx := context.Background()
	tl, err := timeline.New(m, 0)
	require.NoError(t, err)
	s, err := sequence.New(m, 0)
	require.NoError(t, err)
	// A GPU signal the host has not seen land yet: Signal queries the value.
	require.NoError(t, s.Submit(ctx, sequence.Signal(tl, 5)).Wait(ctx))
	fault.Start()
	fault.Fail(fault.SemaphoreCounterValue, 1, int32(vk.ErrorDeviceLost), false)
	err = tl.Signal(10)
	fired := fault.Fired(fault.SemaphoreCounterValue)
	fault.Stop()
	require.Equal(t, 1, fired)
	require.ErrorIs(t, err, vkflow.ErrDeviceLost)
	_, err = tensor.New(m, tensor.Float32, []int{4})
	assert.ErrorIs(t, err, vkflow.ErrDeviceLost, "the loss is sticky")
	require.NoError(t, m.Close())
}

// A timeline that code sharing the VkDevice advanced itself (a DLPack
// consumer signalling a vkflow timeline) refuses a host Signal at or
// below its current value: Vulkan requires a host signal above it.
func TestHostSignalAboveForeignValue(t *testing.T) {
	m, _ := testutil.Manager(t)
	tl, err := timeline.New(m, 0)
	require.NoError(t, err)
	require.NoError(t, m.Runtime().VK.SignalSemaphore(tl.Semaphore(), 7)) // foreign code
	assert.ErrorIs(t, tl.Signal(5), vkflow.ErrInvalid)
	assert.ErrorIs(t, tl.Signal(7), vkflow.ErrInvalid)
	require.NoError(t, tl.Signal(8))
	v, err := tl.Value()
	require.NoError(t, err)
	assert.Equal(t, uint64(8), v)
}
