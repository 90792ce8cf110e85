/* vkflow.h: the C API of libvkflow.so (built by `make python` or
 * `make capi`). Every function returns VKFLOW_OK (0) or a negative error
 * code; vkflow_last_error copies the message of the last failure.
 *
 * Handles are opaque nonzero 64-bit values; 0 is never a valid handle.
 * Closing a Manager closes every tensor, algorithm, sequence, timeline and
 * graph exec created from it; their handles then fail with
 * VKFLOW_ERR_CLOSED (close them still, to free the handle). Memory exported
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
	VKFLOW_ERR_PENDING = -7,     /* the object is in use by a run still in flight */
	VKFLOW_ERR_FAILED = -8,      /* work it depends on failed: a timeline point's producer failed
	                              * (its submit, or the timeline closed first); vkflow_error_text
	                              * names the root cause. Failures are sticky on their timeline. */
	VKFLOW_ERR_BUSY = -9,        /* a bound was reached (held submits); nothing was done, retry later */
};

typedef uint64_t vkflow_manager;
typedef uint64_t vkflow_tensor;
typedef uint64_t vkflow_sequence;
typedef uint64_t vkflow_timeline;
typedef uint64_t vkflow_algorithm;
typedef uint64_t vkflow_graph;
typedef uint64_t vkflow_tape;
typedef uint64_t vkflow_exec;
typedef uint64_t vkflow_run;

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
/* The same with compute logical compute queues (1..64) and, when transfer
 * is nonzero, a logical transfer queue after them. Logical queues map onto
 * the device's physical queues (lavapipe has one). */
int vkflow_manager_new_queues(int32_t device, uint32_t flags, int32_t compute, int32_t transfer,
			      vkflow_manager *out);
/* vkflow_manager_new_queues that writes a Chrome trace of the Manager's work to
 * trace_path when it closes (Go: vkflow.WithTrace; docs/PERFORMANCE.md): GPU
 * spans per queue, host submits, waits and holds, flow arrows between batches.
 * The environment variable VKFLOW_TRACE does the same for any Manager. */
int vkflow_manager_new_traced(int32_t device, uint32_t flags, int32_t compute, int32_t transfer,
			      char *trace_path, vkflow_manager *out);
/* The number of logical queues: compute queues first, then transfer. */
int vkflow_manager_queue_count(vkflow_manager m, int32_t *n);
/* Closes the Manager and everything it created. Idempotent. */
int vkflow_manager_close(vkflow_manager m);
/* Live buffers and VkDeviceMemory blocks of the Manager's allocator. */
int vkflow_manager_mem_stats(vkflow_manager m, int64_t *allocations, int64_t *blocks);
/* Validation messages (warnings and errors) seen by all Managers opened
 * with VKFLOW_VALIDATION since the library was loaded; the last one's text
 * goes to buf. */
int64_t vkflow_validation_messages(char *buf, size_t n);
/* Sets VKFLOW_DEVICE (a device index or a name substring; NULL or blank
 * unsets it) as the library sees it: Go keeps its own copy of the
 * environment, taken when the library was loaded, so a process that changes
 * the variable later calls this before opening a Manager (Python's Manager
 * does it with os.environ's value). */
int vkflow_set_device_env(char *value);
/* The same for name VKFLOW_DEVICE or VKFLOW_WAIT_SPIN (how long a host wait
 * polls the GPU's timeline before it sleeps: a Go duration such as "50us",
 * or "0"; default 200us), the variables a Manager reads when it opens.
 * Another name is VKFLOW_ERR_INVALID. */
int vkflow_set_env(char *name, char *value);

/* Memory kinds. VKFLOW_MEMORY_EXPORTABLE makes a Device tensor with a
 * dedicated VkDeviceMemory of its own that vkflow_tensor_export_memory can
 * export (tensor.Exportable(); vkflow_tensor_info reports it as
 * VKFLOW_MEMORY_DEVICE). Without VK_KHR_external_memory_fd it is
 * VKFLOW_ERR_UNSUPPORTED naming the extension. */
