#include <dlfcn.h>
#include <string.h>
#include <sched.h>
#include <time.h>
#include "vk.h"
#include "_cgo_export.h"

// Core functions, resolved once with dlsym from libvulkan.so.1. The loader
// exports every core entry point as a trampoline that dispatches through the
// handle's own table, so one table serves every instance and device, with or
// without layers.
#define VKFLOW_CORE(X) \
	X(vkGetInstanceProcAddr) \
	X(vkEnumerateInstanceLayerProperties) \
	X(vkEnumerateInstanceExtensionProperties) \
	X(vkCreateInstance) \
	X(vkDestroyInstance) \
	X(vkEnumeratePhysicalDevices) \
	X(vkGetPhysicalDeviceProperties) \
	X(vkGetPhysicalDeviceProperties2) \
	X(vkGetPhysicalDeviceFeatures2) \
	X(vkGetPhysicalDeviceMemoryProperties) \
	X(vkGetPhysicalDeviceQueueFamilyProperties) \
	X(vkEnumerateDeviceExtensionProperties) \
	X(vkCreateDevice) \
	X(vkGetDeviceProcAddr) \
	X(vkDestroyDevice) \
	X(vkGetDeviceQueue) \
	X(vkDeviceWaitIdle) \
	X(vkQueueSubmit) \
	X(vkCreateBuffer) \
	X(vkDestroyBuffer) \
	X(vkGetBufferMemoryRequirements) \
	X(vkAllocateMemory) \
	X(vkFreeMemory) \
	X(vkBindBufferMemory) \
	X(vkMapMemory) \
	X(vkUnmapMemory) \
	X(vkFlushMappedMemoryRanges) \
	X(vkInvalidateMappedMemoryRanges) \
	X(vkCreateShaderModule) \
	X(vkDestroyShaderModule) \
	X(vkCreateDescriptorSetLayout) \
	X(vkDestroyDescriptorSetLayout) \
	X(vkCreateDescriptorPool) \
	X(vkDestroyDescriptorPool) \
	X(vkAllocateDescriptorSets) \
	X(vkUpdateDescriptorSets) \
	X(vkCreatePipelineLayout) \
	X(vkDestroyPipelineLayout) \
	X(vkCreatePipelineCache) \
	X(vkDestroyPipelineCache) \
	X(vkGetPipelineCacheData) \
	X(vkCreateComputePipelines) \
	X(vkDestroyPipeline) \
	X(vkCreateCommandPool) \
	X(vkDestroyCommandPool) \
	X(vkAllocateCommandBuffers) \
	X(vkFreeCommandBuffers) \
	X(vkBeginCommandBuffer) \
	X(vkEndCommandBuffer) \
	X(vkResetCommandBuffer) \
	X(vkCmdPipelineBarrier) \
	X(vkCmdBindPipeline) \
	X(vkCmdBindDescriptorSets) \
	X(vkCmdPushConstants) \
	X(vkCmdDispatch) \
	X(vkCmdDispatchBase) \
	X(vkCmdCopyBuffer) \
	X(vkCmdFillBuffer) \
	X(vkCreateQueryPool) \
	X(vkDestroyQueryPool) \
	X(vkCmdResetQueryPool) \
	X(vkCmdWriteTimestamp) \
	X(vkGetQueryPoolResults) \
	X(vkCreateSemaphore) \
	X(vkDestroySemaphore) \
	X(vkGetSemaphoreCounterValue) \
	X(vkWaitSemaphores) \
	X(vkSignalSemaphore) \
	X(vkGetPhysicalDeviceExternalBufferProperties) \
	X(vkGetPhysicalDeviceExternalSemaphoreProperties)

#define X(name) PFN_##name name;
static struct { VKFLOW_CORE(X) } vkf;
#undef X

static const char *loadError;

const char *vkflowLoad(void) {
	void *lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		loadError = dlerror();
		return "libvulkan.so.1";
	}
#define X(name) \
	vkf.name = (PFN_##name)dlsym(lib, #name); \
	if (vkf.name == NULL) return #name;
	VKFLOW_CORE(X)
#undef X
	return NULL;
}

const char *vkflowDlerror(void) { return loadError; }

VkResult vkflowEnumerateInstanceLayers(uint32_t *count, VkLayerProperties *props) {
	return vkf.vkEnumerateInstanceLayerProperties(count, props);
}

VkResult vkflowEnumerateInstanceExtensions(uint32_t *count, VkExtensionProperties *props) {
	return vkf.vkEnumerateInstanceExtensionProperties(NULL, count, props);
}

static VKAPI_ATTR VkBool32 VKAPI_CALL vkflowDebugCallback(
	VkDebugUtilsMessageSeverityFlagBitsEXT severity,
	VkDebugUtilsMessageTypeFlagsEXT types,
	const VkDebugUtilsMessengerCallbackDataEXT *data,
	void *user) {
	const char *id = data->pMessageIdName ? data->pMessageIdName : "";
	const char *msg = data->pMessage ? data->pMessage : "";
	vkflowGoDebug((uintptr_t)user, (uint32_t)severity, (uint32_t)types, (char *)id, (char *)msg);
	return VK_FALSE;
}

