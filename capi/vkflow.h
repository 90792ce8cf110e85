/* vkflow.h: the C API of libvkflow.so (built by `make python` or
 * `make capi`). Every function returns VKFLOW_OK (0) or a negative error
 * code; vkflow_last_error copies the message of the last failure.
 *
 * Handles are opaque nonzero 64-bit values; 0 is never a valid handle.
 * Closing a Manager closes every tensor, sequence and timeline created from
 * it; their handles then fail with VKFLOW_ERR_CLOSED. Memory exported
 * through DLPack stays valid until the deleter runs, even after the tensor
 * and the Manager are closed.
 *
 * Timeouts are in nanoseconds; a negative timeout waits without a deadline.
 * Pointer arguments are never written unless they are outputs (the
 * declarations lack const because cgo's generated ones do, and the build
 * checks that both agree).
 */
#ifndef VKFLOW_H
#define VKFLOW_H

#include <stddef.h>
#include <stdint.h>
#include "vkflow_vulkan.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
	VKFLOW_OK = 0,
	VKFLOW_ERR_INVALID = -1,     /* bad argument */
	VKFLOW_ERR_CLOSED = -2,      /* use after close */
	VKFLOW_ERR_UNSUPPORTED = -3, /* the device or DLPack request cannot be served (Python: BufferError) */
	VKFLOW_ERR_VULKAN = -4,      /* a Vulkan call failed */
	VKFLOW_ERR_TIMEOUT = -5,     /* a wait ran past its timeout */
	VKFLOW_ERR_OTHER = -6,
};

typedef uint64_t vkflow_manager;
typedef uint64_t vkflow_tensor;
typedef uint64_t vkflow_sequence;
typedef uint64_t vkflow_timeline;

/* Copies the last error message (NUL-terminated, truncated to n) into buf
 * and returns its full length. The message is process-wide. */
size_t vkflow_last_error(char *buf, size_t n);

/* Manager flags. */
enum {
	VKFLOW_VALIDATION = 1, /* Khronos validation + synchronization validation */
};

/* Opens a Manager on device index (-1: the default device, VKFLOW_DEVICE
 * honoured). */
int vkflow_manager_new(int32_t device, uint32_t flags, vkflow_manager *out);
/* Closes the Manager and everything it created. Idempotent. */
int vkflow_manager_close(vkflow_manager m);
/* Live buffers and VkDeviceMemory blocks of the Manager's allocator. */
int vkflow_manager_mem_stats(vkflow_manager m, int64_t *allocations, int64_t *blocks);
/* Validation messages (warnings and errors) seen by all Managers opened
 * with VKFLOW_VALIDATION since the library was loaded; the last one's text
 * goes to buf. */
int64_t vkflow_validation_messages(char *buf, size_t n);

/* Memory kinds. */
enum { VKFLOW_MEMORY_DEVICE = 0, VKFLOW_MEMORY_HOST = 1, VKFLOW_MEMORY_STORAGE = 2 };

/* Creates a tensor of dtype ("float32", "int32", "uint8", "float16",
 * "bool", ...; the names of vkflow's dtypes) and shape. data (nbytes, which
 * must equal the tensor's size) is copied in; NULL leaves zeros. ndim 0
 * (shape may be NULL) makes a 0-d tensor: a scalar of one element. */
int vkflow_tensor_new(vkflow_manager m, char *dtype, int32_t ndim, int64_t *shape,
		      void *data, uint64_t nbytes, int32_t memory, vkflow_tensor *out);
int vkflow_tensor_close(vkflow_tensor t);
/* Copies the tensor's bytes out (nbytes must equal its size). Does not
 * wait for GPU work: evaluate or wait first. */
int vkflow_tensor_read(vkflow_tensor t, void *dst, uint64_t nbytes);
int vkflow_tensor_write(vkflow_tensor t, void *src, uint64_t nbytes);
/* dtype name into dtype (cap dtype_len); ndim; shape (cap 32 entries);
 * memory kind; mapped: 1 when host access is zero-copy; read_only. */
int vkflow_tensor_info(vkflow_tensor t, char *dtype, size_t dtype_len, int32_t *ndim, int64_t *shape,
		       int32_t *memory, int32_t *mapped, int32_t *read_only);
/* The (device_type, device_id) a default export produces:
 * (kDLCPU 1, 0) when host access is zero-copy, else (kDLVulkan 7, device index). */
int vkflow_tensor_dlpack_device(vkflow_tensor t, int32_t *device_type, int32_t *device_id);