enum { VKFLOW_MEMORY_DEVICE = 0, VKFLOW_MEMORY_HOST = 1, VKFLOW_MEMORY_STORAGE = 2,
       VKFLOW_MEMORY_EXPORTABLE = 3 };

/* Creates a tensor of dtype ("float32", "int32", "uint8", "float16",
 * "bool", "complex64", "complex128", ...; the names of vkflow's dtypes,
 * accepted wherever a dtype is named: here, in op attributes ("dtype"),
 * vkflow_tensor_import_memory, and given back by vkflow_tensor_info;
 * complex64 is two float32, real then imaginary, as C's float complex,
 * complex128 two double) and shape. data (nbytes, which must equal the
 * tensor's size) is copied in; NULL leaves zeros. ndim 0
 * (shape may be NULL) makes a 0-d tensor: a scalar of one element. */
int vkflow_tensor_new(vkflow_manager m, char *dtype, int32_t ndim, int64_t *shape,
		      void *data, uint64_t nbytes, int32_t memory, vkflow_tensor *out);
int vkflow_tensor_close(vkflow_tensor t);
/* Copies the tensor's bytes out (nbytes must equal its size), after
 * waiting for the GPU work submitted on it (ops, sequences, graph runs):
 * up to the Manager's close timeout. vkflow_tensor_write waits the same
 * way before it copies in, so a queued op never sees a half-written
 * input. Submits held back on an unsignalled timeline are not waited for.
 * Where the copy is made on the GPU (memory the host does not map or does
 * not cache: VKFLOW_HOST_READS, VKFLOW_HOST_WRITES), 1 MiB or more of
 * suitably aligned dst or src is imported (VK_EXT_external_memory_host)
 * and copied directly; should that copy time out, the GPU may still write
 * dst until it completes. */
int vkflow_tensor_read(vkflow_tensor t, void *dst, uint64_t nbytes);
int vkflow_tensor_write(vkflow_tensor t, void *src, uint64_t nbytes);
/* dtype name into dtype (cap dtype_len); ndim; shape (cap 32 entries);
 * memory kind; mapped: 1 when host access is zero-copy; read_only. */
int vkflow_tensor_info(vkflow_tensor t, char *dtype, size_t dtype_len, int32_t *ndim, int64_t *shape,
		       int32_t *memory, int32_t *mapped, int32_t *read_only);
/* The (device_type, device_id) a default export produces:
 * (kDLCPU 1, 0) for host-visible memory, else (kDLVulkan 7, device index).
 * Host-visible memory the host reads through a copy (mapped 0: uncached
 * device memory, VKFLOW_HOST_READS) goes out as a kDLCPU copy. */
int vkflow_tensor_dlpack_device(vkflow_tensor t, int32_t *device_type, int32_t *device_id);

/* External memory (docs/INTEROP.md): a tensor's memory as an opaque file
 * descriptor (VK_KHR_external_memory_fd), for another Manager, another
 * process or CUDA to import without a copy.
 *
 * Layout (72 bytes, no implicit padding). This struct is NOT the wire form
 * that Go's interop.SendHandle and Python's vkflow.send_handle send (that
 * one has a magic and flags, and no fd): to send a handle to a process, send
 * the bytes of vkflow_memory_handle_encode with the fd as SCM_RIGHTS in the
 * same message, and read a received one with vkflow_memory_handle_decode.
 *   size         the allocation's size in bytes
 *   offset       where the tensor's bytes start in it (0 for vkflow's exports)
 *   bytes        the exported tensor's size in bytes
 *   fd           the opaque fd (-1: none; an import refuses a negative one,
 *                VKFLOW_ERR_INVALID, and closes nothing)
 *   memory_type  the exporting device's memory type index (an import uses it)
 *   dedicated    1: the allocation is dedicated to one buffer (always, for
 *                vkflow's exports); an import must be dedicated too
 *   reserved     0
 *   device_uuid, driver_uuid  VkPhysicalDeviceIDProperties of the exporting
 *                device; an import needs both to equal the importing one's */