vkflowInstanceResult vkflowCreateInstance(vkflowInstanceInfo info) {
	vkflowInstanceResult r;
	memset(&r, 0, sizeof r);
	VkApplicationInfo app = {
		.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
		.pApplicationName = info.appName,
		.pEngineName = "vkflow",
		.apiVersion = info.apiVersion,
	};
	VkDebugUtilsMessengerCreateInfoEXT dbg = {
		.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
		.messageSeverity = info.debugSeverities,
		.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
			VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
			VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
		.pfnUserCallback = vkflowDebugCallback,
		.pUserData = (void *)info.debugToken,
	};
	VkValidationFeatureEnableEXT enables[] = {VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
	VkValidationFeaturesEXT features = {
		.sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT,
		.enabledValidationFeatureCount = 1,
		.pEnabledValidationFeatures = enables,
	};
	const void *next = NULL;
	if (info.debugMessenger) {
		dbg.pNext = next;
		next = &dbg;
	}
	if (info.syncValidation) {
		features.pNext = next;
		next = &features;
	}
	VkInstanceCreateInfo ci = {
		.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
		.pNext = next,
		.flags = 0,
		.pApplicationInfo = &app,
		.enabledLayerCount = info.layerCount,
		.ppEnabledLayerNames = info.layers,
		.enabledExtensionCount = info.extensionCount,
		.ppEnabledExtensionNames = info.extensions,
	};
	r.result = vkf.vkCreateInstance(&ci, NULL, &r.instance);
	if (r.result != VK_SUCCESS) {
		r.failedStep = 0;
		return r;
	}
	if (info.debugMessenger) {
		PFN_vkCreateDebugUtilsMessengerEXT create =
			(PFN_vkCreateDebugUtilsMessengerEXT)vkf.vkGetInstanceProcAddr(r.instance, "vkCreateDebugUtilsMessengerEXT");
		r.destroyMessenger =
			(PFN_vkDestroyDebugUtilsMessengerEXT)vkf.vkGetInstanceProcAddr(r.instance, "vkDestroyDebugUtilsMessengerEXT");
		if (create == NULL || r.destroyMessenger == NULL) {
			vkf.vkDestroyInstance(r.instance, NULL);
			r.instance = NULL;
			r.result = VK_ERROR_EXTENSION_NOT_PRESENT;
			r.failedStep = 1;
			return r;
		}
		dbg.pNext = NULL;
		VkDebugUtilsMessengerEXT m = VK_NULL_HANDLE;
		r.result = create(r.instance, &dbg, NULL, &m);
		if (r.result != VK_SUCCESS) {
			vkf.vkDestroyInstance(r.instance, NULL);
			r.instance = NULL;
			r.failedStep = 1;
			return r;
		}
		r.messenger = (uint64_t)m;
	}
	return r;
}

void vkflowDestroyInstance(VkInstance inst, uint64_t messenger, PFN_vkDestroyDebugUtilsMessengerEXT destroyMessenger) {
	if (messenger != 0 && destroyMessenger != NULL) {
		destroyMessenger(inst, (VkDebugUtilsMessengerEXT)messenger, NULL);
	}
	vkf.vkDestroyInstance(inst, NULL);
}

VkResult vkflowEnumeratePhysicalDevices(VkInstance inst, uint32_t *count, VkPhysicalDevice *out) {
	return vkf.vkEnumeratePhysicalDevices(inst, count, out);
}

void vkflowDescribePhysicalDevice(VkPhysicalDevice pd, vkflowDeviceInfo *out) {
	memset(out, 0, sizeof *out);
	vkf.vkGetPhysicalDeviceProperties(pd, &out->props);
	vkf.vkGetPhysicalDeviceMemoryProperties(pd, &out->memory);
	uint32_t api = out->props.apiVersion;
	if (VK_API_VERSION_MAJOR(api) == 1 && VK_API_VERSION_MINOR(api) < 2) {
		// Vulkan 1.0/1.1 devices cannot be described with the 1.2 structs;
		// callers reject them on apiVersion.
		VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
		vkf.vkGetPhysicalDeviceFeatures2(pd, &f2);
		out->shaderFloat64 = f2.features.shaderFloat64;
		out->shaderInt64 = f2.features.shaderInt64;
		out->shaderInt16 = f2.features.shaderInt16;
		return;
	}
	int has13 = VK_API_VERSION_MINOR(api) >= 3 || VK_API_VERSION_MAJOR(api) > 1;
	VkPhysicalDeviceVulkan13Features f13 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
	VkPhysicalDeviceVulkan12Features f12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
	VkPhysicalDeviceVulkan11Features f11 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
	VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
	f2.pNext = &f11;
	f11.pNext = &f12;
	if (has13) f12.pNext = &f13;
	vkf.vkGetPhysicalDeviceFeatures2(pd, &f2);
	out->shaderFloat64 = f2.features.shaderFloat64;
	out->shaderInt64 = f2.features.shaderInt64;
	out->shaderInt16 = f2.features.shaderInt16;
	out->storageBuffer16BitAccess = f11.storageBuffer16BitAccess;
	out->timelineSemaphore = f12.timelineSemaphore;
	out->shaderFloat16 = f12.shaderFloat16;
	out->shaderInt8 = f12.shaderInt8;
	out->storageBuffer8BitAccess = f12.storageBuffer8BitAccess;
	out->bufferDeviceAddress = f12.bufferDeviceAddress;
	out->hostQueryReset = f12.hostQueryReset;
	out->synchronization2 = has13 ? f13.synchronization2 : VK_FALSE;

	VkPhysicalDeviceVulkan12Properties p12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_PROPERTIES};
	VkPhysicalDeviceVulkan11Properties p11 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES};
	VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
	p2.pNext = &p11;
	p11.pNext = &p12;
	vkf.vkGetPhysicalDeviceProperties2(pd, &p2);
	out->maxTimelineSemaphoreValueDifference = p12.maxTimelineSemaphoreValueDifference;
	out->maxMemoryAllocationSize = p11.maxMemoryAllocationSize;
	out->subgroupSize = p11.subgroupSize;
	out->subgroupSupportedStages = p11.subgroupSupportedStages;
	out->subgroupSupportedOperations = p11.subgroupSupportedOperations;
	memcpy(out->deviceUUID, p11.deviceUUID, VK_UUID_SIZE);
	memcpy(out->driverUUID, p11.driverUUID, VK_UUID_SIZE);
	memcpy(out->driverName, p12.driverName, VK_MAX_DRIVER_NAME_SIZE);
	memcpy(out->driverInfo, p12.driverInfo, VK_MAX_DRIVER_INFO_SIZE);
}

void vkflowQueueFamilies(VkPhysicalDevice pd, uint32_t *count, VkQueueFamilyProperties *out) {
	vkf.vkGetPhysicalDeviceQueueFamilyProperties(pd, count, out);
}

VkResult vkflowEnumerateDeviceExtensions(VkPhysicalDevice pd, uint32_t *count, VkExtensionProperties *props) {
	return vkf.vkEnumerateDeviceExtensionProperties(pd, NULL, count, props);
}

