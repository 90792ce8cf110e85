#include <dlfcn.h>
#include <string.h>
#include "cuda.h"

// The layouts of cuda.h, checked at compile time (see the comments in
// cuda.h for how each size follows from the members).
_Static_assert(sizeof(void *) == 8, "package cuda needs a 64-bit platform");
_Static_assert(sizeof(CUresult) == 4, "CUresult is a 4-byte enum");
_Static_assert(sizeof(CUuuid) == 16, "CUuuid");
_Static_assert(sizeof(CUDA_EXTERNAL_MEMORY_HANDLE_DESC) == 104, "CUDA_EXTERNAL_MEMORY_HANDLE_DESC");
_Static_assert(offsetof(CUDA_EXTERNAL_MEMORY_HANDLE_DESC, handle) == 8, "handle desc: handle");
_Static_assert(offsetof(CUDA_EXTERNAL_MEMORY_HANDLE_DESC, size) == 24, "handle desc: size");
_Static_assert(offsetof(CUDA_EXTERNAL_MEMORY_HANDLE_DESC, flags) == 32, "handle desc: flags");
_Static_assert(offsetof(CUDA_EXTERNAL_MEMORY_HANDLE_DESC, reserved) == 36, "handle desc: reserved");
_Static_assert(sizeof(CUDA_EXTERNAL_MEMORY_BUFFER_DESC) == 88, "CUDA_EXTERNAL_MEMORY_BUFFER_DESC");
_Static_assert(offsetof(CUDA_EXTERNAL_MEMORY_BUFFER_DESC, flags) == 16, "buffer desc: flags");
_Static_assert(offsetof(CUDA_EXTERNAL_MEMORY_BUFFER_DESC, reserved) == 20, "buffer desc: reserved");
_Static_assert(sizeof(CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC) == 96, "CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC");
_Static_assert(offsetof(CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC, handle) == 8, "semaphore desc: handle");
_Static_assert(offsetof(CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC, flags) == 24, "semaphore desc: flags");
_Static_assert(offsetof(CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC, reserved) == 28, "semaphore desc: reserved");
_Static_assert(sizeof(CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS) == 144, "CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS");
_Static_assert(sizeof(((CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS *)0)->params) == 72, "signal params: params");
_Static_assert(offsetof(CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS, params.keyedMutex) == 16, "signal: keyedMutex");
_Static_assert(offsetof(CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS, params.reserved) == 24, "signal: params.reserved");
_Static_assert(offsetof(CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS, flags) == 72, "signal params: flags");
_Static_assert(offsetof(CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS, reserved) == 76, "signal params: reserved");
_Static_assert(sizeof(CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS) == 144, "CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS");
_Static_assert(sizeof(((CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS *)0)->params) == 72, "wait params: params");
_Static_assert(offsetof(CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS, params.keyedMutex.timeoutMs) == 24, "wait: timeoutMs");
_Static_assert(offsetof(CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS, params.reserved) == 32, "wait: params.reserved");
_Static_assert(offsetof(CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS, flags) == 72, "wait params: flags");
_Static_assert(offsetof(CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS, reserved) == 76, "wait params: reserved");