typedef struct {
	uint64_t size;
	uint64_t offset;
	uint64_t bytes;
	int32_t fd;
	uint32_t memory_type;
	int32_t dedicated;
	uint32_t reserved;
	uint8_t device_uuid[16];
	uint8_t driver_uuid[16];
} vkflow_memory_handle;

/* The wire form of a handle, VKFLOW_MEMORY_HANDLE_WIRE_SIZE (72) bytes:
 * the magic "vkflowH1", then size, offset, bytes (uint64), memory_type,
 * flags (uint32; bit 0: dedicated) and device_uuid, driver_uuid (16 bytes
 * each), little-endian. The fd is not part of it.
 *
 * encode writes h's wire form into buf, which must hold buf_len >= 72
 * bytes; *written (when written is not NULL) gets 72. h->fd and
 * h->reserved are not encoded. VKFLOW_ERR_INVALID, with nothing written,
 * for a NULL h or buf, a buf_len under 72, or a dedicated other than 0 or 1.
 *
 * decode reads a received message of exactly buf_len == 72 bytes into
 * *out, with out->fd = -1 (set it to the fd that came with the message as
 * SCM_RIGHTS) and out->reserved = 0. VKFLOW_ERR_INVALID, with *out
 * unchanged, for a NULL buf or out, another length (a message cut short or
 * too long), a wrong magic (the raw bytes of a vkflow_memory_handle, for
 * one) or unknown flags. */
#define VKFLOW_MEMORY_HANDLE_WIRE_SIZE 72
int vkflow_memory_handle_encode(vkflow_memory_handle *h, void *buf, size_t buf_len, size_t *written);
int vkflow_memory_handle_decode(void *buf, size_t buf_len, vkflow_memory_handle *out);

/* Exports the memory of t (made with VKFLOW_MEMORY_EXPORTABLE, else
 * VKFLOW_ERR_INVALID) into *out. Each call returns a new fd, which the caller
 * owns: close it, or hand it to vkflow_tensor_import_memory (or to CUDA).
 * The memory lives as long as any side holds it: closing t or its Manager
 * later does not invalidate an importer's tensor. */
int vkflow_tensor_export_memory(vkflow_tensor t, vkflow_memory_handle *out);
/* Imports exported memory into Manager m as a Device tensor of dtype and
 * shape (as vkflow_tensor_new). It checks first that h's UUIDs are m's
 * device's (VKFLOW_ERR_INVALID naming both), that dtype x shape fits
 * h->bytes at h->offset within h->size, and that the memory type exists.
 * It always consumes h->fd, on success and on failure: the caller never
 * touches it again (a negative fd is VKFLOW_ERR_INVALID and not closed). Nothing orders the two sides' reads and writes: use a
 * timeline or a host relay. */
int vkflow_tensor_import_memory(vkflow_manager m, vkflow_memory_handle *h, char *dtype, int32_t ndim,
				int64_t *shape, vkflow_tensor *out);

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
/* Shared timelines (VK_KHR_external_semaphore_fd). new_exportable creates a
 * timeline that export_fd can export as a new opaque fd, which the caller
 * owns; import_fd imports one into a new timeline of m, consuming fd on
 * success and on failure. Submits that wait on a shared timeline go to the
 * driver at once: the other side must signal what they wait for. Where the
 * device cannot share timeline semaphores (lavapipe), each returns
 * VKFLOW_ERR_UNSUPPORTED naming VK_KHR_external_semaphore_fd. */
int vkflow_timeline_new_exportable(vkflow_manager m, uint64_t initial, vkflow_timeline *out);
int vkflow_timeline_export_fd(vkflow_timeline tl, int32_t *fd);
int vkflow_timeline_import_fd(vkflow_manager m, int32_t fd, vkflow_timeline *out);

/* Algorithms: compute pipelines bound to tensors, for graph dispatch nodes.
 * An algorithm holds a reference on its tensors until it is closed. */
/* A built-in float32 kernel bound to its tensors: "multiply" (out = a*b),
 * "add" (out = a+b), "multiply_scalar" (multiply with the scalar shader, one
 * element per invocation, whatever the length) or "saxpy"
 * (out = scalar*a + out, b must be 0; its push constant is the float32
 * scalar, 4 bytes). The others take no push constants. */