vkflowDeviceResult vkflowCreateDevice(VkPhysicalDevice pd, vkflowDeviceCreate info) {
	vkflowDeviceResult r = {0};
	enum { maxFamilies = 32, maxQueues = 64 };
	VkDeviceQueueCreateInfo qci[maxFamilies];
	float priorities[maxQueues];
	for (uint32_t i = 0; i < maxQueues; i++) priorities[i] = 1.0f;
	if (info.queueRequestCount > maxFamilies) {
		r.result = VK_ERROR_INITIALIZATION_FAILED;
		return r;
	}
	for (uint32_t i = 0; i < info.queueRequestCount; i++) {
		uint32_t n = info.queueRequests[i].count;
		if (n > maxQueues) n = maxQueues;
		qci[i] = (VkDeviceQueueCreateInfo){
			.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
			.queueFamilyIndex = info.queueRequests[i].family,
			.queueCount = n,
			.pQueuePriorities = priorities,
		};
	}
	VkPhysicalDeviceVulkan13Features f13 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES,
		.synchronization2 = info.synchronization2,
	};
	VkPhysicalDeviceVulkan12Features f12 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
		.pNext = info.hasVulkan13 ? &f13 : NULL,
		.timelineSemaphore = info.timelineSemaphore,
		.shaderFloat16 = info.shaderFloat16,
		.shaderInt8 = info.shaderInt8,
		.storageBuffer8BitAccess = info.storageBuffer8BitAccess,
		.bufferDeviceAddress = info.bufferDeviceAddress,
		.hostQueryReset = info.hostQueryReset,
	};
	VkPhysicalDeviceVulkan11Features f11 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES,
		.pNext = &f12,
		.storageBuffer16BitAccess = info.storageBuffer16BitAccess,
	};
	VkPhysicalDeviceFeatures2 f2 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
		.pNext = &f11,
	};
	f2.features.shaderFloat64 = info.shaderFloat64;
	f2.features.shaderInt64 = info.shaderInt64;
	f2.features.shaderInt16 = info.shaderInt16;
	VkDeviceCreateInfo ci = {
		.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
		.pNext = &f2,
		.queueCreateInfoCount = info.queueRequestCount,
		.pQueueCreateInfos = qci,
		.enabledExtensionCount = info.extensionCount,
		.ppEnabledExtensionNames = info.extensions,
	};
	r.result = vkf.vkCreateDevice(pd, &ci, NULL, &r.device);
	return r;
}

void vkflowDestroyDevice(VkDevice dev) { vkf.vkDestroyDevice(dev, NULL); }

VkQueue vkflowGetQueue(VkDevice dev, uint32_t family, uint32_t index) {
	VkQueue q = NULL;
	vkf.vkGetDeviceQueue(dev, family, index, &q);
	return q;
}

VkResult vkflowDeviceWaitIdle(VkDevice dev) { return vkf.vkDeviceWaitIdle(dev); }

vkflowHandle vkflowCreateBuffer(VkDevice dev, uint64_t size, uint32_t usage, uint32_t nFamilies, const uint32_t *families, uint32_t externalTypes) {
	VkExternalMemoryBufferCreateInfo ext = {
		.sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO,
		.handleTypes = externalTypes,
	};
	VkBufferCreateInfo ci = {
		.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
		.pNext = externalTypes ? &ext : NULL,
		.size = size,
		.usage = usage,
		.sharingMode = nFamilies > 1 ? VK_SHARING_MODE_CONCURRENT : VK_SHARING_MODE_EXCLUSIVE,
		.queueFamilyIndexCount = nFamilies > 1 ? nFamilies : 0,
		.pQueueFamilyIndices = nFamilies > 1 ? families : NULL,
	};
	VkBuffer b = VK_NULL_HANDLE;
	vkflowHandle r;
	r.result = vkf.vkCreateBuffer(dev, &ci, NULL, &b);
	r.handle = (uint64_t)b;
	return r;
}

void vkflowDestroyBuffer(VkDevice dev, uint64_t buf) { vkf.vkDestroyBuffer(dev, (VkBuffer)buf, NULL); }

void vkflowBufferRequirements(VkDevice dev, uint64_t buf, VkMemoryRequirements *out) {
	vkf.vkGetBufferMemoryRequirements(dev, (VkBuffer)buf, out);
}

vkflowHandle vkflowAllocateMemory(VkDevice dev, uint64_t size, uint32_t typeIndex, void *hostPointer) {
	// With hostPointer, the memory is host memory the application
	// allocated (VK_EXT_external_memory_host).
	VkImportMemoryHostPointerInfoEXT imp = {
		.sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT,
		.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT,
		.pHostPointer = hostPointer,
	};
	VkMemoryAllocateInfo ai = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
		.pNext = hostPointer != NULL ? &imp : NULL,
		.allocationSize = size,
		.memoryTypeIndex = typeIndex,
	};
	VkDeviceMemory m = VK_NULL_HANDLE;
	vkflowHandle r;
	r.result = vkf.vkAllocateMemory(dev, &ai, NULL, &m);
	r.handle = (uint64_t)m;
	return r;
}

uint64_t vkflowHostImportAlignment(VkPhysicalDevice pd) {
	VkPhysicalDeviceExternalMemoryHostPropertiesEXT host = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_MEMORY_HOST_PROPERTIES_EXT,
	};
	VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &host};
	vkf.vkGetPhysicalDeviceProperties2(pd, &p2);
	return host.minImportedHostPointerAlignment;
}

VkResult vkflowHostPointerTypeBits(VkDevice dev, void *ptr, uint32_t *bits) {
	PFN_vkGetMemoryHostPointerPropertiesEXT get =
		(PFN_vkGetMemoryHostPointerPropertiesEXT)vkf.vkGetDeviceProcAddr(dev, "vkGetMemoryHostPointerPropertiesEXT");
	if (get == NULL) return VK_ERROR_EXTENSION_NOT_PRESENT;
	VkMemoryHostPointerPropertiesEXT props = {.sType = VK_STRUCTURE_TYPE_MEMORY_HOST_POINTER_PROPERTIES_EXT};
	VkResult r = get(dev, VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT, ptr, &props);
	*bits = props.memoryTypeBits;
	return r;
}


