package dlpack

/*
#include <stdlib.h>
#include <string.h>
#include "dlpack.h"
*/
import "C"

import "unsafe"

// This file builds managed tensors the way a foreign producer would, for
// the package's tests and fuzz target (test files cannot use cgo).

// foreign describes a managed tensor to build.
type foreign struct {
	versioned    bool
	major, minor uint32
	flags        uint64
	dev          Device
	dt           DataType
	ndim         int32
	shape        []int64 // up to foreignDims entries; the rest read as 0
	strides      []int64 // nil: NULL strides
	byteOffset   uint64
	data         []byte // copied to dataOffset bytes past a page boundary
	dataOffset   int
	nullData     bool
	// at, when set, is the data pointer: memory of another block (a slice
	// of another managed tensor's data); data and dataOffset are unused.
	at unsafe.Pointer
}

const (
	foreignDims = 64
	pageBytes   = 4096
)

// build allocates one page-aligned C block: the struct and shape/strides
// arrays in the first page, the data from the second. The block is freed
// by a deleter that counts its calls (vkflowCountingDeletes). It returns
// the managed tensor and the address of the data.
func (f foreign) build() (Managed, unsafe.Pointer) {
	size := 2*pageBytes + ((f.dataOffset+len(f.data)+pageBytes-1)/pageBytes)*pageBytes
	block := C.aligned_alloc(pageBytes, C.size_t(size))
	C.memset(block, 0, C.size_t(size))
	m := Managed{block, f.versioned}
	shape := unsafe.Slice((*int64)(unsafe.Add(block, 128)), foreignDims)
	strides := unsafe.Slice((*int64)(unsafe.Add(block, 128+8*foreignDims)), foreignDims)
	copy(shape, f.shape)
	copy(strides, f.strides)
	data := unsafe.Add(block, pageBytes+f.dataOffset)
	copy(unsafe.Slice((*byte)(data), len(f.data)), f.data)
	if f.versioned {
		v := (*C.DLManagedTensorVersioned)(block)
		v.version = C.DLPackVersion{major: C.uint32_t(f.major), minor: C.uint32_t(f.minor)}
		v.flags = C.uint64_t(f.flags)
	}
	dl := m.dl()
	dl.device = C.DLDevice{device_type: C.int32_t(f.dev.Type), device_id: C.int32_t(f.dev.ID)}
	dl.ndim = C.int32_t(f.ndim)
	dl.dtype = C.DLDataType{code: C.uint8_t(f.dt.Code), bits: C.uint8_t(f.dt.Bits), lanes: C.uint16_t(f.dt.Lanes)}
	dl.shape = (*C.int64_t)(unsafe.Pointer(&shape[0]))
	if f.strides != nil {
		dl.strides = (*C.int64_t)(unsafe.Pointer(&strides[0]))
	}
	dl.byte_offset = C.uint64_t(f.byteOffset)
	if f.at != nil {
		data = f.at
	}
	if !f.nullData {
		dl.data = data
	}
	C.vkflowSetCountingDeleter(block, b2i(f.versioned))
	return m, data
}

// keep makes m's deleter count without freeing, so m can be imported
// again (benchmarks); free it with freeForeign.
func keep(m Managed) { C.vkflowSetKeepingDeleter(m.ptr, b2i(m.versioned)) }

// freeForeign frees a block built by build.
func freeForeign(m Managed) { C.free(m.ptr) }

// foreignDeletes returns how many foreign deleters have run.
func foreignDeletes() int64 { return int64(C.vkflowCountingDeletes()) }

// cLayout reports the C structures' sizes and offsets, for the layout test.
func cLayout() map[string]uintptr {
	var t C.DLTensor
	var v C.DLManagedTensorVersioned
	var l C.DLManagedTensor
	var b C.vkflow_vulkan_buffer
	return map[string]uintptr{
		"DLTensor":                             unsafe.Sizeof(t),
		"DLTensor.data":                        unsafe.Offsetof(t.data),
		"DLTensor.device":                      unsafe.Offsetof(t.device),
		"DLTensor.ndim":                        unsafe.Offsetof(t.ndim),
		"DLTensor.dtype":                       unsafe.Offsetof(t.dtype),
		"DLTensor.shape":                       unsafe.Offsetof(t.shape),
		"DLTensor.strides":                     unsafe.Offsetof(t.strides),
		"DLTensor.byte_offset":                 unsafe.Offsetof(t.byte_offset),
		"DLManagedTensor":                      unsafe.Sizeof(l),
		"DLManagedTensor.manager_ctx":          unsafe.Offsetof(l.manager_ctx),
		"DLManagedTensor.deleter":              unsafe.Offsetof(l.deleter),
		"DLManagedTensorVersioned":             unsafe.Sizeof(v),
		"DLManagedTensorVersioned.manager_ctx": unsafe.Offsetof(v.manager_ctx),
		"DLManagedTensorVersioned.deleter":     unsafe.Offsetof(v.deleter),
		"DLManagedTensorVersioned.flags":       unsafe.Offsetof(v.flags),
		"DLManagedTensorVersioned.dl_tensor":   unsafe.Offsetof(v.dl_tensor),
		"DLDevice":                             unsafe.Sizeof(C.DLDevice{}),
		"DLDataType":                           unsafe.Sizeof(C.DLDataType{}),
		"vkflow_vulkan_buffer":                 unsafe.Sizeof(b),
		"vkflow_vulkan_buffer.ready_semaphore": unsafe.Offsetof(b.ready_semaphore),
		"vkflow_vulkan_buffer.released_value":  unsafe.Offsetof(b.released_value),
	}
}