int vkflow_kernel_new(vkflow_manager m, char *name, vkflow_tensor a, vkflow_tensor b, vkflow_tensor out,
		      vkflow_algorithm *alg);
/* An algorithm from SPIR-V (nbytes bytes, copied), bound to tensors at set
 * 0, bindings 0..ntensors-1. Workgroups x, y, z; all 0: derived from the
 * first tensor's length and the local size. */
int vkflow_algorithm_new(vkflow_manager m, void *spirv, uint64_t nbytes, int32_t ntensors,
			 vkflow_tensor *tensors, uint32_t x, uint32_t y, uint32_t z, vkflow_algorithm *out);
int vkflow_algorithm_close(vkflow_algorithm a);
/* The size in bytes of the pipeline's push constants. */
int vkflow_algorithm_push_size(vkflow_algorithm a, int32_t *size);

/* Graphs (docs/GRAPHS.md). A graph records nodes; compiling it infers the
 * dependencies from what each node reads and writes and gives an exec that
 * replays on one or more queues. Recording order is the meaning: the graph
 * computes what running its nodes one after another would.
 *
 * Node calls return the node's index (in recording order, from 0) in *node
 * (may be NULL). A failed node call makes the graph fail: that call, every
 * later node call and compile return the first error.
 *
 * Ownership: a graph holds no Vulkan object and no reference; closing it
 * does not affect execs compiled from it. The tensors and algorithms its
 * nodes use must stay open: compile, and every later run, fail with
 * VKFLOW_ERR_CLOSED once one of them was closed. An exec holds a reference
 * on each of them until it is closed and its last run completed, so closing
 * one never frees memory a run in flight uses. The Manager closes its
 * execs.
 *
 * Host memory: upload and download nodes keep the caller's pointer, not a
 * copy. An upload's src is read at every run, when the run is submitted; a
 * download's dst is written when a run completes (by vkflow_exec_run, or by
 * vkflow_run_wait). Both must stay valid, and dst untouched by others while
 * a run is in flight, until the exec is closed. */
int vkflow_graph_new(vkflow_manager m, vkflow_graph *out);
/* Frees the graph (execs compiled from it live on). Idempotent. */
int vkflow_graph_close(vkflow_graph g);
/* The number of recorded nodes. */
int vkflow_graph_len(vkflow_graph g, int32_t *n);
/* A dispatch of alg with the tensors bound to it now; push (push_bytes,
 * copied; must equal vkflow_algorithm_push_size) holds its push constants,
 * little-endian and packed. What each binding reads and writes comes from
 * the shader. */
int vkflow_graph_dispatch(vkflow_graph g, vkflow_algorithm alg, void *push, uint64_t push_bytes,
			  int32_t *node);
/* A copy from src to dst: whole tensors (nregions 0, regions may be NULL)
 * or nregions regions, each three int64 (src element, dst element, element
 * count). */
int vkflow_graph_copy(vkflow_graph g, vkflow_tensor src, vkflow_tensor dst, int32_t nregions,
		      int64_t *regions, int32_t *node);
/* A fill of every element of t with the element at value (value_bytes:
 * the size of one element of t's dtype, little-endian; copied). */
int vkflow_graph_fill(vkflow_graph g, vkflow_tensor t, void *value, uint64_t value_bytes, int32_t *node);
/* A host-to-device copy into t from src (nbytes: exactly t's size). */
int vkflow_graph_upload(vkflow_graph g, vkflow_tensor t, void *src, uint64_t nbytes, int32_t *node);
/* A device-to-host copy of t into dst (nbytes: exactly t's size). */
int vkflow_graph_download(vkflow_graph g, vkflow_tensor t, void *dst, uint64_t nbytes, int32_t *node);
/* Pins node to logical queue queue (VKFLOW_ERR_INVALID if the Manager has
 * no such queue). Without it compile picks a queue. */
