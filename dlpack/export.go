package dlpack

/*
#include <stdlib.h>
#include <string.h>
#include "dlpack.h"
*/
import "C"

import (
	"context"
	"fmt"
	"sync"
	"unsafe"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/timeline"
	"github.com/vkflow/vkflow/vk"
)

// CopyMode is the array API's copy argument.
type CopyMode int

// Copy modes.
const (
	CopyIfNeeded CopyMode = iota // copy only when the request cannot be served zero-copy
	CopyAlways                   // always copy (the result has IS_COPIED)
	CopyNever                    // fail rather than copy
)

// Options say what the consumer asked for.
type Options struct {
	// MaxVersion is the newest DLPack version the consumer reads. nil (or a
	// major version 0) asks for a legacy DLManagedTensor; a major version
	// of 1 or more for a DLManagedTensorVersioned of version 1.x, with
	// x = min(Minor, 3) for major 1.
	MaxVersion *Version
	// Device is the consumer's dl_device request; nil takes the tensor's
	// natural device: CPU when host access is zero-copy, else Vulkan.
	Device *Device
	// Copy is the consumer's copy request.
	Copy CopyMode
	// Consumer is a kDLVulkan consumer's own timeline point (DLPack's
	// stream argument, for Vulkan): the export makes it signal once the
	// tensor is ready, and the VulkanBuffer's ready point is this point.
	// The zero value asks for none.
	Consumer timeline.Point
	// Stream is a kDLCUDA consumer's stream, as DLPack's stream argument
	// says it: a CUstream / cudaStream_t handle of the device's primary
	// context, 1 for the legacy default stream (0, the zero value, means
	// the same: DLPack's None), 2 for the per-thread default stream of the
	// calling OS thread (from Go, only meaningful on a goroutine locked to
	// its thread), -1 for no synchronization. Below -1 is ErrInvalid. The
	// stream waits on the GPU for the tensor's ready point (or Export waits
	// on the host where timelines cannot be shared). -1 leaves the
	// tensor's pending writes to the consumer, but a copy the export makes
	// is complete when Export returns, whatever the stream (cuda.go).
	Stream int64
}

// export is the producer's record of one managed tensor until its deleter
// runs. Ownership: it holds one reference on the tensor's object (zero-copy
// exports) and one pin on the device, so the memory, the device and the
// instance outlive the tensor and the Manager; the deleter drops both.
type export struct {
	dev  *core.Device   // pinned; nil for host copies, which need no device
	obj  *core.Object   // referenced; nil for host copies
	cmem unsafe.Pointer // the C block: struct, shape, strides, VulkanBuffer
	copy unsafe.Pointer // a host copy of the data, or nil
	vb   *VulkanBuffer
	// alloc is the exported tensor's allocation for a zero-copy kDLVulkan
	// export, so that Import of its buffer makes a view that shares the
	// tensor's record of uses (vulkanRoot).
	alloc *core.Allocation
	// host is the tensor's allocation for a zero-copy kDLCPU export, so
	// that Import of this very export makes a view of the tensor's buffer
	// rather than a second buffer over the same memory (ownHostExport).
	host *core.Allocation
	// cuda releases a kDLCUDA export's CUDA objects (cuda.go), or nil.
	cuda func()
}

// live maps each managed tensor not yet deleted to its export. The deleter
// looks the pointer up before touching anything, so a second call of it is
// ignored instead of freeing twice.
var live struct {
	sync.Mutex
	m map[unsafe.Pointer]*export
}

//export vkflowGoDLPackDeleted
func vkflowGoDLPackDeleted(p unsafe.Pointer) {
	live.Lock()
	e := live.m[p]
	delete(live.m, p)
	live.Unlock()
	if e == nil {
		return
	}
	if e.vb != nil && e.vb.ReleasedSemaphore != 0 {
		// The consumer's GPU work may still use the buffer: free after its
		// released point, without blocking the caller's thread. The wait
		// ends at the latest when the Manager's Close gives up on it (its
		// close timeout); then the memory, and the device with it, are
		// leaked rather than freed under the consumer's GPU work.
		sem, v := e.vb.ReleasedSemaphore, e.vb.ReleasedValue
		e.dev.AwaitForeign(sem, v, func(err error) {
			if err != nil {
				e.dev.Log.Error("vkflow: dlpack: the consumer's released point was not reached; leaking the export's memory and keeping the device alive", "err", err)
				return
			}
			e.free()
		})
		return
	}
	e.free()
}

