// Package vk's C side: a table of Vulkan function pointers filled once by
// dlopen/dlsym, and small wrappers that build Vulkan structs on the C stack
// from plain arguments, so that no Go pointer is ever stored in C memory.
#ifndef VKFLOW_VK_H
#define VKFLOW_VK_H

#define VK_NO_PROTOTYPES 1
#include <stdint.h>
#include <stddef.h>
// The Khronos headers vendored in include/ (see include/LICENSE.md), found
// through the -I in loader.go, so the build needs no Vulkan -dev package.
#include <vulkan/vulkan.h>

// Results that carry a value come back in a small struct instead of through
// an output pointer, so that nothing escapes to the Go heap.
typedef struct { uint64_t handle; VkResult result; } vkflowHandle;
typedef struct { void *ptr; VkResult result; } vkflowPtr;
typedef struct { uint64_t value; VkResult result; } vkflowU64;

// Loads libvulkan.so.1 and every core function. Returns NULL on success,
// or the name of what is missing (a static string).
const char *vkflowLoad(void);
const char *vkflowDlerror(void);

// Global.
VkResult vkflowEnumerateInstanceLayers(uint32_t *count, VkLayerProperties *props);
VkResult vkflowEnumerateInstanceExtensions(uint32_t *count, VkExtensionProperties *props);

// Instance.
typedef struct {
	const char *appName;
	uint32_t apiVersion;
	uint32_t layerCount;
	const char *const *layers;
	uint32_t extensionCount;
	const char *const *extensions;
	int syncValidation;
	int debugMessenger;    // create a VK_EXT_debug_utils messenger
	uintptr_t debugToken; // passed to the Go callback
	uint32_t debugSeverities;
} vkflowInstanceInfo;
typedef struct {
	VkInstance instance;
	uint64_t messenger;
	PFN_vkDestroyDebugUtilsMessengerEXT destroyMessenger;
	VkResult result;
	int failedStep; // 0 instance, 1 messenger
} vkflowInstanceResult;
vkflowInstanceResult vkflowCreateInstance(vkflowInstanceInfo info);
void vkflowDestroyInstance(VkInstance inst, uint64_t messenger, PFN_vkDestroyDebugUtilsMessengerEXT destroyMessenger);
VkResult vkflowEnumeratePhysicalDevices(VkInstance inst, uint32_t *count, VkPhysicalDevice *out);

typedef struct {
	VkPhysicalDeviceProperties props;
	VkPhysicalDeviceMemoryProperties memory;
	VkBool32 shaderFloat64, shaderInt64, shaderInt16;
	VkBool32 storageBuffer16BitAccess;
	VkBool32 timelineSemaphore, shaderFloat16, shaderInt8, storageBuffer8BitAccess, bufferDeviceAddress, hostQueryReset;
	VkBool32 synchronization2;
	uint64_t maxTimelineSemaphoreValueDifference;
	uint64_t maxMemoryAllocationSize; // VkPhysicalDeviceMaintenance3Properties
	uint32_t subgroupSize, subgroupSupportedStages, subgroupSupportedOperations; // VkPhysicalDeviceVulkan11Properties
	uint8_t deviceUUID[VK_UUID_SIZE];
	uint8_t driverUUID[VK_UUID_SIZE];
	char driverName[VK_MAX_DRIVER_NAME_SIZE];
	char driverInfo[VK_MAX_DRIVER_INFO_SIZE];
} vkflowDeviceInfo;
void vkflowDescribePhysicalDevice(VkPhysicalDevice pd, vkflowDeviceInfo *out);
void vkflowQueueFamilies(VkPhysicalDevice pd, uint32_t *count, VkQueueFamilyProperties *out);
VkResult vkflowEnumerateDeviceExtensions(VkPhysicalDevice pd, uint32_t *count, VkExtensionProperties *props);