int vkflow_graph_node_queue(vkflow_graph g, int32_t node, int32_t queue);
/* Names node for the schedule, the DOT text and errors (copied). */
int vkflow_graph_node_name(vkflow_graph g, int32_t node, char *name);
/* Orders node after the ndeps nodes in deps, beyond what its accesses
 * imply. One that contradicts the accesses makes a cycle: compile fails. */
int vkflow_graph_node_after(vkflow_graph g, int32_t node, int32_t ndeps, int32_t *deps);
/* Declares tensors the host fills before runs: reading them with no writer
 * in the graph draws no warning. */
int vkflow_graph_input(vkflow_graph g, int32_t n, vkflow_tensor *tensors);
/* Compiles the graph. queues (nqueues, 0: all of the Manager's logical
 * queues) restricts the queues it may use; max_nodes_per_submit and
 * max_work_per_submit (in shader invocations) cap one command buffer (0:
 * the defaults, 1024 and 2^30). Fails on a recording error, a cycle, a
 * closed tensor or algorithm (VKFLOW_ERR_CLOSED), a dispatch writing one
 * tensor through two bindings, or a node pinned to a queue it may not use. */
int vkflow_graph_compile(vkflow_graph g, int32_t nqueues, int32_t *queues, int32_t max_nodes_per_submit,
			 uint64_t max_work_per_submit, vkflow_exec *out);

/* Execs: compiled graphs. Runs replay the recorded command buffers; runs of
 * one exec are ordered after each other on the GPU. wait_tl (0: none) makes
 * a run start once it reaches wait_value; signal_tl (0: none) is set to
 * signal_value once the run is complete. */
/* Closes the exec; its resources are freed once its last run completed.
 * Idempotent. */
int vkflow_exec_close(vkflow_exec e);
/* Runs the graph and waits for it (timeout_ns: as for every wait; on
 * timeout the run goes on and the exec keeps its memory). */
int vkflow_exec_run(vkflow_exec e, vkflow_timeline wait_tl, uint64_t wait_value, vkflow_timeline signal_tl,
		    uint64_t signal_value, int64_t timeout_ns);
/* Submits a run without waiting and returns it in *run. A graph with
 * uploads or downloads runs one at a time: VKFLOW_ERR_PENDING while its
 * previous run is in flight. */
int vkflow_exec_run_async(vkflow_exec e, vkflow_timeline wait_tl, uint64_t wait_value,
			  vkflow_timeline signal_tl, uint64_t signal_value, vkflow_run *run);
/* Waits for the run; downloads' dst hold its results after the first
 * successful wait. May be called again. */
int vkflow_run_wait(vkflow_run r, int64_t timeout_ns);
/* *done: 1 once the run completed or failed (does not fill downloads). */
int vkflow_run_done(vkflow_run r, int32_t *done);
/* Frees the run's handle; the run itself goes on. Idempotent. */
int vkflow_run_close(vkflow_run r);
/* Replaces tensor old with new (same dtype and size, not used by the graph
 * already) in every node; the schedule is kept. No run may be in flight
 * (VKFLOW_ERR_PENDING). */
int vkflow_exec_rebind(vkflow_exec e, vkflow_tensor old_tensor, vkflow_tensor new_tensor);
/* Changes the push constants (push_bytes, copied) of dispatch node node.
 * No run may be in flight (VKFLOW_ERR_PENDING). */
int vkflow_exec_set_push(vkflow_exec e, int32_t node, void *push, uint64_t push_bytes);
/* Texts: the schedule (submits, queues, waits, groups, barriers), the
 * Graphviz DOT text, and compile's warnings (one a line). Each is copied
 * into buf (NUL-terminated, truncated to n; buf may be NULL when n is 0)
 * and *length (may be NULL) receives its full length: call again with
 * length + 1 bytes when it did not fit. */
int vkflow_exec_schedule(vkflow_exec e, char *buf, size_t n, size_t *length);
int vkflow_exec_dot(vkflow_exec e, char *buf, size_t n, size_t *length);
int vkflow_exec_warnings(vkflow_exec e, char *buf, size_t n, size_t *length);

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

