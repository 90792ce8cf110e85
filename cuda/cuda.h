// Package cuda's C side: the few CUDA driver API types this package needs,
// declared here with the ABI layout of cuda.h (CUDA 12 and 13; these structs
// have not changed since CUDA 11.2), a table of function pointers filled once
// by dlopen/dlsym of libcuda.so.1, and small wrappers that take plain values,
// build the CUDA structs on the C stack and return {value, CUresult}, so that
// no Go pointer is ever stored in C memory. Nothing links libcuda at build
// time and no CUDA header is read.
#ifndef VKFLOW_CUDA_H
#define VKFLOW_CUDA_H

#include <stddef.h>
#include <stdint.h>

// CUresult is an enum in cuda.h; every value is non-negative and fits an int.
typedef enum cudaError_enum {
	CUDA_SUCCESS = 0,
	CUDA_ERROR_INVALID_VALUE = 1,
	CUDA_ERROR_NOT_FOUND = 500,
	CUDA_ERROR_UNKNOWN = 999,
} CUresult;

typedef int CUdevice;                   // CUdevice_v1
typedef unsigned long long CUdeviceptr; // CUdeviceptr_v2 (64-bit platforms)
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUextMemory_st *CUexternalMemory;
typedef struct CUextSemaphore_st *CUexternalSemaphore;
typedef struct CUuuid_st {
	char bytes[16];
} CUuuid;

typedef enum CUexternalMemoryHandleType_enum {
	CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD = 1,
} CUexternalMemoryHandleType;

typedef enum CUexternalSemaphoreHandleType_enum {
	CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD = 9,
} CUexternalSemaphoreHandleType;

#define CUDA_EXTERNAL_MEMORY_DEDICATED 0x1
#define CU_STREAM_NON_BLOCKING 0x1

// Layouts on LP64 (x86-64 and aarch64 Linux), each checked below:
//
// CUDA_EXTERNAL_MEMORY_HANDLE_DESC, 104 bytes: type 0 (4, then 4 padding:
// the union holds pointers), handle 8 (16: the win32 pair of pointers is the
// largest member), size 24, flags 32, reserved[16] 36..100, tail padding to
// a multiple of 8.
typedef struct CUDA_EXTERNAL_MEMORY_HANDLE_DESC_st {
	CUexternalMemoryHandleType type;
	union {
		int fd;
		struct {
			void *handle;
			const void *name;
		} win32;
		const void *nvSciBufObject;
	} handle;
	unsigned long long size;
	unsigned int flags;
	unsigned int reserved[16];
} CUDA_EXTERNAL_MEMORY_HANDLE_DESC;

// CUDA_EXTERNAL_MEMORY_BUFFER_DESC, 88 bytes: offset 0, size 8, flags 16,
// reserved[16] 20..84, tail padding to 88.
typedef struct CUDA_EXTERNAL_MEMORY_BUFFER_DESC_st {
	unsigned long long offset;
	unsigned long long size;
	unsigned int flags;
	unsigned int reserved[16];
} CUDA_EXTERNAL_MEMORY_BUFFER_DESC;

// CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC, 96 bytes: type 0, handle 8 (16),
// flags 24, reserved[16] 28..92, tail padding to 96.
typedef struct CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC_st {
	CUexternalSemaphoreHandleType type;
	union {
		int fd;
		struct {
			void *handle;
			const void *name;
		} win32;
		const void *nvSciSyncObj;
	} handle;
	unsigned int flags;
	unsigned int reserved[16];
} CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC;

// CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS, 144 bytes: params 0 (72: fence.value
// 0, nvSciSync 8, keyedMutex.key 16, reserved[12] 24..72), flags 72,
// reserved[16] 76..140, tail padding to 144.
typedef struct CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS_st {
	struct {
		struct {
			unsigned long long value;
		} fence;
		union {
			void *fence;
			unsigned long long reserved;
		} nvSciSync;
		struct {
			unsigned long long key;
		} keyedMutex;
		unsigned int reserved[12];
	} params;
	unsigned int flags;
	unsigned int reserved[16];
} CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS;

// CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS, 144 bytes: params 0 (72: fence.value
// 0, nvSciSync 8, keyedMutex 16 (key 16, timeoutMs 24, 4 padding),
// reserved[10] 32..72), flags 72, reserved[16] 76..140, tail padding to 144.
typedef struct CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS_st {
	struct {
		struct {
			unsigned long long value;
		} fence;
		union {
			void *fence;
			unsigned long long reserved;
		} nvSciSync;
		struct {
			unsigned long long key;
			unsigned int timeoutMs;
		} keyedMutex;
		unsigned int reserved[10];
	} params;
	unsigned int flags;
	unsigned int reserved[16];
} CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS;

// Results that carry a value come back in a small struct instead of through
// an output pointer, so that nothing escapes to the Go heap.
typedef struct { uintptr_t handle; CUresult result; } vkfCuHandle;
typedef struct { uint64_t value; CUresult result; } vkfCuU64;
typedef struct { int value; CUresult result; } vkfCuInt;
typedef struct { CUuuid uuid; CUresult result; } vkfCuUUID;
typedef struct { char name[256]; CUresult result; } vkfCuName;

// Loads libcuda.so.1 and every function. Returns NULL on success, or the
// name of what is missing (a static string): "libcuda.so.1" when dlopen
// failed (vkfCuDlerror says why), else the missing function.
const char *vkfCuLoad(void);
const char *vkfCuDlerror(void);

CUresult vkfCuInit(unsigned int flags);
vkfCuInt vkfCuDeviceGetCount(void);
vkfCuInt vkfCuDeviceGet(int ordinal);
vkfCuName vkfCuDeviceGetName(CUdevice dev);
vkfCuUUID vkfCuDeviceGetUuid(CUdevice dev);
vkfCuHandle vkfCuPrimaryCtxRetain(CUdevice dev);
CUresult vkfCuPrimaryCtxRelease(CUdevice dev);
CUresult vkfCuCtxPush(uintptr_t ctx);
vkfCuHandle vkfCuCtxPop(void);
vkfCuHandle vkfCuStreamCreate(unsigned int flags);
CUresult vkfCuStreamDestroy(uintptr_t stream);
CUresult vkfCuStreamSynchronize(uintptr_t stream);
vkfCuHandle vkfCuImportMemoryFD(int fd, uint64_t size, int dedicated);
vkfCuU64 vkfCuMappedBuffer(uintptr_t extMem, uint64_t offset, uint64_t size);
CUresult vkfCuMemFree(uint64_t ptr);
CUresult vkfCuDestroyExternalMemory(uintptr_t extMem);
vkfCuHandle vkfCuImportTimelineFD(int fd);
CUresult vkfCuDestroyExternalSemaphore(uintptr_t sem);
CUresult vkfCuWaitTimeline(uintptr_t sem, uint64_t value, uintptr_t stream);
CUresult vkfCuSignalTimeline(uintptr_t sem, uint64_t value, uintptr_t stream);
// Returns the CUresult's name from cuGetErrorName, or NULL.
const char *vkfCuErrorName(CUresult r);

#endif
