package dlpack

/*
#include "dlpack.h"
*/
import "C"

import (
	"context"
	"math"
	"sync"
	"unsafe"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/vk"
)

// Import is ImportCopy with CopyIfNeeded.
func Import(ctx context.Context, o tensor.Owner, m Managed) (t *tensor.Tensor, copied bool, err error) {
	return ImportCopy(ctx, o, m, CopyIfNeeded)
}

// ImportCopy makes a vkflow tensor of a DLPack managed tensor, and takes it
// over in every case: on success the tensor calls the producer's deleter
// exactly once, after it is closed and the GPU has finished using it; on
// failure Import has already called the deleter.
//
//   - kDLCPU memory is imported without a copy through
//     VK_EXT_external_memory_host when the device has it, the data is
//     compact and its address is a multiple of the device's
//     HostImportAlignment (64 bytes on lavapipe); otherwise it is copied
//     into a new tensor, strided data included, and the deleter runs before
//     Import returns. copied reports which happened. READ_ONLY memory
//     becomes a read-only tensor unless it was copied. mode is the
//     caller's request: CopyNever fails with ErrUnsupported where a copy
//     would be needed, CopyAlways copies host memory even when it could be
//     wrapped (and is ErrUnsupported for kDLVulkan).
//   - kDLVulkan memory must be a VulkanBuffer of this Manager's VkDevice,
//     compact, at byte_offset 0: the tensor is a view on that buffer. Import
//     waits (bounded by ctx) for the buffer's ready point before it returns.
//   - Anything else, an unknown major version (1 is read), a negative or
//     overflowing shape, zero-length tensors and dtypes vkflow lacks
//     (lanes > 1 included) are errors.
//
// Import trusts what every DLPack consumer must trust: that ndim, shape,
// strides and data describe memory the producer owns.
func ImportCopy(ctx context.Context, o tensor.Owner, m Managed, mode CopyMode) (t *tensor.Tensor, copied bool, err error) {
	if m.ptr == nil {
		return nil, false, core.Invalid("dlpack: Import: nil managed tensor")
	}
	var once sync.Once
	release := func() { once.Do(m.Delete) }
	defer func() {
		if err != nil {
			release()
		}
	}()
	d, err := core.Enter(o)
	if err != nil {
		return nil, false, err
	}
	defer d.Exit()
	if mode < CopyIfNeeded || mode > CopyNever {
		return nil, false, core.Invalid("dlpack: Import: unknown copy mode %d", mode)
	}
	readOnly := false
	if m.versioned {
		v := (*C.DLManagedTensorVersioned)(m.ptr)
		if v.version.major != 1 {
			return nil, false, core.Unsupported("dlpack: Import: DLPack major version %d (vkflow reads 1)", uint32(v.version.major))
		}
		readOnly = uint64(v.flags)&FlagReadOnly != 0
	}
	dl := m.dl()
	dtype, shape, compact, err := parse(dl)
	if err != nil {
		return nil, false, err
	}
	n := uint64(dtype.Size())
	for _, s := range shape {
		n *= uint64(s)
	}
	if limit := tensor.MaxBytes(d); n > limit {
		return nil, false, core.Invalid("dlpack: Import: %d bytes exceed the device's buffer limit (%d: maxStorageBufferRange, maxMemoryAllocationSize)", n, limit)
	}
	if n == 0 {
		// An empty tensor has no data to alias or copy (its data pointer
		// may be NULL): a new empty tensor stands for it.
		t, err := tensor.New(d, dtype, shape)
		if err != nil {
			return nil, false, err
		}
		release()
		return t, true, nil
	}
	switch dev := (Device{DeviceType(dl.device.device_type), int32(dl.device.device_id)}); dev.Type {
	case CPU:
		if dl.data == nil {
			return nil, false, core.Invalid("dlpack: Import: NULL data for a %d-byte tensor", n)
		}
		p := unsafe.Add(dl.data, uintptr(dl.byte_offset))
		why := error(core.Unsupported("strided data"))
		if compact && mode != CopyAlways {
			a, ierr := d.ImportHost(p, n, usage)
			if ierr == nil {
				t, err := tensor.Adopt(d, a, dtype, shape, readOnly, release)
				if err != nil {
					d.Free(a)
					return nil, false, err
				}
				return t, false, nil
			}
			why = ierr
		}
		if mode == CopyNever {
			return nil, false, core.Unsupported("dlpack: Import: a copy is needed and the caller forbids it: %v", why)
		}
		if mode == CopyIfNeeded {
			d.Log.Debug("vkflow: dlpack: host import not possible, copying", "reason", why)
		}
		t, err := tensor.New(d, dtype, shape)
		if err != nil {
			return nil, false, err
		}
		if err := t.WriteBytes(gather(dl, p, dtype.Size(), shape, n, compact)); err != nil {
			t.Close()
			return nil, false, err
		}
		release()
		return t, true, nil
	case Vulkan:
		if dl.data == nil {
			return nil, false, core.Invalid("dlpack: Import: NULL VulkanBuffer")
		}
		if mode == CopyAlways {
			return nil, false, core.Unsupported("dlpack: Import: CopyAlways of a kDLVulkan tensor (import the view and copy it in a sequence)")
		}
		vb := (*VulkanBuffer)(dl.data)
		if vb.Device != d.VK.Handle() || dev.ID != int32(d.Index) {
			return nil, false, core.Unsupported("dlpack: Import: kDLVulkan tensor of another VkDevice (device %d)", dev.ID)
		}
		if !compact || dl.byte_offset != 0 {
			return nil, false, core.Unsupported("dlpack: Import: kDLVulkan tensors must be compact at byte_offset 0 (a view cannot offset or stride)")
		}
		if vb.Size < n || vb.Buffer == 0 {
			return nil, false, core.Invalid("dlpack: Import: the VulkanBuffer holds %d bytes, the tensor needs %d", vb.Size, n)
		}
		if vb.ReadySemaphore != 0 {
			if err := d.WaitSemaphore(ctx, vb.ReadySemaphore, vb.ReadyValue); err != nil {
				return nil, false, err
			}
		}
		t, err := tensor.Adopt(d, core.View(vb.Buffer, n, vb.Memory, vb.MemoryOffset), dtype, shape, readOnly, release)
		if err != nil {
			return nil, false, err
		}
		return t, false, nil
	default:
		return nil, false, core.Unsupported("dlpack: Import: device %v: vkflow imports kDLCPU and its own kDLVulkan tensors", dev)
	}
}