// Device.
typedef struct {
	uint32_t family;
	uint32_t count;
} vkflowQueueRequest;
typedef struct {
	uint32_t queueRequestCount;
	const vkflowQueueRequest *queueRequests;
	uint32_t extensionCount;
	const char *const *extensions;
	VkBool32 shaderFloat64, shaderInt64, shaderInt16;
	VkBool32 storageBuffer16BitAccess;
	VkBool32 timelineSemaphore, shaderFloat16, shaderInt8, storageBuffer8BitAccess, bufferDeviceAddress, hostQueryReset;
	VkBool32 synchronization2;
	int hasVulkan13;
} vkflowDeviceCreate;
typedef struct { VkDevice device; VkResult result; } vkflowDeviceResult;
vkflowDeviceResult vkflowCreateDevice(VkPhysicalDevice pd, vkflowDeviceCreate info);
void vkflowDestroyDevice(VkDevice dev);
VkQueue vkflowGetQueue(VkDevice dev, uint32_t family, uint32_t index);
VkResult vkflowDeviceWaitIdle(VkDevice dev);

// Buffers and memory.
vkflowHandle vkflowCreateBuffer(VkDevice dev, uint64_t size, uint32_t usage, uint32_t nFamilies, const uint32_t *families, uint32_t externalTypes);
uint64_t vkflowHostImportAlignment(VkPhysicalDevice pd);
VkResult vkflowHostPointerTypeBits(VkDevice dev, void *ptr, uint32_t *bits);
int vkflowMonotonicCalibrateable(VkInstance inst, VkPhysicalDevice pd);
VkResult vkflowCalibratedTimestamps(VkDevice dev, uint64_t *gpu, uint64_t *host, uint64_t *deviation);
uint64_t vkflowMonotonicNs(void);
void vkflowDestroyBuffer(VkDevice dev, uint64_t buf);
void vkflowBufferRequirements(VkDevice dev, uint64_t buf, VkMemoryRequirements *out);
vkflowHandle vkflowAllocateMemory(VkDevice dev, uint64_t size, uint32_t typeIndex, void *hostPointer);
void vkflowFreeMemory(VkDevice dev, uint64_t mem);
VkResult vkflowBindBufferMemory(VkDevice dev, uint64_t buf, uint64_t mem, uint64_t offset);
vkflowPtr vkflowMapMemory(VkDevice dev, uint64_t mem, uint64_t offset, uint64_t size);
void vkflowUnmapMemory(VkDevice dev, uint64_t mem);
VkResult vkflowFlushMemory(VkDevice dev, uint64_t mem, uint64_t offset, uint64_t size);
VkResult vkflowInvalidateMemory(VkDevice dev, uint64_t mem, uint64_t offset, uint64_t size);

// Shaders, descriptors, pipelines.
vkflowHandle vkflowCreateShaderModule(VkDevice dev, const uint32_t *code, size_t size);
void vkflowDestroyShaderModule(VkDevice dev, uint64_t m);
typedef struct {
	uint32_t binding;
	uint32_t type;
	uint32_t count;
	uint32_t stages;
} vkflowLayoutBinding;
vkflowHandle vkflowCreateDescriptorSetLayout(VkDevice dev, uint32_t n, const vkflowLayoutBinding *b);
void vkflowDestroyDescriptorSetLayout(VkDevice dev, uint64_t l);
typedef struct { uint32_t type; uint32_t count; } vkflowPoolSize;
vkflowHandle vkflowCreateDescriptorPool(VkDevice dev, uint32_t maxSets, uint32_t n, const vkflowPoolSize *sizes, int freeable);
void vkflowDestroyDescriptorPool(VkDevice dev, uint64_t p);
vkflowHandle vkflowAllocateDescriptorSet(VkDevice dev, uint64_t pool, uint64_t layout);
typedef struct {
	uint64_t buffer;
	uint64_t offset;
	uint64_t range;
	uint32_t binding;
	uint32_t type;
} vkflowBufferWrite;
void vkflowWriteDescriptorBuffers(VkDevice dev, uint64_t set, uint32_t n, const vkflowBufferWrite *w);
vkflowHandle vkflowCreatePipelineLayout(VkDevice dev, uint32_t nSets, const uint64_t *sets, uint32_t pushSize);
void vkflowDestroyPipelineLayout(VkDevice dev, uint64_t l);
vkflowHandle vkflowCreatePipelineCache(VkDevice dev, const void *data, size_t size);
void vkflowDestroyPipelineCache(VkDevice dev, uint64_t c);
VkResult vkflowPipelineCacheData(VkDevice dev, uint64_t c, size_t *size, void *data);
typedef struct { uint32_t id; uint32_t offset; uint32_t size; } vkflowSpecEntry;
vkflowHandle vkflowCreateComputePipeline(VkDevice dev, uint64_t cache, uint64_t layout, uint64_t module,
	const char *entry, uint32_t nSpec, const vkflowSpecEntry *spec, const void *specData, size_t specSize);
