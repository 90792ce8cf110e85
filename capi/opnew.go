package main

// vkflow_op_call_new: an eager call with one new output, returned with its
// description, so that Python's vkflow.ops crosses into the library once
// per op.

/*
#include "vkflow.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/tensor"
)

//export vkflow_op_call_new
func vkflow_op_call_new(h C.vkflow_manager, name *C.char, in *C.vkflow_tensor, nIn C.int32_t, attrsJSON *C.char, out *C.vkflow_tensor_desc) C.int {
	if out == nil {
		return invalid("vkflow_op_call_new: NULL output description")
	}
	s, ins, _, at, err := opArgs(h, name, in, nIn, nil, 0, attrsJSON)
	if err != nil {
		return fail(err)
	}
	res, err := s.Call(C.GoString(name), ins, nil, at)
	if err != nil {
		return fail(err)
	}
	for _, t := range res[1:] {
		_ = t.Close() // no slot for it
	}
	return describe(res[0], out)
}

// describe fills *out with t's new handle and its metadata.
func describe(t *tensor.Tensor, out *C.vkflow_tensor_desc) C.int {
	sh := t.Shape()
	if len(sh) > len(out.shape) {
		_ = t.Close()
		return fail(fmt.Errorf("%w: vkflow_op_call_new: an output of %d dimensions (at most %d)", vkflow.ErrInvalid, len(sh), len(out.shape)))
	}
	dst := unsafe.Slice((*byte)(unsafe.Pointer(&out.dtype[0])), len(out.dtype))
	n := copy(dst[:len(dst)-1], t.Dtype().String())
	dst[n] = 0
	for i, v := range sh {
		out.shape[i] = C.int64_t(v)
	}
	out.ndim = C.int32_t(len(sh))
	out.memory = C.int32_t(t.Memory())
	out.mapped = b2c(t.Mapped())
	out.read_only = b2c(t.ReadOnly())
	out.handle = newHandle(t)
	return C.VKFLOW_OK
}