func (e *export) free() {
	if e.cuda != nil {
		e.cuda()
	}
	if e.copy != nil {
		C.free(e.copy)
	}
	C.free(e.cmem)
	if e.obj != nil {
		e.obj.Release()
	}
	if e.dev != nil {
		e.dev.Unpin()
	}
}

// Live returns how many exports wait for their deleter.
func Live() int {
	live.Lock()
	defer live.Unlock()
	return len(live.m)
}

// Export hands t to a DLPack consumer.
//
// For a CPU export the data is the tensor's mapped memory (zero-copy) or,
// when the memory is not mapped or Copy is CopyAlways, a host copy with
// IS_COPIED set; either way Export first waits (bounded by ctx) until every
// GPU use of t submitted so far has completed, so the consumer never sees
// half-written data. For a Vulkan export data points to a VulkanBuffer
// whose ready point the consumer's first submit must wait on, and Export
// does not block (but for CopyAlways, which copies on the GPU after waiting
// for pending work). A kDLCUDA export (Options.Device of type CUDA) orders
// Options.Stream after the tensor's ready point; see docs/INTEROP.md.
//
// An export submits one batch at most (a GPU copy, a consumer's or CUDA's
// ready signal, or a copy that signals), admitted whole or refused whole:
// a refused call has submitted nothing and holds nothing.
//
// Strides are always filled in. A read-only tensor has READ_ONLY set; a
// legacy struct cannot say so, so a legacy export of it is a copy (or an
// error under CopyNever). The memory stays valid until the deleter runs,
// even if t or its Manager is closed first. The caller owns the result:
// exactly one deleter call (Managed.Delete, a consumer, or Import).
//
// Errors wrap ErrUnsupported for requests that cannot be served (a
// dl_device other than CPU or this Vulkan device, a copy under CopyNever, a
// dtype the requested version cannot carry) and ErrInvalid or ErrClosed for
// bad arguments.
func Export(ctx context.Context, t *tensor.Tensor, opts Options) (Managed, error) {
	if t == nil {
		return Managed{}, core.Invalid("dlpack: Export: nil tensor")
	}
	if t.Closed() {
		return Managed{}, core.Closed("dlpack: Export: tensor")
	}
	d := t.Object().Device()
	versioned := opts.MaxVersion != nil && opts.MaxVersion.Major >= 1
	version := Current
	if versioned && opts.MaxVersion.Major == 1 {
		version.Minor = min(opts.MaxVersion.Minor, Current.Minor)
	}
	dt, ok := DataTypeOf(t.Dtype())
	if !ok {
		return Managed{}, core.Invalid("dlpack: Export: dtype %v", t.Dtype())
	}
	if dt.Code == codeBool && !versioned {
		return Managed{}, core.Unsupported("dlpack: Export: a legacy (DLPack 0.x) consumer cannot take bool tensors (kDLBool is DLPack 1.0); ask for max_version (1, 0) or export a uint8 tensor")
	}
	// Host-visible memory goes out as CPU; memory the host reads through
	// a copy (uncached device memory: vkflow.WithHostReads) goes out as a
	// copy unless the consumer forbids one.
	visible := t.Allocation().Mapped != nil
	target := Device{CPU, 0}
	if !visible {
		target = Device{Vulkan, int32(d.Index)}
	}
	if opts.Device != nil {
		target = *opts.Device
		switch {
		case target.Type == CPU && target.ID == 0:
		case target.Type == Vulkan && target.ID == int32(d.Index):
		case target.Type == CUDA:
			return exportCUDA(ctx, d, t, opts, versioned, version, dt)
		default:
			return Managed{}, core.Unsupported("dlpack: Export: dl_device %v: vkflow exports to (kDLCPU, 0), (kDLVulkan, %d) or, where CUDA sees this device, (kDLCUDA, its ordinal)", target, d.Index)
		}
	}
	if opts.Copy < CopyIfNeeded || opts.Copy > CopyNever {
		return Managed{}, core.Invalid("dlpack: Export: unknown copy mode %d", opts.Copy)
	}
	consumer := opts.Consumer.Timeline != nil
	if consumer {
		if target.Type != Vulkan {
			return Managed{}, core.Invalid("dlpack: Export: a consumer timeline point needs a kDLVulkan export (CPU exports synchronize before returning)")
		}
		if opts.Consumer.Timeline.Object().Closed() {
			return Managed{}, core.Closed("dlpack: Export: consumer timeline")
		}
		if opts.Consumer.Timeline.Object().Device() != d {
			return Managed{}, core.Invalid("dlpack: Export: the consumer timeline belongs to another Manager")
		}
	}
	needCopy := target.Type == CPU && !visible
	if t.ReadOnly() && !versioned {
		needCopy = true // only a copy may go where READ_ONLY cannot be said
	}
	if needCopy && opts.Copy == CopyNever {
		return Managed{}, core.Unsupported("dlpack: Export: %v to %v needs a copy and copy=never", t, target)
	}
	doCopy := needCopy || opts.Copy == CopyAlways || (target.Type == CPU && !t.Mapped() && opts.Copy != CopyNever)

	e := &export{}
	var data unsafe.Pointer
	flags := uint64(0)
	if t.ReadOnly() && !doCopy {
		flags |= FlagReadOnly
	}
	if doCopy {
		flags |= FlagIsCopied
	}
	switch {
	case target.Type == CPU && doCopy:
		// A host copy belongs to the export alone: no pin, no reference.
		if err := d.WaitUses(ctx, t.Object()); err != nil {
			return Managed{}, err
		}
		n := t.Bytes()
		e.copy = C.aligned_alloc(256, C.size_t((n+255)&^255))
		if e.copy == nil {
			return Managed{}, fmt.Errorf("dlpack: Export: a %d-byte host copy: %w", n, vk.ErrOutOfHostMemory)
		}
		if err := hostCopy(d, t, unsafe.Slice((*byte)(e.copy), n)); err != nil {
			C.free(e.copy)
			return Managed{}, err
		}
		data = e.copy
	case target.Type == CPU:
		if err := e.hold(d, t); err != nil {
			return Managed{}, err
		}
		if err := d.WaitUses(ctx, t.Object()); err != nil {
			e.free()
			return Managed{}, err
		}
		if err := d.Invalidate(t.Allocation()); err != nil {
			e.free()
			return Managed{}, err
		}
		data = t.Allocation().Mapped
		e.host = t.Allocation()
	default: // Vulkan
		// One batch at most: the copy (CopyAlways) and the consumer's
		// signal go in one submit, admitted whole or refused whole.
		var signals []timeline.Point
		if consumer {
			p := opts.Consumer
			if err := d.CheckSignals([]core.Point{{TL: p.Timeline.State(), Value: p.Value}}); err != nil {
				return Managed{}, fmt.Errorf("dlpack: Export: consumer point: %w", err)
			}
			signals = append(signals, p)
		}
		src := t
		if doCopy {
			c, err := newCopy(d, t)
			if err != nil {
				return Managed{}, err
			}
			src = c
			defer c.Close() // the export's reference keeps it
		}
		if err := e.hold(d, src); err != nil {
			return Managed{}, err
		}
		switch {
		case doCopy:
			if err := copyInto(ctx, d, t, src, signals...); err != nil {
				e.free()
				return Managed{}, err
			}
		case consumer:
			p := opts.Consumer
			if err := d.SignalWhenReady(src.Object(), []core.Point{{TL: p.Timeline.State(), Value: p.Value}}); err != nil {
				e.free()
				return Managed{}, err
			}
		}
		a := src.Allocation()
		e.alloc = a
		e.vb = &VulkanBuffer{Device: d.VK.Handle(), Buffer: a.Buffer, Memory: a.Memory(), MemoryOffset: a.MemoryOffset(), Size: src.Bytes()}
		if consumer {
			e.vb.ReadySemaphore, e.vb.ReadyValue = opts.Consumer.Timeline.Semaphore(), opts.Consumer.Value
		} else {
			// The copy's batch, or the tensor's uses, on one queue: no submit.
			q, v, err := d.ReadyPoint(src.Object())
			if err != nil {
				e.free()
				return Managed{}, err
			}
			e.vb.ReadySemaphore, e.vb.ReadyValue = d.QueueSemaphore(q), v
		}
	}
	m := e.build(t, versioned, version, flags, target, dt, data)
	live.Lock()
	if live.m == nil {
		live.m = make(map[unsafe.Pointer]*export)
	}
	live.m[m.ptr] = e
	live.Unlock()
	return m, nil
}

