package cuda

import (
	"errors"
	"math"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/internal/core"
)

// newFD opens /dev/null as a stand-in for an exported opaque fd. The test
// closes it itself where it is still the test's.
func newFD(t *testing.T) int {
	t.Helper()
	fd, err := syscall.Open("/dev/null", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	require.NoError(t, err)
	return fd
}

// stillOurs checks that fd is open and closes it.
func stillOurs(t *testing.T, fd int) {
	t.Helper()
	require.True(t, fdOpen(fd), "fd %d should still be the caller's", fd)
	require.NoError(t, syscall.Close(fd))
}

func TestImportMemory(t *testing.T) {
	f, ctx := oneGPU(t)
	fd := newFD(t)
	m, err := ctx.ImportMemory(fd, 1<<20, true, 4096, 1000)
	require.NoError(t, err)

	// CUDA got a duplicate of fd; fd itself was consumed (closed).
	require.Len(t, f.imports, 1)
	imp := f.imports[0]
	assert.NotEqual(t, fd, imp.fd)
	assert.Equal(t, importArgs{imp.fd, 1 << 20, true}, imp)
	assert.Equal(t, []int{imp.fd}, f.ownedFDs())
	assert.True(t, fdOpen(imp.fd))
	assert.False(t, fdOpen(fd), "the caller's fd was consumed")
	assert.Equal(t, [][2]uint64{{4096, 1000}}, f.mapArgs)
	_, mapped := f.mappings[uint64(m.Ptr())]
	assert.True(t, mapped, "Ptr is the mapping's CUdeviceptr")
	assert.Equal(t, uint64(1000), m.Bytes())
	assert.Zero(t, f.stackDepth(), "the context is popped after the call")

	before := len(f.calls())
	require.NoError(t, m.Close())
	assert.Equal(t, []string{"cuCtxPushCurrent", "cuMemFree", "cuDestroyExternalMemory", "cuCtxPopCurrent"},
		f.calls()[before:], "the mapping is freed before the memory is destroyed")
	assert.Zero(t, m.Ptr())
	assert.Empty(t, f.ownedFDs())
	assert.False(t, fdOpen(imp.fd), "CUDA closed its fd with the memory")
	before = len(f.calls())
	require.NoError(t, m.Close(), "Close is idempotent")
	assert.Len(t, f.calls(), before, "a second Close calls nothing")

	require.NoError(t, ctx.Close())
	assert.Zero(t, f.live())
	assert.Empty(t, f.violations)
}

func TestImportMemoryNotDedicated(t *testing.T) {
	f, ctx := oneGPU(t)
	m, err := ctx.ImportMemory(newFD(t), 256, false, 0, 256)
	require.NoError(t, err)
	assert.False(t, f.imports[0].dedicated)
	require.NoError(t, m.Close())
	require.NoError(t, ctx.Close())
	assert.Zero(t, f.live())
}

func TestImportMemoryInvalid(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		fd                   int // -2: a valid fd
		size, offset, nbytes uint64
	}{
		{"negative fd", -1, 64, 0, 64},
		{"zero size", -2, 0, 0, 0},
		{"zero bytes", -2, 64, 0, 0},
		{"offset past end", -2, 64, 65, 1},
		{"bytes past end", -2, 64, 32, 33},
		{"overflowing offset", -2, 64, math.MaxUint64, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, ctx := oneGPU(t)
			fd := tc.fd
			if fd == -2 {
				fd = newFD(t)
			}
			m, err := ctx.ImportMemory(fd, tc.size, false, tc.offset, tc.nbytes)
			require.Nil(t, m)
			require.ErrorIs(t, err, core.ErrInvalid)
			assert.Empty(t, f.imports, "nothing reaches the driver")
			if fd >= 0 {
				stillOurs(t, fd)
			}
			require.NoError(t, ctx.Close())
			assert.Zero(t, f.live())
		})
	}
}

