package cuda

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/vkflow/vkflow/internal/core"
)

// Memory is external memory imported into a Context and mapped as one
// device buffer. Its methods are safe for concurrent use.
type Memory struct {
	ctx    *Context
	ext    uintptr // CUexternalMemory
	ptr    uint64  // CUdeviceptr of the mapping
	bytes  uint64
	closed atomic.Bool
}

// ImportMemory imports an allocation exported as an opaque fd (what
// interop.Export returns: fd, size, dedicated, offset and bytes are the
// MemoryHandle's FD, Size, Dedicated, Offset and Bytes) and maps bytes
// bytes of it, from offset, as a device buffer:
// cuImportExternalMemory (CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD, size,
// CUDA_EXTERNAL_MEMORY_DEDICATED when dedicated) then
// cuExternalMemoryGetMappedBuffer. size must be the whole allocation's
// size, and dedicated must say what the exporter allocated.
//
// Ownership of fd, exactly:
//   - On success, fd is consumed: CUDA holds the memory through a duplicate
//     of fd, and ImportMemory closes fd itself. The caller must not use or
//     close fd again. (Closing the exporting side's tensor does not free
//     the pages; Memory.Close frees CUDA's hold.)
//   - On any error, fd is untouched and still the caller's to close or to
//     retry with. This holds whichever step failed: the import is made
//     from a duplicate, which is closed, or destroyed with the imported
//     memory, before ImportMemory returns.
//
// Errors: a negative fd or one beyond int32, a zero size or bytes, or offset+bytes beyond size
// are ErrInvalid (checked before anything is called); a closed Context is
// ErrClosed; a failed call is an *Error naming it.
func (c *Context) ImportMemory(fd int, size uint64, dedicated bool, offset, bytes uint64) (*Memory, error) {
	const op = "Context.ImportMemory"
	if !core.ValidFD(fd) { // negative, or beyond int32: never an fd (a C int)
		return nil, core.Invalid("cuda: %s: fd %d", op, fd)
	}
	if size == 0 || bytes == 0 || offset > size || bytes > size-offset {
		return nil, core.Invalid("cuda: %s: %d bytes at offset %d do not fit in a %d-byte allocation", op, bytes, offset, size)
	}
	if err := c.acquire(op); err != nil {
		return nil, err
	}
	dup, err := dupFD(fd)
	if err != nil {
		return nil, opErr(op, errors.Join(err, c.release()))
	}
	m := &Memory{ctx: c, bytes: bytes}
	mapped := false
	err = c.do(func() error {
		ext, r := c.api.ImportMemoryFD(dup, size, dedicated)
		if r != resultSuccess {
			return check(c.api, "cuImportExternalMemory", r)
		}
		dup = -1 // CUDA's now: destroying ext closes it
		ptr, r := c.api.MappedBuffer(ext, offset, bytes)
		if r != resultSuccess {
			return errors.Join(check(c.api, "cuExternalMemoryGetMappedBuffer", r),
				check(c.api, "cuDestroyExternalMemory", c.api.DestroyExternalMemory(ext)))
		}
		m.ext, m.ptr, mapped = ext, ptr, true
		return nil
	})
	if dup >= 0 {
		syscall.Close(dup) // the import was not made (or not tried: the push failed)
	}
	if err != nil {
		if mapped { // only cuCtxPopCurrent failed: undo the import
			err = errors.Join(err, m.free())
		}
		return nil, opErr(op, errors.Join(err, c.release()))
	}
	syscall.Close(fd)
	return m, nil
}

// Ptr returns the mapping's device address (a CUdeviceptr), valid in every
// context of the device that shares this primary context's address space
// (the CUDA runtime's, PyTorch's, CuPy's) until Close; 0 after Close.
func (m *Memory) Ptr() uintptr {
	if m.closed.Load() {
		return 0
	}
	return uintptr(m.ptr)
}

// Bytes returns the mapping's length in bytes.
func (m *Memory) Bytes() uint64 { return m.bytes }

// Close frees the mapping (cuMemFree) and then the imported memory
// (cuDestroyExternalMemory, which also closes CUDA's fd), and drops the
// Memory's reference to its Context. Work queued on any stream that uses
// Ptr must be complete first. Close is idempotent: later calls return nil.
func (m *Memory) Close() error {
	if !m.closed.CompareAndSwap(false, true) {
		return nil
	}
	return opErr("Memory.Close", errors.Join(m.free(), m.ctx.release()))
}