void vkflowFreeMemory(VkDevice dev, uint64_t mem) { vkf.vkFreeMemory(dev, (VkDeviceMemory)mem, NULL); }

VkResult vkflowBindBufferMemory(VkDevice dev, uint64_t buf, uint64_t mem, uint64_t offset) {
	return vkf.vkBindBufferMemory(dev, (VkBuffer)buf, (VkDeviceMemory)mem, offset);
}

vkflowPtr vkflowMapMemory(VkDevice dev, uint64_t mem, uint64_t offset, uint64_t size) {
	vkflowPtr r = {0};
	r.result = vkf.vkMapMemory(dev, (VkDeviceMemory)mem, offset, size, 0, &r.ptr);
	return r;
}

void vkflowUnmapMemory(VkDevice dev, uint64_t mem) { vkf.vkUnmapMemory(dev, (VkDeviceMemory)mem); }

VkResult vkflowFlushMemory(VkDevice dev, uint64_t mem, uint64_t offset, uint64_t size) {
	VkMappedMemoryRange r = {
		.sType = VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE,
		.memory = (VkDeviceMemory)mem,
		.offset = offset,
		.size = size,
	};
	return vkf.vkFlushMappedMemoryRanges(dev, 1, &r);
}

VkResult vkflowInvalidateMemory(VkDevice dev, uint64_t mem, uint64_t offset, uint64_t size) {
	VkMappedMemoryRange r = {
		.sType = VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE,
		.memory = (VkDeviceMemory)mem,
		.offset = offset,
		.size = size,
	};
	return vkf.vkInvalidateMappedMemoryRanges(dev, 1, &r);
}

vkflowHandle vkflowCreateShaderModule(VkDevice dev, const uint32_t *code, size_t size) {
	VkShaderModuleCreateInfo ci = {
		.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
		.codeSize = size,
		.pCode = code,
	};
	VkShaderModule m = VK_NULL_HANDLE;
	vkflowHandle r;
	r.result = vkf.vkCreateShaderModule(dev, &ci, NULL, &m);
	r.handle = (uint64_t)m;
	return r;
}

void vkflowDestroyShaderModule(VkDevice dev, uint64_t m) { vkf.vkDestroyShaderModule(dev, (VkShaderModule)m, NULL); }

vkflowHandle vkflowCreateDescriptorSetLayout(VkDevice dev, uint32_t n, const vkflowLayoutBinding *b) {
	vkflowHandle r = {0};
	enum { maxBindings = 64 };
	if (n > maxBindings) {
		r.result = VK_ERROR_INITIALIZATION_FAILED;
		return r;
	}
	VkDescriptorSetLayoutBinding lb[maxBindings];
	for (uint32_t i = 0; i < n; i++) {
		lb[i] = (VkDescriptorSetLayoutBinding){
			.binding = b[i].binding,
			.descriptorType = (VkDescriptorType)b[i].type,
			.descriptorCount = b[i].count,
			.stageFlags = b[i].stages,
		};
	}
	VkDescriptorSetLayoutCreateInfo ci = {
		.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
		.bindingCount = n,
		.pBindings = lb,
	};
	VkDescriptorSetLayout l = VK_NULL_HANDLE;
	r.result = vkf.vkCreateDescriptorSetLayout(dev, &ci, NULL, &l);
	r.handle = (uint64_t)l;
	return r;
}

void vkflowDestroyDescriptorSetLayout(VkDevice dev, uint64_t l) {
	vkf.vkDestroyDescriptorSetLayout(dev, (VkDescriptorSetLayout)l, NULL);
}

vkflowHandle vkflowCreateDescriptorPool(VkDevice dev, uint32_t maxSets, uint32_t n, const vkflowPoolSize *sizes, int freeable) {
	vkflowHandle r = {0};
	enum { maxSizes = 16 };
	if (n > maxSizes) {
		r.result = VK_ERROR_INITIALIZATION_FAILED;
		return r;
	}
	VkDescriptorPoolSize ps[maxSizes];
	for (uint32_t i = 0; i < n; i++) {
		ps[i] = (VkDescriptorPoolSize){.type = (VkDescriptorType)sizes[i].type, .descriptorCount = sizes[i].count};
	}
	VkDescriptorPoolCreateInfo ci = {
		.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
		.flags = freeable ? VK_DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET_BIT : 0,
		.maxSets = maxSets,
		.poolSizeCount = n,
		.pPoolSizes = ps,
	};
	VkDescriptorPool p = VK_NULL_HANDLE;
	r.result = vkf.vkCreateDescriptorPool(dev, &ci, NULL, &p);
	r.handle = (uint64_t)p;
	return r;
}

void vkflowDestroyDescriptorPool(VkDevice dev, uint64_t p) {
	vkf.vkDestroyDescriptorPool(dev, (VkDescriptorPool)p, NULL);
}

vkflowHandle vkflowAllocateDescriptorSet(VkDevice dev, uint64_t pool, uint64_t layout) {
	VkDescriptorSetLayout l = (VkDescriptorSetLayout)layout;
	VkDescriptorSetAllocateInfo ai = {
		.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
		.descriptorPool = (VkDescriptorPool)pool,
		.descriptorSetCount = 1,
		.pSetLayouts = &l,
	};
	VkDescriptorSet s = VK_NULL_HANDLE;
	vkflowHandle r;
	r.result = vkf.vkAllocateDescriptorSets(dev, &ai, &s);
	r.handle = (uint64_t)s;
	return r;
}

void vkflowWriteDescriptorBuffers(VkDevice dev, uint64_t set, uint32_t n, const vkflowBufferWrite *w) {
	enum { chunk = 32 };
	VkDescriptorBufferInfo info[chunk];
	VkWriteDescriptorSet writes[chunk];
	while (n > 0) {
		uint32_t k = n < chunk ? n : chunk;
		for (uint32_t i = 0; i < k; i++) {
			info[i] = (VkDescriptorBufferInfo){
				.buffer = (VkBuffer)w[i].buffer,
				.offset = w[i].offset,
				.range = w[i].range,
			};
			writes[i] = (VkWriteDescriptorSet){
				.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
				.dstSet = (VkDescriptorSet)set,
				.dstBinding = w[i].binding,
				.descriptorCount = 1,
				.descriptorType = (VkDescriptorType)w[i].type,
				.pBufferInfo = &info[i],
			};
		}
		vkf.vkUpdateDescriptorSets(dev, k, writes, 0, NULL);
		w += k;
		n -= k;
	}
}

