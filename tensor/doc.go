// Package tensor provides typed N-d tensors backed by Vulkan buffers.
//
// A Tensor owns one buffer, sub-allocated from the device's memory blocks.
// Its Memory kind decides where it lives: Device (device-local; mapped for
// zero-copy host access where device-local memory is host-visible, as on
// lavapipe, integrated GPUs and resizable BAR, else reached through the
// device's one staging ring), Host (host-visible, coherent) or Storage
// (GPU only).
//
// Exportable() gives a Device tensor a dedicated VkDeviceMemory of its own,
// which package interop exports as an opaque file descriptor for another
// Manager, process or API to import without a copy.
//
// Every new tensor reads as zero, whatever its kind: mapped memory is
// cleared on the host, other memory by GPU fills that zero all freed ranges
// of a memory block in one submit. A shape of [] is a 0-d tensor: a scalar
// of one element. Sizes are checked before anything is allocated: an
// overflowing shape or one over MaxBytes is ErrInvalid.
//
// Host access: the typed accessors (Float32s, Int32s, ...) return a slice
// that aliases the mapped memory when Mapped() is true — writes through it
// change the tensor, and it is valid until Close — and a copy otherwise.
// Mapped() is true where the host reads the memory through its mapping:
// by default only memory the host caches, since the CPU reads a discrete
// GPU's device-local memory through a resizable BAR at a small fraction of
// the bus's speed; such memory is read by GPU copies instead, and written
// through the mapping (vkflow.WithHostReads and WithHostWrites choose).
// Write copies host data in. Reading results of GPU work requires that work
// to be complete (and, within a sequence, a SyncLocal).
//
// The accessors, Write, ReadBytes and WriteBytes may run concurrently with
// Close: each holds a reference for its duration, so the buffer is freed
// only after it returns; once the tensor is closed they return ErrClosed.
//
// Ownership: the Manager owns every tensor; Close is idempotent; a tensor
// recorded in a sequence stays alive until the sequence lets go of it and
// the GPU is done with it.
//
// Imports: vk and internal/core only.
package tensor
