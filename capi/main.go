// Command capi is vkflow's C API, built with
//
//	go build -buildmode=c-shared -o build/libvkflow.so ./capi
//
// (make capi). vkflow.h declares and documents every function; the Python
// package in python/vkflow calls them through ctypes.
//
// Ownership: each handle names one Go object in a table; closing a handle
// removes it. Closing a Manager closes what it created (their handles then
// return VKFLOW_ERR_CLOSED until closed themselves). Memory exported through
// DLPack belongs to the export until its deleter runs.
package main

/*
#cgo CFLAGS: -I${SRCDIR} -I${SRCDIR}/../dlpack
#include <stdlib.h>
#include <string.h>
#include "vkflow.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/dlpack"
	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/internal/kernels"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/timeline"
	"github.com/vkflow/vkflow/vk"
)

func main() {}

// handles maps C handles to Go objects.
var handles struct {
	sync.Mutex
	next uint64
	m    map[uint64]any
}

func newHandle(v any) C.uint64_t {
	handles.Lock()
	defer handles.Unlock()
	if handles.m == nil {
		handles.m = make(map[uint64]any)
	}
	handles.next++
	handles.m[handles.next] = v
	return C.uint64_t(handles.next)
}

func dropHandle(h C.uint64_t) {
	handles.Lock()
	delete(handles.m, uint64(h))
	handles.Unlock()
}

// lookup returns the object behind h as a T.
func lookup[T any](h C.uint64_t, what string) (T, error) {
	handles.Lock()
	v, ok := handles.m[uint64(h)]
	handles.Unlock()
	t, isT := v.(T)
	if !ok {
		var zero T
		return zero, fmt.Errorf("%w: %s handle %d is closed or was never valid", vkflow.ErrClosed, what, uint64(h))
	}
	if !isT {
		var zero T
		return zero, fmt.Errorf("%w: handle %d is not a %s", vkflow.ErrInvalid, uint64(h), what)
	}
	return t, nil
}

var lastErr struct {
	sync.Mutex
	msg string
}

// fail records err and returns its code.
func fail(err error) C.int {
	if err == nil {
		return C.VKFLOW_OK
	}
	lastErr.Lock()
	lastErr.msg = err.Error()
	lastErr.Unlock()
	var vkErr *vk.Error
	switch {
	case errors.Is(err, vkflow.ErrFailed): // before its cause (ErrClosed, a Vulkan error)
		return C.VKFLOW_ERR_FAILED
	case errors.Is(err, vkflow.ErrBusy):
		return C.VKFLOW_ERR_BUSY
	case errors.Is(err, vkflow.ErrClosed):
		return C.VKFLOW_ERR_CLOSED
	case errors.Is(err, vkflow.ErrUnsupported):
		return C.VKFLOW_ERR_UNSUPPORTED
	case errors.Is(err, vkflow.ErrInvalid):
		return C.VKFLOW_ERR_INVALID
	case errors.Is(err, vkflow.ErrPending):
		return C.VKFLOW_ERR_PENDING
	case errors.Is(err, context.DeadlineExceeded):
		return C.VKFLOW_ERR_TIMEOUT
	case errors.As(err, &vkErr):
		return C.VKFLOW_ERR_VULKAN
	}
	return C.VKFLOW_ERR_OTHER
}

func invalid(format string, args ...any) C.int {
	return fail(fmt.Errorf("%w: "+format, append([]any{vkflow.ErrInvalid}, args...)...))
}

func copyString(s string, buf *C.char, n C.size_t) C.size_t {
	if buf != nil && n > 0 {
		b := unsafe.Slice((*byte)(unsafe.Pointer(buf)), int(n))
		k := copy(b[:n-1], s)
		b[k] = 0
	}
	return C.size_t(len(s))
}

//export vkflow_last_error
func vkflow_last_error(buf *C.char, n C.size_t) C.size_t {
	lastErr.Lock()
	defer lastErr.Unlock()
	return copyString(lastErr.msg, buf, n)
}

// timeoutCtx turns a C timeout (ns, negative for none) into a context.
func timeoutCtx(ns C.int64_t) (context.Context, context.CancelFunc) {
	if ns < 0 {
		return context.WithCancel(context.Background())
	}
	return context.WithTimeout(context.Background(), time.Duration(ns))
}

var validation struct {
	sync.Mutex
	count atomic.Int64
	last  string
}

//export vkflow_validation_messages
func vkflow_validation_messages(buf *C.char, n C.size_t) C.int64_t {
	validation.Lock()
	defer validation.Unlock()
	copyString(validation.last, buf, n)
	return C.int64_t(validation.count.Load())
}

var logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))

//export vkflow_manager_new
func vkflow_manager_new(device C.int32_t, flags C.uint32_t, out *C.vkflow_manager) C.int {
	return newManager(device, flags, out)
}

func newManager(device C.int32_t, flags C.uint32_t, out *C.vkflow_manager, extra ...vkflow.Option) C.int {
	if out == nil {
		return invalid("vkflow_manager_new: out is NULL")
	}
	opts := append([]vkflow.Option{vkflow.WithLogger(logger)}, extra...)
	if device >= 0 {
		opts = append(opts, vkflow.WithDevice(int(device)))
	}
	if flags&C.VKFLOW_VALIDATION != 0 {
		opts = append(opts, vkflow.WithValidation(true), vkflow.WithDebugHook(func(m vk.Message) {
			validation.Lock()
			validation.count.Add(1)
			validation.last = fmt.Sprintf("%s %s: %s", m.Severity, m.ID, m.Text)
			validation.Unlock()
		}))
	}
	m, err := vkflow.New(opts...)
	if err != nil {
		return fail(err)
	}
	*out = newHandle(m)
	return C.VKFLOW_OK
}

//export vkflow_manager_close
func vkflow_manager_close(h C.vkflow_manager) C.int {
	m, err := lookup[*vkflow.Manager](h, "Manager")
	if err != nil {
		return C.VKFLOW_OK // idempotent
	}
	dropHandle(h)
	return fail(m.Close())
}

//export vkflow_manager_mem_stats
func vkflow_manager_mem_stats(h C.vkflow_manager, allocations, blocks *C.int64_t) C.int {
	m, err := lookup[*vkflow.Manager](h, "Manager")
	if err != nil {
		return fail(err)
	}
	s := m.MemStats()
	if allocations != nil {
		*allocations = C.int64_t(s.Allocations)
	}
	if blocks != nil {
		*blocks = C.int64_t(s.Blocks)
	}
	return C.VKFLOW_OK
}

func dtypeByName(name string) (tensor.Dtype, bool) {
	return tensor.DtypeByName(name)
}

//export vkflow_tensor_new
func vkflow_tensor_new(h C.vkflow_manager, dtype *C.char, ndim C.int32_t, shape *C.int64_t, data unsafe.Pointer, nbytes C.uint64_t, memory C.int32_t, out *C.vkflow_tensor) C.int {
	m, err := lookup[*vkflow.Manager](h, "Manager")
	if err != nil {
		return fail(err)
	}
	if dtype == nil || out == nil || (ndim > 0 && shape == nil) {
		return invalid("vkflow_tensor_new: NULL argument")
	}
	dt, ok := dtypeByName(C.GoString(dtype))
	if !ok {
		return invalid("vkflow_tensor_new: unknown dtype %q", C.GoString(dtype))
	}
	if ndim < 0 || ndim > 32 { // ndim 0: a scalar, shape may be NULL
		return invalid("vkflow_tensor_new: ndim %d out of range [0, 32]", ndim)
	}
	dims := make([]int, ndim)
	for i, s := range unsafe.Slice((*int64)(unsafe.Pointer(shape)), int(ndim)) {
		if s < 0 || s > 1<<40 { // 0: an empty tensor, where package tensor allows one
			return invalid("vkflow_tensor_new: dimension %d is %d", i, s)
		}
		dims[i] = int(s)
	}
	t, err := tensor.New(m, dt, dims, memoryOption(memory))
	if err != nil {
		return fail(err)
	}
	if data != nil {
		if uint64(nbytes) != t.Bytes() {
			t.Close()
			return invalid("vkflow_tensor_new: %d bytes of data for a %d-byte tensor", uint64(nbytes), t.Bytes())
		}
		if err := t.WriteBytes(unsafe.Slice((*byte)(data), int(nbytes))); err != nil {
			t.Close()
			return fail(err)
		}
	}
	*out = newHandle(t)
	return C.VKFLOW_OK
}

//export vkflow_tensor_close
func vkflow_tensor_close(h C.vkflow_tensor) C.int {
	t, err := lookup[*tensor.Tensor](h, "tensor")
	if err != nil {
		return C.VKFLOW_OK
	}
	dropHandle(h)
	return fail(t.Close())
}

//export vkflow_tensor_read
func vkflow_tensor_read(h C.vkflow_tensor, dst unsafe.Pointer, nbytes C.uint64_t) C.int {
	t, err := lookup[*tensor.Tensor](h, "tensor")
	if err != nil {
		return fail(err)
	}
	if dst == nil {
		return invalid("vkflow_tensor_read: NULL destination")
	}
	if uint64(nbytes) != t.Bytes() {
		return invalid("vkflow_tensor_read: %d bytes from a %d-byte tensor", uint64(nbytes), t.Bytes())
	}
	// Bounded like every wait without a caller's timeout: the close
	// timeout (a core.Deadline: no timer on the eager loop's path).
	ctx := core.NewDeadline(t.Object().Device().WaitTimeout)
	defer ctx.Stop()
	if err := t.Wait(ctx); err != nil {
		return fail(err)
	}
	if t.Memory() == tensor.Storage {
		// Storage has no host access of its own; a host copy does.
		mt, err := dlpack.Export(ctx, t, dlpack.Options{Device: &dlpack.Device{Type: dlpack.CPU}})
		if err != nil {
			return fail(err)
		}
		defer mt.Delete()
		C.memcpy(dst, mt.Describe().Data, C.size_t(nbytes))
		return C.VKFLOW_OK
	}
	return fail(t.ReadBytes(unsafe.Slice((*byte)(dst), int(nbytes))))
}

//export vkflow_tensor_write
func vkflow_tensor_write(h C.vkflow_tensor, src unsafe.Pointer, nbytes C.uint64_t) C.int {
	t, err := lookup[*tensor.Tensor](h, "tensor")
	if err != nil {
		return fail(err)
	}
	if src == nil {
		return invalid("vkflow_tensor_write: NULL source")
	}
	// Queued work that reads or writes the tensor completes first.
	ctx := core.NewDeadline(t.Object().Device().WaitTimeout)
	defer ctx.Stop()
	if err := t.Wait(ctx); err != nil {
		return fail(err)
	}
	return fail(t.WriteBytes(unsafe.Slice((*byte)(src), int(nbytes))))
}

//export vkflow_tensor_info
func vkflow_tensor_info(h C.vkflow_tensor, dtype *C.char, dtypeLen C.size_t, ndim *C.int32_t, shape *C.int64_t, memory, mapped, readOnly *C.int32_t) C.int {
	t, err := lookup[*tensor.Tensor](h, "tensor")
	if err != nil {
		return fail(err)
	}
	if t.Closed() {
		return fail(fmt.Errorf("%w: tensor", vkflow.ErrClosed))
	}
	copyString(t.Dtype().String(), dtype, dtypeLen)
	s := t.Shape()
	if ndim != nil {
		*ndim = C.int32_t(len(s))
	}
	if shape != nil {
		dst := unsafe.Slice((*int64)(unsafe.Pointer(shape)), 32)
		for i, v := range s {
			dst[i] = int64(v)
		}
	}
	if memory != nil {
		*memory = C.int32_t(t.Memory())
	}
	if mapped != nil {
		*mapped = b2c(t.Mapped())
	}
	if readOnly != nil {
		*readOnly = b2c(t.ReadOnly())
	}
	return C.VKFLOW_OK
}

func b2c(b bool) C.int32_t {
	if b {
		return 1
	}
	return 0
}

//export vkflow_tensor_dlpack_device
func vkflow_tensor_dlpack_device(h C.vkflow_tensor, deviceType, deviceID *C.int32_t) C.int {
	t, err := lookup[*tensor.Tensor](h, "tensor")
	if err != nil {
		return fail(err)
	}
	if t.Closed() {
		return fail(fmt.Errorf("%w: tensor", vkflow.ErrClosed))
	}
	dt, id := dlpack.CPU, int32(0)
	if t.Allocation().Mapped == nil { // host-visible memory goes out as CPU
		dt, id = dlpack.Vulkan, int32(t.Object().Device().Index)
	}
	*deviceType, *deviceID = C.int32_t(dt), C.int32_t(id)
	return C.VKFLOW_OK
}

// cSequence is a sequence, the Manager it records for, and the algorithms
// its kernels made: they live as long as the sequence (a sequence refuses
// to submit a closed algorithm).
type cSequence struct {
	m    *vkflow.Manager
	s    *sequence.Sequence
	mu   sync.Mutex
	algs []*algorithm.Algorithm
}

// dispatch records al and keeps it, or closes it when recording failed.
func (s *cSequence) dispatch(al *algorithm.Algorithm, push ...any) error {
	if err := s.s.Dispatch(al, push...).Err(); err != nil {
		al.Close()
		return err
	}
	s.mu.Lock()
	s.algs = append(s.algs, al)
	s.mu.Unlock()
	return nil
}

//export vkflow_sequence_new
func vkflow_sequence_new(h C.vkflow_manager, queue C.int32_t, out *C.vkflow_sequence) C.int {
	m, err := lookup[*vkflow.Manager](h, "Manager")
	if err != nil {
		return fail(err)
	}
	if out == nil {
		return invalid("vkflow_sequence_new: out is NULL")
	}
	s, err := sequence.New(m, int(queue))
	if err != nil {
		return fail(err)
	}
	*out = newHandle(&cSequence{m: m, s: s})
	return C.VKFLOW_OK
}

//export vkflow_sequence_close
func vkflow_sequence_close(h C.vkflow_sequence) C.int {
	s, err := lookup[*cSequence](h, "sequence")
	if err != nil {
		return C.VKFLOW_OK
	}
	dropHandle(h)
	err = s.s.Close()
	s.mu.Lock()
	for _, al := range s.algs {
		al.Close()
	}
	s.algs = nil
	s.mu.Unlock()
	return fail(err)
}

// tensorPair looks up two tensor handles.
func tensorPair(a, b C.vkflow_tensor) (*tensor.Tensor, *tensor.Tensor, error) {
	ta, err := lookup[*tensor.Tensor](a, "tensor")
	if err != nil {
		return nil, nil, err
	}
	tb, err := lookup[*tensor.Tensor](b, "tensor")
	if err != nil {
		return nil, nil, err
	}
	return ta, tb, nil
}

func optTensor(h C.vkflow_tensor) (*tensor.Tensor, error) {
	if h == 0 {
		return nil, nil
	}
	return lookup[*tensor.Tensor](h, "tensor")
}

//export vkflow_sequence_kernel
func vkflow_sequence_kernel(h C.vkflow_sequence, name *C.char, ha, hb, hout C.vkflow_tensor, scalar C.float) C.int {
	s, err := lookup[*cSequence](h, "sequence")
	if err != nil {
		return fail(err)
	}
	var ts [3]*tensor.Tensor
	for i, th := range []C.vkflow_tensor{ha, hb, hout} {
		if ts[i], err = optTensor(th); err != nil {
			return fail(err)
		}
	}
	if name == nil {
		return invalid("vkflow_sequence_kernel: NULL name")
	}
	a, b, out := ts[0], ts[1], ts[2]
	switch n := C.GoString(name); n {
	case "multiply", "add":
		if a == nil || b == nil || out == nil {
			return invalid("vkflow_sequence_kernel: %s needs a, b and out", n)
		}
		f := kernels.Multiply
		if n == "add" {
			f = kernels.Add
		}
		al, err := f(s.m, a, b, out)
		if err != nil {
			return fail(err)
		}
		return fail(s.dispatch(al))
	case "saxpy":
		if a == nil || out == nil || b != nil {
			return invalid("vkflow_sequence_kernel: saxpy needs a and out, and b = 0")
		}
		al, err := kernels.Saxpy(s.m, a, out)
		if err != nil {
			return fail(err)
		}
		return fail(s.dispatch(al, float32(scalar)))
	default:
		return invalid("vkflow_sequence_kernel: unknown kernel %q (multiply, add, saxpy)", n)
	}
}

//export vkflow_sequence_copy
func vkflow_sequence_copy(h C.vkflow_sequence, src, dst C.vkflow_tensor) C.int {
	s, err := lookup[*cSequence](h, "sequence")
	if err != nil {
		return fail(err)
	}
	a, b, err := tensorPair(src, dst)
	if err != nil {
		return fail(err)
	}
	return fail(s.s.Copy(a, b).Err())
}

//export vkflow_sequence_eval
func vkflow_sequence_eval(h C.vkflow_sequence, timeout C.int64_t) C.int {
	s, err := lookup[*cSequence](h, "sequence")
	if err != nil {
		return fail(err)
	}
	ctx, cancel := timeoutCtx(timeout)
	defer cancel()
	return fail(s.s.Eval(ctx))
}

//export vkflow_sequence_submit
func vkflow_sequence_submit(h C.vkflow_sequence, waitTL C.vkflow_timeline, waitValue C.uint64_t, signalTL C.vkflow_timeline, signalValue C.uint64_t) C.int {
	s, err := lookup[*cSequence](h, "sequence")
	if err != nil {
		return fail(err)
	}
	var opts []sequence.SubmitOption
	if waitTL != 0 {
		tl, err := lookup[*timeline.Timeline](waitTL, "timeline")
		if err != nil {
			return fail(err)
		}
		opts = append(opts, sequence.Wait(tl, uint64(waitValue)))
	}
	if signalTL != 0 {
		tl, err := lookup[*timeline.Timeline](signalTL, "timeline")
		if err != nil {
			return fail(err)
		}
		opts = append(opts, sequence.Signal(tl, uint64(signalValue)))
	}
	return fail(s.s.Submit(context.Background(), opts...).Err())
}

//export vkflow_timeline_new
func vkflow_timeline_new(h C.vkflow_manager, initial C.uint64_t, out *C.vkflow_timeline) C.int {
	m, err := lookup[*vkflow.Manager](h, "Manager")
	if err != nil {
		return fail(err)
	}
	if out == nil {
		return invalid("vkflow_timeline_new: out is NULL")
	}
	tl, err := timeline.New(m, uint64(initial))
	if err != nil {
		return fail(err)
	}
	*out = newHandle(tl)
	return C.VKFLOW_OK
}

//export vkflow_timeline_close
func vkflow_timeline_close(h C.vkflow_timeline) C.int {
	tl, err := lookup[*timeline.Timeline](h, "timeline")
	if err != nil {
		return C.VKFLOW_OK
	}
	dropHandle(h)
	return fail(tl.Close())
}

//export vkflow_timeline_value
func vkflow_timeline_value(h C.vkflow_timeline, value *C.uint64_t) C.int {
	tl, err := lookup[*timeline.Timeline](h, "timeline")
	if err != nil {
		return fail(err)
	}
	v, err := tl.Value()
	if err != nil {
		return fail(err)
	}
	*value = C.uint64_t(v)
	return C.VKFLOW_OK
}

//export vkflow_timeline_signal
func vkflow_timeline_signal(h C.vkflow_timeline, value C.uint64_t) C.int {
	tl, err := lookup[*timeline.Timeline](h, "timeline")
	if err != nil {
		return fail(err)
	}
	return fail(tl.Signal(uint64(value)))
}

//export vkflow_timeline_wait
func vkflow_timeline_wait(h C.vkflow_timeline, value C.uint64_t, timeout C.int64_t) C.int {
	tl, err := lookup[*timeline.Timeline](h, "timeline")
	if err != nil {
		return fail(err)
	}
	ctx, cancel := timeoutCtx(timeout)
	defer cancel()
	return fail(tl.Wait(ctx, uint64(value)))
}

//export vkflow_timeline_semaphore
func vkflow_timeline_semaphore(h C.vkflow_timeline, sem *C.uint64_t) C.int {
	tl, err := lookup[*timeline.Timeline](h, "timeline")
	if err != nil {
		return fail(err)
	}
	*sem = C.uint64_t(tl.Semaphore())
	return C.VKFLOW_OK
}

//export vkflow_dlpack_export
func vkflow_dlpack_export(h C.vkflow_tensor, maxMajor, maxMinor, deviceType, deviceID, copyMode C.int32_t, consumer C.vkflow_timeline, consumerValue C.uint64_t, timeout C.int64_t, out *unsafe.Pointer, versioned *C.int32_t) C.int {
	t, err := lookup[*tensor.Tensor](h, "tensor")
	if err != nil {
		return fail(err)
	}
	if out == nil || versioned == nil {
		return invalid("vkflow_dlpack_export: NULL out or versioned")
	}
	var opts dlpack.Options
	if maxMajor >= 0 {
		opts.MaxVersion = &dlpack.Version{Major: uint32(maxMajor), Minor: uint32(max(maxMinor, 0))}
	}
	if deviceType != 0 {
		opts.Device = &dlpack.Device{Type: dlpack.DeviceType(deviceType), ID: int32(deviceID)}
	}
	opts.Copy = dlpack.CopyMode(copyMode)
	if consumer != 0 {
		tl, err := lookup[*timeline.Timeline](consumer, "timeline")
		if err != nil {
			return fail(err)
		}
		opts.Consumer = timeline.Point{Timeline: tl, Value: uint64(consumerValue)}
	}
	ctx, cancel := timeoutCtx(timeout)
	defer cancel()
	mt, err := dlpack.Export(ctx, t, opts)
	if err != nil {
		return fail(err)
	}
	*out = mt.Pointer()
	*versioned = b2c(mt.Versioned())
	return C.VKFLOW_OK
}

//export vkflow_dlpack_live
func vkflow_dlpack_live() C.int64_t { return C.int64_t(dlpack.Live()) }

//export vkflow_dlpack_import
func vkflow_dlpack_import(h C.vkflow_manager, managed unsafe.Pointer, versioned C.int32_t, timeout C.int64_t, out *C.vkflow_tensor, copied *C.int32_t) C.int {
	return vkflow_dlpack_import_copy(h, managed, versioned, C.int32_t(dlpack.CopyIfNeeded), timeout, out, copied)
}

//export vkflow_dlpack_import_copy
func vkflow_dlpack_import_copy(h C.vkflow_manager, managed unsafe.Pointer, versioned, copyMode C.int32_t, timeout C.int64_t, out *C.vkflow_tensor, copied *C.int32_t) C.int {
	mt := dlpack.FromPointer(managed, versioned != 0)
	m, err := lookup[*vkflow.Manager](h, "Manager")
	if err == nil && (out == nil || copied == nil) {
		err = fmt.Errorf("%w: vkflow_dlpack_import: NULL out or copied", vkflow.ErrInvalid)
	}
	if err != nil {
		mt.Delete() // Import owns the tensor in every case
		return fail(err)
	}
	ctx, cancel := timeoutCtx(timeout)
	defer cancel()
	t, wasCopied, err := dlpack.ImportCopy(ctx, m, mt, dlpack.CopyMode(copyMode))
	if err != nil {
		return fail(err)
	}
	*out = newHandle(t)
	*copied = b2c(wasCopied)
	return C.VKFLOW_OK
}