vkflowHandle vkflowCreatePipelineLayout(VkDevice dev, uint32_t nSets, const uint64_t *sets, uint32_t pushSize) {
	vkflowHandle r = {0};
	enum { maxSets = 8 };
	if (nSets > maxSets) {
		r.result = VK_ERROR_INITIALIZATION_FAILED;
		return r;
	}
	VkDescriptorSetLayout ls[maxSets];
	for (uint32_t i = 0; i < nSets; i++) ls[i] = (VkDescriptorSetLayout)sets[i];
	VkPushConstantRange pr = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .offset = 0, .size = pushSize};
	VkPipelineLayoutCreateInfo ci = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
		.setLayoutCount = nSets,
		.pSetLayouts = ls,
		.pushConstantRangeCount = pushSize > 0 ? 1 : 0,
		.pPushConstantRanges = &pr,
	};
	VkPipelineLayout l = VK_NULL_HANDLE;
	r.result = vkf.vkCreatePipelineLayout(dev, &ci, NULL, &l);
	r.handle = (uint64_t)l;
	return r;
}

void vkflowDestroyPipelineLayout(VkDevice dev, uint64_t l) {
	vkf.vkDestroyPipelineLayout(dev, (VkPipelineLayout)l, NULL);
}

vkflowHandle vkflowCreatePipelineCache(VkDevice dev, const void *data, size_t size) {
	VkPipelineCacheCreateInfo ci = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO,
		.initialDataSize = size,
		.pInitialData = data,
	};
	VkPipelineCache c = VK_NULL_HANDLE;
	vkflowHandle r;
	r.result = vkf.vkCreatePipelineCache(dev, &ci, NULL, &c);
	r.handle = (uint64_t)c;
	return r;
}

void vkflowDestroyPipelineCache(VkDevice dev, uint64_t c) {
	vkf.vkDestroyPipelineCache(dev, (VkPipelineCache)c, NULL);
}

VkResult vkflowPipelineCacheData(VkDevice dev, uint64_t c, size_t *size, void *data) {
	return vkf.vkGetPipelineCacheData(dev, (VkPipelineCache)c, size, data);
}

vkflowHandle vkflowCreateComputePipeline(VkDevice dev, uint64_t cache, uint64_t layout, uint64_t module,
	const char *entry, uint32_t nSpec, const vkflowSpecEntry *spec, const void *specData, size_t specSize) {
	vkflowHandle r = {0};
	enum { maxSpec = 64 };
	if (nSpec > maxSpec) {
		r.result = VK_ERROR_INITIALIZATION_FAILED;
		return r;
	}
	VkSpecializationMapEntry entries[maxSpec];
	for (uint32_t i = 0; i < nSpec; i++) {
		entries[i] = (VkSpecializationMapEntry){.constantID = spec[i].id, .offset = spec[i].offset, .size = spec[i].size};
	}
	VkSpecializationInfo si = {
		.mapEntryCount = nSpec,
		.pMapEntries = entries,
		.dataSize = specSize,
		.pData = specData,
	};
	VkComputePipelineCreateInfo ci = {
		.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
		.stage = {
			.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
			.stage = VK_SHADER_STAGE_COMPUTE_BIT,
			.module = (VkShaderModule)module,
			.pName = entry,
			.pSpecializationInfo = nSpec > 0 ? &si : NULL,
		},
		.layout = (VkPipelineLayout)layout,
		// Lets vkCmdDispatchBase split dispatches larger than
		// maxComputeWorkGroupCount while gl_GlobalInvocationID keeps counting.
		.flags = VK_PIPELINE_CREATE_DISPATCH_BASE_BIT,
	};
	VkPipeline p = VK_NULL_HANDLE;
	r.result = vkf.vkCreateComputePipelines(dev, (VkPipelineCache)cache, 1, &ci, NULL, &p);
	r.handle = (uint64_t)p;
	return r;
}

void vkflowDestroyPipeline(VkDevice dev, uint64_t p) { vkf.vkDestroyPipeline(dev, (VkPipeline)p, NULL); }

vkflowHandle vkflowCreateCommandPool(VkDevice dev, uint32_t family, uint32_t flags) {
	VkCommandPoolCreateInfo ci = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
		.flags = flags,
		.queueFamilyIndex = family,
	};
	VkCommandPool p = VK_NULL_HANDLE;
	vkflowHandle r;
	r.result = vkf.vkCreateCommandPool(dev, &ci, NULL, &p);
	r.handle = (uint64_t)p;
	return r;
}

void vkflowDestroyCommandPool(VkDevice dev, uint64_t p) { vkf.vkDestroyCommandPool(dev, (VkCommandPool)p, NULL); }

vkflowCmdResult vkflowAllocateCommandBuffer(VkDevice dev, uint64_t pool) {
	VkCommandBufferAllocateInfo ai = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
		.commandPool = (VkCommandPool)pool,
		.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
		.commandBufferCount = 1,
	};
	vkflowCmdResult r = {0};
	r.result = vkf.vkAllocateCommandBuffers(dev, &ai, &r.cmd);
	return r;
}

void vkflowFreeCommandBuffer(VkDevice dev, uint64_t pool, VkCommandBuffer cmd) {
	vkf.vkFreeCommandBuffers(dev, (VkCommandPool)pool, 1, &cmd);
}

VkResult vkflowBeginCommandBuffer(VkCommandBuffer cmd, uint32_t flags) {
	VkCommandBufferBeginInfo bi = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
		.flags = flags,
	};
	return vkf.vkBeginCommandBuffer(cmd, &bi);
}

VkResult vkflowEndCommandBuffer(VkCommandBuffer cmd) { return vkf.vkEndCommandBuffer(cmd); }

VkResult vkflowResetCommandBuffer(VkCommandBuffer cmd) { return vkf.vkResetCommandBuffer(cmd, 0); }

