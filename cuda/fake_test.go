package cuda

import (
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// fakeHandles numbers every handle any fake hands out, so that handles of
// different fakes never collide (the stream registry is process-wide).
var fakeHandles atomic.Uintptr

func init() { fakeHandles.Store(0x10000) }

type fakeDevice struct {
	name string
	uuid [16]byte
}

type semOp struct {
	sem    uintptr
	value  uint64
	stream uintptr
}

type importArgs struct {
	fd        int
	size      uint64
	dedicated bool
}

// fake is a driverAPI that keeps CUDA's bookkeeping: a context stack per
// OS thread, retained primary contexts, imported memory and semaphores with
// the fds CUDA owns, mappings and streams. Calls that need a current
// context fail with CUDA_ERROR_INVALID_CONTEXT without one. A call armed
// with failNext returns the given result once and changes nothing, as a
// failed CUDA call does.
type fake struct {
	mu         sync.Mutex
	devices    []fakeDevice
	failures   map[string][]int
	log        []string
	stacks     map[int][]uintptr // OS thread id -> context stack
	ctxOf      map[int]uintptr   // CUdevice -> its primary context
	retained   map[int]int       // CUdevice -> retain count
	memories   map[uintptr]int   // CUexternalMemory -> the fd CUDA owns
	mappings   map[uint64]uintptr
	semaphores map[uintptr]int // CUexternalSemaphore -> the fd CUDA owns
	streams    map[uintptr]uint32
	imports    []importArgs
	mapArgs    [][2]uint64
	waits      []semOp
	signals    []semOp
	violations []string
	names      map[int]string // what cuGetErrorName knows beyond the package's table
}

func newFake(devices ...fakeDevice) *fake {
	return &fake{
		devices: devices, failures: map[string][]int{}, stacks: map[int][]uintptr{},
		ctxOf: map[int]uintptr{}, retained: map[int]int{}, memories: map[uintptr]int{},
		mappings: map[uint64]uintptr{}, semaphores: map[uintptr]int{}, streams: map[uintptr]uint32{},
		names: map[int]string{},
	}
}

func uuidOf(b byte) [16]byte {
	var u [16]byte
	for i := range u {
		u[i] = b + byte(i)
	}
	return u
}

// oneGPU is a fake with one device and an open Context on it.
func oneGPU(t *testing.T) (*fake, *Context) {
	t.Helper()
	f := newFake(fakeDevice{"Fake GPU", uuidOf(0xa0)})
	drv, err := open(f)
	require.NoError(t, err)
	ctx, err := drv.DeviceByUUID(uuidOf(0xa0))
	require.NoError(t, err)
	return f, ctx
}

// failNext makes the next call of call return r.
func (f *fake) failNext(call string, r int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failures[call] = append(f.failures[call], r)
}

// enter logs call and returns its armed failure, if any. f.mu is held.
func (f *fake) enter(call string) (int, bool) {
	f.log = append(f.log, call)
	if q := f.failures[call]; len(q) > 0 {
		f.failures[call] = q[1:]
		return q[0], true
	}
	return 0, false
}

// current checks that a context is current on this thread. f.mu is held.
func (f *fake) current() bool { return len(f.stacks[syscall.Gettid()]) > 0 }

func (f *fake) calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.log...)
}

// live counts what CUDA holds: retained contexts, imports, mappings, streams.
func (f *fake) live() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(f.memories) + len(f.mappings) + len(f.semaphores) + len(f.streams)
	for _, c := range f.retained {
		n += c
	}
	return n
}

// ownedFDs lists the fds CUDA holds.
func (f *fake) ownedFDs() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	var fds []int
	for _, fd := range f.memories {
		fds = append(fds, fd)
	}
	for _, fd := range f.semaphores {
		fds = append(fds, fd)
	}
	return fds
}

// stackDepth is the total depth of every thread's context stack.
func (f *fake) stackDepth() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, s := range f.stacks {
		n += len(s)
	}
	return n
}

func newHandle() uintptr { return fakeHandles.Add(0x100) }

