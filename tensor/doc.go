// Package tensor provides typed N-d tensors backed by Vulkan buffers.
//
// A Tensor owns one buffer, sub-allocated from the device's memory blocks.
// Its Memory kind decides where it lives: Device (device-local; mapped for
// zero-copy host access where device-local memory is host-visible, as on
// lavapipe, integrated GPUs and resizable BAR, else reached through the
// device's one staging ring), Host (host-visible, coherent) or Storage
// (GPU only).
//
// Host access: the typed accessors (Float32s, Int32s, ...) return a slice
// that aliases the mapped memory when Mapped() is true — writes through it
// change the tensor, and it is valid until Close — and a copy otherwise.
// Write copies host data in. Reading results of GPU work requires that work
// to be complete (and, within a sequence, a SyncLocal).
//
// Ownership: the Manager owns every tensor; Close is idempotent; a tensor
// recorded in a sequence stays alive until the sequence lets go of it and
// the GPU is done with it.
//
// Imports: vk and internal/core only.
package tensor