void vkflowCmdPipelineBarrier(VkCommandBuffer cmd, uint32_t srcStages, uint32_t dstStages,
	uint32_t memSrcAccess, uint32_t memDstAccess, uint32_t nBuf, const vkflowBufferBarrier *bufs) {
	enum { chunk = 32 };
	VkBufferMemoryBarrier bb[chunk];
	VkMemoryBarrier mb = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
		.srcAccessMask = memSrcAccess,
		.dstAccessMask = memDstAccess,
	};
	uint32_t nMem = (memSrcAccess | memDstAccess) != 0 ? 1 : 0;
	do {
		uint32_t k = nBuf < chunk ? nBuf : chunk;
		for (uint32_t i = 0; i < k; i++) {
			bb[i] = (VkBufferMemoryBarrier){
				.sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER,
				.srcAccessMask = bufs[i].srcAccess,
				.dstAccessMask = bufs[i].dstAccess,
				.srcQueueFamilyIndex = bufs[i].srcFamily,
				.dstQueueFamilyIndex = bufs[i].dstFamily,
				.buffer = (VkBuffer)bufs[i].buffer,
				.offset = bufs[i].offset,
				.size = bufs[i].size,
			};
		}
		vkf.vkCmdPipelineBarrier(cmd, srcStages, dstStages, 0, nMem, &mb, k, bb, 0, NULL);
		nMem = 0;
		bufs += k;
		nBuf -= k;
	} while (nBuf > 0);
}

void vkflowCmdBindComputePipeline(VkCommandBuffer cmd, uint64_t pipeline) {
	vkf.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, (VkPipeline)pipeline);
}

void vkflowCmdBindDescriptorSet(VkCommandBuffer cmd, uint64_t layout, uint64_t set) {
	VkDescriptorSet s = (VkDescriptorSet)set;
	vkf.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, (VkPipelineLayout)layout, 0, 1, &s, 0, NULL);
}

void vkflowCmdPushConstants(VkCommandBuffer cmd, uint64_t layout, uint32_t size, const void *data) {
	vkf.vkCmdPushConstants(cmd, (VkPipelineLayout)layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, size, data);
}

void vkflowCmdDispatch(VkCommandBuffer cmd, uint32_t x, uint32_t y, uint32_t z) { vkf.vkCmdDispatch(cmd, x, y, z); }

void vkflowCmdDispatchBase(VkCommandBuffer cmd, uint32_t bx, uint32_t by, uint32_t bz, uint32_t x, uint32_t y, uint32_t z) {
	vkf.vkCmdDispatchBase(cmd, bx, by, bz, x, y, z);
}

void vkflowCmdCopyBuffer(VkCommandBuffer cmd, uint64_t src, uint64_t dst, uint32_t n, const vkflowCopyRegion *r) {
	enum { chunk = 32 };
	VkBufferCopy c[chunk];
	while (n > 0) {
		uint32_t k = n < chunk ? n : chunk;
		for (uint32_t i = 0; i < k; i++) {
			c[i] = (VkBufferCopy){.srcOffset = r[i].src, .dstOffset = r[i].dst, .size = r[i].size};
		}
		vkf.vkCmdCopyBuffer(cmd, (VkBuffer)src, (VkBuffer)dst, k, c);
		r += k;
		n -= k;
	}
}

void vkflowCmdFillBuffer(VkCommandBuffer cmd, uint64_t buf, uint64_t offset, uint64_t size, uint32_t data) {
	vkf.vkCmdFillBuffer(cmd, (VkBuffer)buf, offset, size, data);
}

vkflowHandle vkflowCreateTimestampPool(VkDevice dev, uint32_t count) {
	VkQueryPoolCreateInfo ci = {
		.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
		.queryType = VK_QUERY_TYPE_TIMESTAMP,
		.queryCount = count,
	};
	VkQueryPool p = VK_NULL_HANDLE;
	vkflowHandle r;
	r.result = vkf.vkCreateQueryPool(dev, &ci, NULL, &p);
	r.handle = (uint64_t)p;
	return r;
}

void vkflowDestroyQueryPool(VkDevice dev, uint64_t p) { vkf.vkDestroyQueryPool(dev, (VkQueryPool)p, NULL); }

void vkflowCmdResetQueryPool(VkCommandBuffer cmd, uint64_t pool, uint32_t first, uint32_t count) {
	vkf.vkCmdResetQueryPool(cmd, (VkQueryPool)pool, first, count);
}

void vkflowCmdWriteTimestamp(VkCommandBuffer cmd, uint32_t stage, uint64_t pool, uint32_t query) {
	vkf.vkCmdWriteTimestamp(cmd, (VkPipelineStageFlagBits)stage, (VkQueryPool)pool, query);
}

VkResult vkflowQueryResults64(VkDevice dev, uint64_t pool, uint32_t first, uint32_t count, uint64_t *out) {
	return vkf.vkGetQueryPoolResults(dev, (VkQueryPool)pool, first, count, (size_t)count * 8, out, 8,
		VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
}

vkflowHandle vkflowCreateTimeline(VkDevice dev, uint64_t initial) {
	VkSemaphoreTypeCreateInfo ti = {
		.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
		.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE,
		.initialValue = initial,
	};
	VkSemaphoreCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &ti};
	VkSemaphore s = VK_NULL_HANDLE;
	vkflowHandle r;
	r.result = vkf.vkCreateSemaphore(dev, &ci, NULL, &s);
	r.handle = (uint64_t)s;
	return r;
}

void vkflowDestroySemaphore(VkDevice dev, uint64_t s) { vkf.vkDestroySemaphore(dev, (VkSemaphore)s, NULL); }

vkflowU64 vkflowSemaphoreValue(VkDevice dev, uint64_t s) {
	vkflowU64 r = {0};
	r.result = vkf.vkGetSemaphoreCounterValue(dev, (VkSemaphore)s, &r.value);
	return r;
}

VkResult vkflowWaitSemaphores(VkDevice dev, uint32_t n, const uint64_t *sems, const uint64_t *values, int any, uint64_t timeout) {
	VkSemaphoreWaitInfo wi = {
		.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
		.flags = any ? VK_SEMAPHORE_WAIT_ANY_BIT : 0,
		.semaphoreCount = n,
		.pSemaphores = (const VkSemaphore *)sems,
		.pValues = values,
	};
	return vkf.vkWaitSemaphores(dev, &wi, timeout);
}

