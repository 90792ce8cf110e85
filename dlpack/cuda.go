package dlpack

/*
#include <stdint.h>
static void *vkflowDevicePointer(uintptr_t p) { return (void *)p; }
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"unsafe"

	"github.com/vkflow/vkflow/cuda"
	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/interop"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/timeline"
)

// A kDLCUDA export hands the tensor's memory to CUDA without a copy
// (docs/INTEROP.md): the tensor's exportable memory is exported as an
// opaque fd and imported into the CUDA device whose UUID is the Vulkan
// device's (package cuda); data is the mapped device pointer. Memory that
// is not exportable is first copied on the GPU into an exportable tensor
// (IS_COPIED). The deleter frees the CUDA mapping and drops the export's
// reference on the tensor.
//
// Ordering, by the consumer's stream (DLPack's stream argument):
//
//   - a stream (0 or 1 the legacy default stream, 2 the per-thread default
//     stream, or a CUstream of the device's primary context): the stream
//     waits on the GPU for the ready point (the copy, or the last vkflow
//     work submitted on the tensor) through a timeline exported to CUDA.
//     Where timelines cannot be shared, Export waits for the ready point on
//     the host before returning, which keeps the same promise.
//   - -1, no synchronization: the consumer orders its work after the
//     tensor's own pending writes itself, and Export does not wait for
//     them. The copy, though, is the export's own work, which the consumer
//     cannot see: Export waits for it on the host before returning.
//
// Steps that can fail come before any work is submitted; the export then
// submits one batch at most (the copy, or the ready signal, or both in
// one) and, last, enqueues the CUDA wait. Only that enqueue can fail after
// the batch (a stream handle CUDA refuses): the batch then signals a
// timeline nobody waits on and copies into a tensor nobody sees, and
// everything else is undone.

// exportCUDA is Export for a kDLCUDA dl_device.
func exportCUDA(ctx context.Context, d *core.Device, t *tensor.Tensor, opts Options, versioned bool, version Version, dt DataType) (Managed, error) {
	target := *opts.Device
	if opts.Consumer.Timeline != nil {
		return Managed{}, core.Invalid("dlpack: Export: a consumer timeline point needs a kDLVulkan export; a kDLCUDA consumer passes its stream")
	}
	if opts.Copy < CopyIfNeeded || opts.Copy > CopyNever {
		return Managed{}, core.Invalid("dlpack: Export: unknown copy mode %d", opts.Copy)
	}
	if opts.Stream < -1 {
		return Managed{}, core.Invalid("dlpack: Export: stream %d: a kDLCUDA consumer passes a CUDA stream handle, 1 (or 0) for the legacy default stream, 2 for the per-thread default stream or -1 for no synchronization", opts.Stream)
	}
	copied := opts.Copy == CopyAlways || !t.Allocation().Exportable()
	if copied && opts.Copy == CopyNever {
		return Managed{}, core.Unsupported("dlpack: Export: %v to %v needs exportable memory (tensor.Exportable()) and copy=never", t, target)
	}
	drv, err := cuda.Open()
	if err != nil {
		return Managed{}, fmt.Errorf("dlpack: Export to %v: %w", target, err)
	}
	cctx, err := drv.DeviceByUUID(d.Info.DeviceUUID)
	if err != nil {
		return Managed{}, fmt.Errorf("dlpack: Export to %v: %w", target, err)
	}
	ok := false
	defer func() {
		if !ok {
			cctx.Close()
		}
	}()
	if dev := cctx.Device(); int32(dev.Ordinal) != target.ID {
		return Managed{}, core.Unsupported("dlpack: Export: dl_device %v: this Vulkan device is CUDA device %d (%s), not %d", target, dev.Ordinal, dev.Name, target.ID)
	}
	src := t
	if copied {
		c, err := newCopy(d, t, tensor.Exportable())
		if err != nil {
			return Managed{}, err
		}
		defer c.Close() // the export's reference keeps it
		src = c
	}
	e := &export{}
	if err := e.hold(d, src); err != nil {
		return Managed{}, err
	}
	imp, err := importCUDA(ctx, d, cctx, t, src, copied, opts.Stream)
	if err != nil {
		e.free()
		return Managed{}, err
	}
	e.cuda = func() {
		// The consumer has finished with the memory when it calls the
		// deleter (DLPack): its stream work is done or ordered before.
		imp.close()
		cctx.Close()
	}
	ok = true
	flags := uint64(0)
	if src.ReadOnly() {
		flags |= FlagReadOnly
	}
	if copied {
		flags |= FlagIsCopied
	}
	m := e.build(t, versioned, version, flags, target, dt, C.vkflowDevicePointer(C.uintptr_t(imp.mem.Ptr())))
	live.Lock()
	if live.m == nil {
		live.m = make(map[unsafe.Pointer]*export)
	}
	live.m[m.ptr] = e
	live.Unlock()
	return m, nil
}

// cudaImport is what a kDLCUDA export holds in CUDA: the mapped memory and,
// where the consumer's stream waits on the GPU, the shared timeline.
type cudaImport struct {
	mem *cuda.Memory
	sem *cuda.Semaphore
	tl  *timeline.Timeline
}

func (c *cudaImport) close() {
	if c.sem != nil {
		c.sem.Close()
	}
	if c.tl != nil {
		c.tl.Close()
	}
	if c.mem != nil {
		c.mem.Close()
	}
}

// importCUDA maps src's memory into cctx and orders the consumer's stream
// after src's ready point (see the comment at the top of the file). When
// copied, src is a new tensor that the copy of t fills: the copy is
// submitted here, after every step that can fail but the CUDA wait.
func importCUDA(ctx context.Context, d *core.Device, cctx *cuda.Context, t, src *tensor.Tensor, copied bool, stream int64) (*cudaImport, error) {
	imp := &cudaImport{}
	fail := func(err error) (*cudaImport, error) {
		imp.close()
		return nil, fmt.Errorf("dlpack: Export to CUDA: %w", err)
	}
	h, err := interop.Export(src)
	if err != nil {
		return nil, err
	}
	if imp.mem, err = cctx.ImportMemory(h.FD, h.Size, h.Dedicated, h.Offset, h.Bytes); err != nil {
		syscall.Close(h.FD) // CUDA took it only on success
		return fail(err)
	}
	// onGPU: the consumer's stream waits on the GPU for the ready point;
	// else Export waits for it on the host (no shared timelines), or, for
	// stream -1, for the copy alone.
	onGPU := false
	if stream != -1 {
		tl, err := timeline.New(d, 0, timeline.Exportable())
		switch {
		case errors.Is(err, core.ErrUnsupported): // no shared timelines
		case err != nil:
			return fail(err)
		default:
			imp.tl, onGPU = tl, true
			fd, err := interop.ExportTimeline(tl)
			if err != nil {
				return fail(err)
			}
			if imp.sem, err = cctx.ImportTimeline(fd); err != nil {
				syscall.Close(fd)
				return fail(err)
			}
		}
	}
	var signals []timeline.Point
	if onGPU {
		signals = []timeline.Point{{Timeline: imp.tl, Value: 1}}
	}
	// The one batch: the copy (signalling the ready point when it is
	// done), or the ready signal after the tensor's pending uses.
	switch {
	case copied:
		err = copyInto(ctx, d, t, src, signals...)
	case onGPU:
		err = d.SignalWhenReady(src.Object(), []core.Point{{TL: imp.tl.State(), Value: 1}})
	}
	if err != nil {
		return fail(err)
	}
	if !onGPU && (copied || stream != -1) {
		// The ready point on the host: the copy (the export's own work,
		// whatever the stream), or the tensor's pending uses.
		if err := d.WaitUses(ctx, src.Object()); err != nil {
			return fail(err)
		}
	}
	if onGPU {
		s := cuda.Stream(stream)
		if stream == 0 {
			s = cuda.Stream(1) // DLPack: the legacy default stream
		}
		if err := imp.sem.WaitAsync(s, 1); err != nil {
			return fail(err)
		}
	}
	return imp, nil
}
