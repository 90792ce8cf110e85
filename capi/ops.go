package main

// The operator library (package ops) and its registry: call an op by name,
// register GLSL or SPIR-V kernels, list the names.

/*
#include <stdlib.h>
#include "vkflow.h"
*/
import "C"

import (
	"fmt"
	"strings"
	"unsafe"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/tensor"
)

// maxOpTensors bounds the tensor arrays of vkflow_op_call.
const maxOpTensors = 64

// opTensors looks up n handles at p; zero handles are nil when allowZero.
func opTensors(what string, p *C.vkflow_tensor, n C.int32_t, allowZero bool) ([]*tensor.Tensor, error) {
	if n < 0 || n > maxOpTensors || (n > 0 && p == nil) {
		return nil, fmt.Errorf("%w: vkflow_op_call: %d %s at %p (0..%d, not NULL)", vkflow.ErrInvalid, n, what, p, maxOpTensors)
	}
	hs := unsafe.Slice(p, int(n))
	ts := make([]*tensor.Tensor, n)
	for i, h := range hs {
		if h == 0 {
			if !allowZero {
				return nil, fmt.Errorf("%w: vkflow_op_call: %s[%d] is 0", vkflow.ErrInvalid, what, i)
			}
			continue
		}
		t, err := lookup[*tensor.Tensor](h, "tensor")
		if err != nil {
			return nil, fmt.Errorf("vkflow_op_call: %s[%d]: %w", what, i, err)
		}
		ts[i] = t
	}
	return ts, nil
}

// opArgs looks up the arguments of the vkflow_op_call functions.
func opArgs(h C.vkflow_manager, name *C.char, in *C.vkflow_tensor, nIn C.int32_t, out *C.vkflow_tensor, nOut C.int32_t, attrsJSON *C.char) (*ops.Stream, []*tensor.Tensor, []*tensor.Tensor, ops.Attrs, error) {
	var at ops.Attrs
	m, err := lookup[*vkflow.Manager](h, "Manager")
	if err != nil {
		return nil, nil, nil, at, err
	}
	if name == nil {
		return nil, nil, nil, at, fmt.Errorf("%w: vkflow_op_call: name is NULL", vkflow.ErrInvalid)
	}
	ins, err := opTensors("inputs", in, nIn, false)
	if err != nil {
		return nil, nil, nil, at, err
	}
	outs, err := opTensors("outputs", out, nOut, true)
	if err != nil {
		return nil, nil, nil, at, err
	}
	if attrsJSON != nil {
		if at, err = ops.ParseAttrs([]byte(C.GoString(attrsJSON))); err != nil {
			return nil, nil, nil, at, err
		}
	}
	s, err := ops.DefaultStream(m)
	return s, ins, outs, at, err
}

// opCall queues the op on the Manager's default stream and, when wait,
// waits for its outputs (ctx bounds the wait). New outputs go to the 0
// slots of out; on an error the slots are left alone and new outputs are
// closed (freed once the GPU is done with them).
func opCall(h C.vkflow_manager, name *C.char, in *C.vkflow_tensor, nIn C.int32_t, out *C.vkflow_tensor, nOut C.int32_t, attrsJSON *C.char, wait bool, timeout C.int64_t) C.int {
	s, ins, outs, at, err := opArgs(h, name, in, nIn, out, nOut, attrsJSON)
	if err != nil {
		return fail(err)
	}
	res, err := s.Call(C.GoString(name), ins, outs, at)
	if err != nil {
		return fail(err)
	}
	made := func(i int) bool { return i >= len(outs) || outs[i] == nil }
	if wait {
		ctx, cancel := timeoutCtx(timeout)
		defer cancel()
		for _, t := range res {
			if err = t.Wait(ctx); err != nil {
				break
			}
		}
		if err != nil {
			for i, t := range res {
				if made(i) {
					_ = t.Close()
				}
			}
			return fail(fmt.Errorf("ops.%s: %w", C.GoString(name), err))
		}
	}
	slots := unsafe.Slice(out, int(nOut))
	for i, t := range res {
		switch {
		case i >= len(slots):
			// An output the caller left no slot for: not returned.
			_ = t.Close()
		case slots[i] == 0:
			slots[i] = newHandle(t)
		}
	}
	return C.VKFLOW_OK
}

//export vkflow_op_call
func vkflow_op_call(h C.vkflow_manager, name *C.char, in *C.vkflow_tensor, nIn C.int32_t, out *C.vkflow_tensor, nOut C.int32_t, attrsJSON *C.char) C.int {
	// Bounded like every wait without a caller's timeout: the Manager's
	// close timeout.
	timeout := C.int64_t(-1)
	if m, err := lookup[*vkflow.Manager](h, "Manager"); err == nil {
		if d, err := core.From(m); err == nil {
			timeout = C.int64_t(d.WaitTimeout)
		}
	}
	return opCall(h, name, in, nIn, out, nOut, attrsJSON, true, timeout)
}

