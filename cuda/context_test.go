package cuda

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/internal/core"
)

// Context.Close with live children: the Context refuses new work at once,
// the children keep working, and the primary context is released when the
// last of them closes.
func TestContextCloseWithLiveChildren(t *testing.T) {
	f, ctx := oneGPU(t)
	m, err := ctx.ImportMemory(newFD(t), 64, false, 0, 64)
	require.NoError(t, err)
	sem, err := ctx.ImportTimeline(newFD(t))
	require.NoError(t, err)
	s, err := ctx.NewStream()
	require.NoError(t, err)

	require.NoError(t, ctx.Close())
	assert.Equal(t, 1, f.retained[100], "children hold the primary context")
	require.NoError(t, ctx.Close(), "Close is idempotent")
	assert.Equal(t, 1, f.retained[100])

	fd := newFD(t)
	_, err = ctx.ImportMemory(fd, 64, false, 0, 64)
	require.ErrorIs(t, err, core.ErrClosed)
	_, err = ctx.ImportTimeline(fd)
	require.ErrorIs(t, err, core.ErrClosed)
	stillOurs(t, fd)
	_, err = ctx.NewStream()
	require.ErrorIs(t, err, core.ErrClosed)
	require.ErrorIs(t, ctx.Synchronize(0), core.ErrClosed)

	require.NoError(t, sem.WaitAsync(s, 1))
	require.NoError(t, s.Synchronize())
	assert.NotZero(t, m.Ptr())

	for _, c := range []interface{ Close() error }{m, sem} {
		require.NoError(t, c.Close())
		assert.Equal(t, 1, f.retained[100], "still held by the stream")
	}
	require.NoError(t, s.Close())
	assert.Zero(t, f.live(), "the last child released the primary context")
	assert.Empty(t, f.violations)
}

func TestContextClose(t *testing.T) {
	f, ctx := oneGPU(t)
	require.NoError(t, ctx.Close())
	assert.Zero(t, f.live())
	assert.Equal(t, 1, countOf(f.calls(), "cuDevicePrimaryCtxRelease"))
	require.NoError(t, ctx.Close())
	assert.Equal(t, 1, countOf(f.calls(), "cuDevicePrimaryCtxRelease"), "released once")

	f, ctx = oneGPU(t)
	f.failNext("cuDevicePrimaryCtxRelease", 201)
	require.EqualError(t, ctx.Close(), "cuda: Context.Close: cuDevicePrimaryCtxRelease: CUDA_ERROR_INVALID_CONTEXT")
	require.NoError(t, ctx.Close())
}

func countOf(calls []string, call string) int {
	n := 0
	for _, c := range calls {
		if c == call {
			n++
		}
	}
	return n
}

// Two Contexts on one device retain its primary context twice; each Close
// releases once.
func TestTwoContextsOneDevice(t *testing.T) {
	f := newFake(fakeDevice{"GPU", uuidOf(1)})
	drv := mustOpen(t, f)
	a, err := drv.DeviceByUUID(uuidOf(1))
	require.NoError(t, err)
	b, err := drv.DeviceByUUID(uuidOf(1))
	require.NoError(t, err)
	assert.Equal(t, 2, f.retained[100])
	require.NoError(t, a.Close())
	assert.Equal(t, 1, f.retained[100])
	require.NoError(t, b.Synchronize(0))
	require.NoError(t, b.Close())
	assert.Zero(t, f.live())
}

func TestStreams(t *testing.T) {
	f, ctx := oneGPU(t)
	s, err := ctx.NewStream()
	require.NoError(t, err)
	assert.Equal(t, uint32(cuStreamNonBlocking), f.streams[uintptr(s)])
	require.NoError(t, s.Synchronize())
	require.NoError(t, ctx.Synchronize(s))
	require.NoError(t, ctx.Synchronize(0), "the legacy default stream")
	require.NoError(t, ctx.Synchronize(Stream(0x5eed0000)), "a foreign stream")
	assert.Equal(t, 4, countOf(f.calls(), "cuStreamSynchronize"))

	require.NoError(t, s.Close())
	assert.Empty(t, f.streams)
	before := len(f.calls())
	for _, st := range []Stream{s, 0, Stream(0x5eed0000)} {
		require.ErrorIs(t, st.Close(), core.ErrInvalid, "closed or foreign: %#x", uintptr(st))
		require.ErrorIs(t, st.Synchronize(), core.ErrInvalid)
	}
	assert.Len(t, f.calls(), before, "nothing reaches the driver")
	require.NoError(t, ctx.Close())
	assert.Zero(t, f.live())
	assert.Empty(t, f.violations)
}

func TestStreamErrors(t *testing.T) {
	f, ctx := oneGPU(t)
	f.failNext("cuStreamCreate", 2)
	s, err := ctx.NewStream()
	assert.Zero(t, s)
	require.EqualError(t, err, "cuda: Context.NewStream: cuStreamCreate: CUDA_ERROR_OUT_OF_MEMORY")

	s, err = ctx.NewStream()
	require.NoError(t, err)
	f.failNext("cuStreamSynchronize", 700)
	require.EqualError(t, s.Synchronize(), "cuda: Stream.Synchronize: cuStreamSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS")
	f.failNext("cuStreamSynchronize", 700)
	require.EqualError(t, ctx.Synchronize(s), "cuda: Context.Synchronize: cuStreamSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS")
	f.failNext("cuStreamDestroy", 400)
	require.EqualError(t, s.Close(), "cuda: Stream.Close: cuStreamDestroy: CUDA_ERROR_INVALID_HANDLE")
	require.ErrorIs(t, s.Close(), core.ErrInvalid, "a failed Close still forgets the stream")

	require.NoError(t, ctx.Close())
	assert.Equal(t, 1, f.live(), "the stream whose destroy failed; the context was released")
}

// Work and Close racing from many goroutines: no panic, no data race (under
// -race), every push popped on its own thread, nothing left at the end.
func TestConcurrentUseAndClose(t *testing.T) {
	f, ctx := oneGPU(t)
	sem, err := ctx.ImportTimeline(newFD(t))
	require.NoError(t, err)
	m, err := ctx.ImportMemory(newFD(t), 4096, true, 0, 4096)
	require.NoError(t, err)
	s, err := ctx.NewStream()
	require.NoError(t, err)

	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				v := uint64(g*1000 + i)
				if err := sem.SignalAsync(s, v); err != nil {
					assert.ErrorIs(t, err, core.ErrClosed)
				}
				if err := sem.WaitAsync(0, v); err != nil {
					assert.ErrorIs(t, err, core.ErrClosed)
				}
				_ = m.Ptr()
				if err := ctx.Synchronize(0); err != nil {
					assert.ErrorIs(t, err, core.ErrClosed)
				}
			}
		})
	}
	for range 3 {
		wg.Go(func() {
			assert.NoError(t, sem.Close())
			assert.NoError(t, m.Close())
			assert.NoError(t, ctx.Close())
		})
	}
	wg.Wait()
	require.NoError(t, s.Close())
	assert.Zero(t, f.live())
	assert.Zero(t, f.stackDepth())
	assert.Empty(t, f.violations)
}
