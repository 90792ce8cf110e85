// A stand-in libcuda.so.1 for TestFakeLibcuda: it exports the symbols the
// package resolves, under the versioned names the real driver exports, and
// logs every call with the arguments it received to the file named by
// $VKFLOW_FAKE_LIBCUDA. It reads the CUDA structs at the byte offsets of
// cuda.h (LP64) rather than through a struct declaration, so the log shows
// what a driver compiled from NVIDIA's header would read.
//
// The unversioned names that cuda.h maps to _v2 symbols are exported too,
// as traps: calling one logs "WRONG" and fails.
//
// It enforces the stream rules of the real driver: a CUstream argument is
// NULL or CU_STREAM_LEGACY (1) (the legacy default stream),
// CU_STREAM_PER_THREAD (2), or a stream this library created; anything
// else (DLPack's -1, "no synchronization", passed on as a handle, say) logs
// "WRONG" and fails with CUDA_ERROR_INVALID_HANDLE.
//
// Two switches serve package dlpack's kDLCUDA tests on lavapipe:
// $VKFLOW_FAKE_CUDA_UUID (32 hex digits) is the device's UUID, so that the
// Vulkan device matches it, and with $VKFLOW_FAKE_CUDA_MAP set the mapped
// buffer is the imported fd's memory mapped into this process (lavapipe's
// opaque fds are memfds), so a test reads what a CUDA kernel would see.
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef int CUresult;
enum {
	OK = 0,
	INVALID_VALUE = 1,
	INVALID_CONTEXT = 201,
	INVALID_HANDLE = 400,
	UNKNOWN = 999,
	UNNAMED_IN_GO = 222, // not in the package's table: named by cuGetErrorName
};

#define CTX ((void *)0xc0de0000)
#define EXTMEM ((void *)0xe0000000)
#define EXTSEM ((void *)0x5e000000)
#define STREAM ((void *)0x57000000)

static int depth; // the context stack
static int memFD = -1, semFD = -1;
static uint64_t memSize;         // the imported allocation's size
static void *mapBase;            // its mapping under $VKFLOW_FAKE_CUDA_MAP
static uint64_t mapPtr;          // the device pointer handed out for it

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...) {
	const char *path = getenv("VKFLOW_FAKE_LIBCUDA");
	if (path == NULL) return;
	FILE *f = fopen(path, "a");
	if (f == NULL) return;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fclose(f);
}

// zero reports whether n bytes at p are all zero.
static int zero(const void *p, size_t n) {
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++) {
		if (b[i]) return 0;
	}
	return 1;
}

#define U32(p, off) (*(const uint32_t *)((const char *)(p) + (off)))
#define I32(p, off) (*(const int32_t *)((const char *)(p) + (off)))
#define U64(p, off) (*(const uint64_t *)((const char *)(p) + (off)))
#define PTR(p, off) (*(void *const *)((const char *)(p) + (off)))

CUresult cuInit(unsigned int flags) {
	logf_("cuInit flags=%u", flags);
	return flags == 0 ? OK : INVALID_VALUE;
}

CUresult cuDeviceGetCount(int *n) {
	*n = 1;
	return OK;
}

CUresult cuDeviceGet(int *dev, int ordinal) {
	if (ordinal != 0) return 101;
	*dev = 7; // not the ordinal
	return OK;
}

CUresult cuDeviceGetName(char *name, int len, int dev) {
	logf_("cuDeviceGetName len=%d dev=%d", len, dev);
	snprintf(name, (size_t)len, "Fake libcuda");
	return dev == 7 ? OK : 101;
}

CUresult cuDeviceGetUuid_v2(unsigned char *uuid, int dev) {
	for (int i = 0; i < 16; i++) uuid[i] = (unsigned char)(0xa0 + i);
	const char *hex = getenv("VKFLOW_FAKE_CUDA_UUID");
	if (hex != NULL && strlen(hex) == 32) {
		for (int i = 0; i < 16; i++) {
			unsigned int b;
			if (sscanf(hex + 2 * i, "%2x", &b) != 1) return INVALID_VALUE;
			uuid[i] = (unsigned char)b;
		}
	}
	return dev == 7 ? OK : 101;
}

