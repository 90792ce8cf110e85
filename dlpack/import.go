package dlpack

/*
#include "dlpack.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"unsafe"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/vk"
)

// HostAliasError is the reason a host range that overlaps a live zero-copy
// import cannot be imported without a copy (errors.As on ImportCopy's
// error under CopyNever): both host ranges, and how they overlap.
type HostAliasError = core.HostAliasError

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
//   - Host memory that overlaps a live zero-copy import of the same
//     Manager (the same array twice, a slice of an imported array) is
//     never imported a second time, since two VkBuffers over one memory
//     would get no barriers between them. A range that starts where the
//     live import starts and ends within it becomes a view of that
//     import's VkBuffer (zero-copy; its deleter runs once the tensor is
//     done, the first import's once every tensor over the memory is
//     done). Any other overlap (a later start, a partial overlap, a range
//     covering the live import) is copied; under CopyNever it fails with
//     an error matching ErrInvalid (and ErrUnsupported, like every
//     refused copy) that names both host ranges and wraps a
//     *HostAliasError. So does host memory inside the Manager's own mapped
//     memory (a vkflow tensor handed back by another framework), while
//     this package's own zero-copy kDLCPU export, imported straight back,
//     is a view of the exported tensor's buffer.
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
		if a := ownHostExport(m, d, p, n); a != nil && compact && mode != CopyAlways {
			// vkflow's own zero-copy kDLCPU export of a tensor of this
			// Manager: a view of the tensor's buffer, like a kDLVulkan
			// import; the export's reference keeps the tensor alive.
			t, err := tensor.Adopt(d, a, dtype, shape, readOnly, release)
			if err != nil {
				return nil, false, err
			}
			return t, false, nil
		}
		if compact && mode != CopyAlways {
			// A range a live import of this device starts with becomes a
			// view of it (one VkBuffer, so one buffer to the barriers);
			// any other overlap with one needs a copy (HostAliasError).
			a, drop, ierr := d.ImportHostShared(p, n, core.TensorUsage, release)
			if ierr == nil {
				t, err := tensor.Adopt(d, a, dtype, shape, readOnly, drop)
				if err != nil {
					d.Free(a)
					drop()
					return nil, false, err
				}
				return t, false, nil
			}
			why = ierr
		}
		if mode == CopyNever {
			var alias *core.HostAliasError
			if errors.As(why, &alias) {
				return nil, false, fmt.Errorf("%w: dlpack: Import: %w; a copy is needed and the caller forbids it", core.ErrInvalid, why)
			}
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
		view := core.View(vb.Buffer, n, vb.Memory, vb.MemoryOffset)
		if root := vulkanRoot(d, vb.Buffer); root != nil {
			view.ShareUses(root) // a wait on the view covers work on the tensor
		}
		t, err := tensor.Adopt(d, view, dtype, shape, readOnly, release)
		if err != nil {
			return nil, false, err
		}
		return t, false, nil
	default:
		return nil, false, core.Unsupported("dlpack: Import: device %v: vkflow imports kDLCPU and its own kDLVulkan tensors", dev)
	}
}

// vulkanRoot returns the allocation of a live kDLVulkan export of device d
// whose buffer is buf (a tensor of this Manager the import is a view of),
// or nil for a buffer vkflow did not export.
func vulkanRoot(d *core.Device, buf vk.Buffer) *core.Allocation {
	live.Lock()
	defer live.Unlock()
	for _, e := range live.m {
		if e.dev == d && e.alloc != nil && e.alloc.Buffer == buf {
			return e.alloc
		}
	}
	return nil
}

// ownHostExport returns a view of the tensor behind m when m is a live
// zero-copy kDLCPU export of this package, of a tensor of device d, whose
// data starts at p (where the tensor's mapped memory starts) and covers at
// most the tensor's n bytes; nil otherwise.
func ownHostExport(m Managed, d *core.Device, p unsafe.Pointer, n uint64) *core.Allocation {
	live.Lock()
	e := live.m[m.ptr]
	live.Unlock()
	if e == nil || e.host == nil || e.dev != d || e.host.Mapped != p || n > e.host.Size {
		return nil
	}
	return e.host.Prefix(n)
}

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
		// Each element offset must stay representable for the gather. An
		// empty tensor (total 0) has no elements, and is never gathered.
		if s := strides[i]; total != 0 && (s > math.MaxInt64/total || s < -math.MaxInt64/total) {
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