// The symbols libcuda.so.1 exports for the API names of cuda.h: cuda.h maps
// several names to a versioned symbol with #define (cuCtxPushCurrent ->
// cuCtxPushCurrent_v2 and so on); calling the unversioned symbol would get
// the CUDA 3.x ABI. The stream-ordered calls are the plain (legacy default
// stream) symbols, not the _ptsz ones: cuda.h selects _ptsz only under
// CUDA_API_PER_THREAD_DEFAULT_STREAM, so with these, stream 0 is the legacy
// default stream, and CU_STREAM_PER_THREAD (2) names the per-thread one.
typedef CUresult (*PFN_cuInit)(unsigned int);
typedef CUresult (*PFN_cuDeviceGetCount)(int *);
typedef CUresult (*PFN_cuDeviceGet)(CUdevice *, int);
typedef CUresult (*PFN_cuDeviceGetName)(char *, int, CUdevice);
typedef CUresult (*PFN_cuDeviceGetUuid)(CUuuid *, CUdevice);
typedef CUresult (*PFN_cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
typedef CUresult (*PFN_cuDevicePrimaryCtxRelease)(CUdevice);
typedef CUresult (*PFN_cuCtxPushCurrent)(CUcontext);
typedef CUresult (*PFN_cuCtxPopCurrent)(CUcontext *);
typedef CUresult (*PFN_cuStreamCreate)(CUstream *, unsigned int);
typedef CUresult (*PFN_cuStreamDestroy)(CUstream);
typedef CUresult (*PFN_cuStreamSynchronize)(CUstream);
typedef CUresult (*PFN_cuImportExternalMemory)(CUexternalMemory *, const CUDA_EXTERNAL_MEMORY_HANDLE_DESC *);
typedef CUresult (*PFN_cuExternalMemoryGetMappedBuffer)(CUdeviceptr *, CUexternalMemory,
	const CUDA_EXTERNAL_MEMORY_BUFFER_DESC *);
typedef CUresult (*PFN_cuMemFree)(CUdeviceptr);
typedef CUresult (*PFN_cuDestroyExternalMemory)(CUexternalMemory);
typedef CUresult (*PFN_cuImportExternalSemaphore)(CUexternalSemaphore *, const CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC *);
typedef CUresult (*PFN_cuDestroyExternalSemaphore)(CUexternalSemaphore);
typedef CUresult (*PFN_cuWaitExternalSemaphoresAsync)(const CUexternalSemaphore *,
	const CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS *, unsigned int, CUstream);
typedef CUresult (*PFN_cuSignalExternalSemaphoresAsync)(const CUexternalSemaphore *,
	const CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS *, unsigned int, CUstream);
typedef CUresult (*PFN_cuGetErrorName)(CUresult, const char **);

// X(field, type, symbol): every function this package calls.
#define VKF_CU(X) \
	X(init, cuInit, "cuInit") \
	X(deviceGetCount, cuDeviceGetCount, "cuDeviceGetCount") \
	X(deviceGet, cuDeviceGet, "cuDeviceGet") \
	X(deviceGetName, cuDeviceGetName, "cuDeviceGetName") \
	X(primaryCtxRetain, cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain") \
	X(primaryCtxRelease, cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2") \
	X(ctxPush, cuCtxPushCurrent, "cuCtxPushCurrent_v2") \
	X(ctxPop, cuCtxPopCurrent, "cuCtxPopCurrent_v2") \
	X(streamCreate, cuStreamCreate, "cuStreamCreate") \
	X(streamDestroy, cuStreamDestroy, "cuStreamDestroy_v2") \
	X(streamSynchronize, cuStreamSynchronize, "cuStreamSynchronize") \
	X(importMemory, cuImportExternalMemory, "cuImportExternalMemory") \
	X(mappedBuffer, cuExternalMemoryGetMappedBuffer, "cuExternalMemoryGetMappedBuffer") \
	X(memFree, cuMemFree, "cuMemFree_v2") \
	X(destroyMemory, cuDestroyExternalMemory, "cuDestroyExternalMemory") \
	X(importSemaphore, cuImportExternalSemaphore, "cuImportExternalSemaphore") \
	X(destroySemaphore, cuDestroyExternalSemaphore, "cuDestroyExternalSemaphore") \
	X(wait, cuWaitExternalSemaphoresAsync, "cuWaitExternalSemaphoresAsync") \
	X(signal, cuSignalExternalSemaphoresAsync, "cuSignalExternalSemaphoresAsync") \
	X(errorName, cuGetErrorName, "cuGetErrorName")

#define X(field, type, symbol) PFN_##type field;
static struct {
	VKF_CU(X)
	PFN_cuDeviceGetUuid deviceGetUuid;
} cu;
#undef X

static const char *loadError;

const char *vkfCuLoad(void) {
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		loadError = dlerror();
		return "libcuda.so.1";
	}
#define X(field, type, symbol) \
	cu.field = (PFN_##type)dlsym(lib, symbol); \
	if (cu.field == NULL) return symbol;
	VKF_CU(X)
#undef X
	// cuDeviceGetUuid_v2 (CUDA 11.4 and later) gives each MIG instance its
	// own UUID; CUDA 13 exports only it. The v1 symbol is the fallback.
	cu.deviceGetUuid = (PFN_cuDeviceGetUuid)dlsym(lib, "cuDeviceGetUuid_v2");
	if (cu.deviceGetUuid == NULL) {
		cu.deviceGetUuid = (PFN_cuDeviceGetUuid)dlsym(lib, "cuDeviceGetUuid");
	}
	if (cu.deviceGetUuid == NULL) return "cuDeviceGetUuid_v2";
	return NULL;
}

const char *vkfCuDlerror(void) { return loadError; }

CUresult vkfCuInit(unsigned int flags) { return cu.init(flags); }

vkfCuInt vkfCuDeviceGetCount(void) {
	vkfCuInt r = {0, CUDA_SUCCESS};
	r.result = cu.deviceGetCount(&r.value);
	return r;
}

vkfCuInt vkfCuDeviceGet(int ordinal) {
	vkfCuInt r = {0, CUDA_SUCCESS};
	r.result = cu.deviceGet(&r.value, ordinal);
	return r;
}

vkfCuName vkfCuDeviceGetName(CUdevice dev) {
	vkfCuName r;
	memset(&r, 0, sizeof r);
	r.result = cu.deviceGetName(r.name, (int)sizeof r.name - 1, dev);
	return r;
}

vkfCuUUID vkfCuDeviceGetUuid(CUdevice dev) {
	vkfCuUUID r;
	memset(&r, 0, sizeof r);
	r.result = cu.deviceGetUuid(&r.uuid, dev);
	return r;
}

vkfCuHandle vkfCuPrimaryCtxRetain(CUdevice dev) {
	CUcontext ctx = NULL;
	CUresult res = cu.primaryCtxRetain(&ctx, dev);
	return (vkfCuHandle){(uintptr_t)ctx, res};
}

CUresult vkfCuPrimaryCtxRelease(CUdevice dev) { return cu.primaryCtxRelease(dev); }

CUresult vkfCuCtxPush(uintptr_t ctx) { return cu.ctxPush((CUcontext)ctx); }

vkfCuHandle vkfCuCtxPop(void) {
	CUcontext ctx = NULL;
	CUresult res = cu.ctxPop(&ctx);
	return (vkfCuHandle){(uintptr_t)ctx, res};
}

vkfCuHandle vkfCuStreamCreate(unsigned int flags) {
	CUstream s = NULL;
	CUresult res = cu.streamCreate(&s, flags);
	return (vkfCuHandle){(uintptr_t)s, res};
}

CUresult vkfCuStreamDestroy(uintptr_t stream) { return cu.streamDestroy((CUstream)stream); }

CUresult vkfCuStreamSynchronize(uintptr_t stream) { return cu.streamSynchronize((CUstream)stream); }

vkfCuHandle vkfCuImportMemoryFD(int fd, uint64_t size, int dedicated) {
	CUDA_EXTERNAL_MEMORY_HANDLE_DESC d;
	memset(&d, 0, sizeof d);
	d.type = CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD;
	d.handle.fd = fd;
	d.size = size;
	d.flags = dedicated ? CUDA_EXTERNAL_MEMORY_DEDICATED : 0;
	CUexternalMemory m = NULL;
	CUresult res = cu.importMemory(&m, &d);
	return (vkfCuHandle){(uintptr_t)m, res};
}

vkfCuU64 vkfCuMappedBuffer(uintptr_t extMem, uint64_t offset, uint64_t size) {
	CUDA_EXTERNAL_MEMORY_BUFFER_DESC d;
	memset(&d, 0, sizeof d);
	d.offset = offset;
	d.size = size;
	CUdeviceptr p = 0;
	CUresult res = cu.mappedBuffer(&p, (CUexternalMemory)extMem, &d);
	return (vkfCuU64){(uint64_t)p, res};
}

CUresult vkfCuMemFree(uint64_t ptr) { return cu.memFree((CUdeviceptr)ptr); }

CUresult vkfCuDestroyExternalMemory(uintptr_t extMem) { return cu.destroyMemory((CUexternalMemory)extMem); }

vkfCuHandle vkfCuImportTimelineFD(int fd) {
	CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC d;
	memset(&d, 0, sizeof d);
	d.type = CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD;
	d.handle.fd = fd;
	CUexternalSemaphore s = NULL;
	CUresult res = cu.importSemaphore(&s, &d);
	return (vkfCuHandle){(uintptr_t)s, res};
}

CUresult vkfCuDestroyExternalSemaphore(uintptr_t sem) { return cu.destroySemaphore((CUexternalSemaphore)sem); }

CUresult vkfCuWaitTimeline(uintptr_t sem, uint64_t value, uintptr_t stream) {
	CUexternalSemaphore s = (CUexternalSemaphore)sem;
	CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS p;
	memset(&p, 0, sizeof p);
	p.params.fence.value = value;
	return cu.wait(&s, &p, 1, (CUstream)stream);
}

CUresult vkfCuSignalTimeline(uintptr_t sem, uint64_t value, uintptr_t stream) {
	CUexternalSemaphore s = (CUexternalSemaphore)sem;
	CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS p;
	memset(&p, 0, sizeof p);
	p.params.fence.value = value;
	return cu.signal(&s, &p, 1, (CUstream)stream);
}

const char *vkfCuErrorName(CUresult r) {
	const char *name = NULL;
	if (cu.errorName == NULL || cu.errorName(r, &name) != CUDA_SUCCESS) return NULL;
	return name;
}