/* kDLCUDA (docs/INTEROP.md). vkflow_cuda_device stores the CUDA ordinal of
 * the Manager's Vulkan device (matched by UUID; libcuda.so.1 is opened at
 * run time): VKFLOW_ERR_UNSUPPORTED, saying which, without libcuda or a
 * matching CUDA device. vkflow_dlpack_export_cuda exports t as kDLCUDA
 * device device_id (that ordinal) without a copy where its memory is
 * exportable (VKFLOW_MEMORY_EXPORTABLE), else through a GPU copy (refused
 * with VKFLOW_COPY_NEVER). stream is DLPack's stream argument: a
 * CUstream/cudaStream_t, 1 or 0 the legacy default stream, 2 the
 * per-thread default stream, -1 none; the stream waits on the GPU for the
 * tensor's ready point (or the export waits on the host where timelines
 * cannot be shared with CUDA). The rest is as vkflow_dlpack_export. */
int vkflow_cuda_device(vkflow_manager m, int32_t *ordinal);
int vkflow_dlpack_export_cuda(vkflow_tensor t, int32_t max_major, int32_t max_minor, int32_t device_id,
			      int32_t copy_mode, int64_t stream, int64_t timeout_ns, void **out,
			      int32_t *versioned);

/* Exports whose deleter has not run yet, across all Managers. */
int64_t vkflow_dlpack_live(void);

/* Operators (package ops) and their registry, shared with Go and Python.
 *
 * Eager calls: every op call goes to the Manager's default stream (Go:
 * ops.DefaultStream): prepared ops are cached (by op, attributes, dtypes,
 * shapes and aliasing; bounded LRU), and each call's GPU work is ordered
 * after the earlier calls that wrote what it reads, or read or wrote what
 * it writes, on the GPU. vkflow_op_call_async returns once the op is
 * submitted; vkflow_op_call and vkflow_op_call_timeout also wait for the
 * outputs (the first up to the Manager's close timeout, the second up to
 * timeout ns, negative for none; VKFLOW_ERR_TIMEOUT then, with the op still
 * queued and the slots untouched). vkflow_tensor_read and
 * vkflow_tensor_write wait for the tensor's queued work themselves;
 * vkflow_tensor_wait and vkflow_synchronize wait explicitly. Closing a
 * tensor that queued calls still use is safe: it is freed after them.
 *
 * in holds n_in input tensors. out holds n_out slots: a nonzero slot
 * is an output the caller gives; a 0 slot receives a new tensor the op
 * allocated, which the caller owns (close it). Outputs beyond n_out are not
 * returned. On an error the slots are left alone. attrs_json (NULL or "": none) holds the op's attributes:
 * {"axes": [0, -1], "keepdims": true, "perm": [1, 0], "dtype": "float16",
 * "min": 0, "max": 6, "push": "<base64>", "groups": [4, 1, 1], and the FFTs'
 * "n": 8, "s": [4, -1], "norm": "ortho"}; unknown keys
 * are VKFLOW_ERR_INVALID. Inputs of different dtypes are an error (cast
 * first); a dtype the op does not take is VKFLOW_ERR_INVALID and one the
 * device cannot compute in VKFLOW_ERR_UNSUPPORTED, both naming it. */
int vkflow_op_call(vkflow_manager m, char *name, vkflow_tensor *in, int32_t n_in, vkflow_tensor *out,
		   int32_t n_out, char *attrs_json);
int vkflow_op_call_timeout(vkflow_manager m, char *name, vkflow_tensor *in, int32_t n_in, vkflow_tensor *out,
			   int32_t n_out, char *attrs_json, int64_t timeout);
int vkflow_op_call_async(vkflow_manager m, char *name, vkflow_tensor *in, int32_t n_in, vkflow_tensor *out,
			 int32_t n_out, char *attrs_json);
/* What vkflow_op_call_new returns: the new output's handle and what
 * vkflow_tensor_info would say of it (dtype a NUL-terminated name). */
typedef struct {
	vkflow_tensor handle;
	int32_t ndim, memory, mapped, read_only;
	char dtype[16];
	int64_t shape[32];
} vkflow_tensor_desc;
/* vkflow_op_call_async with one new output (further outputs of the op are
 * closed), described in *out: one call instead of the call and
 * vkflow_tensor_info (the eager path of Python's vkflow.ops). */
