package dlpack_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/dlpack"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/timeline"
)

// A refused export does nothing: an export that copies on the GPU and
// signals the consumer's point is one batch, admitted whole or refused
// whole, so a signal the scheduler refuses (a value that does not
// increase, or ErrBusy at the held-submit bound) leaves no copy submitted,
// no new use of the tensor, no live export and no reference behind.
func TestExportRefusedSubmitsNothing(t *testing.T) {
	m, _ := testutil.Manager(t, vkflow.WithMaxHeldSubmits(1))
	x, err := tensor.New(m, tensor.Float32, []int{1 << 16})
	require.NoError(t, err)
	defer x.Close()
	require.NoError(t, x.WriteBytes(make([]byte, 4<<16)))

	tl, err := timeline.New(m, 5)
	require.NoError(t, err)
	defer tl.Close()
	// busyTL has a signal held back (it waits for gate, which nobody has
	// signalled yet), which fills the held-submit bound of 1: a later
	// signal of busyTL would be held too, and is ErrBusy.
	gate, err := timeline.New(m, 0)
	require.NoError(t, err)
	defer gate.Close()
	busyTL, err := timeline.New(m, 0)
	require.NoError(t, err)
	defer busyTL.Close()
	held, err := sequence.New(m, 0)
	require.NoError(t, err)
	defer held.Close()
	hp := held.Submit(context.Background(), sequence.Wait(gate, 1), sequence.Signal(busyTL, 1))
	require.NoError(t, hp.Err())

	q, err := m.Runtime().Queue(0)
	require.NoError(t, err)
	vulkan := &dlpack.Device{Type: dlpack.Vulkan, ID: int32(m.Runtime().Index)}
	cases := []struct {
		name string
		opts dlpack.Options
		is   error
	}{
		{"copy, consumer value not increasing", dlpack.Options{Device: vulkan, Copy: dlpack.CopyAlways,
			Consumer: timeline.Point{Timeline: tl, Value: 5}}, vkflow.ErrInvalid},
		{"copy, consumer signal over the held bound", dlpack.Options{Device: vulkan, Copy: dlpack.CopyAlways,
			Consumer: timeline.Point{Timeline: busyTL, Value: 2}}, vkflow.ErrBusy},
		{"no copy, consumer signal over the held bound", dlpack.Options{Device: vulkan,
			Consumer: timeline.Point{Timeline: busyTL, Value: 2}}, vkflow.ErrBusy},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			submitted, use, live := q.Submitted(), x.Object().LastUse(0), dlpack.Live()
			_, err := dlpack.Export(context.Background(), x, c.opts)
			require.ErrorIs(t, err, c.is)
			assert.Equal(t, submitted, q.Submitted(), "batches submitted by the refused export")
			assert.Equal(t, use, x.Object().LastUse(0), "the tensor's last use")
			assert.Equal(t, live, dlpack.Live())
		})
	}
	require.NoError(t, gate.Signal(1))
	require.NoError(t, hp.Wait(context.Background()))
	require.NoError(t, x.Close())
	assert.True(t, x.Closed(), "no reference left behind")
}