// hold takes the export's pin on the device and reference on t.
func (e *export) hold(d *core.Device, t *tensor.Tensor) error {
	if err := d.Pin(); err != nil {
		return err
	}
	t.Object().Acquire()
	e.dev, e.obj = d, t.Object()
	if t.Closed() { // closed while we took the reference
		e.free()
		e.dev, e.obj = nil, nil
		return core.Closed("dlpack: Export: tensor")
	}
	return nil
}

// build lays out the managed struct, shape, strides and VulkanBuffer in one
// C block.
func (e *export) build(t *tensor.Tensor, versioned bool, version Version, flags uint64, dev Device, dt DataType, data unsafe.Pointer) Managed {
	shape := t.Shape()
	head := C.size_t(unsafe.Sizeof(C.DLManagedTensor{}))
	if versioned {
		head = C.size_t(unsafe.Sizeof(C.DLManagedTensorVersioned{}))
	}
	dims := C.size_t(len(shape)) * 8
	vbSize := C.size_t(0)
	if e.vb != nil {
		vbSize = C.size_t(unsafe.Sizeof(C.vkflow_vulkan_buffer{}))
	}
	e.cmem = C.calloc(1, head+2*dims+vbSize)
	shp := unsafe.Slice((*int64)(unsafe.Add(e.cmem, head)), len(shape))
	str := unsafe.Slice((*int64)(unsafe.Add(e.cmem, head+dims)), len(shape))
	stride := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		shp[i], str[i] = int64(shape[i]), stride
		stride *= int64(shape[i])
	}
	if e.vb != nil {
		vb := (*VulkanBuffer)(unsafe.Add(e.cmem, head+2*dims))
		*vb = *e.vb
		e.vb, data = vb, unsafe.Pointer(vb)
	}
	m := Managed{e.cmem, versioned}
	dl := m.dl()
	dl.data = data
	dl.device = C.DLDevice{device_type: C.int32_t(dev.Type), device_id: C.int32_t(dev.ID)}
	dl.ndim = C.int32_t(len(shape))
	dl.dtype = C.DLDataType{code: C.uint8_t(dt.Code), bits: C.uint8_t(dt.Bits), lanes: C.uint16_t(dt.Lanes)}
	if len(shape) > 0 { // a 0-d tensor has NULL shape and strides
		dl.shape = (*C.int64_t)(unsafe.Pointer(&shp[0]))
		dl.strides = (*C.int64_t)(unsafe.Pointer(&str[0]))
	}
	if versioned {
		v := (*C.DLManagedTensorVersioned)(e.cmem)
		v.version = C.DLPackVersion{major: C.uint32_t(version.Major), minor: C.uint32_t(version.Minor)}
		v.flags = C.uint64_t(flags)
	}
	C.vkflowSetDeleter(e.cmem, b2i(versioned))
	return m
}

