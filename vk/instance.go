package vk

/*
#include <stdlib.h>
#include "vk.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// Dispatchable handles are C pointers.
type (
	PhysicalDevice = C.VkPhysicalDevice
	Queue          = C.VkQueue
	CommandBuffer  = C.VkCommandBuffer
)

// Non-dispatchable handles are integers.
type (
	Buffer              uint64
	DeviceMemory        uint64
	ShaderModule        uint64
	DescriptorSetLayout uint64
	DescriptorPool      uint64
	DescriptorSet       uint64
	PipelineLayout      uint64
	Pipeline            uint64
	PipelineCache       uint64
	CommandPool         uint64
	QueryPool           uint64
	Semaphore           uint64
)

// Names of the layer and extensions the runtime may enable.
const (
	ValidationLayer      = "VK_LAYER_KHRONOS_validation"
	DebugUtilsExtension  = "VK_EXT_debug_utils"
	PortabilityExtension = "VK_KHR_portability_enumeration"
)

// InstanceConfig says how to create an instance.
type InstanceConfig struct {
	AppName    string
	APIVersion uint32
	Layers     []string
	Extensions []string
	// SyncValidation turns on the validation layer's synchronization
	// validation (needs the validation layer in Layers).
	SyncValidation bool
	// Debug, when set, receives VK_EXT_debug_utils messages at or above
	// DebugSeverity (needs DebugUtilsExtension in Extensions).
	Debug         func(Message)
	DebugSeverity Severity
}

// Instance is a VkInstance and its optional debug messenger.
type Instance struct {
	handle           C.VkInstance
	messenger        C.uint64_t
	destroyMessenger C.PFN_vkDestroyDebugUtilsMessengerEXT
	debugToken       uintptr
}

// CreateInstance creates an instance.
func CreateInstance(cfg InstanceConfig) (*Instance, error) {
	if err := Load(); err != nil {
		return nil, err
	}
	layers, freeLayers := cStrings(cfg.Layers)
	defer freeLayers()
	exts, freeExts := cStrings(cfg.Extensions)
	defer freeExts()
	app := C.CString(cfg.AppName)
	defer C.free(unsafe.Pointer(app))

	inst := &Instance{}
	info := C.vkflowInstanceInfo{
		appName:        app,
		apiVersion:     C.uint32_t(cfg.APIVersion),
		layerCount:     C.uint32_t(len(cfg.Layers)),
		layers:         layers,
		extensionCount: C.uint32_t(len(cfg.Extensions)),
		extensions:     exts,
	}
	if cfg.SyncValidation {
		info.syncValidation = 1
	}
	if cfg.Debug != nil {
		sev := cfg.DebugSeverity
		if sev == 0 {
			sev = SeverityWarning
		}
		var mask uint32
		for _, s := range []Severity{SeverityVerbose, SeverityInfo, SeverityWarning, SeverityError} {
			if s >= sev {
				mask |= uint32(s)
			}
		}
		inst.debugToken = registerDebugSink(cfg.Debug)
		info.debugMessenger = 1
		info.debugToken = C.uintptr_t(inst.debugToken)
		info.debugSeverities = C.uint32_t(mask)
	}
	r := C.vkflowCreateInstance(info)
	if r.result != C.VK_SUCCESS {
		if inst.debugToken != 0 {
			unregisterDebugSink(inst.debugToken)
		}
		call := "vkCreateInstance"
		if r.failedStep == 1 {
			call = "vkCreateDebugUtilsMessengerEXT"
		}
		return nil, check(call, r.result)
	}
	inst.handle = r.instance
	inst.messenger = C.uint64_t(r.messenger)
	inst.destroyMessenger = r.destroyMessenger
	return inst, nil
}

// Destroy destroys the messenger and the instance. Every device must be
// destroyed first. Debug messages emitted during Destroy still reach the
// callback.
func (i *Instance) Destroy() {
	if i == nil || i.handle == nil {
		return
	}
	C.vkflowDestroyInstance(i.handle, i.messenger, i.destroyMessenger)
	i.handle = nil
	if i.debugToken != 0 {
		unregisterDebugSink(i.debugToken)
		i.debugToken = 0
	}
}

// PhysicalDevices lists the physical devices in the loader's order.
func (i *Instance) PhysicalDevices() ([]PhysicalDevice, error) {
	var n C.uint32_t
	if err := check("vkEnumeratePhysicalDevices", C.vkflowEnumeratePhysicalDevices(i.handle, &n, nil)); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, nil
	}
	pds := make([]C.VkPhysicalDevice, n)
	if err := check("vkEnumeratePhysicalDevices", C.vkflowEnumeratePhysicalDevices(i.handle, &n, &pds[0])); err != nil {
		return nil, err
	}
	return pds[:n], nil
}

// DeviceType is a VkPhysicalDeviceType.
type DeviceType uint32

// Physical device types.
const (
	DeviceTypeOther         DeviceType = C.VK_PHYSICAL_DEVICE_TYPE_OTHER
	DeviceTypeIntegratedGPU DeviceType = C.VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU
	DeviceTypeDiscreteGPU   DeviceType = C.VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU
	DeviceTypeVirtualGPU    DeviceType = C.VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU
	DeviceTypeCPU           DeviceType = C.VK_PHYSICAL_DEVICE_TYPE_CPU
)

func (t DeviceType) String() string {
	switch t {
	case DeviceTypeIntegratedGPU:
		return "integrated GPU"
	case DeviceTypeDiscreteGPU:
		return "discrete GPU"
	case DeviceTypeVirtualGPU:
		return "virtual GPU"
	case DeviceTypeCPU:
		return "CPU"
	default:
		return "other"
	}
}

// Features are the device features vkflow reads and may enable.
type Features struct {
	TimelineSemaphore        bool
	Synchronization2         bool
	ShaderFloat16            bool
	ShaderFloat64            bool
	ShaderInt8               bool
	ShaderInt16              bool
	ShaderInt64              bool
	StorageBuffer8BitAccess  bool
	StorageBuffer16BitAccess bool
	BufferDeviceAddress      bool
	HostQueryReset           bool
}

// And returns the features set in both f and g.
func (f Features) And(g Features) Features {
	return Features{
		TimelineSemaphore:        f.TimelineSemaphore && g.TimelineSemaphore,
		Synchronization2:         f.Synchronization2 && g.Synchronization2,
		ShaderFloat16:            f.ShaderFloat16 && g.ShaderFloat16,
		ShaderFloat64:            f.ShaderFloat64 && g.ShaderFloat64,
		ShaderInt8:               f.ShaderInt8 && g.ShaderInt8,
		ShaderInt16:              f.ShaderInt16 && g.ShaderInt16,
		ShaderInt64:              f.ShaderInt64 && g.ShaderInt64,
		StorageBuffer8BitAccess:  f.StorageBuffer8BitAccess && g.StorageBuffer8BitAccess,
		StorageBuffer16BitAccess: f.StorageBuffer16BitAccess && g.StorageBuffer16BitAccess,
		BufferDeviceAddress:      f.BufferDeviceAddress && g.BufferDeviceAddress,
		HostQueryReset:           f.HostQueryReset && g.HostQueryReset,
	}
}

// Missing returns the names of the features set in want but not in f.
func (f Features) Missing(want Features) []string {
	var out []string
	add := func(name string, have, w bool) {
		if w && !have {
			out = append(out, name)
		}
	}
	add("timelineSemaphore", f.TimelineSemaphore, want.TimelineSemaphore)
	add("synchronization2", f.Synchronization2, want.Synchronization2)
	add("shaderFloat16", f.ShaderFloat16, want.ShaderFloat16)
	add("shaderFloat64", f.ShaderFloat64, want.ShaderFloat64)
	add("shaderInt8", f.ShaderInt8, want.ShaderInt8)
	add("shaderInt16", f.ShaderInt16, want.ShaderInt16)
	add("shaderInt64", f.ShaderInt64, want.ShaderInt64)
	add("storageBuffer8BitAccess", f.StorageBuffer8BitAccess, want.StorageBuffer8BitAccess)
	add("storageBuffer16BitAccess", f.StorageBuffer16BitAccess, want.StorageBuffer16BitAccess)
	add("bufferDeviceAddress", f.BufferDeviceAddress, want.BufferDeviceAddress)
	add("hostQueryReset", f.HostQueryReset, want.HostQueryReset)
	return out
}

// Limits are the device limits vkflow uses.
type Limits struct {
	MaxStorageBufferRange           uint32
	MinStorageBufferOffsetAlignment uint64
	NonCoherentAtomSize             uint64
	MaxPushConstantsSize            uint32
	MaxComputeWorkGroupCount        [3]uint32
	MaxComputeWorkGroupSize         [3]uint32
	MaxComputeWorkGroupInvocations  uint32
	MaxComputeSharedMemorySize      uint32
	MaxMemoryAllocationCount        uint32
	MaxBoundDescriptorSets          uint32
	MaxPerStageStorageBuffers       uint32
	TimestampPeriod                 float32 // nanoseconds per tick
	TimestampComputeAndGraphics     bool
	MaxTimelineValueDifference      uint64
	// MaxMemoryAllocationSize is VkPhysicalDeviceMaintenance3Properties'
	// maxMemoryAllocationSize (0 when the device is older than Vulkan 1.2).
	MaxMemoryAllocationSize uint64
	// MinImportedHostPointerAlignment is 0 without HostImportExtension.
	MinImportedHostPointerAlignment uint64
}

// Queue family capability bits.
const (
	QueueGraphics = C.VK_QUEUE_GRAPHICS_BIT
	QueueCompute  = C.VK_QUEUE_COMPUTE_BIT
	QueueTransfer = C.VK_QUEUE_TRANSFER_BIT
)

// QueueFamily describes one queue family.
type QueueFamily struct {
	Flags              uint32
	Count              uint32
	TimestampValidBits uint32
}

// Memory property bits.
const (
	MemoryDeviceLocal  = C.VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT
	MemoryHostVisible  = C.VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT
	MemoryHostCoherent = C.VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
	MemoryHostCached   = C.VK_MEMORY_PROPERTY_HOST_CACHED_BIT
	MemoryProtected    = C.VK_MEMORY_PROPERTY_PROTECTED_BIT
	MemoryLazily       = C.VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT
	HeapDeviceLocal    = C.VK_MEMORY_HEAP_DEVICE_LOCAL_BIT
)

// MemoryType is one VkMemoryType.
type MemoryType struct {
	Flags uint32
	Heap  uint32
}

// MemoryHeap is one VkMemoryHeap.
type MemoryHeap struct {
	Size  uint64
	Flags uint32
}

// Subgroup shader stage and operation bits (VkShaderStageFlagBits,
// VkSubgroupFeatureFlagBits).
const (
	StageCompute       = C.VK_SHADER_STAGE_COMPUTE_BIT
	SubgroupBasic      = C.VK_SUBGROUP_FEATURE_BASIC_BIT
	SubgroupVote       = C.VK_SUBGROUP_FEATURE_VOTE_BIT
	SubgroupArithmetic = C.VK_SUBGROUP_FEATURE_ARITHMETIC_BIT
	SubgroupBallot     = C.VK_SUBGROUP_FEATURE_BALLOT_BIT
	SubgroupShuffle    = C.VK_SUBGROUP_FEATURE_SHUFFLE_BIT
	SubgroupClustered  = C.VK_SUBGROUP_FEATURE_CLUSTERED_BIT
	SubgroupQuad       = C.VK_SUBGROUP_FEATURE_QUAD_BIT
)

// Subgroup are the device's subgroup properties
// (VkPhysicalDeviceVulkan11Properties); all zero for a device described
// without Vulkan 1.2.
type Subgroup struct {
	Size       uint32 // default invocations per subgroup
	Stages     uint32 // shader stages with subgroup operations (StageCompute, ...)
	Operations uint32 // supported operations (SubgroupArithmetic, ...)
}

// Compute reports whether compute shaders have every subgroup operation
// in ops (SubgroupBasic|SubgroupArithmetic, say).
func (s Subgroup) Compute(ops uint32) bool {
	return s.Stages&StageCompute != 0 && s.Operations&ops == ops
}

// PhysicalDeviceInfo is what vkflow knows about a physical device.
type PhysicalDeviceInfo struct {
	Name          string
	Type          DeviceType
	APIVersion    uint32
	DriverVersion uint32
	VendorID      uint32
	DeviceID      uint32
	DriverName    string
	DriverInfo    string
	DeviceUUID    [16]byte
	// DriverUUID identifies the driver build (VkPhysicalDeviceIDProperties):
	// external memory and semaphores move only between devices whose
	// DeviceUUID and DriverUUID both match.
	DriverUUID    [16]byte
	Limits        Limits
	Features      Features
	Subgroup      Subgroup
	QueueFamilies []QueueFamily
	MemoryTypes   []MemoryType
	MemoryHeaps   []MemoryHeap
	Extensions    []string
}

// HasExtension reports whether the device offers the named extension.
func (p *PhysicalDeviceInfo) HasExtension(name string) bool {
	for _, e := range p.Extensions {
		if e == name {
			return true
		}
	}
	return false
}

// Describe reads a physical device's properties, features, queue families,
// memory and extensions.
func Describe(pd PhysicalDevice) (PhysicalDeviceInfo, error) {
	var d C.vkflowDeviceInfo
	C.vkflowDescribePhysicalDevice(pd, &d)
	p := &d.props
	l := &p.limits
	info := PhysicalDeviceInfo{
		Name:          C.GoString(&p.deviceName[0]),
		Type:          DeviceType(p.deviceType),
		APIVersion:    uint32(p.apiVersion),
		DriverVersion: uint32(p.driverVersion),
		VendorID:      uint32(p.vendorID),
		DeviceID:      uint32(p.deviceID),
		DriverName:    C.GoString(&d.driverName[0]),
		DriverInfo:    C.GoString(&d.driverInfo[0]),
		Limits: Limits{
			MaxStorageBufferRange:           uint32(l.maxStorageBufferRange),
			MinStorageBufferOffsetAlignment: uint64(l.minStorageBufferOffsetAlignment),
			NonCoherentAtomSize:             uint64(l.nonCoherentAtomSize),
			MaxPushConstantsSize:            uint32(l.maxPushConstantsSize),
			MaxComputeWorkGroupInvocations:  uint32(l.maxComputeWorkGroupInvocations),
			MaxComputeSharedMemorySize:      uint32(l.maxComputeSharedMemorySize),
			MaxMemoryAllocationCount:        uint32(l.maxMemoryAllocationCount),
			MaxBoundDescriptorSets:          uint32(l.maxBoundDescriptorSets),
			MaxPerStageStorageBuffers:       uint32(l.maxPerStageDescriptorStorageBuffers),
			TimestampPeriod:                 float32(l.timestampPeriod),
			TimestampComputeAndGraphics:     l.timestampComputeAndGraphics != 0,
			MaxTimelineValueDifference:      uint64(d.maxTimelineSemaphoreValueDifference),
			MaxMemoryAllocationSize:         uint64(d.maxMemoryAllocationSize),
		},
		Subgroup: Subgroup{
			Size:       uint32(d.subgroupSize),
			Stages:     uint32(d.subgroupSupportedStages),
			Operations: uint32(d.subgroupSupportedOperations),
		},
		Features: Features{
			TimelineSemaphore:        d.timelineSemaphore != 0,
			Synchronization2:         d.synchronization2 != 0,
			ShaderFloat16:            d.shaderFloat16 != 0,
			ShaderFloat64:            d.shaderFloat64 != 0,
			ShaderInt8:               d.shaderInt8 != 0,
			ShaderInt16:              d.shaderInt16 != 0,
			ShaderInt64:              d.shaderInt64 != 0,
			StorageBuffer8BitAccess:  d.storageBuffer8BitAccess != 0,
			StorageBuffer16BitAccess: d.storageBuffer16BitAccess != 0,
			BufferDeviceAddress:      d.bufferDeviceAddress != 0,
			HostQueryReset:           d.hostQueryReset != 0,
		},
	}
	for k := 0; k < 3; k++ {
		info.Limits.MaxComputeWorkGroupCount[k] = uint32(l.maxComputeWorkGroupCount[k])
		info.Limits.MaxComputeWorkGroupSize[k] = uint32(l.maxComputeWorkGroupSize[k])
	}
	for k := range info.DeviceUUID {
		info.DeviceUUID[k] = byte(d.deviceUUID[k])
		info.DriverUUID[k] = byte(d.driverUUID[k])
	}
	for k := 0; k < int(d.memory.memoryTypeCount); k++ {
		t := d.memory.memoryTypes[k]
		info.MemoryTypes = append(info.MemoryTypes, MemoryType{Flags: uint32(t.propertyFlags), Heap: uint32(t.heapIndex)})
	}
	for k := 0; k < int(d.memory.memoryHeapCount); k++ {
		h := d.memory.memoryHeaps[k]
		info.MemoryHeaps = append(info.MemoryHeaps, MemoryHeap{Size: uint64(h.size), Flags: uint32(h.flags)})
	}

	var nq C.uint32_t
	C.vkflowQueueFamilies(pd, &nq, nil)
	if nq > 0 {
		qs := make([]C.VkQueueFamilyProperties, nq)
		C.vkflowQueueFamilies(pd, &nq, &qs[0])
		for _, q := range qs[:nq] {
			info.QueueFamilies = append(info.QueueFamilies, QueueFamily{
				Flags:              uint32(q.queueFlags),
				Count:              uint32(q.queueCount),
				TimestampValidBits: uint32(q.timestampValidBits),
			})
		}
	}

	var ne C.uint32_t
	if err := check("vkEnumerateDeviceExtensionProperties", C.vkflowEnumerateDeviceExtensions(pd, &ne, nil)); err != nil {
		return info, err
	}
	if ne > 0 {
		props := make([]C.VkExtensionProperties, ne)
		if err := check("vkEnumerateDeviceExtensionProperties", C.vkflowEnumerateDeviceExtensions(pd, &ne, &props[0])); err != nil {
			return info, err
		}
		for k := range props[:ne] {
			info.Extensions = append(info.Extensions, C.GoString(&props[k].extensionName[0]))
		}
	}
	if info.HasExtension(HostImportExtension) {
		info.Limits.MinImportedHostPointerAlignment = uint64(C.vkflowHostImportAlignment(pd))
	}
	return info, nil
}

// QueueRequest asks for Count queues of one family.
type QueueRequest struct {
	Family uint32
	Count  uint32
}

// DeviceConfig says how to create a logical device.
type DeviceConfig struct {
	Queues     []QueueRequest
	Features   Features
	Extensions []string
	// APIVersion is the effective API version: the lower of the instance's
	// requested version and the physical device's. It decides which feature
	// structs may be chained.
	APIVersion uint32
}

// Device is a VkDevice. Its methods are thin wrappers; see the package doc
// for the synchronization rules.
type Device struct {
	handle   C.VkDevice
	physical C.VkPhysicalDevice
	// ext holds the KHR functions of the external memory and semaphore fd
	// extensions, from vkGetDeviceProcAddr; nil when not enabled.
	ext C.vkflowExternalFuncs
}

func b32(b bool) C.VkBool32 {
	if b {
		return C.VK_TRUE
	}
	return C.VK_FALSE
}

// CreateDevice creates a logical device on pd.
func CreateDevice(pd PhysicalDevice, cfg DeviceConfig) (*Device, error) {
	if len(cfg.Queues) == 0 {
		return nil, fmt.Errorf("vulkan: CreateDevice: no queues requested")
	}
	exts, freeExts := cStrings(cfg.Extensions)
	defer freeExts()
	reqs := (*C.vkflowQueueRequest)(C.malloc(C.size_t(len(cfg.Queues)) * C.size_t(unsafe.Sizeof(C.vkflowQueueRequest{}))))
	defer C.free(unsafe.Pointer(reqs))
	rs := unsafe.Slice(reqs, len(cfg.Queues))
	for i, q := range cfg.Queues {
		rs[i] = C.vkflowQueueRequest{family: C.uint32_t(q.Family), count: C.uint32_t(q.Count)}
	}
	f := cfg.Features
	info := C.vkflowDeviceCreate{
		queueRequestCount:        C.uint32_t(len(cfg.Queues)),
		queueRequests:            reqs,
		extensionCount:           C.uint32_t(len(cfg.Extensions)),
		extensions:               exts,
		shaderFloat64:            b32(f.ShaderFloat64),
		shaderInt64:              b32(f.ShaderInt64),
		shaderInt16:              b32(f.ShaderInt16),
		storageBuffer16BitAccess: b32(f.StorageBuffer16BitAccess),
		timelineSemaphore:        b32(f.TimelineSemaphore),
		shaderFloat16:            b32(f.ShaderFloat16),
		shaderInt8:               b32(f.ShaderInt8),
		storageBuffer8BitAccess:  b32(f.StorageBuffer8BitAccess),
		bufferDeviceAddress:      b32(f.BufferDeviceAddress),
		hostQueryReset:           b32(f.HostQueryReset),
		synchronization2:         b32(f.Synchronization2),
	}
	if cfg.APIVersion >= MakeVersion(1, 3, 0) {
		info.hasVulkan13 = 1
	}
	r := C.vkflowCreateDevice(pd, info)
	if err := check("vkCreateDevice", r.result); err != nil {
		return nil, err
	}
	d := &Device{handle: r.device, physical: pd}
	d.loadExternal(cfg.Extensions)
	return d, nil
}