CUresult cuDeviceGetUuid(unsigned char *uuid, int dev) {
	(void)dev;
	memset(uuid, 0xff, 16); // v1: a different value, so the test sees which was called
	return OK;
}

CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev) {
	logf_("cuDevicePrimaryCtxRetain dev=%d", dev);
	*ctx = CTX;
	return OK;
}

CUresult cuDevicePrimaryCtxRelease_v2(int dev) {
	logf_("cuDevicePrimaryCtxRelease_v2 dev=%d depth=%d", dev, depth);
	return OK;
}

CUresult cuCtxPushCurrent_v2(void *ctx) {
	if (ctx != CTX) return INVALID_CONTEXT;
	depth++;
	return OK;
}

CUresult cuCtxPopCurrent_v2(void **ctx) {
	if (depth == 0) return INVALID_CONTEXT;
	depth--;
	*ctx = CTX;
	return OK;
}

#define NEED_CONTEXT(name) \
	if (depth == 0) { \
		logf_("%s WRONG: no current context", name); \
		return INVALID_CONTEXT; \
	}

// validStream reports whether s names a stream of the context: NULL or
// CU_STREAM_LEGACY, CU_STREAM_PER_THREAD, or one cuStreamCreate made.
static int validStream(const char *name, void *s) {
	if (s == NULL || s == (void *)1 || s == (void *)2 || s == STREAM) return 1;
	logf_("%s WRONG: invalid stream %p", name, s);
	return 0;
}

CUresult cuStreamCreate(void **s, unsigned int flags) {
	NEED_CONTEXT("cuStreamCreate");
	logf_("cuStreamCreate flags=%u", flags);
	*s = STREAM;
	return OK;
}

CUresult cuStreamDestroy_v2(void *s) {
	NEED_CONTEXT("cuStreamDestroy_v2");
	logf_("cuStreamDestroy_v2 stream=%p", s);
	return s == STREAM ? OK : INVALID_HANDLE;
}

CUresult cuStreamSynchronize(void *s) {
	NEED_CONTEXT("cuStreamSynchronize");
	logf_("cuStreamSynchronize stream=%p", s);
	return validStream("cuStreamSynchronize", s) ? OK : INVALID_HANDLE;
}

// CUDA_EXTERNAL_MEMORY_HANDLE_DESC: type 0, handle.fd 8, size 24, flags 32,
// reserved 36..100, 104 bytes.
CUresult cuImportExternalMemory(void **out, const void *desc) {
	NEED_CONTEXT("cuImportExternalMemory");
	uint64_t size = U64(desc, 24);
	logf_("cuImportExternalMemory type=%u fd=%d size=%llu flags=%u zero=%d", U32(desc, 0), I32(desc, 8),
		(unsigned long long)size, U32(desc, 32), zero((const char *)desc + 36, 64) && zero((const char *)desc + 12, 12));
	if (size == 12345 * 4096ull) return UNNAMED_IN_GO;
	if (U32(desc, 0) != 1) return INVALID_VALUE;
	memFD = I32(desc, 8);
	memSize = size;
	*out = EXTMEM;
	return OK;
}

// CUDA_EXTERNAL_MEMORY_BUFFER_DESC: offset 0, size 8, flags 16, reserved
// 20..84, 88 bytes.
CUresult cuExternalMemoryGetMappedBuffer(uint64_t *ptr, void *mem, const void *desc) {
	NEED_CONTEXT("cuExternalMemoryGetMappedBuffer");
	logf_("cuExternalMemoryGetMappedBuffer mem=%p offset=%llu size=%llu flags=%u zero=%d", mem,
		(unsigned long long)U64(desc, 0), (unsigned long long)U64(desc, 8), U32(desc, 16),
		zero((const char *)desc + 20, 64));
	if (mem != EXTMEM) return INVALID_HANDLE;
	*ptr = 0x7f0000000000ull + U64(desc, 0);
	if (getenv("VKFLOW_FAKE_CUDA_MAP") != NULL) {
		mapBase = mmap(NULL, memSize, PROT_READ | PROT_WRITE, MAP_SHARED, memFD, 0);
		if (mapBase == MAP_FAILED) {
			logf_("cuExternalMemoryGetMappedBuffer WRONG: mmap of fd %d failed", memFD);
			mapBase = NULL;
			return INVALID_VALUE;
		}
		*ptr = (uint64_t)(uintptr_t)mapBase + U64(desc, 0);
	}
	mapPtr = *ptr;
	return OK;
}