int vkflow_op_call_new(vkflow_manager m, char *name, vkflow_tensor *in, int32_t n_in, char *attrs_json,
		       vkflow_tensor_desc *out);
/* Waits until every op queued on the Manager's default stream completed
 * (timeout ns, negative for none). */
int vkflow_synchronize(vkflow_manager m, int64_t timeout);
/* Waits until every submitted GPU use of the tensor completed (ops,
 * sequences, graph runs; timeout ns, negative for none). */
int vkflow_tensor_wait(vkflow_tensor t, int64_t timeout);
/* The Manager's eager op counters: prepared-op cache hits, misses,
 * evictions and entries, eager submits, and host waits inside eager calls
 * (back-pressure; reads are not counted). */
typedef struct {
	uint64_t hits, misses, evictions;
	int64_t entries;
	uint64_t submits, host_waits;
} vkflow_op_stats;
int vkflow_op_cache_stats(vkflow_manager m, vkflow_op_stats *out);
/* The host's waits on the GPU that reached the driver: *polled ended while
 * polling the timeline (VKFLOW_WAIT_SPIN, default 200us), *blocked went on
 * to sleep in vkWaitSemaphores. */
int vkflow_wait_stats(vkflow_manager m, uint64_t *polled, uint64_t *blocked);
/* The alignment a host address needs for a kCPU DLPack import (and a large
 * staged read or write) to wrap it without a copy
 * (VK_EXT_external_memory_host); 0 when the device cannot import host
 * memory. */
int vkflow_host_import_alignment(vkflow_manager m, uint64_t *align);
/* Registers a compute kernel by name: GLSL source compiled now (a compile
 * error is VKFLOW_ERR_INVALID with the compiler's message and line in
 * vkflow_last_error), or a SPIR-V module (size bytes, copied). Its storage
 * buffers are set 0, bindings 0..: the first n_inputs are inputs, the rest
 * outputs, which vkflow_op_call's caller must give. The "push" attribute is
 * its push constant block and "groups" its workgroups (default: one
 * invocation per element of the first output, in groups of its local size
 * x). A name already taken is VKFLOW_ERR_INVALID. */
int vkflow_op_register_glsl(char *name, char *source, int32_t n_inputs);
int vkflow_op_register_spirv(char *name, void *code, size_t size, int32_t n_inputs);
/* Removes a registered kernel (not a built-in op). */
int vkflow_op_unregister(char *name);
/* Copies the names of every op, built-in and registered, sorted and
 * separated by newlines, into buf (NUL-terminated, truncated to n; buf may
 * be NULL when n is 0) and returns the full length. */
size_t vkflow_op_names(char *buf, size_t n);

/* Gradients (Go: ops.Stream.VJP; docs/GRADIENTS.md). vkflow_op_vjp queues
 * the vector-Jacobian product of the op name on the default stream: in
 * holds its n_in inputs, out its n_out outputs (0 entries, or n_out 0:
 * recomputed), cot one cotangent per output (n_cot; a 0 entry is zeros),
 * attrs_json the forward call's attributes, and wants (NULL: every float
 * or complex input) one flag per input. grads receives n_in slots: a new
 * tensor (the caller closes it) or 0 where no gradient is computed. An op
 * without a VJP is VKFLOW_ERR_INVALID naming why, and nothing is queued. */
int vkflow_op_vjp(vkflow_manager m, char *name, vkflow_tensor *in, int32_t n_in, vkflow_tensor *out,
		  int32_t n_out, vkflow_tensor *cot, int32_t n_cot, char *attrs_json, int32_t *wants,
		  vkflow_tensor *grads);
/* The op's gradient entry: *kind is 0 (not differentiable), 1 (a VJP), 2 (a
 * VJP not written yet) or 3 (a VJP of zeros almost everywhere: floor,
 * sign, ...); reason (truncated to n, NUL-terminated; may be NULL when n is
 * 0) says why an op has none, and *length (may be NULL) its full length. */