void vkflowDestroyPipeline(VkDevice dev, uint64_t p);

// Commands.
vkflowHandle vkflowCreateCommandPool(VkDevice dev, uint32_t family, uint32_t flags);
void vkflowDestroyCommandPool(VkDevice dev, uint64_t p);
typedef struct { VkCommandBuffer cmd; VkResult result; } vkflowCmdResult;
vkflowCmdResult vkflowAllocateCommandBuffer(VkDevice dev, uint64_t pool);
void vkflowFreeCommandBuffer(VkDevice dev, uint64_t pool, VkCommandBuffer cmd);
VkResult vkflowBeginCommandBuffer(VkCommandBuffer cmd, uint32_t flags);
VkResult vkflowEndCommandBuffer(VkCommandBuffer cmd);
VkResult vkflowResetCommandBuffer(VkCommandBuffer cmd);
typedef struct {
	uint64_t buffer;
	uint64_t offset;
	uint64_t size;
	uint32_t srcAccess;
	uint32_t dstAccess;
	uint32_t srcFamily;
	uint32_t dstFamily;
} vkflowBufferBarrier;
void vkflowCmdPipelineBarrier(VkCommandBuffer cmd, uint32_t srcStages, uint32_t dstStages,
	uint32_t memSrcAccess, uint32_t memDstAccess, uint32_t nBuf, const vkflowBufferBarrier *bufs);
void vkflowCmdBindComputePipeline(VkCommandBuffer cmd, uint64_t pipeline);
void vkflowCmdBindDescriptorSet(VkCommandBuffer cmd, uint64_t layout, uint64_t set);
void vkflowCmdPushConstants(VkCommandBuffer cmd, uint64_t layout, uint32_t size, const void *data);
void vkflowCmdDispatch(VkCommandBuffer cmd, uint32_t x, uint32_t y, uint32_t z);
void vkflowCmdDispatchBase(VkCommandBuffer cmd, uint32_t bx, uint32_t by, uint32_t bz, uint32_t x, uint32_t y, uint32_t z);
typedef struct { uint64_t src; uint64_t dst; uint64_t size; } vkflowCopyRegion;
void vkflowCmdCopyBuffer(VkCommandBuffer cmd, uint64_t src, uint64_t dst, uint32_t n, const vkflowCopyRegion *r);
void vkflowCmdFillBuffer(VkCommandBuffer cmd, uint64_t buf, uint64_t offset, uint64_t size, uint32_t data);
vkflowHandle vkflowCreateTimestampPool(VkDevice dev, uint32_t count);
void vkflowDestroyQueryPool(VkDevice dev, uint64_t p);
void vkflowCmdResetQueryPool(VkCommandBuffer cmd, uint64_t pool, uint32_t first, uint32_t count);
void vkflowCmdWriteTimestamp(VkCommandBuffer cmd, uint32_t stage, uint64_t pool, uint32_t query);
VkResult vkflowQueryResults64(VkDevice dev, uint64_t pool, uint32_t first, uint32_t count, uint64_t *out);

