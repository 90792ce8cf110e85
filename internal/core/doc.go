// Package core is vkflow's per-device runtime, shared by the public
// packages tensor, algorithm, sequence and timeline and by the Manager.
//
// It owns, for one VkDevice:
//   - the physical queues, each with the timeline semaphore that tracks its
//     completion (no fences anywhere), and the map from logical queue indices
//     onto them;
//   - object lifetimes: every tensor, algorithm and sequence embeds an Object
//     that counts references and records, per physical queue, the last
//     timeline value that used it; destruction is deferred until the GPU has
//     passed that value;
//   - the completion watcher (watcher.go): a goroutine per physical queue,
//     parked in a wait on the queue's timeline at the smallest value that
//     makes a deferred object idle, frees deferred objects as the GPU
//     finishes with them, with no call of the program's; Close stops it
//     and joins it before freeing anything;
//   - the registry behind Manager.Close, which closes sequences, then
//     algorithms, then tensors;
//   - the memory sub-allocator (large blocks per memory type, carved up with
//     the device's alignment limits) and the one staging ring per device;
//   - memory and timelines shared as opaque fds (exportmem.go): exportable
//     buffers in dedicated memory of their own, imports, shared timelines
//     whose waits the scheduler never holds;
//   - the device's pipeline cache;
//   - the gate (gate.go): every API call that makes Vulkan calls enters it
//     (Device.Enter, or core.Enter for constructors) for its duration, and
//     waits enter it per slice (or, waiting on a channel inside a call,
//     use Device.Closing, which ends when Close starts); Close sets closed,
//     drains the gate and only then destroys anything, so no call touches
//     a destroyed object;
//   - the lost state: VK_ERROR_DEVICE_LOST from any call seen here makes
//     every later Enter fail with ErrDeviceLost.
//
// Imports: vk only, plus the standard library. The public packages import
// core; core imports none of them.
package core