int vkflow_op_gradient(char *name, int32_t *kind, char *reason, size_t n, size_t *length);
/* The op's schema as JSON (truncated to n, NUL-terminated; *length, which
 * may be NULL, is its full length): {"name", "inputs", "outputs", "attrs":
 * [{"name", "type", "default", "doc"}], "gradient", "reason", "kernel"}. An
 * op refuses attributes its schema does not list (docs/OPS_REGISTRY.md). */
int vkflow_op_schema(char *name, char *buf, size_t n, size_t *length);
/* Gives the registered kernel name the registered kernel vjp_kernel as its
 * VJP: its inputs are name's inputs, outputs and cotangents, its outputs
 * the inputs' gradients (allocated as zeros), run with the forward call's
 * attributes. */
int vkflow_op_register_vjp(char *name, char *vjp_kernel);

/* Tapes (Go: ops.Tape; docs/GRADIENTS.md): ops recorded by name into a
 * graph, and its backward graph. vkflow_tape_call prepares the op over in
 * (attrs_json as vkflow_op_call's), adds its dispatches to the tape's graph
 * (on the queue vkflow_tape_queue set; -1, the default, leaves them to the
 * compiler) and puts handles of its outputs in out (n_out slots; 0 past the
 * op's outputs). The tape owns those tensors: keep their handles open while
 * the graph is used (closing one closes the tensor), and close the handles
 * when done; vkflow_tape_close closes the tensors whether or not. The dispatches a tape adds have no node index.
 * vkflow_tape_grad builds the backward graph of the outputs outs (n_outs)
 * weighted by the cotangents cots (n_outs, written by the caller before each
 * backward run) with respect to wrt (n_wrt): a new graph handle in
 * *graph_out (compile it with vkflow_graph_compile, close it with
 * vkflow_graph_close) and handles of the gradients in grads (n_wrt slots;
 * owned by the tape, as the outputs). *saved_bytes (may be NULL) is the size
 * of the forward tensors the backward graph reads. An op without a VJP is
 * VKFLOW_ERR_INVALID naming it, and nothing is built. */
int vkflow_tape_new(vkflow_manager m, vkflow_graph g, vkflow_tape *out);
int vkflow_tape_close(vkflow_tape t);
int vkflow_tape_queue(vkflow_tape t, int32_t queue);
int vkflow_tape_call(vkflow_tape t, char *name, vkflow_tensor *in, int32_t n_in, char *attrs_json,
		     vkflow_tensor *out, int32_t n_out);
int vkflow_tape_grad(vkflow_tape t, vkflow_tensor *outs, int32_t n_outs, vkflow_tensor *cots,
		     vkflow_tensor *wrt, int32_t n_wrt, vkflow_graph *graph_out, vkflow_tensor *grads,
		     uint64_t *saved_bytes);
/* *bytes: the device memory the tape holds (Go: Tape.DeviceBytes): its
 * forward outputs, the backward graphs' tensors and the ops' scratch; not the
 * caller's inputs and cotangents. */
int vkflow_tape_device_bytes(vkflow_tape t, uint64_t *bytes);

/* The soft rasterizer (Go: render.SoftRender; docs/RENDERING.md): records on
 * tape t the render of tri [N, 3, 2] with colours rgba [N, 4] (float32 or
 * float64) and puts a handle of the image [height, width, 4] (premultiplied
 * RGBA, owned by the tape as vkflow_tape_call's outputs) in *image.
 * options_json: {"height": H, "width": W, "sigma": 1, "batch": 8,
 * "raster_queue": 0, "blend_queue": 1}; sigma and batch may be left out
 * (1 and 8), the queues default to 0 (-1: the compiler's choice). Layers of
 * batch triangles are rasterized on raster_queue and blended on blend_queue;
 * vkflow_tape_grad differentiates the render. Bad input is
 * VKFLOW_ERR_INVALID and records nothing. */
int vkflow_soft_render(vkflow_tape t, vkflow_tensor tri, vkflow_tensor rgba, char *options_json,
		       vkflow_tensor *image);

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
