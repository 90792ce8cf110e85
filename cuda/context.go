package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/vkflow/vkflow/internal/core"
)

// Context is a retained primary context of one CUDA device. Its methods
// are safe for concurrent use. Each call makes the context current on the
// calling goroutine's OS thread for the call only (runtime.LockOSThread,
// cuCtxPushCurrent, the call, cuCtxPopCurrent, UnlockOSThread), so callers
// need not manage the CUDA context stack; whatever context the thread had
// current before is current again afterwards.
//
// Lifetime: the objects a Context makes (Memory, Semaphore, and streams
// from NewStream) each hold a reference to it. Close drops the Context's own
// reference and makes every later method of the Context fail with ErrClosed,
// but the primary context is released (cuDevicePrimaryCtxRelease) only when
// the last of those objects is closed too. Closing the Context therefore
// never invalidates a device pointer or stream that is still open.
type Context struct {
	api    driverAPI
	dev    Device
	handle uintptr // CUcontext

	mu     sync.Mutex
	refs   int // 1 for the Context until Close, plus 1 per open child
	closed bool
}

// Device returns the CUDA device of the context.
func (c *Context) Device() Device { return c.dev }

// acquire takes a reference for a child or for the length of a call.
func (c *Context) acquire(what string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return core.Closed("cuda: " + what + ": the Context")
	}
	c.refs++
	return nil
}

// release drops a reference; the last one releases the primary context.
func (c *Context) release() error {
	c.mu.Lock()
	c.refs--
	last := c.refs == 0
	c.mu.Unlock()
	if !last {
		return nil
	}
	return check(c.api, "cuDevicePrimaryCtxRelease", c.api.PrimaryCtxRelease(c.dev.handle))
}

// Close drops the Context's reference (see Context for what stays open).
// It is idempotent: later calls return nil. The error is the release's, when
// this call released the primary context.
func (c *Context) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	return opErr("Context.Close", c.release())
}

// do runs fn with the context current on a locked OS thread. The caller
// holds a reference. A failed pop is joined to fn's error.
func (c *Context) do(fn func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := check(c.api, "cuCtxPushCurrent", c.api.CtxPush(c.handle)); err != nil {
		return err
	}
	err := fn()
	if _, r := c.api.CtxPop(); r != resultSuccess {
		err = errors.Join(err, check(c.api, "cuCtxPopCurrent", r))
	}
	return err
}

// opErr prefixes a failed operation's error with the package and the
// operation: "cuda: Context.ImportMemory: cuImportExternalMemory: ...".
func opErr(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("cuda: %s: %w", op, err)
}

// Stream is a CUstream handle. It is either a stream made by
// Context.NewStream or a foreign one converted from its handle, such as
// PyTorch's torch.cuda.Stream.cuda_stream or CuPy's Stream.ptr (a
// cudaStream_t is a CUstream): Stream(h). A foreign stream stays its
// owner's to synchronize and destroy, and must belong to the same device's
// primary context.
//
// Stream(0) is the legacy default stream (the package calls the plain,
// not the _ptsz, driver entry points), which synchronizes with the other
// blocking streams of the context; streams from NewStream are
// non-blocking (CU_STREAM_NON_BLOCKING) and do not. Stream(1) is
// CU_STREAM_LEGACY (the legacy default stream, named explicitly) and
// Stream(2) CU_STREAM_PER_THREAD (the calling thread's per-thread default
// stream).
type Stream uintptr

// ownedStream is the record of a stream made by NewStream.
type ownedStream struct {
	ctx    *Context
	mu     sync.RWMutex // held for reading by Synchronize, for writing by Close
	closed bool
}

// streams maps the live streams made by NewStream to their records.
var streams sync.Map // Stream -> *ownedStream

// NewStream creates a non-blocking stream (cuStreamCreate with
// CU_STREAM_NON_BLOCKING) in the context. Close it with Stream.Close; it
// holds a reference to the Context until then.
func (c *Context) NewStream() (Stream, error) {
	if err := c.acquire("Context.NewStream"); err != nil {
		return 0, err
	}
	var h uintptr
	err := c.do(func() error {
		var r int
		h, r = c.api.StreamCreate(cuStreamNonBlocking)
		return check(c.api, "cuStreamCreate", r)
	})
	if err != nil {
		return 0, opErr("Context.NewStream", errors.Join(err, c.release()))
	}
	streams.Store(Stream(h), &ownedStream{ctx: c})
	return Stream(h), nil
}

// cuStreamNonBlocking is CU_STREAM_NON_BLOCKING.
const cuStreamNonBlocking = 1

// Synchronize waits on the host until the work queued on s is done
// (cuStreamSynchronize), with the context current: s may be any stream of
// this context, Stream(0) and foreign streams included.
func (c *Context) Synchronize(s Stream) error {
	if err := c.acquire("Context.Synchronize"); err != nil {
		return err
	}
	err := c.do(func() error {
		return check(c.api, "cuStreamSynchronize", c.api.StreamSynchronize(uintptr(s)))
	})
	return opErr("Context.Synchronize", errors.Join(err, c.release()))
}

func lookupStream(s Stream, what string) (*ownedStream, error) {
	v, ok := streams.Load(s)
	if !ok {
		return nil, notOwned(s, what)
	}
	return v.(*ownedStream), nil
}

func notOwned(s Stream, what string) error {
	return core.Invalid("cuda: Stream.%s: %#x is not an open stream from NewStream (closed already, or foreign: "+
		"its owner synchronizes and destroys it; Context.Synchronize takes any stream)", what, uintptr(s))
}

// Synchronize waits on the host until the work queued on s is done. s must
// be an open stream from NewStream (ErrInvalid otherwise); for other
// streams use Context.Synchronize.
func (s Stream) Synchronize() error {
	o, err := lookupStream(s, "Synchronize")
	if err != nil {
		return err
	}
	o.mu.RLock()
	defer o.mu.RUnlock()
	if o.closed {
		return notOwned(s, "Synchronize")
	}
	return opErr("Stream.Synchronize", o.ctx.do(func() error {
		return check(o.ctx.api, "cuStreamSynchronize", o.ctx.api.StreamSynchronize(uintptr(s)))
	}))
}

// Close destroys a stream made by NewStream (cuStreamDestroy; work already
// queued on it still runs) and drops its reference to the Context. Closing
// a foreign stream, or one already closed, is ErrInvalid and does nothing:
// a Stream is a plain handle value, so a second Close cannot tell a closed
// stream from a foreign one.
func (s Stream) Close() error {
	v, ok := streams.LoadAndDelete(s)
	if !ok {
		return notOwned(s, "Close")
	}
	o := v.(*ownedStream)
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
	err := o.ctx.do(func() error {
		return check(o.ctx.api, "cuStreamDestroy", o.ctx.api.StreamDestroy(uintptr(s)))
	})
	return opErr("Stream.Close", errors.Join(err, o.ctx.release()))
}
