package cuda

/*
#cgo LDFLAGS: -ldl
#include "cuda.h"
*/
import "C"

import (
	"fmt"
	"sync"

	"github.com/vkflow/vkflow/internal/core"
)

// driverAPI is the binding boundary: one method per C wrapper, taking plain
// values and returning (value, CUresult). Handles (CUcontext, CUstream,
// CUexternalMemory, CUexternalSemaphore) are driver addresses kept as
// uintptr, never dereferenced in Go; CUdevice is an int. cgoDriver calls
// libcuda; the tests use a fake.
type driverAPI interface {
	Init(flags uint32) int
	DeviceCount() (int, int)
	DeviceGet(ordinal int) (int, int)
	DeviceName(dev int) (string, int)
	DeviceUUID(dev int) ([16]byte, int)
	PrimaryCtxRetain(dev int) (uintptr, int)
	PrimaryCtxRelease(dev int) int
	CtxPush(ctx uintptr) int
	CtxPop() (uintptr, int)
	StreamCreate(flags uint32) (uintptr, int)
	StreamDestroy(stream uintptr) int
	StreamSynchronize(stream uintptr) int
	// ImportMemoryFD is cuImportExternalMemory with an opaque fd; CUDA
	// owns fd when the result is CUDA_SUCCESS, and only then.
	ImportMemoryFD(fd int, size uint64, dedicated bool) (uintptr, int)
	MappedBuffer(extMem uintptr, offset, size uint64) (uint64, int)
	MemFree(ptr uint64) int
	DestroyExternalMemory(extMem uintptr) int
	// ImportTimelineFD is cuImportExternalSemaphore with a timeline
	// semaphore fd; fd ownership as ImportMemoryFD.
	ImportTimelineFD(fd int) (uintptr, int)
	DestroyExternalSemaphore(sem uintptr) int
	WaitTimeline(sem uintptr, value uint64, stream uintptr) int
	SignalTimeline(sem uintptr, value uint64, stream uintptr) int
	// ErrorName is cuGetErrorName; false when the driver does not know r.
	ErrorName(r int) (string, bool)
}

// cgoDriver calls libcuda.so.1 through the C table filled by vkfCuLoad.
type cgoDriver struct{}

var _ driverAPI = cgoDriver{}

// load opens libcuda.so.1 once per process.
var load = sync.OnceValues(func() (driverAPI, error) {
	missing := C.vkfCuLoad()
	if missing == nil {
		return cgoDriver{}, nil
	}
	name := C.GoString(missing)
	if name == "libcuda.so.1" {
		detail := "dlopen failed"
		if e := C.vkfCuDlerror(); e != nil {
			detail = C.GoString(e)
		}
		return nil, fmt.Errorf("cuda: libcuda.so.1 not found: %s (install the NVIDIA driver): %w", detail, core.ErrUnsupported)
	}
	return nil, fmt.Errorf("cuda: libcuda.so.1 lacks %s (is the driver older than CUDA 10?): %w", name, core.ErrUnsupported)
})

func (cgoDriver) Init(flags uint32) int { return int(C.vkfCuInit(C.uint(flags))) }

func (cgoDriver) DeviceCount() (int, int) {
	r := C.vkfCuDeviceGetCount()
	return int(r.value), int(r.result)
}

func (cgoDriver) DeviceGet(ordinal int) (int, int) {
	r := C.vkfCuDeviceGet(C.int(ordinal))
	return int(r.value), int(r.result)
}

func (cgoDriver) DeviceName(dev int) (string, int) {
	r := C.vkfCuDeviceGetName(C.CUdevice(dev))
	return C.GoString(&r.name[0]), int(r.result)
}

func (cgoDriver) DeviceUUID(dev int) ([16]byte, int) {
	r := C.vkfCuDeviceGetUuid(C.CUdevice(dev))
	var u [16]byte
	for i := range u {
		u[i] = byte(r.uuid.bytes[i])
	}
	return u, int(r.result)
}

func (cgoDriver) PrimaryCtxRetain(dev int) (uintptr, int) {
	r := C.vkfCuPrimaryCtxRetain(C.CUdevice(dev))
	return uintptr(r.handle), int(r.result)
}

func (cgoDriver) PrimaryCtxRelease(dev int) int {
	return int(C.vkfCuPrimaryCtxRelease(C.CUdevice(dev)))
}

func (cgoDriver) CtxPush(ctx uintptr) int { return int(C.vkfCuCtxPush(C.uintptr_t(ctx))) }

func (cgoDriver) CtxPop() (uintptr, int) {
	r := C.vkfCuCtxPop()
	return uintptr(r.handle), int(r.result)
}

func (cgoDriver) StreamCreate(flags uint32) (uintptr, int) {
	r := C.vkfCuStreamCreate(C.uint(flags))
	return uintptr(r.handle), int(r.result)
}

func (cgoDriver) StreamDestroy(stream uintptr) int {
	return int(C.vkfCuStreamDestroy(C.uintptr_t(stream)))
}

func (cgoDriver) StreamSynchronize(stream uintptr) int {
	return int(C.vkfCuStreamSynchronize(C.uintptr_t(stream)))
}

func (cgoDriver) ImportMemoryFD(fd int, size uint64, dedicated bool) (uintptr, int) {
	d := C.int(0)
	if dedicated {
		d = 1
	}
	r := C.vkfCuImportMemoryFD(C.int(fd), C.uint64_t(size), d)
	return uintptr(r.handle), int(r.result)
}

func (cgoDriver) MappedBuffer(extMem uintptr, offset, size uint64) (uint64, int) {
	r := C.vkfCuMappedBuffer(C.uintptr_t(extMem), C.uint64_t(offset), C.uint64_t(size))
	return uint64(r.value), int(r.result)
}

func (cgoDriver) MemFree(ptr uint64) int { return int(C.vkfCuMemFree(C.uint64_t(ptr))) }

func (cgoDriver) DestroyExternalMemory(extMem uintptr) int {
	return int(C.vkfCuDestroyExternalMemory(C.uintptr_t(extMem)))
}

func (cgoDriver) ImportTimelineFD(fd int) (uintptr, int) {
	r := C.vkfCuImportTimelineFD(C.int(fd))
	return uintptr(r.handle), int(r.result)
}

func (cgoDriver) DestroyExternalSemaphore(sem uintptr) int {
	return int(C.vkfCuDestroyExternalSemaphore(C.uintptr_t(sem)))
}

func (cgoDriver) WaitTimeline(sem uintptr, value uint64, stream uintptr) int {
	return int(C.vkfCuWaitTimeline(C.uintptr_t(sem), C.uint64_t(value), C.uintptr_t(stream)))
}

func (cgoDriver) SignalTimeline(sem uintptr, value uint64, stream uintptr) int {
	return int(C.vkfCuSignalTimeline(C.uintptr_t(sem), C.uint64_t(value), C.uintptr_t(stream)))
}

func (cgoDriver) ErrorName(r int) (string, bool) {
	name := C.vkfCuErrorName(C.CUresult(r))
	if name == nil {
		return "", false
	}
	return C.GoString(name), true
}