//export vkflow_op_call_timeout
func vkflow_op_call_timeout(h C.vkflow_manager, name *C.char, in *C.vkflow_tensor, nIn C.int32_t, out *C.vkflow_tensor, nOut C.int32_t, attrsJSON *C.char, timeout C.int64_t) C.int {
	return opCall(h, name, in, nIn, out, nOut, attrsJSON, true, timeout)
}

//export vkflow_op_call_async
func vkflow_op_call_async(h C.vkflow_manager, name *C.char, in *C.vkflow_tensor, nIn C.int32_t, out *C.vkflow_tensor, nOut C.int32_t, attrsJSON *C.char) C.int {
	return opCall(h, name, in, nIn, out, nOut, attrsJSON, false, -1)
}

//export vkflow_synchronize
func vkflow_synchronize(h C.vkflow_manager, timeout C.int64_t) C.int {
	m, err := lookup[*vkflow.Manager](h, "Manager")
	if err != nil {
		return fail(err)
	}
	s, err := ops.DefaultStream(m)
	if err != nil {
		return fail(err)
	}
	ctx, cancel := timeoutCtx(timeout)
	defer cancel()
	return fail(s.Synchronize(ctx))
}

//export vkflow_tensor_wait
func vkflow_tensor_wait(h C.vkflow_tensor, timeout C.int64_t) C.int {
	t, err := lookup[*tensor.Tensor](h, "tensor")
	if err != nil {
		return fail(err)
	}
	ctx, cancel := timeoutCtx(timeout)
	defer cancel()
	return fail(t.Wait(ctx))
}

//export vkflow_op_cache_stats
func vkflow_op_cache_stats(h C.vkflow_manager, out *C.vkflow_op_stats) C.int {
	m, err := lookup[*vkflow.Manager](h, "Manager")
	if err != nil {
		return fail(err)
	}
	if out == nil {
		return invalid("vkflow_op_cache_stats: NULL output")
	}
	st := m.OpCacheStats()
	*out = C.vkflow_op_stats{hits: C.uint64_t(st.Hits), misses: C.uint64_t(st.Misses),
		evictions: C.uint64_t(st.Evictions), entries: C.int64_t(st.Entries),
		submits: C.uint64_t(st.Submits), host_waits: C.uint64_t(st.HostWaits)}
	return C.VKFLOW_OK
}

//export vkflow_wait_stats
func vkflow_wait_stats(h C.vkflow_manager, polled, blocked *C.uint64_t) C.int {
	m, err := lookup[*vkflow.Manager](h, "Manager")
	if err != nil {
		return fail(err)
	}
	if polled == nil || blocked == nil {
		return invalid("vkflow_wait_stats: NULL output")
	}
	st := m.WaitStats()
	*polled, *blocked = C.uint64_t(st.Polled), C.uint64_t(st.Blocked)
	return C.VKFLOW_OK
}

//export vkflow_host_import_alignment
func vkflow_host_import_alignment(h C.vkflow_manager, align *C.uint64_t) C.int {
	m, err := lookup[*vkflow.Manager](h, "Manager")
	if err != nil {
		return fail(err)
	}
	if align == nil {
		return invalid("vkflow_host_import_alignment: NULL output")
	}
	d := m.Runtime()
	if d == nil {
		return fail(fmt.Errorf("%w: Manager", vkflow.ErrClosed))
	}
	*align = C.uint64_t(d.HostImportAlignment())
	return C.VKFLOW_OK
}

//export vkflow_op_register_glsl
func vkflow_op_register_glsl(name, source *C.char, nInputs C.int32_t) C.int {
	if name == nil || source == nil {
		return invalid("vkflow_op_register_glsl: NULL argument")
	}
	return fail(ops.Register(C.GoString(name), ops.Kernel{GLSL: C.GoString(source), Inputs: int(nInputs)}))
}

//export vkflow_op_register_spirv
func vkflow_op_register_spirv(name *C.char, code unsafe.Pointer, size C.size_t, nInputs C.int32_t) C.int {
	if name == nil || code == nil || size == 0 {
		return invalid("vkflow_op_register_spirv: NULL or empty argument")
	}
	if size%4 != 0 || size > 1<<28 {
		return invalid("vkflow_op_register_spirv: %d bytes is not a SPIR-V module size", size)
	}
	spv := C.GoBytes(code, C.int(size))
	return fail(ops.Register(C.GoString(name), ops.Kernel{SPIRV: spv, Inputs: int(nInputs)}))
}

//export vkflow_op_unregister
func vkflow_op_unregister(name *C.char) C.int {
	if name == nil {
		return invalid("vkflow_op_unregister: name is NULL")
	}
	return fail(ops.Unregister(C.GoString(name)))
}

//export vkflow_op_names
func vkflow_op_names(buf *C.char, n C.size_t) C.size_t {
	return copyString(strings.Join(ops.Names(), "\n"), buf, n)
}
