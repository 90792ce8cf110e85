// Package vk is vkflow's own thin Vulkan binding.
//
// It owns the process-wide loader state (libvulkan.so.1, opened once with
// dlopen, and a C table of core function pointers filled with dlsym) and thin
// wrappers for the calls the runtime needs: instance, debug messenger,
// physical devices, device, queues, buffers, memory, shader modules,
// descriptors, pipelines, a pipeline cache, command buffers, barriers,
// dispatch, copy, fill, timestamp queries and timeline semaphores.
//
// Rules of the binding:
//   - cgo with the system headers and VK_NO_PROTOTYPES; a missing core
//     function is an error naming it, extension functions may be absent.
//   - Non-dispatchable handles are uint64; dispatchable handles (instance,
//     physical device, device, queue, command buffer) are C pointers.
//   - C wrappers take plain values and build Vulkan structs on the C stack;
//     results come back in small structs, never through Go pointers that
//     escape. Submit and wait take caller-owned scratch arrays, so a steady
//     state submit or wait makes no Go heap allocation.
//   - Every failure is an *Error that names the call and the VkResult
//     ("vkQueueSubmit: VK_ERROR_DEVICE_LOST"); sentinels such as
//     ErrDeviceLost work with errors.Is.
//   - Debug messages reach the callback as the layer wrote them, but for
//     reports the binding can prove false (KnownFalsePositive,
//     falsepos.go), which arrive as SeverityInfo with a prefix saying why.
//
// Package vk imports nothing from the rest of the module. It is safe for
// concurrent use exactly where Vulkan is: callers synchronize queues,
// command pools and descriptor pools themselves.
package vk
