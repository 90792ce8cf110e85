package main

// Gradients: an op's VJP by name, its gradient entry, and a registered
// kernel's VJP kernel.

/*
#include <stdlib.h>
#include "vkflow.h"
*/
import "C"

import (
	"unsafe"

	"github.com/vkflow/vkflow/ops"
)

//export vkflow_op_vjp
func vkflow_op_vjp(h C.vkflow_manager, name *C.char, in *C.vkflow_tensor, nIn C.int32_t, out *C.vkflow_tensor, nOut C.int32_t,
	cot *C.vkflow_tensor, nCot C.int32_t, attrsJSON *C.char, wants *C.int32_t, grads *C.vkflow_tensor) C.int {
	s, ins, outs, at, err := opArgs(h, name, in, nIn, out, nOut, attrsJSON)
	if err != nil {
		return fail(err)
	}
	cots, err := opTensors("cotangents", cot, nCot, true)
	if err != nil {
		return fail(err)
	}
	if grads == nil && nIn > 0 {
		return invalid("vkflow_op_vjp: grads is NULL")
	}
	var w []bool
	if wants != nil {
		w = make([]bool, nIn)
		for i, v := range unsafe.Slice(wants, int(nIn)) {
			w[i] = v != 0
		}
	}
	res, err := s.VJP(C.GoString(name), ins, outs, cots, at, w)
	if err != nil {
		return fail(err)
	}
	slots := unsafe.Slice(grads, int(nIn))
	for i, t := range res {
		slots[i] = 0
		if t != nil {
			slots[i] = newHandle(t)
		}
	}
	return C.VKFLOW_OK
}

//export vkflow_op_gradient
func vkflow_op_gradient(name *C.char, kind *C.int32_t, reason *C.char, n C.size_t, length *C.size_t) C.int {
	if name == nil || kind == nil {
		return invalid("vkflow_op_gradient: NULL argument")
	}
	info, err := ops.GradientOf(C.GoString(name))
	if err != nil {
		return fail(err)
	}
	*kind = C.int32_t(info.Kind)
	if info.Zero {
		*kind = 3
	}
	l := copyString(info.Reason, reason, n)
	if length != nil {
		*length = l
	}
	return C.VKFLOW_OK
}

//export vkflow_op_register_vjp
func vkflow_op_register_vjp(name, vjpKernel *C.char) C.int {
	if name == nil || vjpKernel == nil {
		return invalid("vkflow_op_register_vjp: NULL argument")
	}
	return fail(ops.RegisterVJP(C.GoString(name), ops.KernelVJP(C.GoString(vjpKernel))))
}

//export vkflow_op_schema
func vkflow_op_schema(name *C.char, buf *C.char, n C.size_t, length *C.size_t) C.int {
	if name == nil {
		return invalid("vkflow_op_schema: name is NULL")
	}
	s, err := ops.SchemaOf(C.GoString(name))
	if err != nil {
		return fail(err)
	}
	l := copyString(s.JSON(), buf, n)
	if length != nil {
		*length = l
	}
	return C.VKFLOW_OK
}
