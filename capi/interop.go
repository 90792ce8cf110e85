package main

// External memory and timelines as opaque fds (package interop,
// docs/INTEROP.md): vkflow_tensor_export_memory, vkflow_tensor_import_memory
// and the exportable timelines. Every fd the C API takes is consumed, on
// success and on failure, as interop.Import does; a negative one is
// ErrInvalid and left alone. (A C int32 cannot name a value beyond int32,
// which the Go API refuses too.) handle.go has the struct's conversions and
// its wire form.

/*
#include "vkflow.h"
*/
import "C"

import (
	"syscall"
	"unsafe"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/interop"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/timeline"
)

// closeFD closes an fd the C API was given to consume, when it could not
// hand it on.
func closeFD(fd C.int32_t) {
	if fd >= 0 {
		syscall.Close(int(fd))
	}
}

// memoryOption turns vkflow_tensor_new's memory kind into tensor.New's
// option: VKFLOW_MEMORY_EXPORTABLE is Device memory made Exportable.
func memoryOption(memory C.int32_t) tensor.Option {
	if memory == C.VKFLOW_MEMORY_EXPORTABLE {
		return tensor.Exportable()
	}
	return tensor.In(tensor.Memory(memory))
}

//export vkflow_tensor_export_memory
func vkflow_tensor_export_memory(h C.vkflow_tensor, out *C.vkflow_memory_handle) C.int {
	t, err := lookup[*tensor.Tensor](h, "tensor")
	if err != nil {
		return fail(err)
	}
	if out == nil {
		return invalid("vkflow_tensor_export_memory: out is NULL")
	}
	mh, err := interop.Export(t)
	if err != nil {
		return fail(err)
	}
	handleToC(mh, out)
	return C.VKFLOW_OK
}

//export vkflow_tensor_import_memory
func vkflow_tensor_import_memory(hm C.vkflow_manager, h *C.vkflow_memory_handle, dtype *C.char, ndim C.int32_t, shape *C.int64_t, out *C.vkflow_tensor) C.int {
	if h == nil {
		return invalid("vkflow_tensor_import_memory: handle is NULL")
	}
	fd := h.fd
	m, err := lookup[*vkflow.Manager](hm, "Manager")
	if err != nil {
		closeFD(fd)
		return fail(err)
	}
	if dtype == nil || out == nil || (ndim > 0 && shape == nil) {
		closeFD(fd)
		return invalid("vkflow_tensor_import_memory: NULL argument")
	}
	dt, ok := dtypeByName(C.GoString(dtype))
	if !ok {
		closeFD(fd)
		return invalid("vkflow_tensor_import_memory: unknown dtype %q", C.GoString(dtype))
	}
	if ndim < 0 || ndim > 32 {
		closeFD(fd)
		return invalid("vkflow_tensor_import_memory: ndim %d out of range [0, 32]", ndim)
	}
	dims := make([]int, ndim)
	for i, s := range unsafe.Slice((*int64)(unsafe.Pointer(shape)), int(ndim)) {
		if s < 0 || s > 1<<40 {
			closeFD(fd)
			return invalid("vkflow_tensor_import_memory: dimension %d is %d", i, s)
		}
		dims[i] = int(s)
	}
	mh, err := handleFromC(h, "vkflow_tensor_import_memory")
	if err != nil {
		closeFD(fd)
		return fail(err)
	}
	t, err := interop.Import(m, mh, dt, dims) // consumes the fd
	if err != nil {
		return fail(err)
	}
	*out = newHandle(t)
	return C.VKFLOW_OK
}

//export vkflow_timeline_new_exportable
func vkflow_timeline_new_exportable(h C.vkflow_manager, initial C.uint64_t, out *C.vkflow_timeline) C.int {
	m, err := lookup[*vkflow.Manager](h, "Manager")
	if err != nil {
		return fail(err)
	}
	if out == nil {
		return invalid("vkflow_timeline_new_exportable: out is NULL")
	}
	tl, err := timeline.New(m, uint64(initial), timeline.Exportable())
	if err != nil {
		return fail(err)
	}
	*out = newHandle(tl)
	return C.VKFLOW_OK
}

//export vkflow_timeline_export_fd
func vkflow_timeline_export_fd(h C.vkflow_timeline, fd *C.int32_t) C.int {
	tl, err := lookup[*timeline.Timeline](h, "timeline")
	if err != nil {
		return fail(err)
	}
	if fd == nil {
		return invalid("vkflow_timeline_export_fd: fd is NULL")
	}
	n, err := interop.ExportTimeline(tl)
	if err != nil {
		return fail(err)
	}
	*fd = C.int32_t(n)
	return C.VKFLOW_OK
}

//export vkflow_timeline_import_fd
func vkflow_timeline_import_fd(h C.vkflow_manager, fd C.int32_t, out *C.vkflow_timeline) C.int {
	m, err := lookup[*vkflow.Manager](h, "Manager")
	if err != nil {
		closeFD(fd)
		return fail(err)
	}
	if out == nil {
		closeFD(fd)
		return invalid("vkflow_timeline_import_fd: out is NULL")
	}
	tl, err := interop.ImportTimeline(m, int(fd)) // consumes the fd
	if err != nil {
		return fail(err)
	}
	*out = newHandle(tl)
	return C.VKFLOW_OK
}
