// Package dlpack hands vkflow tensors to other frameworks and takes theirs,
// through DLPack (https://dmlc.github.io/dlpack/latest/), with the
// synchronization rules written out below. docs/DLPACK.md says the same at
// more length, with the C and Python views.
//
// # Export
//
// Export returns a Managed: a DLManagedTensor (legacy, when the consumer
// gives no MaxVersion) or a DLManagedTensorVersioned 1.x in C memory. Three
// device types go out:
//
//   - kDLCPU, for memory the host can map: data is the mapped memory
//     itself (zero-copy). Memory the host cannot map is copied into host
//     memory when Options.Copy allows, and the struct says IS_COPIED. So
//     is mapped memory the host reads through a copy (tensor.Mapped() is
//     false: uncached device memory on a discrete GPU, see
//     vkflow.WithHostReads), unless Options.Copy is CopyNever: the
//     consumer then gets the mapping, which it reads at the speed of
//     uncached memory.
//   - kDLVulkan, for consumers in this process that use the same VkDevice:
//     data points to a VulkanBuffer (vkflow_vulkan_buffer in C, the
//     first three members in Apache TVM's order).
//   - kDLCUDA, on request, where CUDA sees the Vulkan device: data is a
//     CUDA device pointer over the tensor's exportable memory (or over a
//     GPU copy into exportable memory, IS_COPIED); package cuda.
//
// # Synchronization contract
//
// Vulkan has no global streams, so the points of synchronization are
// timeline semaphore values.
//
//  1. CPU: Export waits, bounded by its context, until every GPU use of the
//     tensor submitted before the call has completed. A CPU consumer never
//     sees half-written data, and needs no stream.
//  2. Vulkan, producer's point (CUDA Array Interface v3 style): the
//     VulkanBuffer carries a ready point, a timeline VkSemaphore of the
//     device and a value. The tensor's pending writes are complete when the
//     semaphore reaches the value; the consumer's first submit that touches
//     the buffer waits on it. Export does not block.
//  3. Vulkan, consumer's point (DLPack's S0 style): a consumer that passes
//     its own timeline point in Options.Consumer gets that point signalled
//     once the tensor is ready, ordered like any vkflow submit, and the
//     ready point in the VulkanBuffer is that point.
//  4. Release: the deleter may be called from any thread, once. A Vulkan
//     consumer whose GPU work still uses the buffer stores a released
//     point (its own timeline VkSemaphore of the same device and a value,
//     Managed.SetReleased in Go) before calling the deleter; vkflow frees
//     nothing before the semaphore reaches that value. The signal of that
//     point must already be submitted or done when the deleter is called,
//     and the semaphore must outlive it. A point never reached is waited
//     for until Manager.Close gives up on it (its close timeout): the
//     memory and the device are then leaked, and an error logged, rather
//     than freed under the consumer (docs/DLPACK.md).
//  5. CUDA (DLPack's stream argument, Options.Stream): the consumer's
//     stream (1 or 0 the legacy default, 2 per-thread, or a handle) waits
//     on the GPU for the ready point through a timeline shared with CUDA;
//     where timelines cannot be shared Export waits on the host instead.
//     -1 asks for no synchronization: the tensor's pending writes are the
//     consumer's to wait for, but a copy the export made is its own work
//     and is complete when Export returns.
//  6. Writes submitted after Export are not ordered against the consumer:
//     the producer keeps its hands off until it has the tensor back, as with
//     any DLPack exchange.
//
// Submits held back by vkflow's scheduler (waiting for a timeline nobody
// signalled yet) have not reached the GPU and are not "pending" in this
// sense: they count as writes after the export (rule 6). Waiting for them
// could deadlock a host that signals their timeline later.
//
// A refused export does nothing: it submits one batch at most (a copy, a
// ready signal, or a copy that signals the ready point), after every step
// that can fail, so the scheduler admits it whole or refuses it whole. The
// one exception is a kDLCUDA export's last step, CUDA's enqueue of the
// stream wait (a stream CUDA refuses): its batch then copies into memory
// nobody sees and signals a timeline nobody waits on.
//
// # Lifetime
//
// Each export holds a reference on the tensor and a pin on the device: the
// memory, the VkDevice and the instance stay valid until the last deleter
// runs, even after the tensor and the Manager are closed. A second call of
// a deleter is ignored.
//
// # Import
//
// Import takes a Managed over in every case: on success the tensor calls
// the producer's deleter once, after Close and after the GPU has finished
// with it; on failure the deleter has already run, as DLPack asks of a
// consumer (an unknown major version included). kDLCPU memory is wrapped
// without a copy through VK_EXT_external_memory_host when the data is
// compact and its address is a multiple of the device's HostImportAlignment
// (64 bytes on lavapipe: the pages around the data are imported and the
// buffer is bound at the data's offset, which must meet the buffer
// alignment), and copied otherwise (strided data included); ImportCopy with
// CopyNever refuses instead of copying. kDLVulkan memory must come from
// this device and becomes a view.
package dlpack
