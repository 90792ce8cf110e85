package main

// DLPack kDLCUDA exports from C and Python (package dlpack, docs/INTEROP.md):
// the CUDA ordinal of a Manager's device, and an export whose consumer
// passes its CUDA stream.

/*
#include "vkflow.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/cuda"
	"github.com/vkflow/vkflow/dlpack"
	"github.com/vkflow/vkflow/tensor"
)

//export vkflow_cuda_device
func vkflow_cuda_device(h C.vkflow_manager, ordinal *C.int32_t) C.int {
	m, err := lookup[*vkflow.Manager](h, "Manager")
	if err != nil {
		return fail(err)
	}
	if ordinal == nil {
		return invalid("vkflow_cuda_device: NULL ordinal")
	}
	drv, err := cuda.Open()
	if err != nil {
		return fail(err)
	}
	devices, err := drv.Devices()
	if err != nil {
		return fail(err)
	}
	i, err := cuda.UUIDMatch(m.Device().DeviceUUID, devices)
	if err != nil {
		return fail(err)
	}
	*ordinal = C.int32_t(devices[i].Ordinal)
	return C.VKFLOW_OK
}

//export vkflow_dlpack_export_cuda
func vkflow_dlpack_export_cuda(h C.vkflow_tensor, maxMajor, maxMinor, deviceID, copyMode C.int32_t, stream C.int64_t, timeout C.int64_t, out *unsafe.Pointer, versioned *C.int32_t) C.int {
	t, err := lookup[*tensor.Tensor](h, "tensor")
	if err != nil {
		return fail(err)
	}
	if out == nil || versioned == nil {
		return invalid("vkflow_dlpack_export_cuda: NULL out or versioned")
	}
	opts := dlpack.Options{Device: &dlpack.Device{Type: dlpack.CUDA, ID: int32(deviceID)},
		Copy: dlpack.CopyMode(copyMode), Stream: int64(stream)}
	if maxMajor >= 0 {
		opts.MaxVersion = &dlpack.Version{Major: uint32(maxMajor), Minor: uint32(max(maxMinor, 0))}
	}
	ctx, cancel := timeoutCtx(timeout)
	defer cancel()
	mt, err := dlpack.Export(ctx, t, opts)
	if err != nil {
		return fail(fmt.Errorf("vkflow_dlpack_export_cuda: %w", err))
	}
	*out = mt.Pointer()
	*versioned = b2c(mt.Versioned())
	return C.VKFLOW_OK
}
