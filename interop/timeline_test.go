package interop_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/interop"
	"github.com/vkflow/vkflow/timeline"
	"github.com/vkflow/vkflow/vk"
)

// Where timelines cannot be shared (lavapipe lacks
// VK_KHR_external_semaphore_fd), every timeline call says so, names the
// extension, and still consumes the fd it was given.
func TestTimelinesUnsupported(t *testing.T) {
	m, _ := testutil.Manager(t)
	if interop.TimelinesSupported(m) == nil {
		t.Skip("this device shares timelines; TestTimelineRoundTrip covers it")
	}
	unsupported := func(t *testing.T, err error) {
		t.Helper()
		assert.ErrorIs(t, err, vkflow.ErrUnsupported)
		assert.ErrorContains(t, err, vk.ExternalSemaphoreFDExtension)
	}
	unsupported(t, interop.TimelinesSupported(m))

	_, err := timeline.New(m, 0, timeline.Exportable())
	unsupported(t, err)

	tl, err := timeline.New(m, 0)
	require.NoError(t, err)
	fd, err := interop.ExportTimeline(tl)
	unsupported(t, err)
	assert.Equal(t, -1, fd)

	base := openFDs(t)
	var p [2]int
	require.NoError(t, syscall.Pipe2(p[:], syscall.O_CLOEXEC))
	require.NoError(t, syscall.Close(p[1]))
	got, err := interop.ImportTimeline(m, p[0])
	unsupported(t, err)
	assert.Nil(t, got)
	assert.Equal(t, base, openFDs(t), "ImportTimeline consumed the fd")
}

// Argument errors come before anything else, on every device.
func TestTimelineErrors(t *testing.T) {
	m, _ := testutil.Manager(t)
	_, err := interop.ExportTimeline(nil)
	assert.ErrorIs(t, err, vkflow.ErrInvalid)

	tl, err := timeline.New(m, 0)
	require.NoError(t, err)
	require.NoError(t, tl.Close())
	_, err = interop.ExportTimeline(tl)
	assert.ErrorIs(t, err, vkflow.ErrClosed)

	closed, _ := testutil.Manager(t)
	require.NoError(t, closed.Close())
	assert.ErrorIs(t, interop.TimelinesSupported(closed), vkflow.ErrClosed)
	assert.ErrorIs(t, interop.Supported(closed), vkflow.ErrClosed)
	base := openFDs(t)
	fd, err := syscall.Open("/dev/null", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	require.NoError(t, err)
	_, err = interop.ImportTimeline(closed, fd)
	assert.ErrorIs(t, err, vkflow.ErrClosed)
	assert.Equal(t, base, openFDs(t), "ImportTimeline consumed the fd")
	_, err = interop.ImportTimeline(m, -1)
	assert.ErrorIs(t, err, vkflow.ErrInvalid)
}

// On a device that shares timelines: a timeline exported from one Manager
// and imported into another is one counter, and both sides are shared.
func TestTimelineRoundTrip(t *testing.T) {
	a, _ := testutil.Manager(t)
	b, _ := testutil.Manager(t)
	if err := interop.TimelinesSupported(a); err != nil {
		t.Skipf("timelines cannot be shared here: %v", err)
	}
	x, err := timeline.New(a, 1, timeline.Exportable())
	require.NoError(t, err)
	assert.True(t, x.Shared())
	plain, err := timeline.New(a, 0)
	require.NoError(t, err)
	_, err = interop.ExportTimeline(plain)
	assert.ErrorIs(t, err, vkflow.ErrInvalid, "a timeline created without Exportable")

	fd, err := interop.ExportTimeline(x)
	require.NoError(t, err)
	y, err := interop.ImportTimeline(b, fd)
	require.NoError(t, err)
	assert.True(t, y.Shared())
	v, err := y.Value()
	require.NoError(t, err)
	assert.Equal(t, uint64(1), v, "the import starts at the exporter's value")

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, x.Signal(5))
	require.NoError(t, y.Wait(ctx, 5), "a host signal on one side, seen by the other")
	require.NoError(t, y.Signal(9))
	require.NoError(t, x.Wait(ctx, 9))
}