func (f *fake) Init(flags uint32) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r, ok := f.enter("cuInit"); ok {
		return r
	}
	if flags != 0 {
		return resultInvalidValue
	}
	return resultSuccess
}

func (f *fake) DeviceCount() (int, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r, ok := f.enter("cuDeviceGetCount"); ok {
		return 0, r
	}
	return len(f.devices), resultSuccess
}

// CUdevice values are ordinal+100, so that code mixing up ordinals and
// CUdevice handles fails.
func (f *fake) DeviceGet(ordinal int) (int, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r, ok := f.enter("cuDeviceGet"); ok {
		return 0, r
	}
	if ordinal < 0 || ordinal >= len(f.devices) {
		return 0, 101
	}
	return ordinal + 100, resultSuccess
}

func (f *fake) device(dev int) (fakeDevice, bool) {
	if dev < 100 || dev-100 >= len(f.devices) {
		return fakeDevice{}, false
	}
	return f.devices[dev-100], true
}

func (f *fake) DeviceName(dev int) (string, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r, ok := f.enter("cuDeviceGetName"); ok {
		return "", r
	}
	d, ok := f.device(dev)
	if !ok {
		return "", 101
	}
	return d.name, resultSuccess
}

func (f *fake) DeviceUUID(dev int) ([16]byte, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r, ok := f.enter("cuDeviceGetUuid"); ok {
		return [16]byte{}, r
	}
	d, ok := f.device(dev)
	if !ok {
		return [16]byte{}, 101
	}
	return d.uuid, resultSuccess
}

func (f *fake) PrimaryCtxRetain(dev int) (uintptr, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r, ok := f.enter("cuDevicePrimaryCtxRetain"); ok {
		return 0, r
	}
	if _, ok := f.device(dev); !ok {
		return 0, 101
	}
	if f.ctxOf[dev] == 0 {
		f.ctxOf[dev] = newHandle()
	}
	f.retained[dev]++
	return f.ctxOf[dev], resultSuccess
}

func (f *fake) PrimaryCtxRelease(dev int) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r, ok := f.enter("cuDevicePrimaryCtxRelease"); ok {
		return r
	}
	if f.retained[dev] == 0 {
		f.violations = append(f.violations, fmt.Sprintf("release of device %d, not retained", dev))
		return resultInvalidContext
	}
	f.retained[dev]--
	if f.retained[dev] == 0 {
		delete(f.retained, dev)
	}
	return resultSuccess
}

func (f *fake) CtxPush(ctx uintptr) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r, ok := f.enter("cuCtxPushCurrent"); ok {
		return r
	}
	ok := false
	for dev, c := range f.ctxOf {
		ok = ok || (c == ctx && f.retained[dev] > 0)
	}
	if !ok {
		f.violations = append(f.violations, fmt.Sprintf("push of context %#x, not retained", ctx))
		return resultInvalidContext
	}
	tid := syscall.Gettid()
	f.stacks[tid] = append(f.stacks[tid], ctx)
	return resultSuccess
}

func (f *fake) CtxPop() (uintptr, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r, ok := f.enter("cuCtxPopCurrent"); ok {
		return 0, r
	}
	tid := syscall.Gettid()
	s := f.stacks[tid]
	if len(s) == 0 {
		f.violations = append(f.violations, "pop with no current context")
		return 0, resultInvalidContext
	}
	f.stacks[tid] = s[:len(s)-1]
	if len(s) == 1 {
		delete(f.stacks, tid)
	}
	return s[len(s)-1], resultSuccess
}

// inContext is the common prologue of the calls that need a context.
func (f *fake) inContext(call string) (int, bool) {
	if r, ok := f.enter(call); ok {
		return r, true
	}
	if !f.current() {
		f.violations = append(f.violations, call+" with no current context")
		return resultInvalidContext, true
	}
	return 0, false
}

func (f *fake) StreamCreate(flags uint32) (uintptr, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r, bad := f.inContext("cuStreamCreate"); bad {
		return 0, r
	}
	h := newHandle()
	f.streams[h] = flags
	return h, resultSuccess
}