VkResult vkflowWaitSemaphore(VkDevice dev, uint64_t sem, uint64_t value, uint64_t timeout) {
	VkSemaphore s = (VkSemaphore)sem;
	VkSemaphoreWaitInfo wi = {
		.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
		.semaphoreCount = 1,
		.pSemaphores = &s,
		.pValues = &value,
	};
	return vkf.vkWaitSemaphores(dev, &wi, timeout);
}

static uint64_t vkflowNowNs(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* vkflowWaitSemaphoreSpin polls sem's counter for up to spin ns of timeout,
 * yielding the CPU between polls (a CPU device's own threads, lavapipe's,
 * then run on this core: a pause loop there slowed longer ops), and only
 * then blocks in vkWaitSemaphores for what is left of timeout. value is 1
 * when the wait ended while polling (no sleep), else 0. */
vkflowU64 vkflowWaitSemaphoreSpin(VkDevice dev, uint64_t sem, uint64_t value, uint64_t spin, uint64_t timeout) {
	vkflowU64 r = {0, VK_SUCCESS};
	if (spin > timeout) spin = timeout;
	if (spin > 0) {
		uint64_t start = vkflowNowNs(), now = start;
		for (;;) {
			uint64_t v = 0;
			r.result = vkf.vkGetSemaphoreCounterValue(dev, (VkSemaphore)sem, &v);
			if (r.result != VK_SUCCESS) return r;
			if (v >= value) {
				r.value = 1;
				return r;
			}
			now = vkflowNowNs();
			if (now - start >= spin) break;
			sched_yield();
		}
		timeout -= now - start < timeout ? now - start : timeout;
	}
	r.result = vkflowWaitSemaphore(dev, sem, value, timeout);
	return r;
}

VkResult vkflowSignalSemaphore(VkDevice dev, uint64_t sem, uint64_t value) {
	VkSemaphoreSignalInfo si = {
		.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO,
		.semaphore = (VkSemaphore)sem,
		.value = value,
	};
	return vkf.vkSignalSemaphore(dev, &si);
}

VkResult vkflowQueueSubmit(VkQueue q, VkCommandBuffer begin, VkCommandBuffer pre, VkCommandBuffer cmd, VkCommandBuffer end,
	uint32_t nWait, const uint64_t *waitSems, const uint64_t *waitValues, const uint32_t *waitStages,
	uint32_t nSignal, const uint64_t *signalSems, const uint64_t *signalValues) {
	VkCommandBuffer cmds[4];
	uint32_t n = 0;
	if (begin != NULL) cmds[n++] = begin;
	if (pre != NULL) cmds[n++] = pre;
	if (cmd != NULL) cmds[n++] = cmd;
	if (end != NULL) cmds[n++] = end;
	VkTimelineSemaphoreSubmitInfo ti = {
		.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
		.waitSemaphoreValueCount = nWait,
		.pWaitSemaphoreValues = waitValues,
		.signalSemaphoreValueCount = nSignal,
		.pSignalSemaphoreValues = signalValues,
	};
	VkSubmitInfo si = {
		.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
		.pNext = &ti,
		.waitSemaphoreCount = nWait,
		.pWaitSemaphores = (const VkSemaphore *)waitSems,
		.pWaitDstStageMask = (const VkPipelineStageFlags *)waitStages,
		.commandBufferCount = n,
		.pCommandBuffers = cmds,
		.signalSemaphoreCount = nSignal,
		.pSignalSemaphores = (const VkSemaphore *)signalSems,
	};
	return vkf.vkQueueSubmit(q, 1, &si, VK_NULL_HANDLE);
}

VkResult vkflowQueueSubmit1(VkQueue q, VkCommandBuffer pre, VkCommandBuffer cmd, uint64_t signalSem, uint64_t signalValue) {
	return vkflowQueueSubmit(q, NULL, pre, cmd, NULL, 0, NULL, NULL, NULL, 1, &signalSem, &signalValue);
}

vkflowExternalProps vkflowExternalBufferProperties(VkPhysicalDevice pd, uint32_t usage, uint32_t handleType) {
	VkPhysicalDeviceExternalBufferInfo bi = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_BUFFER_INFO,
		.usage = usage,
		.handleType = (VkExternalMemoryHandleTypeFlagBits)handleType,
	};
	VkExternalBufferProperties p = {.sType = VK_STRUCTURE_TYPE_EXTERNAL_BUFFER_PROPERTIES};
	vkf.vkGetPhysicalDeviceExternalBufferProperties(pd, &bi, &p);
	vkflowExternalProps r = {
		.features = p.externalMemoryProperties.externalMemoryFeatures,
		.exportFrom = p.externalMemoryProperties.exportFromImportedHandleTypes,
		.compatible = p.externalMemoryProperties.compatibleHandleTypes,
	};
	return r;
}

vkflowExternalProps vkflowExternalTimelineProperties(VkPhysicalDevice pd, uint32_t handleType) {
	VkSemaphoreTypeCreateInfo ti = {
		.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
		.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE,
	};
	VkPhysicalDeviceExternalSemaphoreInfo si = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_SEMAPHORE_INFO,
		.pNext = &ti,
		.handleType = (VkExternalSemaphoreHandleTypeFlagBits)handleType,
	};
	VkExternalSemaphoreProperties p = {.sType = VK_STRUCTURE_TYPE_EXTERNAL_SEMAPHORE_PROPERTIES};
	vkf.vkGetPhysicalDeviceExternalSemaphoreProperties(pd, &si, &p);
	vkflowExternalProps r = {
		.features = p.externalSemaphoreFeatures,
		.exportFrom = p.exportFromImportedHandleTypes,
		.compatible = p.compatibleHandleTypes,
	};
	return r;
}