// hostCopy copies t's bytes to dst: as ReadBytes does, and for Storage
// tensors (which have no host access of their own) through the staging
// ring.
func hostCopy(d *core.Device, t *tensor.Tensor, dst []byte) error {
	if t.Memory() == tensor.Storage {
		return d.Download(t.Allocation(), 0, dst)
	}
	return t.ReadBytes(dst)
}

// newCopy makes the tensor a GPU copy of t goes into: Storage unless opts
// say otherwise. Nothing is submitted.
func newCopy(d *core.Device, t *tensor.Tensor, opts ...tensor.Option) (*tensor.Tensor, error) {
	if len(opts) == 0 {
		opts = []tensor.Option{tensor.In(tensor.Storage)}
	}
	return tensor.New(d, t.Dtype(), t.Shape(), opts...)
}

// copyInto copies t into c on the GPU, after t's pending work (waited for
// on the host, since that work may be on any queue), in one batch that
// also signals signals once the copy is done. The batch is admitted whole
// or refused whole (a signal value that does not increase, ErrBusy at the
// held-submit bound): on any error nothing was submitted.
func copyInto(ctx context.Context, d *core.Device, t, c *tensor.Tensor, signals ...timeline.Point) error {
	if err := d.WaitUses(ctx, t.Object()); err != nil {
		return err
	}
	s, err := sequence.New(d, 0)
	if err != nil {
		return err
	}
	defer s.Close() // a pending submit keeps what it uses alive
	opts := make([]sequence.SubmitOption, len(signals))
	for i, p := range signals {
		opts[i] = sequence.Signal(p.Timeline, p.Value)
	}
	return s.Copy(t, c).Submit(ctx, opts...).Err()
}
