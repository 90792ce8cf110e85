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
	"github.com/vkflow/vkflow/timeline"
	"github.com/vkflow/vkflow/vk"
)

// blockQueue0 submits to physical queue 0, directly (the scheduler would
// hold it back), a batch that waits for value 1 of the returned timeline:
// everything submitted to the queue after it waits until the test signals
// 1, as behind a hung GPU.
func blockQueue0(t *testing.T, m *vkflow.Manager) *timeline.Timeline {
	t.Helper()
	gate, err := timeline.New(m, 0)
	require.NoError(t, err)
	q, err := m.Runtime().Queue(0)
	require.NoError(t, err)
	q.Lock()
	_, err = q.SubmitLocked(&vk.Submit{WaitSems: []vk.Semaphore{gate.Semaphore()}, WaitValues: []uint64{1}, WaitStages: []uint32{vk.StageAllCommands}}, nil)
	q.Unlock()
	require.NoError(t, err)
	return gate
}

// A staging transfer behind GPU work that never completes ends in a typed
// error after the Manager's close timeout instead of hanging the host read.
// The copy may still run later, so its memory is not freed until it has
// completed. Queue 0 is blocked with a submit, made directly on the queue
// (the scheduler would hold it back), that waits on a timeline nobody has
// signalled yet; the host signals it at the end and everything drains. The
// timeout also bounds the zero fill of the fresh block under FromSlice, so
// it leaves room for a loaded machine.
func TestStagingWaitIsBounded(t *testing.T) {
	m, _ := testutil.Manager(t, vkflow.WithStagedDeviceMemory(), vkflow.WithCloseTimeout(time.Second))
	x, err := tensor.FromSlice(m, []float32{1, 2, 3, 4})
	require.NoError(t, err)
	before := m.MemStats()
	gate := blockQueue0(t, m)

	start := time.Now()
	_, err = x.Float32s()
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "staging download")
	assert.Less(t, time.Since(start), 5*time.Second)

	// The copy is stuck: a new transfer waits for it first (bounded too),
	// and a tensor whose upload timed out keeps its memory until the copy
	// completes.
	_, err = tensor.FromSlice(m, []float32{5, 6})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "earlier copy")

	require.NoError(t, gate.Signal(1))
	got, err := x.Float32s()
	require.NoError(t, err, "the ring works again once the GPU caught up")
	assert.Equal(t, []float32{1, 2, 3, 4}, got)
	require.NoError(t, gate.Close())
	assert.Equal(t, before.Allocations, m.MemStats().Allocations, "the stuck copy's memory is freed once it completed")
}
