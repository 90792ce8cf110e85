/* vkflow_vulkan.h: what DLTensor.data points to in a vkflow export with
 * device type kDLVulkan (7). Part of vkflow's public C interface.
 *
 * A kDLVulkan tensor only means something to a consumer in the same process
 * that uses the same VkDevice. The first three members are in the order
 * Apache TVM uses for its Vulkan buffers.
 *
 * Synchronization contract (see docs/DLPACK.md):
 *  - ready: the tensor's pending GPU writes are complete once
 *    ready_semaphore (a timeline semaphore of the same VkDevice) reaches
 *    ready_value. The consumer makes its first submit that touches the
 *    buffer wait on that point. ready_value 0 means nothing was pending.
 *  - released: before calling the deleter, a consumer whose GPU work still
 *    uses the buffer stores a timeline point of the same VkDevice here. The
 *    producer frees nothing until that semaphore reaches released_value. The
 *    signal of that point must already have been submitted (or the
 *    semaphore signalled from the host) when the deleter is called, and the
 *    semaphore must stay alive until it is reached. Zero means "nothing of
 *    mine uses the buffer any more".
 */
#ifndef VKFLOW_VULKAN_H
#define VKFLOW_VULKAN_H

#include <stdint.h>

typedef struct vkflow_vulkan_buffer {
	void *device;                /* VkDevice */
	uint64_t buffer;             /* VkBuffer: the tensor starts at offset 0 */
	uint64_t memory;             /* VkDeviceMemory the buffer is bound to */
	uint64_t memory_offset;      /* where the buffer is bound in memory */
	uint64_t size;               /* bytes of tensor data in the buffer */
	uint64_t ready_semaphore;    /* VkSemaphore (timeline), never 0 */
	uint64_t ready_value;
	uint64_t released_semaphore; /* written by the consumer, or 0 */
	uint64_t released_value;     /* written by the consumer */
} vkflow_vulkan_buffer;

#endif