func (f *fake) StreamDestroy(stream uintptr) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r, bad := f.inContext("cuStreamDestroy"); bad {
		return r
	}
	if _, ok := f.streams[stream]; !ok {
		return resultInvalidHandle
	}
	delete(f.streams, stream)
	return resultSuccess
}

func (f *fake) StreamSynchronize(stream uintptr) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r, bad := f.inContext("cuStreamSynchronize"); bad {
		return r
	}
	return resultSuccess
}

// fdOpen reports whether fd is an open file descriptor.
func fdOpen(fd int) bool {
	_, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFD, 0)
	return e == 0
}

func (f *fake) ImportMemoryFD(fd int, size uint64, dedicated bool) (uintptr, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r, bad := f.inContext("cuImportExternalMemory"); bad {
		return 0, r
	}
	f.imports = append(f.imports, importArgs{fd, size, dedicated})
	if !fdOpen(fd) || size == 0 {
		return 0, resultInvalidValue
	}
	h := newHandle()
	f.memories[h] = fd
	return h, resultSuccess
}

func (f *fake) MappedBuffer(extMem uintptr, offset, size uint64) (uint64, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r, bad := f.inContext("cuExternalMemoryGetMappedBuffer"); bad {
		return 0, r
	}
	f.mapArgs = append(f.mapArgs, [2]uint64{offset, size})
	if _, ok := f.memories[extMem]; !ok {
		return 0, resultInvalidHandle
	}
	p := uint64(newHandle())<<16 + offset
	f.mappings[p] = extMem
	return p, resultSuccess
}

func (f *fake) MemFree(ptr uint64) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r, bad := f.inContext("cuMemFree"); bad {
		return r
	}
	if _, ok := f.mappings[ptr]; !ok {
		return resultInvalidValue
	}
	delete(f.mappings, ptr)
	return resultSuccess
}

func (f *fake) DestroyExternalMemory(extMem uintptr) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r, bad := f.inContext("cuDestroyExternalMemory"); bad {
		return r
	}
	fd, ok := f.memories[extMem]
	if !ok {
		return resultInvalidHandle
	}
	for _, e := range f.mappings {
		if e == extMem {
			f.violations = append(f.violations, "cuDestroyExternalMemory with a live mapping")
		}
	}
	delete(f.memories, extMem)
	syscall.Close(fd)
	return resultSuccess
}

func (f *fake) ImportTimelineFD(fd int) (uintptr, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r, bad := f.inContext("cuImportExternalSemaphore"); bad {
		return 0, r
	}
	f.imports = append(f.imports, importArgs{fd: fd})
	if !fdOpen(fd) {
		return 0, resultInvalidValue
	}
	h := newHandle()
	f.semaphores[h] = fd
	return h, resultSuccess
}

func (f *fake) DestroyExternalSemaphore(sem uintptr) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r, bad := f.inContext("cuDestroyExternalSemaphore"); bad {
		return r
	}
	fd, ok := f.semaphores[sem]
	if !ok {
		return resultInvalidHandle
	}
	delete(f.semaphores, sem)
	syscall.Close(fd)
	return resultSuccess
}

func (f *fake) semOp(call string, ops *[]semOp, sem uintptr, value uint64, stream uintptr) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r, bad := f.inContext(call); bad {
		return r
	}
	if _, ok := f.semaphores[sem]; !ok {
		return resultInvalidHandle
	}
	*ops = append(*ops, semOp{sem, value, stream})
	return resultSuccess
}

func (f *fake) WaitTimeline(sem uintptr, value uint64, stream uintptr) int {
	return f.semOp("cuWaitExternalSemaphoresAsync", &f.waits, sem, value, stream)
}

func (f *fake) SignalTimeline(sem uintptr, value uint64, stream uintptr) int {
	return f.semOp("cuSignalExternalSemaphoresAsync", &f.signals, sem, value, stream)
}

func (f *fake) ErrorName(r int) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, ok := f.names[r]
	return n, ok
}
