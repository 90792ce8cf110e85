// Package interop shares tensor memory and timelines with other Managers,
// other processes and other APIs (CUDA) without a copy, as opaque file
// descriptors: Vulkan's external memory (VK_KHR_external_memory_fd) and
// external semaphores (VK_KHR_external_semaphore_fd). docs/INTEROP.md is
// the design.
//
// # Memory
//
// A tensor created with tensor.Exportable() has a VkDeviceMemory of its
// own, dedicated to its buffer and never shared with another tensor.
// Export returns a MemoryHandle: a new fd for that memory plus what an
// importer needs (sizes, the memory type index, and the exporting device's
// DeviceUUID and DriverUUID). Import makes a tensor of another Manager over
// the same memory; it checks the UUIDs, the sizes and the memory type
// before the driver sees the fd.
//
//	x, _ := tensor.New(mgr, tensor.Float32, []int{n}, tensor.Exportable())
//	h, _ := interop.Export(x)                                // h.FD is the caller's
//	y, _ := interop.Import(mgr2, h, tensor.Float32, []int{n}) // consumes h.FD
//
// # File descriptors
//
// Every Export returns a new fd that the caller owns: close it, or hand it
// to Import (or to CUDA). Import always consumes the fd, whether it
// succeeds or fails, so the caller never touches it again. SendHandle and
// RecvHandle move a handle and its fd (SCM_RIGHTS) over a Unix socket to
// another process; SendHandle leaves the sender's fd open, and the fd
// RecvHandle returns belongs to the receiver.
//
// An fd is a C int. A value that cannot be one (negative, or beyond
// int32, whose low 32 bits would name some other fd) is ErrInvalid in
// Import, ImportTimeline and SendHandle before any system call, and is
// not closed.
//
// Imports of one allocation's fds may run concurrently, from any number
// of goroutines and Managers: those fds share one open file description
// (one file offset), so on lavapipe, which reads its memfd's header
// through the offset, Import hands the driver a private reopen of the fd
// (/proc/self/fd/N), and serializes the driver's import where that fails.
//
// # Lifetimes
//
// The memory lives as long as any side holds it: closing the exporting
// tensor, or its Manager, frees only the exporter's hold on it, and an
// importer's tensor stays valid until it is closed, and the other way
// round. vkflow does not see the other side's work, so bytes written by
// one side and read by the other need ordering: a shared timeline, or a
// host relay.
//
// # Timelines
//
// A timeline created with timeline.Exportable() can be exported
// (ExportTimeline) and imported (ImportTimeline). Such timelines are
// shared: the scheduler passes submits that wait on them to the driver at
// once instead of holding them until a local signal promises the value,
// since the other side signals them; on a single-queue driver a wait that
// nobody signals blocks the queue. Where the device cannot share timeline
// semaphores (lavapipe lacks VK_KHR_external_semaphore_fd), these calls
// and timeline.New with Exportable() return ErrUnsupported naming the
// extension; there is no silent fallback.
//
// The host relay works everywhere: the producer waits for its own point on
// the host (Timeline.Wait) and tells the consumer, by a message on the
// socket; the consumer signals a local timeline from the host
// (Timeline.Signal), which its submitted work waits on.
//
// # Errors
//
// Errors wrap vkflow's sentinels: ErrInvalid for bad arguments (a
// non-exportable tensor, UUIDs of another device, a shape that does not
// fit, an fd that is not memory), ErrClosed for closed tensors, timelines
// and Managers, ErrUnsupported for what the device cannot do. Supported and
// TimelinesSupported say in advance.
//
// Imports: vk, internal/core, tensor and timeline, and the standard
// library.
package interop
