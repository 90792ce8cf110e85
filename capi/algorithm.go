package main

// Algorithms as handles of their own, for graph dispatch nodes: a built-in
// kernel bound to its tensors, or an algorithm from SPIR-V.

/*
#include <stdlib.h>
#include "vkflow.h"
*/
import "C"

import (
	"unsafe"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/internal/kernels"
	"github.com/vkflow/vkflow/tensor"
)

//export vkflow_manager_new_queues
func vkflow_manager_new_queues(device C.int32_t, flags C.uint32_t, compute, transfer C.int32_t, out *C.vkflow_manager) C.int {
	if compute < 1 || compute > 64 {
		return invalid("vkflow_manager_new_queues: %d compute queues, want 1..64", compute)
	}
	return newManager(device, flags, out, vkflow.WithQueues(int(compute), transfer != 0))
}

//export vkflow_manager_new_traced
func vkflow_manager_new_traced(device C.int32_t, flags C.uint32_t, compute, transfer C.int32_t, trace *C.char, out *C.vkflow_manager) C.int {
	if compute < 1 || compute > 64 {
		return invalid("vkflow_manager_new_traced: %d compute queues, want 1..64", compute)
	}
	if trace == nil || C.GoString(trace) == "" {
		return invalid("vkflow_manager_new_traced: no trace path")
	}
	return newManager(device, flags, out, vkflow.WithQueues(int(compute), transfer != 0), vkflow.WithTrace(C.GoString(trace)))
}

//export vkflow_manager_queue_count
func vkflow_manager_queue_count(h C.vkflow_manager, n *C.int32_t) C.int {
	m, err := lookup[*vkflow.Manager](h, "Manager")
	if err != nil {
		return fail(err)
	}
	if n == nil {
		return invalid("vkflow_manager_queue_count: n is NULL")
	}
	*n = C.int32_t(len(m.Queues()))
	return C.VKFLOW_OK
}

//export vkflow_kernel_new
func vkflow_kernel_new(h C.vkflow_manager, name *C.char, ha, hb, hout C.vkflow_tensor, out *C.vkflow_algorithm) C.int {
	m, err := lookup[*vkflow.Manager](h, "Manager")
	if err != nil {
		return fail(err)
	}
	if name == nil || out == nil {
		return invalid("vkflow_kernel_new: NULL name or out")
	}
	var ts [3]*tensor.Tensor
	for i, th := range []C.vkflow_tensor{ha, hb, hout} {
		if ts[i], err = optTensor(th); err != nil {
			return fail(err)
		}
	}
	a, b, o := ts[0], ts[1], ts[2]
	var al *algorithm.Algorithm
	switch n := C.GoString(name); n {
	case "multiply", "add", "multiply_scalar":
		if a == nil || b == nil || o == nil {
			return invalid("vkflow_kernel_new: %s needs a, b and out", n)
		}
		f := map[string]func(kernels.Owner, *tensor.Tensor, *tensor.Tensor, *tensor.Tensor) (*algorithm.Algorithm, error){
			"multiply": kernels.Multiply, "add": kernels.Add, "multiply_scalar": kernels.MultiplyScalar,
		}[n]
		al, err = f(m, a, b, o)
	case "saxpy":
		if a == nil || o == nil || b != nil {
			return invalid("vkflow_kernel_new: saxpy needs a (x) and out (y), and b = 0")
		}
		al, err = kernels.Saxpy(m, a, o)
	default:
		return invalid("vkflow_kernel_new: unknown kernel %q (multiply, add, multiply_scalar, saxpy)", n)
	}
	if err != nil {
		return fail(err)
	}
	*out = newHandle(al)
	return C.VKFLOW_OK
}

//export vkflow_algorithm_new
func vkflow_algorithm_new(h C.vkflow_manager, spirv unsafe.Pointer, nbytes C.uint64_t, ntensors C.int32_t, tensors *C.vkflow_tensor, x, y, z C.uint32_t, out *C.vkflow_algorithm) C.int {
	m, err := lookup[*vkflow.Manager](h, "Manager")
	if err != nil {
		return fail(err)
	}
	if spirv == nil || nbytes == 0 || out == nil || (ntensors > 0 && tensors == nil) {
		return invalid("vkflow_algorithm_new: NULL argument or empty SPIR-V")
	}
	if nbytes > 1<<30 || ntensors < 0 || ntensors > 1024 {
		return invalid("vkflow_algorithm_new: %d bytes of SPIR-V, %d tensors", uint64(nbytes), ntensors)
	}
	ts, err := tensorList(ntensors, tensors)
	if err != nil {
		return fail(err)
	}
	var opts []algorithm.Option
	if x != 0 || y != 0 || z != 0 {
		opts = append(opts, algorithm.Workgroups(uint32(max(x, 1)), uint32(max(y, 1)), uint32(max(z, 1))))
	}
	// algorithm.New keeps no reference to code.
	code := C.GoBytes(spirv, C.int(nbytes))
	al, err := algorithm.New(m, code, ts, opts...)
	if err != nil {
		return fail(err)
	}
	*out = newHandle(al)
	return C.VKFLOW_OK
}

//export vkflow_algorithm_close
func vkflow_algorithm_close(h C.vkflow_algorithm) C.int {
	al, err := lookup[*algorithm.Algorithm](h, "algorithm")
	if err != nil {
		return C.VKFLOW_OK
	}
	dropHandle(h)
	return fail(al.Close())
}

//export vkflow_algorithm_push_size
func vkflow_algorithm_push_size(h C.vkflow_algorithm, size *C.int32_t) C.int {
	al, err := lookup[*algorithm.Algorithm](h, "algorithm")
	if err != nil {
		return fail(err)
	}
	if size == nil {
		return invalid("vkflow_algorithm_push_size: size is NULL")
	}
	*size = C.int32_t(al.PushSize())
	return C.VKFLOW_OK
}

// tensorList looks up n tensor handles.
func tensorList(n C.int32_t, hs *C.vkflow_tensor) ([]*tensor.Tensor, error) {
	if n <= 0 {
		return nil, nil
	}
	ts := make([]*tensor.Tensor, n)
	for i, th := range unsafe.Slice(hs, int(n)) {
		t, err := lookup[*tensor.Tensor](th, "tensor")
		if err != nil {
			return nil, err
		}
		ts[i] = t
	}
	return ts, nil
}
