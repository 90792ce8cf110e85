package cuda

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// realDriver opens libcuda.so.1 or skips the test with the reason.
func realDriver(t *testing.T) (*Driver, []Device) {
	t.Helper()
	drv, err := Open()
	if err != nil {
		t.Skipf("no libcuda.so.1: %v", err)
	}
	devs, err := drv.Devices()
	require.NoError(t, err)
	if len(devs) == 0 {
		t.Skip("libcuda.so.1 lists no CUDA device")
	}
	return drv, devs
}

func TestRealDriverDevices(t *testing.T) {
	_, devs := realDriver(t)
	for _, d := range devs {
		t.Log(d)
		assert.NotEmpty(t, d.Name)
		assert.NotEqual(t, [16]byte{}, d.UUID)
	}
	i, err := UUIDMatch(devs[0].UUID, devs)
	require.NoError(t, err, "CUDA UUIDs are unique")
	assert.Equal(t, 0, i)
}

func TestRealDriverContextAndStreams(t *testing.T) {
	drv, devs := realDriver(t)
	ctx, err := drv.DeviceByUUID(devs[0].UUID)
	require.NoError(t, err)
	s, err := ctx.NewStream()
	require.NoError(t, err)
	require.NoError(t, s.Synchronize())
	require.NoError(t, ctx.Synchronize(0), "the legacy default stream")
	require.NoError(t, ctx.Synchronize(Stream(2)), "CU_STREAM_PER_THREAD")
	require.NoError(t, ctx.Close())
	require.NoError(t, s.Synchronize(), "the stream keeps the primary context")
	require.NoError(t, s.Close())
}

func TestRealDriverErrors(t *testing.T) {
	drv, devs := realDriver(t)
	ctx, err := drv.DeviceByUUID(devs[0].UUID)
	require.NoError(t, err)
	defer ctx.Close()

	// /dev/null is no exported memory: the driver must refuse it with an
	// error naming the call, and the fd stays ours.
	fd := newFD(t)
	_, err = ctx.ImportMemory(fd, 1<<20, false, 0, 1<<20)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cuImportExternalMemory: CUDA_ERROR_")
	stillOurs(t, fd)

	fd = newFD(t)
	_, err = ctx.ImportTimeline(fd)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cuImportExternalSemaphore: CUDA_ERROR_")
	stillOurs(t, fd)
}