func TestImportBadFD(t *testing.T) {
	f, ctx := oneGPU(t)
	fd := newFD(t)
	require.NoError(t, syscall.Close(fd))
	_, err := ctx.ImportMemory(fd, 64, false, 0, 64)
	require.ErrorIs(t, err, core.ErrInvalid)
	assert.Contains(t, err.Error(), "bad file descriptor")
	_, err = ctx.ImportTimeline(fd)
	require.ErrorIs(t, err, core.ErrInvalid)
	assert.Empty(t, f.imports)
	require.NoError(t, ctx.Close())
	assert.Zero(t, f.live())
}

// Every call of ImportMemory failing in turn: the error names the call and
// its result, the caller still owns fd, and CUDA holds nothing.
func TestImportMemoryFailures(t *testing.T) {
	for _, call := range []string{"cuCtxPushCurrent", "cuImportExternalMemory", "cuExternalMemoryGetMappedBuffer", "cuCtxPopCurrent"} {
		t.Run(call, func(t *testing.T) {
			f, ctx := oneGPU(t)
			fd := newFD(t)
			f.failNext(call, resultInvalidValue)
			m, err := ctx.ImportMemory(fd, 1<<16, true, 0, 1<<16)
			require.Nil(t, m)
			require.ErrorContains(t, err, "cuda: Context.ImportMemory: ")
			require.ErrorContains(t, err, call+": CUDA_ERROR_INVALID_VALUE")
			var e *Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, call, e.Call)
			assert.Equal(t, resultInvalidValue, e.Result)

			stillOurs(t, fd)
			assert.Empty(t, f.ownedFDs(), "CUDA holds no fd")
			for _, imp := range f.imports {
				assert.False(t, fdOpen(imp.fd), "the duplicate fd %d was closed", imp.fd)
			}
			assert.Equal(t, 1, f.live(), "only the Context's retain is left")
			if call == "cuCtxPopCurrent" {
				// The failed pop left the context current on that thread, as
				// a real failed pop would; nothing else is left.
				assert.Equal(t, 1, f.stackDepth())
				f.stacks = map[int][]uintptr{}
			}
			assert.Zero(t, f.stackDepth())
			require.NoError(t, ctx.Close())
			assert.Zero(t, f.live())
			assert.Empty(t, f.violations)
		})
	}
}

func TestMemoryCloseErrors(t *testing.T) {
	for _, tc := range []struct {
		call string
		live int // what the failed step leaves behind
	}{{"cuMemFree", 1}, {"cuDestroyExternalMemory", 1}, {"cuCtxPushCurrent", 2}} {
		t.Run(tc.call, func(t *testing.T) {
			f, ctx := oneGPU(t)
			m, err := ctx.ImportMemory(newFD(t), 64, false, 0, 64)
			require.NoError(t, err)
			require.NoError(t, ctx.Close())
			f.failNext(tc.call, 700)
			err = m.Close()
			require.ErrorContains(t, err, "cuda: Memory.Close: ")
			require.ErrorContains(t, err, tc.call+": CUDA_ERROR_ILLEGAL_ADDRESS")
			if tc.call == "cuMemFree" {
				assert.Contains(t, f.calls(), "cuDestroyExternalMemory", "destroy is attempted anyway")
			}
			assert.Equal(t, tc.live, f.live(), "the primary context is released even so")
			assert.NoError(t, m.Close(), "and Close stays idempotent")
		})
	}
}

func TestImportTimeline(t *testing.T) {
	f, ctx := oneGPU(t)
	fd := newFD(t)
	sem, err := ctx.ImportTimeline(fd)
	require.NoError(t, err)
	require.Len(t, f.imports, 1)
	dup := f.imports[0].fd
	assert.NotEqual(t, fd, dup)
	assert.Equal(t, []int{dup}, f.ownedFDs())
	assert.False(t, fdOpen(fd), "the caller's fd was consumed")
	assert.Len(t, f.semaphores, 1)

	s, err := ctx.NewStream()
	require.NoError(t, err)
	foreign := Stream(0x7f00dead0000)
	for _, step := range []struct {
		op     func(Stream, uint64) error
		stream Stream
		value  uint64
	}{
		{sem.WaitAsync, s, 7}, {sem.SignalAsync, s, 8},
		{sem.WaitAsync, foreign, 9}, {sem.SignalAsync, 0, 10},
		{sem.WaitAsync, 0, math.MaxUint64},
	} {
		require.NoError(t, step.op(step.stream, step.value))
	}
	h := sem.handle
	assert.Equal(t, []semOp{{h, 7, uintptr(s)}, {h, 9, uintptr(foreign)}, {h, math.MaxUint64, 0}}, f.waits)
	assert.Equal(t, []semOp{{h, 8, uintptr(s)}, {h, 10, 0}}, f.signals)

	require.NoError(t, sem.Close())
	assert.Empty(t, f.semaphores)
	assert.Empty(t, f.ownedFDs())
	require.NoError(t, sem.Close(), "Close is idempotent")
	require.ErrorIs(t, sem.WaitAsync(s, 11), core.ErrClosed)
	require.ErrorIs(t, sem.SignalAsync(s, 11), core.ErrClosed)
	assert.Len(t, f.waits, 3)

	require.NoError(t, s.Close())
	require.NoError(t, ctx.Close())
	assert.Zero(t, f.live())
	assert.Empty(t, f.violations)
}

