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
// device's (package cuda); data is the mapped device pointer. The
// consumer's stream waits on the GPU for the tensor's ready point through
// an exported timeline imported into CUDA; where timelines cannot be
// shared, Export waits for the ready point on the host before returning,
// which satisfies the same contract. The deleter frees the CUDA mapping
// and drops the export's reference on the tensor.

// exportCUDA is Export for a kDLCUDA dl_device.
func exportCUDA(ctx context.Context, d *core.Device, t *tensor.Tensor, opts Options, versioned bool, version Version, dt DataType) (Managed, error) {
	target := *opts.Device
	if opts.Consumer.Timeline != nil {
		return Managed{}, core.Invalid("dlpack: Export: a consumer timeline point needs a kDLVulkan export; a kDLCUDA consumer passes its stream")
	}
	if opts.Copy < CopyIfNeeded || opts.Copy > CopyNever {
		return Managed{}, core.Invalid("dlpack: Export: unknown copy mode %d", opts.Copy)
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
	copied := opts.Copy == CopyAlways || !t.Allocation().Exportable()
	if copied {
		if opts.Copy == CopyNever {
			return Managed{}, core.Unsupported("dlpack: Export: %v to %v needs exportable memory (tensor.Exportable()) and copy=never", t, target)
		}
		c, err := gpuCopy(ctx, d, t, tensor.Exportable())
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
	mem, sem, tl, err := importCUDA(ctx, d, cctx, src, opts.Stream)
	if err != nil {
		e.free()
		return Managed{}, err
	}
	e.cuda = func() {
		// The consumer has finished with the memory when it calls the
		// deleter (DLPack): its stream work is done or ordered before.
		if sem != nil {
			sem.Close()
		}
		if tl != nil {
			tl.Close()
		}
		mem.Close()
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
	m := e.build(t, versioned, version, flags, target, dt, C.vkflowDevicePointer(C.uintptr_t(mem.Ptr())))
	live.Lock()
	if live.m == nil {
		live.m = make(map[unsafe.Pointer]*export)
	}
	live.m[m.ptr] = e
	live.Unlock()
	return m, nil
}

// importCUDA maps src's memory into cctx and orders stream after src's
// ready point: on the GPU through a shared timeline (sem and tl, closed by
// the caller with the export), or on the host where timelines cannot be
// shared. stream -1 asks for no ordering.
func importCUDA(ctx context.Context, d *core.Device, cctx *cuda.Context, src *tensor.Tensor, stream int64) (*cuda.Memory, *cuda.Semaphore, *timeline.Timeline, error) {
	h, err := interop.Export(src)
	if err != nil {
		return nil, nil, nil, err
	}
	mem, err := cctx.ImportMemory(h.FD, h.Size, h.Dedicated, h.Offset, h.Bytes)
	if err != nil {
		syscall.Close(h.FD) // CUDA took it only on success
		return nil, nil, nil, fmt.Errorf("dlpack: Export to CUDA: %w", err)
	}
	if stream == -1 {
		return mem, nil, nil, nil
	}
	s := cuda.Stream(stream)
	if stream == 0 {
		s = cuda.Stream(1) // DLPack: the legacy default stream
	}
	tl, err := timeline.New(d, 0, timeline.Exportable())
	if errors.Is(err, core.ErrUnsupported) {
		// No shared timelines: the data is ready before the consumer gets it.
		if err := d.WaitUses(ctx, src.Object()); err != nil {
			mem.Close()
			return nil, nil, nil, err
		}
		return mem, nil, nil, nil
	}
	if err != nil {
		mem.Close()
		return nil, nil, nil, err
	}
	fail := func(err error, sem *cuda.Semaphore) (*cuda.Memory, *cuda.Semaphore, *timeline.Timeline, error) {
		if sem != nil {
			sem.Close()
		}
		tl.Close()
		mem.Close()
		return nil, nil, nil, fmt.Errorf("dlpack: Export to CUDA: %w", err)
	}
	fd, err := interop.ExportTimeline(tl)
	if err != nil {
		return fail(err, nil)
	}
	sem, err := cctx.ImportTimeline(fd)
	if err != nil {
		syscall.Close(fd)
		return fail(err, nil)
	}
	if err := d.SignalWhenReady(src.Object(), []core.Point{{TL: tl.State(), Value: 1}}); err != nil {
		return fail(err, sem)
	}
	if err := sem.WaitAsync(s, 1); err != nil {
		return fail(err, sem)
	}
	return mem, sem, tl, nil
}
