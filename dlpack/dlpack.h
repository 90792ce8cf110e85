// The DLPack structures (dlpack.h version 1.3), declared here from the
// published layout so that vkflow builds without a DLPack header. Field
// order, types and sizes follow the standard; dlpack_test checks offsets.
#ifndef VKFLOW_DLPACK_H
#define VKFLOW_DLPACK_H

#include <stdint.h>
#include "vkflow_vulkan.h"

typedef struct {
	int32_t device_type;
	int32_t device_id;
} DLDevice;

typedef struct {
	uint8_t code;
	uint8_t bits;
	uint16_t lanes;
} DLDataType;

typedef struct {
	void *data;
	DLDevice device;
	int32_t ndim;
	DLDataType dtype;
	int64_t *shape;
	int64_t *strides;
	uint64_t byte_offset;
} DLTensor;

typedef struct DLManagedTensor {
	DLTensor dl_tensor;
	void *manager_ctx;
	void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;

typedef struct {
	uint32_t major;
	uint32_t minor;
} DLPackVersion;

typedef struct DLManagedTensorVersioned {
	DLPackVersion version;
	void *manager_ctx;
	void (*deleter)(struct DLManagedTensorVersioned *self);
	uint64_t flags;
	DLTensor dl_tensor;
} DLManagedTensorVersioned;

// vkflow's deleters: they hand the struct back to Go, from any thread.
void vkflowSetDeleter(void *managed, int versioned);
// Calls a managed tensor's deleter, if it has one.
void vkflowCallDeleter(void *managed, int versioned);

// Test support: a deleter that counts its calls and frees the struct.
void vkflowSetCountingDeleter(void *managed, int versioned);
int64_t vkflowCountingDeletes(void);
// A counting deleter that frees nothing, for reusing one struct (benchmarks).
void vkflowSetKeepingDeleter(void *managed, int versioned);

#endif