func TestImportTimelineFailures(t *testing.T) {
	for _, call := range []string{"cuCtxPushCurrent", "cuImportExternalSemaphore", "cuCtxPopCurrent"} {
		t.Run(call, func(t *testing.T) {
			f, ctx := oneGPU(t)
			fd := newFD(t)
			f.failNext(call, resultNotSupported)
			sem, err := ctx.ImportTimeline(fd)
			require.Nil(t, sem)
			require.ErrorContains(t, err, "cuda: Context.ImportTimeline: ")
			require.ErrorContains(t, err, call+": CUDA_ERROR_NOT_SUPPORTED")
			require.ErrorIs(t, err, core.ErrUnsupported)
			stillOurs(t, fd)
			assert.Empty(t, f.ownedFDs())
			if call == "cuCtxPopCurrent" {
				f.stacks = map[int][]uintptr{}
			}
			require.NoError(t, ctx.Close())
			assert.Zero(t, f.live())
			assert.Empty(t, f.violations)
		})
	}
}

func TestSemaphoreCallErrors(t *testing.T) {
	for _, tc := range []struct {
		call string
		op   func(*Semaphore) error
	}{
		{"cuWaitExternalSemaphoresAsync", func(s *Semaphore) error { return s.WaitAsync(0, 1) }},
		{"cuSignalExternalSemaphoresAsync", func(s *Semaphore) error { return s.SignalAsync(0, 1) }},
		{"cuDestroyExternalSemaphore", (*Semaphore).Close},
	} {
		t.Run(tc.call, func(t *testing.T) {
			f, ctx := oneGPU(t)
			sem, err := ctx.ImportTimeline(newFD(t))
			require.NoError(t, err)
			f.failNext(tc.call, resultInvalidHandle)
			err = tc.op(sem)
			require.ErrorContains(t, err, tc.call+": CUDA_ERROR_INVALID_HANDLE")
			var e *Error
			require.True(t, errors.As(err, &e))
			assert.Equal(t, tc.call, e.Call)
			assert.Zero(t, f.stackDepth())
			_ = sem.Close()
			require.NoError(t, ctx.Close())
		})
	}
}

// An fd value beyond int32 (an fd is a C int) is ErrInvalid before any
// call: neither the fd its low 32 bits name is imported, nor is it closed.
func TestImportFDOutOfRange(t *testing.T) {
	f, ctx := oneGPU(t)
	victim := newFD(t)
	for _, fd := range []int{1<<32 + victim, -(1 << 32) + victim, math.MaxInt32 + 1, math.MinInt64 + victim, -1} {
		m, err := ctx.ImportMemory(fd, 64, false, 0, 64)
		assert.Nil(t, m)
		assert.ErrorIs(t, err, core.ErrInvalid, "ImportMemory(%d)", fd)
		s, err := ctx.ImportTimeline(fd)
		assert.Nil(t, s)
		assert.ErrorIs(t, err, core.ErrInvalid, "ImportTimeline(%d)", fd)
		assert.True(t, fdOpen(victim), "fd %d closed, handed %d", victim, fd)
	}
	assert.Empty(t, f.imports)
	stillOurs(t, victim)
	require.NoError(t, ctx.Close())
	assert.Zero(t, f.live())
}