// Timeline semaphores and submission.
vkflowHandle vkflowCreateTimeline(VkDevice dev, uint64_t initial);
void vkflowDestroySemaphore(VkDevice dev, uint64_t s);
vkflowU64 vkflowSemaphoreValue(VkDevice dev, uint64_t s);
VkResult vkflowWaitSemaphores(VkDevice dev, uint32_t n, const uint64_t *sems, const uint64_t *values, int any, uint64_t timeout);
VkResult vkflowWaitSemaphore(VkDevice dev, uint64_t sem, uint64_t value, uint64_t timeout);
vkflowU64 vkflowWaitSemaphoreSpin(VkDevice dev, uint64_t sem, uint64_t value, uint64_t spin, uint64_t timeout);
VkResult vkflowSignalSemaphore(VkDevice dev, uint64_t sem, uint64_t value);
VkResult vkflowQueueSubmit(VkQueue q, VkCommandBuffer begin, VkCommandBuffer pre, VkCommandBuffer cmd, VkCommandBuffer end,
	uint32_t nWait, const uint64_t *waitSems, const uint64_t *waitValues, const uint32_t *waitStages,
	uint32_t nSignal, const uint64_t *signalSems, const uint64_t *signalValues);
VkResult vkflowQueueSubmit1(VkQueue q, VkCommandBuffer pre, VkCommandBuffer cmd, uint64_t signalSem, uint64_t signalValue);

// External memory and semaphores (external.go). The KHR device functions
// come from vkGetDeviceProcAddr once the device exists; each wrapper takes
// the one pointer it calls.
typedef struct { int fd; VkResult result; } vkflowFd;
typedef struct {
	uint32_t features;   // VkExternalMemoryFeatureFlags / VkExternalSemaphoreFeatureFlags
	uint32_t exportFrom; // exportFromImportedHandleTypes
	uint32_t compatible; // compatibleHandleTypes
} vkflowExternalProps;
vkflowExternalProps vkflowExternalBufferProperties(VkPhysicalDevice pd, uint32_t usage, uint32_t handleType);
vkflowExternalProps vkflowExternalTimelineProperties(VkPhysicalDevice pd, uint32_t handleType);
typedef struct {
	PFN_vkGetMemoryFdKHR getMemoryFd;
	PFN_vkGetSemaphoreFdKHR getSemaphoreFd;
	PFN_vkImportSemaphoreFdKHR importSemaphoreFd;
} vkflowExternalFuncs;
vkflowExternalFuncs vkflowLoadExternalFuncs(VkDevice dev, int memoryFd, int semaphoreFd);
typedef struct {
	uint64_t size;
	uint32_t typeIndex;
	uint32_t exportTypes; // VkExportMemoryAllocateInfo::handleTypes; 0 for none
	uint32_t importType;  // VkImportMemoryFdInfoKHR::handleType; 0 for no import
	int importFd;
	uint64_t dedicated;   // VkMemoryDedicatedAllocateInfo::buffer; 0 for none
} vkflowExternalAlloc;
vkflowHandle vkflowAllocateExternalMemory(VkDevice dev, vkflowExternalAlloc info);
vkflowFd vkflowGetMemoryFd(PFN_vkGetMemoryFdKHR f, VkDevice dev, uint64_t mem, uint32_t handleType);
vkflowHandle vkflowCreateExportableTimeline(VkDevice dev, uint64_t initial, uint32_t handleTypes);
vkflowFd vkflowGetSemaphoreFd(PFN_vkGetSemaphoreFdKHR f, VkDevice dev, uint64_t sem, uint32_t handleType);
VkResult vkflowImportSemaphoreFd(PFN_vkImportSemaphoreFdKHR f, VkDevice dev, uint64_t sem, uint32_t handleType, int fd);


#endif