vkflowExternalFuncs vkflowLoadExternalFuncs(VkDevice dev, int memoryFd, int semaphoreFd) {
	vkflowExternalFuncs f = {0};
	if (memoryFd) {
		f.getMemoryFd = (PFN_vkGetMemoryFdKHR)vkf.vkGetDeviceProcAddr(dev, "vkGetMemoryFdKHR");
	}
	if (semaphoreFd) {
		f.getSemaphoreFd = (PFN_vkGetSemaphoreFdKHR)vkf.vkGetDeviceProcAddr(dev, "vkGetSemaphoreFdKHR");
		f.importSemaphoreFd = (PFN_vkImportSemaphoreFdKHR)vkf.vkGetDeviceProcAddr(dev, "vkImportSemaphoreFdKHR");
	}
	return f;
}

vkflowHandle vkflowAllocateExternalMemory(VkDevice dev, vkflowExternalAlloc info) {
	const void *next = NULL;
	VkMemoryDedicatedAllocateInfo ded = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO,
		.buffer = (VkBuffer)info.dedicated,
	};
	if (info.dedicated != 0) {
		ded.pNext = next;
		next = &ded;
	}
	VkExportMemoryAllocateInfo exp = {
		.sType = VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO,
		.handleTypes = info.exportTypes,
	};
	if (info.exportTypes != 0) {
		exp.pNext = next;
		next = &exp;
	}
	VkImportMemoryFdInfoKHR imp = {
		.sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR,
		.handleType = (VkExternalMemoryHandleTypeFlagBits)info.importType,
		.fd = info.importFd,
	};
	if (info.importType != 0) {
		imp.pNext = next;
		next = &imp;
	}
	VkMemoryAllocateInfo ai = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
		.pNext = next,
		.allocationSize = info.size,
		.memoryTypeIndex = info.typeIndex,
	};
	VkDeviceMemory m = VK_NULL_HANDLE;
	vkflowHandle r;
	r.result = vkf.vkAllocateMemory(dev, &ai, NULL, &m);
	r.handle = (uint64_t)m;
	return r;
}

vkflowFd vkflowGetMemoryFd(PFN_vkGetMemoryFdKHR f, VkDevice dev, uint64_t mem, uint32_t handleType) {
	VkMemoryGetFdInfoKHR gi = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR,
		.memory = (VkDeviceMemory)mem,
		.handleType = (VkExternalMemoryHandleTypeFlagBits)handleType,
	};
	vkflowFd r = {.fd = -1};
	r.result = f(dev, &gi, &r.fd);
	return r;
}

vkflowHandle vkflowCreateExportableTimeline(VkDevice dev, uint64_t initial, uint32_t handleTypes) {
	VkExportSemaphoreCreateInfo ei = {
		.sType = VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO,
		.handleTypes = handleTypes,
	};
	VkSemaphoreTypeCreateInfo ti = {
		.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
		.pNext = &ei,
		.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE,
		.initialValue = initial,
	};
	VkSemaphoreCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &ti};
	VkSemaphore s = VK_NULL_HANDLE;
	vkflowHandle r;
	r.result = vkf.vkCreateSemaphore(dev, &ci, NULL, &s);
	r.handle = (uint64_t)s;
	return r;
}

vkflowFd vkflowGetSemaphoreFd(PFN_vkGetSemaphoreFdKHR f, VkDevice dev, uint64_t sem, uint32_t handleType) {
	VkSemaphoreGetFdInfoKHR gi = {
		.sType = VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR,
		.semaphore = (VkSemaphore)sem,
		.handleType = (VkExternalSemaphoreHandleTypeFlagBits)handleType,
	};
	vkflowFd r = {.fd = -1};
	r.result = f(dev, &gi, &r.fd);
	return r;
}

VkResult vkflowImportSemaphoreFd(PFN_vkImportSemaphoreFdKHR f, VkDevice dev, uint64_t sem, uint32_t handleType, int fd) {
	VkImportSemaphoreFdInfoKHR ii = {
		.sType = VK_STRUCTURE_TYPE_IMPORT_SEMAPHORE_FD_INFO_KHR,
		.semaphore = (VkSemaphore)sem,
		.handleType = (VkExternalSemaphoreHandleTypeFlagBits)handleType,
		.fd = fd,
	};
	return f(dev, &ii);
}

/* vkflowMonotonicCalibrateable reports whether pd can calibrate its
 * timestamps against CLOCK_MONOTONIC (VK_EXT_calibrated_timestamps: both the
 * device domain and the monotonic one among its time domains). */
int vkflowMonotonicCalibrateable(VkInstance inst, VkPhysicalDevice pd) {
	PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT f =
		(PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT)vkf.vkGetInstanceProcAddr(inst, "vkGetPhysicalDeviceCalibrateableTimeDomainsEXT");
	if (f == NULL) return 0;
	VkTimeDomainEXT domains[16];
	uint32_t n = 16;
	VkResult r = f(pd, &n, domains);
	if (r != VK_SUCCESS && r != VK_INCOMPLETE) return 0;
	int device = 0, mono = 0;
	for (uint32_t i = 0; i < n; i++) {
		device |= domains[i] == VK_TIME_DOMAIN_DEVICE_EXT;
		mono |= domains[i] == VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT;
	}
	return device && mono;
}

/* vkflowCalibratedTimestamps reads the device's timestamp counter and
 * CLOCK_MONOTONIC (ns) together, with the maximum deviation (ns) between
 * the two samples. */
VkResult vkflowCalibratedTimestamps(VkDevice dev, uint64_t *gpu, uint64_t *host, uint64_t *deviation) {
	PFN_vkGetCalibratedTimestampsEXT f =
		(PFN_vkGetCalibratedTimestampsEXT)vkf.vkGetDeviceProcAddr(dev, "vkGetCalibratedTimestampsEXT");
	if (f == NULL) return VK_ERROR_EXTENSION_NOT_PRESENT;
	VkCalibratedTimestampInfoEXT info[2] = {
		{.sType = VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT, .timeDomain = VK_TIME_DOMAIN_DEVICE_EXT},
		{.sType = VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT, .timeDomain = VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT},
	};
	uint64_t ts[2] = {0, 0};
	VkResult r = f(dev, 2, info, ts, deviation);
	*gpu = ts[0];
	*host = ts[1];
	return r;
}

uint64_t vkflowMonotonicNs(void) { return vkflowNowNs(); }
