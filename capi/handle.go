package main

// vkflow_memory_handle and its wire form (docs/INTEROP.md): the struct's
// fields checked and turned into an interop.MemoryHandle (for imports and
// for encoding), and vkflow_memory_handle_encode / _decode, which write and
// read the bytes of Go's interop.SendHandle.

/*
#include "vkflow.h"
_Static_assert(sizeof(vkflow_memory_handle) == 72, "vkflow_memory_handle is 72 bytes");
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/interop"
)

// handleSize is sizeof(vkflow_memory_handle).
const handleSize = C.sizeof_vkflow_memory_handle

// structOf views the bytes of a vkflow_memory_handle as one (for code
// without C types: the fuzz test).
func structOf(b *[handleSize]byte) *C.vkflow_memory_handle {
	return (*C.vkflow_memory_handle)(unsafe.Pointer(b))
}

// handleFromC checks h's fields and returns them as a MemoryHandle (fd
// included; a C int32 always fits). op names the call in errors.
func handleFromC(h *C.vkflow_memory_handle, op string) (interop.MemoryHandle, error) {
	if h.dedicated != 0 && h.dedicated != 1 {
		return interop.MemoryHandle{FD: -1}, fmt.Errorf("%w: %s: dedicated is %d, not 0 or 1", vkflow.ErrInvalid, op, int32(h.dedicated))
	}
	mh := interop.MemoryHandle{
		FD:         int(h.fd),
		Size:       uint64(h.size),
		Offset:     uint64(h.offset),
		Bytes:      uint64(h.bytes),
		MemoryType: uint32(h.memory_type),
		Dedicated:  h.dedicated != 0,
	}
	for i := range mh.DeviceUUID {
		mh.DeviceUUID[i] = byte(h.device_uuid[i])
		mh.DriverUUID[i] = byte(h.driver_uuid[i])
	}
	return mh, nil
}

// handleToC writes mh into *out (reserved 0).
func handleToC(mh interop.MemoryHandle, out *C.vkflow_memory_handle) {
	*out = C.vkflow_memory_handle{
		size:        C.uint64_t(mh.Size),
		offset:      C.uint64_t(mh.Offset),
		bytes:       C.uint64_t(mh.Bytes),
		fd:          C.int32_t(mh.FD),
		memory_type: C.uint32_t(mh.MemoryType),
		dedicated:   b2c(mh.Dedicated),
	}
	for i := range mh.DeviceUUID {
		out.device_uuid[i] = C.uint8_t(mh.DeviceUUID[i])
		out.driver_uuid[i] = C.uint8_t(mh.DriverUUID[i])
	}
}

// encodeWire writes h's wire form into buf and returns its length.
func encodeWire(h *C.vkflow_memory_handle, buf []byte) (int, error) {
	const op = "vkflow_memory_handle_encode"
	mh, err := handleFromC(h, op)
	if err != nil {
		return 0, err
	}
	b, err := mh.MarshalBinary()
	if err != nil {
		return 0, fmt.Errorf("%s: %w", op, err)
	}
	if len(buf) < len(b) {
		return 0, fmt.Errorf("%w: %s: a buffer of %d bytes; the wire form needs %d", vkflow.ErrInvalid, op, len(buf), len(b))
	}
	return copy(buf, b), nil
}

// decodeWire reads a wire form into *out (fd -1); on error *out is
// unchanged.
func decodeWire(b []byte, out *C.vkflow_memory_handle) error {
	var mh interop.MemoryHandle
	if err := mh.UnmarshalBinary(b); err != nil {
		return fmt.Errorf("vkflow_memory_handle_decode: %w", err)
	}
	handleToC(mh, out)
	return nil
}

//export vkflow_memory_handle_encode
func vkflow_memory_handle_encode(h *C.vkflow_memory_handle, buf unsafe.Pointer, bufLen C.size_t, written *C.size_t) C.int {
	if h == nil || buf == nil {
		return invalid("vkflow_memory_handle_encode: NULL argument")
	}
	n, err := encodeWire(h, unsafe.Slice((*byte)(buf), int(min(bufLen, C.VKFLOW_MEMORY_HANDLE_WIRE_SIZE))))
	if err != nil {
		return fail(err)
	}
	if written != nil {
		*written = C.size_t(n)
	}
	return C.VKFLOW_OK
}

//export vkflow_memory_handle_decode
func vkflow_memory_handle_decode(buf unsafe.Pointer, bufLen C.size_t, out *C.vkflow_memory_handle) C.int {
	if buf == nil || out == nil {
		return invalid("vkflow_memory_handle_decode: NULL argument")
	}
	if bufLen != C.VKFLOW_MEMORY_HANDLE_WIRE_SIZE {
		return invalid("vkflow_memory_handle_decode: not a vkflow memory handle (%d bytes; the wire form is %d)",
			uint64(bufLen), C.VKFLOW_MEMORY_HANDLE_WIRE_SIZE)
	}
	return fail(decodeWire(unsafe.Slice((*byte)(buf), int(bufLen)), out))
}