const usage = vk.BufferUsageStorage | vk.BufferUsageTransferSrc | vk.BufferUsageTransferDst

// parse validates a DLTensor's dtype, shape and strides. compact reports
// row-major contiguous data (strides NULL, or equal to the row-major ones
// wherever a dimension is longer than 1).
func parse(dl *C.DLTensor) (tensor.Dtype, []int, bool, error) {
	dt := DataType{uint8(dl.dtype.code), uint8(dl.dtype.bits), uint16(dl.dtype.lanes)}
	dtype, ok := DtypeOf(dt)
	if !ok {
		return 0, nil, false, core.Unsupported("dlpack: Import: data type (code %d, bits %d, lanes %d) has no vkflow dtype", dt.Code, dt.Bits, dt.Lanes)
	}
	nd := int(dl.ndim)
	if nd < 0 || nd > maxDims {
		return 0, nil, false, core.Invalid("dlpack: Import: ndim %d out of range [0, %d]", nd, maxDims)
	}
	if nd == 0 { // a scalar: shape () with one element
		return dtype, []int{}, true, nil
	}
	if dl.shape == nil {
		return 0, nil, false, core.Invalid("dlpack: Import: NULL shape with ndim %d", nd)
	}
	dims := unsafe.Slice((*int64)(unsafe.Pointer(dl.shape)), nd)
	shape := make([]int, nd)
	total := int64(dtype.Size())
	for i, s := range dims {
		if s < 0 {
			return 0, nil, false, core.Invalid("dlpack: Import: negative dimension %d in shape %v", s, dims)
		}
		if s > 0 && total > math.MaxInt64/s {
			return 0, nil, false, core.Invalid("dlpack: Import: shape %v overflows", dims)
		}
		total *= s
		shape[i] = int(s)
	}
	if dl.strides == nil {
		return dtype, shape, true, nil
	}
	strides := unsafe.Slice((*int64)(unsafe.Pointer(dl.strides)), nd)
	compact := true
	want := int64(1)
	for i := nd - 1; i >= 0; i-- {
		if dims[i] != 1 && strides[i] != want {
			compact = false
		}
		// Each element offset must stay representable for the gather.
		if s := strides[i]; s > math.MaxInt64/total || s < -math.MaxInt64/total {
			return 0, nil, false, core.Invalid("dlpack: Import: stride %d overflows", s)
		}
		want *= dims[i]
	}
	return dtype, shape, compact, nil
}

// gather copies a (possibly strided) tensor's elements at p into a compact
// byte slice of n bytes.
func gather(dl *C.DLTensor, p unsafe.Pointer, size int, shape []int, n uint64, compact bool) []byte {
	if compact {
		return unsafe.Slice((*byte)(p), n)
	}
	strides := unsafe.Slice((*int64)(unsafe.Pointer(dl.strides)), len(shape))
	out := make([]byte, n)
	idx := make([]int, len(shape))
	for k := 0; k < len(out); k += size {
		off := int64(0)
		for i, j := range idx {
			off += int64(j) * strides[i]
		}
		copy(out[k:k+size], unsafe.Slice((*byte)(unsafe.Add(p, off*int64(size))), size))
		for i := len(idx) - 1; i >= 0; i-- {
			if idx[i]++; idx[i] < shape[i] {
				break
			}
			idx[i] = 0
		}
	}
	return out
}