/* Sequences. queue is a logical queue index. */
int vkflow_sequence_new(vkflow_manager m, int32_t queue, vkflow_sequence *out);
int vkflow_sequence_close(vkflow_sequence s);
/* Records a built-in float32 kernel: "multiply" (out = a*b), "add"
 * (out = a+b) or "saxpy" (out = scalar*a + out; b must be 0). */
int vkflow_sequence_kernel(vkflow_sequence s, char *name, vkflow_tensor a, vkflow_tensor b,
			   vkflow_tensor out, float scalar);
/* Records a buffer copy of the whole tensor src into dst. */
int vkflow_sequence_copy(vkflow_sequence s, vkflow_tensor src, vkflow_tensor dst);
/* Submits and waits. */
int vkflow_sequence_eval(vkflow_sequence s, int64_t timeout_ns);
/* Submits without waiting; the submit waits for wait_tl to reach wait_value
 * (when wait_tl is not 0) and sets signal_tl to signal_value when done
 * (when signal_tl is not 0). */
int vkflow_sequence_submit(vkflow_sequence s, vkflow_timeline wait_tl, uint64_t wait_value,
			   vkflow_timeline signal_tl, uint64_t signal_value);

/* Timelines. */
int vkflow_timeline_new(vkflow_manager m, uint64_t initial, vkflow_timeline *out);
int vkflow_timeline_close(vkflow_timeline tl);
int vkflow_timeline_value(vkflow_timeline tl, uint64_t *value);
int vkflow_timeline_signal(vkflow_timeline tl, uint64_t value);
int vkflow_timeline_wait(vkflow_timeline tl, uint64_t value, int64_t timeout_ns);
/* The timeline's VkSemaphore, for consumers on the same VkDevice. */
int vkflow_timeline_semaphore(vkflow_timeline tl, uint64_t *semaphore);

/* DLPack. */
enum { VKFLOW_COPY_IF_NEEDED = 0, VKFLOW_COPY_ALWAYS = 1, VKFLOW_COPY_NEVER = 2 };

/* Exports t. max_major < 0 asks for a legacy DLManagedTensor; otherwise a
 * DLManagedTensorVersioned of version 1.x (x = min(max_minor, 3) for
 * major 1). device_type 0 exports to the tensor's natural device (see
 * vkflow_tensor_dlpack_device); 1 (kDLCPU) or 7 (kDLVulkan) ask for one.
 * A CPU export waits (up to timeout_ns) for the tensor's pending GPU work
 * before it returns. consumer (a timeline, or 0) with consumer_value is a
 * kDLVulkan consumer's point: the producer makes it signal once the tensor
 * is ready. *out receives the managed tensor, *versioned 1 for the
 * versioned struct. The caller owns it: exactly one deleter call. */
int vkflow_dlpack_export(vkflow_tensor t, int32_t max_major, int32_t max_minor, int32_t device_type,
			 int32_t device_id, int32_t copy, vkflow_timeline consumer, uint64_t consumer_value,
			 int64_t timeout_ns, void **out, int32_t *versioned);
/* Imports a DLManagedTensor (versioned 0) or DLManagedTensorVersioned
 * (versioned 1). It takes ownership in every case: on failure the deleter
 * has been called. *copied is 1 when the data was copied (not zero-copy). */
int vkflow_dlpack_import(vkflow_manager m, void *managed, int32_t versioned, int64_t timeout_ns,
			 vkflow_tensor *out, int32_t *copied);
/* The same with a copy mode (as for export): 0 copy if needed, 1 always
 * copy, 2 never copy (VKFLOW_ERR_UNSUPPORTED where host memory is not
 * compact or its address not a multiple of the device's host import
 * alignment, 64 bytes on lavapipe). */
int vkflow_dlpack_import_copy(vkflow_manager m, void *managed, int32_t versioned, int32_t copy_mode,
			      int64_t timeout_ns, vkflow_tensor *out, int32_t *copied);

/* Exports whose deleter has not run yet, across all Managers. */
int64_t vkflow_dlpack_live(void);

/* Python capsules: the static names ("dltensor", "dltensor_versioned",
 * "used_dltensor", "used_dltensor_versioned") and a PyCapsule destructor
 * that calls the deleter when the capsule was never consumed. The
 * destructor resolves the Python C API at run time, so libvkflow.so does
 * not link libpython. */
enum { VKFLOW_CAPSULE_LEGACY = 0, VKFLOW_CAPSULE_VERSIONED = 1, VKFLOW_CAPSULE_USED_LEGACY = 2,
       VKFLOW_CAPSULE_USED_VERSIONED = 3 };
const char *vkflow_capsule_name(int32_t which);
void vkflow_capsule_destructor(void *capsule);

#ifdef __cplusplus
}
#endif
#endif