// free unmaps and destroys; both are attempted whatever the first returns.
func (m *Memory) free() error {
	api := m.ctx.api
	return m.ctx.do(func() error {
		return errors.Join(check(api, "cuMemFree", api.MemFree(m.ptr)),
			check(api, "cuDestroyExternalMemory", api.DestroyExternalMemory(m.ext)))
	})
}

// Semaphore is a Vulkan timeline semaphore imported into a Context. Its
// methods are safe for concurrent use.
type Semaphore struct {
	ctx    *Context
	handle uintptr // CUexternalSemaphore

	mu     sync.RWMutex // held for reading by WaitAsync and SignalAsync, for writing by Close
	closed bool
}

// ImportTimeline imports a timeline semaphore exported as an opaque fd (what
// interop.ExportTimeline returns) with cuImportExternalSemaphore
// (CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD). Ownership of
// fd is as for ImportMemory: consumed (closed by ImportTimeline) on success,
// untouched and still the caller's on any error.
func (c *Context) ImportTimeline(fd int) (*Semaphore, error) {
	const op = "Context.ImportTimeline"
	if !core.ValidFD(fd) { // negative, or beyond int32: never an fd (a C int)
		return nil, core.Invalid("cuda: %s: fd %d", op, fd)
	}
	if err := c.acquire(op); err != nil {
		return nil, err
	}
	dup, err := dupFD(fd)
	if err != nil {
		return nil, opErr(op, errors.Join(err, c.release()))
	}
	s := &Semaphore{ctx: c}
	imported := false
	err = c.do(func() error {
		h, r := c.api.ImportTimelineFD(dup)
		if r != resultSuccess {
			return check(c.api, "cuImportExternalSemaphore", r)
		}
		dup = -1
		s.handle, imported = h, true
		return nil
	})
	if dup >= 0 {
		syscall.Close(dup)
	}
	if err != nil {
		if imported {
			err = errors.Join(err, s.destroy())
		}
		return nil, opErr(op, errors.Join(err, c.release()))
	}
	syscall.Close(fd)
	return s, nil
}

// WaitAsync makes the work queued on stream after this call wait, on the
// GPU, until the timeline reaches value (cuWaitExternalSemaphoresAsync with
// params.fence.value = value). The host does not wait.
func (s *Semaphore) WaitAsync(stream Stream, value uint64) error {
	return s.enqueue("Semaphore.WaitAsync", "cuWaitExternalSemaphoresAsync", s.ctx.api.WaitTimeline, stream, value)
}

// SignalAsync sets the timeline to value, on the GPU, once the work queued
// on stream before this call is done (cuSignalExternalSemaphoresAsync with
// params.fence.value = value). Timeline values only increase: value must
// exceed every value signalled before.
func (s *Semaphore) SignalAsync(stream Stream, value uint64) error {
	return s.enqueue("Semaphore.SignalAsync", "cuSignalExternalSemaphoresAsync", s.ctx.api.SignalTimeline, stream, value)
}

func (s *Semaphore) enqueue(op, call string, fn func(uintptr, uint64, uintptr) int, stream Stream, value uint64) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return core.Closed("cuda: " + op + ": the Semaphore")
	}
	return opErr(op, s.ctx.do(func() error {
		return check(s.ctx.api, call, fn(s.handle, value, uintptr(stream)))
	}))
}

// Close destroys the imported semaphore (cuDestroyExternalSemaphore) and
// drops its reference to the Context. Waits and signals already queued
// must be complete first (synchronize their streams). Close is idempotent:
// later calls return nil; WaitAsync and SignalAsync after Close are
// ErrClosed.
func (s *Semaphore) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	return opErr("Semaphore.Close", errors.Join(s.destroy(), s.ctx.release()))
}

func (s *Semaphore) destroy() error {
	api := s.ctx.api
	return s.ctx.do(func() error {
		return check(api, "cuDestroyExternalSemaphore", api.DestroyExternalSemaphore(s.handle))
	})
}

// dupFD duplicates fd, close-on-exec, for an import that may fail.
func dupFD(fd int) (int, error) {
	r, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_DUPFD_CLOEXEC, 0)
	if e == syscall.EBADF {
		return -1, fmt.Errorf("fd %d: %w: %w", fd, e, core.ErrInvalid)
	}
	if e != 0 {
		return -1, fmt.Errorf("duplicating fd %d: %w", fd, e)
	}
	return int(r), nil
}