CUresult cuMemFree_v2(uint64_t ptr) {
	NEED_CONTEXT("cuMemFree_v2");
	logf_("cuMemFree_v2 ptr=%#llx", (unsigned long long)ptr);
	if (ptr != mapPtr) return INVALID_VALUE;
	if (mapBase != NULL) munmap(mapBase, memSize);
	mapBase = NULL;
	mapPtr = 0;
	return OK;
}

CUresult cuDestroyExternalMemory(void *mem) {
	NEED_CONTEXT("cuDestroyExternalMemory");
	logf_("cuDestroyExternalMemory mem=%p", mem);
	if (mem != EXTMEM) return INVALID_HANDLE;
	close(memFD);
	return OK;
}

// CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC: type 0, handle.fd 8, flags 24,
// reserved 28..92, 96 bytes.
CUresult cuImportExternalSemaphore(void **out, const void *desc) {
	NEED_CONTEXT("cuImportExternalSemaphore");
	logf_("cuImportExternalSemaphore type=%u fd=%d flags=%u zero=%d", U32(desc, 0), I32(desc, 8), U32(desc, 24),
		zero((const char *)desc + 28, 64) && zero((const char *)desc + 12, 12));
	if (U32(desc, 0) != 9) return INVALID_VALUE;
	semFD = I32(desc, 8);
	*out = EXTSEM;
	return OK;
}

CUresult cuDestroyExternalSemaphore(void *sem) {
	NEED_CONTEXT("cuDestroyExternalSemaphore");
	logf_("cuDestroyExternalSemaphore sem=%p", sem);
	if (sem != EXTSEM) return INVALID_HANDLE;
	close(semFD);
	return OK;
}

// Wait and signal params: params.fence.value 0, params.nvSciSync 8,
// params.keyedMutex 16, flags 72, reserved 76..140, 144 bytes.
static CUresult semOp(const char *name, void *const *sems, const void *params, unsigned int n, void *stream) {
	NEED_CONTEXT(name);
	logf_("%s n=%u sem=%p value=%llu stream=%p flags=%u zero=%d", name, n, sems[0],
		(unsigned long long)U64(params, 0), stream, U32(params, 72),
		zero((const char *)params + 8, 64) && zero((const char *)params + 76, 68));
	if (!validStream(name, stream)) return INVALID_HANDLE;
	return sems[0] == EXTSEM && n == 1 ? OK : INVALID_HANDLE;
}

CUresult cuWaitExternalSemaphoresAsync(void *const *sems, const void *params, unsigned int n, void *stream) {
	return semOp("cuWaitExternalSemaphoresAsync", sems, params, n, stream);
}

CUresult cuSignalExternalSemaphoresAsync(void *const *sems, const void *params, unsigned int n, void *stream) {
	return semOp("cuSignalExternalSemaphoresAsync", sems, params, n, stream);
}

CUresult cuGetErrorName(CUresult r, const char **name) {
	if (r == UNNAMED_IN_GO) {
		*name = "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
		return OK;
	}
	*name = NULL;
	return INVALID_VALUE;
}

// Traps: the unversioned (CUDA 3.x ABI) symbols.
#define TRAP(name) \
	CUresult name(void) { \
		logf_("%s WRONG: unversioned symbol", #name); \
		return UNKNOWN; \
	}
TRAP(cuDevicePrimaryCtxRelease)
TRAP(cuCtxPushCurrent)
TRAP(cuCtxPopCurrent)
TRAP(cuStreamDestroy)
TRAP(cuMemFree)
