package main

// Tapes (ops.Tape): ops recorded into a graph by name, and the graph's
// backward graph (Tape.Grad).

/*
#include <stdlib.h>
#include "vkflow.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/ops"
)

//export vkflow_tape_new
func vkflow_tape_new(hm C.vkflow_manager, hg C.vkflow_graph, out *C.vkflow_tape) C.int {
	m, err := lookup[*vkflow.Manager](hm, "Manager")
	if err != nil {
		return fail(err)
	}
	g, err := lookup[*cGraph](hg, "graph")
	if err != nil {
		return fail(err)
	}
	if out == nil {
		return invalid("vkflow_tape_new: out is NULL")
	}
	tp, err := ops.NewTape(m, g.g)
	if err != nil {
		return fail(err)
	}
	*out = newHandle(tp)
	return C.VKFLOW_OK
}

//export vkflow_tape_close
func vkflow_tape_close(h C.vkflow_tape) C.int {
	tp, err := lookup[*ops.Tape](h, "tape")
	if err != nil {
		return fail(err)
	}
	dropHandle(h)
	return fail(tp.Close())
}

//export vkflow_tape_queue
func vkflow_tape_queue(h C.vkflow_tape, q C.int32_t) C.int {
	tp, err := lookup[*ops.Tape](h, "tape")
	if err != nil {
		return fail(err)
	}
	if q < -1 {
		return invalid("vkflow_tape_queue: queue %d (-1: the compiler's choice)", q)
	}
	tp.OnQueue(int(q))
	return C.VKFLOW_OK
}

//export vkflow_tape_call
func vkflow_tape_call(h C.vkflow_tape, name *C.char, in *C.vkflow_tensor, nIn C.int32_t, attrsJSON *C.char, out *C.vkflow_tensor, nOut C.int32_t) C.int {
	tp, err := lookup[*ops.Tape](h, "tape")
	if err != nil {
		return fail(err)
	}
	if name == nil || (nOut > 0 && out == nil) || nOut < 0 {
		return invalid("vkflow_tape_call: NULL name or output slots")
	}
	ins, err := opTensors("inputs", in, nIn, false)
	if err != nil {
		return fail(err)
	}
	var at ops.Attrs
	if attrsJSON != nil {
		if at, err = ops.ParseAttrs([]byte(C.GoString(attrsJSON))); err != nil {
			return fail(err)
		}
	}
	res, err := tp.Call(C.GoString(name), at, ins...)
	if err != nil {
		return fail(err)
	}
	slots := unsafe.Slice(out, int(nOut))
	for i := range slots {
		slots[i] = 0
		if i < len(res) {
			slots[i] = newHandle(res[i])
		}
	}
	return C.VKFLOW_OK
}

//export vkflow_tape_grad
func vkflow_tape_grad(h C.vkflow_tape, outs *C.vkflow_tensor, nOuts C.int32_t, cots *C.vkflow_tensor, wrt *C.vkflow_tensor, nWrt C.int32_t,
	graphOut *C.vkflow_graph, grads *C.vkflow_tensor, savedBytes *C.uint64_t) C.int {
	tp, err := lookup[*ops.Tape](h, "tape")
	if err != nil {
		return fail(err)
	}
	if graphOut == nil || (nWrt > 0 && grads == nil) {
		return invalid("vkflow_tape_grad: NULL graph or gradient slots")
	}
	os, err := opTensors("outputs", outs, nOuts, false)
	if err != nil {
		return fail(err)
	}
	cs, err := opTensors("cotangents", cots, nOuts, false)
	if err != nil {
		return fail(err)
	}
	ws, err := opTensors("wrt", wrt, nWrt, false)
	if err != nil {
		return fail(err)
	}
	bw, err := tp.Grad(os, cs, ws)
	if err != nil {
		return fail(fmt.Errorf("vkflow_tape_grad: %w", err))
	}
	*graphOut = newHandle(&cGraph{g: bw.Graph})
	slots := unsafe.Slice(grads, int(nWrt))
	for i := range slots {
		slots[i] = newHandle(bw.Grads[i])
	}
	if savedBytes != nil {
		*savedBytes = C.uint64_t(bw.SavedBytes)
	}
	return C.VKFLOW_OK
}

//export vkflow_tape_device_bytes
func vkflow_tape_device_bytes(h C.vkflow_tape, out *C.uint64_t) C.int {
	tp, err := lookup[*ops.Tape](h, "tape")
	if err != nil {
		return fail(err)
	}
	if out == nil {
		return invalid("vkflow_tape_device_bytes: out is NULL")
	}
	*out = C.uint64_t(tp.DeviceBytes())
	return C.VKFLOW_OK
}
