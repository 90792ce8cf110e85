package timeline_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/timeline"
	"github.com/vkflow/vkflow/vk"
)

// A wait on a shared timeline goes to the driver at once, where a wait on
// a local timeline is held until the value is promised; a host Signal
// releases it on the GPU either way.
func TestSharedTimelineWait(t *testing.T) {
	for _, shared := range []bool{false, true} {
		name := map[bool]string{false: "local", true: "shared"}[shared]
		t.Run(name, func(t *testing.T) {
			m, _ := testutil.Manager(t)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			tl, err := timeline.New(m, 0)
			require.NoError(t, err)
			if shared {
				// What interop does for exported and imported timelines;
				// lavapipe cannot export one.
				tl.State().SetShared()
			}
			assert.Equal(t, shared, tl.Shared())
			x, err := tensor.New(m, tensor.Uint32, []int{256})
			require.NoError(t, err)
			seq, err := sequence.New(m, 0)
			require.NoError(t, err)
			seq.Fill(x, uint32(7)).SyncLocal(x)
			p := seq.Submit(ctx, sequence.Wait(tl, 1))
			require.NoError(t, p.Err())
			held := m.Runtime().Held()
			if shared {
				assert.Empty(t, held, "a wait on a shared timeline is not held")
			} else {
				assert.Len(t, held, 1)
			}
			assert.False(t, p.Done())
			require.NoError(t, tl.Signal(1), "a host signal of a shared timeline with a wait pending in the driver")
			require.NoError(t, p.Wait(ctx))
			got, err := x.Uint32s()
			require.NoError(t, err)
			assert.Equal(t, uint32(7), got[0])
			assert.Equal(t, uint32(7), got[255])
			v, err := tl.Value()
			require.NoError(t, err)
			assert.Equal(t, uint64(1), v)
		})
	}
}

// Where VK_KHR_external_semaphore_fd is missing or cannot export timelines
// (lavapipe), Exportable timelines are ErrUnsupported naming it; New with
// no options, or a nil one, is unchanged.
func TestExportableTimeline(t *testing.T) {
	m, _ := testutil.Manager(t)
	tl, err := timeline.New(m, 3, nil)
	require.NoError(t, err)
	assert.False(t, tl.Shared())
	before := m.Runtime().MemStats()
	x, err := timeline.New(m, 0, timeline.Exportable())
	if err != nil {
		assert.Nil(t, x)
		assert.ErrorIs(t, err, vkflow.ErrUnsupported)
		assert.ErrorContains(t, err, vk.ExternalSemaphoreFDExtension)
		assert.Equal(t, before, m.Runtime().MemStats())
		return
	}
	assert.True(t, x.Shared(), "an exportable timeline is shared from its creation")
	require.NoError(t, x.Signal(5))
	v, err := x.Value()
	require.NoError(t, err)
	assert.Equal(t, uint64(5), v)
}
