// Package cuda hands vkflow memory and timelines to CUDA without a copy,
// through the CUDA driver API: external memory (an exported tensor's opaque
// fd, mapped as a device pointer) and external semaphores (an exported
// timeline, waited on and signalled from CUDA streams). See docs/INTEROP.md.
//
// The package opens libcuda.so.1 at run time with dlopen, in the style of
// package vk: nothing is linked at build time and no CUDA header is needed,
// so it builds (and its tests run) on machines without the NVIDIA driver.
// There, Open returns an error matching vkflow.ErrUnsupported that says
// libcuda.so.1 was not found; Open on a machine whose driver sees no device
// (CUDA_ERROR_NO_DEVICE, or the toolkit's stub library) does the same.
//
// The package takes plain values (fds, sizes, UUIDs) and does not import
// package interop; the example below shows how the two fit.
//
// # Devices
//
// Driver.DeviceByUUID picks the CUDA device that is the Vulkan device:
// VkPhysicalDeviceIDProperties.deviceUUID (interop.MemoryHandle.DeviceUUID)
// equals what cuDeviceGetUuid reports for the same GPU. The Context it
// returns holds the device's primary context, the one the CUDA runtime,
// PyTorch and CuPy use, so device pointers and streams pass between them.
//
// # Ownership and lifetimes
//
//   - fds: ImportMemory and ImportTimeline consume the fd on success (the
//     caller must not close it) and leave it untouched on any error (the
//     caller still owns it). Vulkan's interop.Import differs: it consumes
//     the fd even on failure.
//   - Close is idempotent on Context, Memory and Semaphore. Memory.Close
//     frees the mapping, then the imported memory; both need the GPU work
//     that uses them to be complete.
//   - Children keep their Context: Memory, Semaphore and streams from
//     NewStream each hold a reference, and the primary context is released
//     when the Context and all of them are closed. Context.Close never
//     invalidates a pointer still in use (a DLPack consumer's, say); new
//     imports after it are ErrClosed.
//
// # Streams and threads
//
// A Stream is a CUstream handle: one from Context.NewStream, or a foreign
// one such as Stream(torch.cuda.current_stream().cuda_stream). Stream(0) is
// the legacy default stream. Each call makes the context current on the
// calling goroutine's OS thread for that call only (LockOSThread, push,
// call, pop, UnlockOSThread); callers do not manage the context stack.
//
// # Errors
//
// A failed driver call is an *Error naming the call and its CUresult, wrapped
// with the operation: "cuda: Context.ImportMemory: cuImportExternalMemory:
// CUDA_ERROR_INVALID_VALUE". Bad arguments are vkflow.ErrInvalid, use after
// Close is vkflow.ErrClosed, and a missing driver, device or feature is
// vkflow.ErrUnsupported. Nothing panics.
//
// # Example
//
// Export a tensor and a timeline from vkflow, run CUDA work on the tensor
// after vkflow's writes, and let vkflow continue after CUDA's:
//
//	h, err := interop.Export(x) // x made with tensor.Exportable()
//	if err != nil { ... }
//	drv, err := cuda.Open()
//	if err != nil { ... } // errors.Is(err, vkflow.ErrUnsupported) without a GPU
//	ctx, err := drv.DeviceByUUID(h.DeviceUUID)
//	if err != nil { ... }
//	defer ctx.Close()
//	mem, err := ctx.ImportMemory(h.FD, h.Size, h.Dedicated, h.Offset, h.Bytes)
//	if err != nil {
//		syscall.Close(h.FD) // still ours on failure
//		...
//	}
//	defer mem.Close()
//
//	fd, err := interop.ExportTimeline(tl) // tl made with timeline.Exportable()
//	if err != nil { ... }
//	sem, err := ctx.ImportTimeline(fd)
//	if err != nil { ... }
//	defer sem.Close()
//
//	s, err := ctx.NewStream() // or cuda.Stream(torchStream.cuda_stream)
//	if err != nil { ... }
//	defer s.Close()
//	sem.WaitAsync(s, ready)    // s waits for vkflow's point `ready` on the GPU
//	launch(s, mem.Ptr(), mem.Bytes()) // CUDA work on the tensor's bytes
//	sem.SignalAsync(s, ready+1) // vkflow work submitted with sequence.Wait(tl, ready+1) runs after
//	err = s.Synchronize()       // before mem.Close and sem.Close
package cuda
