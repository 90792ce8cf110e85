package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/tensor"
)

// A zero fill behind GPU work that never completes ends in a typed error
// after the Manager's wait timeout instead of hanging tensor.New; the fill
// may still run later, so the next fill waits for it first and nothing it
// writes is freed meanwhile. Queue 0 is blocked as in
// TestStagingWaitIsBounded.
func TestZeroFillWaitIsBounded(t *testing.T) {
	m, _ := testutil.Manager(t, vkflow.WithStagedDeviceMemory(), vkflow.WithCloseTimeout(time.Second))
	// 40 MiB of a 64 MiB block: freed, its bytes are dirty, and the next
	// 40 MiB tensor cannot fit in the 24 MiB still clean.
	const n = 40 << 20 / 4
	x, err := tensor.New(m, tensor.Float32, []int{n}, tensor.In(tensor.Storage))
	require.NoError(t, err)
	require.NoError(t, x.Close())
	fills := m.MemStats().ZeroFills

	gate := blockQueue0(t, m)

	start := time.Now()
	_, err = tensor.New(m, tensor.Float32, []int{n}, tensor.In(tensor.Storage))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "zero fill")
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.Equal(t, fills, m.MemStats().ZeroFills, "a fill that did not complete is not counted")

	// Still stuck: the next fill waits for the earlier one first (bounded).
	_, err = tensor.New(m, tensor.Float32, []int{n}, tensor.In(tensor.Storage))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "earlier vkCmdFillBuffer")

	// Once the GPU catches up, allocation works again.
	require.NoError(t, gate.Signal(1))
	y, err := tensor.New(m, tensor.Float32, []int{n}, tensor.In(tensor.Storage))
	require.NoError(t, err, "zero fills work again once the GPU caught up")
	assert.Greater(t, m.MemStats().ZeroFills, fills)
	require.NoError(t, y.Close())
	require.NoError(t, gate.Close())
}
