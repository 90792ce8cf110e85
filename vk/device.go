package vk

/*
#include <stdlib.h>
#include "vk.h"
*/
import "C"

import (
	"unsafe"

	"github.com/vkflow/vkflow/internal/fault"
)

// Buffer usage bits.
const (
	BufferUsageTransferSrc = C.VK_BUFFER_USAGE_TRANSFER_SRC_BIT
	BufferUsageTransferDst = C.VK_BUFFER_USAGE_TRANSFER_DST_BIT
	BufferUsageUniform     = C.VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT
	BufferUsageStorage     = C.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT
)

// Descriptor types.
const (
	DescriptorUniformBuffer = C.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER
	DescriptorStorageBuffer = C.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
)

// Pipeline stage bits (synchronization 1).
const (
	StageTopOfPipe     = C.VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT
	StageComputeShader = C.VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT
	StageTransfer      = C.VK_PIPELINE_STAGE_TRANSFER_BIT
	StageBottomOfPipe  = C.VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT
	StageHost          = C.VK_PIPELINE_STAGE_HOST_BIT
	StageAllCommands   = C.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT
)

// Access bits (synchronization 1).
const (
	AccessUniformRead   = C.VK_ACCESS_UNIFORM_READ_BIT
	AccessShaderRead    = C.VK_ACCESS_SHADER_READ_BIT
	AccessShaderWrite   = C.VK_ACCESS_SHADER_WRITE_BIT
	AccessTransferRead  = C.VK_ACCESS_TRANSFER_READ_BIT
	AccessTransferWrite = C.VK_ACCESS_TRANSFER_WRITE_BIT
	AccessHostRead      = C.VK_ACCESS_HOST_READ_BIT
	AccessHostWrite     = C.VK_ACCESS_HOST_WRITE_BIT
	AccessMemoryRead    = C.VK_ACCESS_MEMORY_READ_BIT
	AccessMemoryWrite   = C.VK_ACCESS_MEMORY_WRITE_BIT
)

// Command pool and command buffer flags.
const (
	CommandPoolTransient         = C.VK_COMMAND_POOL_CREATE_TRANSIENT_BIT
	CommandPoolResetBuffer       = C.VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT
	CommandBufferOneTimeSubmit   = C.VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT
	CommandBufferSimultaneousUse = C.VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT
)

// QueueFamilyIgnored is VK_QUEUE_FAMILY_IGNORED.
const QueueFamilyIgnored = C.VK_QUEUE_FAMILY_IGNORED

// WholeSize is VK_WHOLE_SIZE.
const WholeSize = ^uint64(0)

// Destroy destroys the device. Every object created from it must be
// destroyed first; the validation layer reports any that were not.
func (d *Device) Destroy() {
	if d == nil || d.handle == nil {
		return
	}
	C.vkflowDestroyDevice(d.handle)
	d.handle = nil
}

// Queue returns queue index of family.
func (d *Device) Queue(family, index uint32) Queue {
	return C.vkflowGetQueue(d.handle, C.uint32_t(family), C.uint32_t(index))
}

// WaitIdle waits until the device has finished all work.
func (d *Device) WaitIdle() error {
	return check("vkDeviceWaitIdle", C.vkflowDeviceWaitIdle(d.handle))
}

// CreateBuffer creates a buffer. With two or more queue families it is
// shared concurrently between them (no ownership transfers); otherwise it
// is exclusive.
func (d *Device) CreateBuffer(size uint64, usage uint32, families ...uint32) (Buffer, error) {
	var fp *C.uint32_t
	if len(families) > 1 {
		fp = (*C.uint32_t)(unsafe.Pointer(&families[0]))
	}
	r := C.vkflowCreateBuffer(d.handle, C.uint64_t(size), C.uint32_t(usage), C.uint32_t(len(families)), fp, 0)
	return Buffer(r.handle), check("vkCreateBuffer", r.result)
}

// HostImportExtension is VK_EXT_external_memory_host: device memory over
// host memory the application allocated.
const HostImportExtension = "VK_EXT_external_memory_host"

// CreateHostImportBuffer is CreateBuffer for a buffer that will be bound to
// imported host memory (ImportHostMemory).
func (d *Device) CreateHostImportBuffer(size uint64, usage uint32, families ...uint32) (Buffer, error) {
	var fp *C.uint32_t
	if len(families) > 1 {
		fp = (*C.uint32_t)(unsafe.Pointer(&families[0]))
	}
	r := C.vkflowCreateBuffer(d.handle, C.uint64_t(size), C.uint32_t(usage), C.uint32_t(len(families)), fp,
		C.VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT)
	return Buffer(r.handle), check("vkCreateBuffer", r.result)
}

// HostPointerTypeBits returns the memory types host memory at p can be
// imported as (vkGetMemoryHostPointerPropertiesEXT). The device must have
// been created with HostImportExtension.
func (d *Device) HostPointerTypeBits(p unsafe.Pointer) (uint32, error) {
	var bits C.uint32_t
	r := C.vkflowHostPointerTypeBits(d.handle, p, &bits)
	return uint32(bits), check("vkGetMemoryHostPointerPropertiesEXT", r)
}

// ImportHostMemory creates device memory over size bytes of host memory at
// p, which must stay allocated until the memory is freed. p and size must
// be multiples of Limits.MinImportedHostPointerAlignment.
func (d *Device) ImportHostMemory(p unsafe.Pointer, size uint64, typeIndex uint32) (DeviceMemory, error) {
	r := C.vkflowAllocateMemory(d.handle, C.uint64_t(size), C.uint32_t(typeIndex), p)
	return DeviceMemory(r.handle), check("vkAllocateMemory", r.result)
}

// Handle returns the VkDevice, for consumers that share it (DLPack).
func (d *Device) Handle() unsafe.Pointer { return unsafe.Pointer(d.handle) }

// DestroyBuffer destroys a buffer.
func (d *Device) DestroyBuffer(b Buffer) { C.vkflowDestroyBuffer(d.handle, C.uint64_t(b)) }

// MemoryRequirements is VkMemoryRequirements.
type MemoryRequirements struct {
	Size      uint64
	Alignment uint64
	TypeBits  uint32
}

// BufferMemoryRequirements returns what memory b needs.
func (d *Device) BufferMemoryRequirements(b Buffer) MemoryRequirements {
	var r C.VkMemoryRequirements
	C.vkflowBufferRequirements(d.handle, C.uint64_t(b), &r)
	return MemoryRequirements{Size: uint64(r.size), Alignment: uint64(r.alignment), TypeBits: uint32(r.memoryTypeBits)}
}

// AllocateMemory allocates device memory of one memory type.
func (d *Device) AllocateMemory(size uint64, typeIndex uint32) (DeviceMemory, error) {
	if r, ok := injected(fault.AllocateMemory); ok {
		return 0, check("vkAllocateMemory", r)
	}
	r := C.vkflowAllocateMemory(d.handle, C.uint64_t(size), C.uint32_t(typeIndex), nil)
	return DeviceMemory(r.handle), check("vkAllocateMemory", r.result)
}

// FreeMemory frees device memory.
func (d *Device) FreeMemory(m DeviceMemory) { C.vkflowFreeMemory(d.handle, C.uint64_t(m)) }

// BindBufferMemory binds b to m at offset.
func (d *Device) BindBufferMemory(b Buffer, m DeviceMemory, offset uint64) error {
	return check("vkBindBufferMemory", C.vkflowBindBufferMemory(d.handle, C.uint64_t(b), C.uint64_t(m), C.uint64_t(offset)))
}

// MapMemory maps a range of m and returns its host address.
func (d *Device) MapMemory(m DeviceMemory, offset, size uint64) (unsafe.Pointer, error) {
	if r, ok := injected(fault.MapMemory); ok {
		return nil, check("vkMapMemory", r)
	}
	r := C.vkflowMapMemory(d.handle, C.uint64_t(m), C.uint64_t(offset), C.uint64_t(size))
	return r.ptr, check("vkMapMemory", r.result)
}

// UnmapMemory unmaps m.
func (d *Device) UnmapMemory(m DeviceMemory) { C.vkflowUnmapMemory(d.handle, C.uint64_t(m)) }

// FlushMemory flushes host writes to a non-coherent mapped range.
func (d *Device) FlushMemory(m DeviceMemory, offset, size uint64) error {
	return check("vkFlushMappedMemoryRanges", C.vkflowFlushMemory(d.handle, C.uint64_t(m), C.uint64_t(offset), C.uint64_t(size)))
}

// InvalidateMemory makes device writes to a non-coherent mapped range
// visible to the host.
func (d *Device) InvalidateMemory(m DeviceMemory, offset, size uint64) error {
	return check("vkInvalidateMappedMemoryRanges", C.vkflowInvalidateMemory(d.handle, C.uint64_t(m), C.uint64_t(offset), C.uint64_t(size)))
}

// CreateShaderModule creates a shader module from SPIR-V words. The caller
// validates the code first: drivers may crash on malformed SPIR-V.
func (d *Device) CreateShaderModule(code []uint32) (ShaderModule, error) {
	if len(code) == 0 {
		return 0, &Error{Call: "vkCreateShaderModule", Result: ErrorInitializationFailed}
	}
	r := C.vkflowCreateShaderModule(d.handle, (*C.uint32_t)(unsafe.Pointer(&code[0])), C.size_t(len(code)*4))
	return ShaderModule(r.handle), check("vkCreateShaderModule", r.result)
}

// DestroyShaderModule destroys a shader module.
func (d *Device) DestroyShaderModule(m ShaderModule) {
	C.vkflowDestroyShaderModule(d.handle, C.uint64_t(m))
}

// LayoutBinding is one binding of a descriptor set layout, visible to the
// compute stage.
type LayoutBinding struct {
	Binding uint32
	Type    uint32
	Count   uint32
}

// CreateDescriptorSetLayout creates a descriptor set layout for compute.
func (d *Device) CreateDescriptorSetLayout(bindings []LayoutBinding) (DescriptorSetLayout, error) {
	var p *C.vkflowLayoutBinding
	if len(bindings) > 0 {
		bs := make([]C.vkflowLayoutBinding, len(bindings))
		for i, b := range bindings {
			bs[i] = C.vkflowLayoutBinding{binding: C.uint32_t(b.Binding), _type: C.uint32_t(b.Type), count: C.uint32_t(b.Count), stages: C.VK_SHADER_STAGE_COMPUTE_BIT}
		}
		p = &bs[0]
	}
	r := C.vkflowCreateDescriptorSetLayout(d.handle, C.uint32_t(len(bindings)), p)
	return DescriptorSetLayout(r.handle), check("vkCreateDescriptorSetLayout", r.result)
}

// DestroyDescriptorSetLayout destroys a descriptor set layout.
func (d *Device) DestroyDescriptorSetLayout(l DescriptorSetLayout) {
	C.vkflowDestroyDescriptorSetLayout(d.handle, C.uint64_t(l))
}

// PoolSize is a VkDescriptorPoolSize.
type PoolSize struct {
	Type  uint32
	Count uint32
}

// CreateDescriptorPool creates a descriptor pool. With freeable set, sets
// may be freed one by one.
func (d *Device) CreateDescriptorPool(maxSets uint32, sizes []PoolSize, freeable bool) (DescriptorPool, error) {
	var p *C.vkflowPoolSize
	if len(sizes) > 0 {
		ps := make([]C.vkflowPoolSize, len(sizes))
		for i, s := range sizes {
			ps[i] = C.vkflowPoolSize{_type: C.uint32_t(s.Type), count: C.uint32_t(s.Count)}
		}
		p = &ps[0]
	}
	f := C.int(0)
	if freeable {
		f = 1
	}
	r := C.vkflowCreateDescriptorPool(d.handle, C.uint32_t(maxSets), C.uint32_t(len(sizes)), p, f)
	return DescriptorPool(r.handle), check("vkCreateDescriptorPool", r.result)
}

// DestroyDescriptorPool destroys a pool and every set allocated from it.
func (d *Device) DestroyDescriptorPool(p DescriptorPool) {
	C.vkflowDestroyDescriptorPool(d.handle, C.uint64_t(p))
}

// AllocateDescriptorSet allocates one set.
func (d *Device) AllocateDescriptorSet(p DescriptorPool, l DescriptorSetLayout) (DescriptorSet, error) {
	r := C.vkflowAllocateDescriptorSet(d.handle, C.uint64_t(p), C.uint64_t(l))
	return DescriptorSet(r.handle), check("vkAllocateDescriptorSets", r.result)
}

// BufferWrite points one binding of a set at a buffer range.
type BufferWrite struct {
	Binding uint32
	Type    uint32
	Buffer  Buffer
	Offset  uint64
	Range   uint64
}

// WriteDescriptorBuffers updates buffer bindings of a set.
func (d *Device) WriteDescriptorBuffers(s DescriptorSet, writes []BufferWrite) {
	if len(writes) == 0 {
		return
	}
	ws := make([]C.vkflowBufferWrite, len(writes))
	for i, w := range writes {
		ws[i] = C.vkflowBufferWrite{buffer: C.uint64_t(w.Buffer), offset: C.uint64_t(w.Offset), _range: C.uint64_t(w.Range), binding: C.uint32_t(w.Binding), _type: C.uint32_t(w.Type)}
	}
	C.vkflowWriteDescriptorBuffers(d.handle, C.uint64_t(s), C.uint32_t(len(ws)), &ws[0])
}

// CreatePipelineLayout creates a compute pipeline layout with one push
// constant range of pushSize bytes at offset 0 (none when 0).
func (d *Device) CreatePipelineLayout(sets []DescriptorSetLayout, pushSize uint32) (PipelineLayout, error) {
	var p *C.uint64_t
	if len(sets) > 0 {
		p = (*C.uint64_t)(unsafe.Pointer(&sets[0]))
	}
	r := C.vkflowCreatePipelineLayout(d.handle, C.uint32_t(len(sets)), p, C.uint32_t(pushSize))
	return PipelineLayout(r.handle), check("vkCreatePipelineLayout", r.result)
}

// DestroyPipelineLayout destroys a pipeline layout.
func (d *Device) DestroyPipelineLayout(l PipelineLayout) {
	C.vkflowDestroyPipelineLayout(d.handle, C.uint64_t(l))
}

// CreatePipelineCache creates a pipeline cache, seeded with data if any.
func (d *Device) CreatePipelineCache(data []byte) (PipelineCache, error) {
	var p unsafe.Pointer
	if len(data) > 0 {
		p = unsafe.Pointer(&data[0])
	}
	r := C.vkflowCreatePipelineCache(d.handle, p, C.size_t(len(data)))
	return PipelineCache(r.handle), check("vkCreatePipelineCache", r.result)
}

// DestroyPipelineCache destroys a pipeline cache.
func (d *Device) DestroyPipelineCache(c PipelineCache) {
	C.vkflowDestroyPipelineCache(d.handle, C.uint64_t(c))
}

// PipelineCacheData returns the cache's contents, to seed a later cache.
func (d *Device) PipelineCacheData(c PipelineCache) ([]byte, error) {
	var n C.size_t
	if err := check("vkGetPipelineCacheData", C.vkflowPipelineCacheData(d.handle, C.uint64_t(c), &n, nil)); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, nil
	}
	buf := C.malloc(n)
	defer C.free(buf)
	if err := check("vkGetPipelineCacheData", C.vkflowPipelineCacheData(d.handle, C.uint64_t(c), &n, buf)); err != nil {
		return nil, err
	}
	return C.GoBytes(buf, C.int(n)), nil
}

// SpecEntry maps a specialization constant ID to bytes of the data block.
type SpecEntry struct {
	ID     uint32
	Offset uint32
	Size   uint32
}

// CreateComputePipeline creates a compute pipeline.
func (d *Device) CreateComputePipeline(cache PipelineCache, layout PipelineLayout, module ShaderModule, entry string, spec []SpecEntry, specData []byte) (Pipeline, error) {
	if r, ok := injected(fault.CreateComputePipelines); ok {
		return 0, check("vkCreateComputePipelines", r)
	}
	ce := C.CString(entry)
	defer C.free(unsafe.Pointer(ce))
	var sp *C.vkflowSpecEntry
	var data unsafe.Pointer
	if len(spec) > 0 {
		es := make([]C.vkflowSpecEntry, len(spec))
		for i, s := range spec {
			es[i] = C.vkflowSpecEntry{id: C.uint32_t(s.ID), offset: C.uint32_t(s.Offset), size: C.uint32_t(s.Size)}
		}
		sp = &es[0]
	}
	if len(specData) > 0 {
		data = unsafe.Pointer(&specData[0])
	}
	r := C.vkflowCreateComputePipeline(d.handle, C.uint64_t(cache), C.uint64_t(layout), C.uint64_t(module), ce,
		C.uint32_t(len(spec)), sp, data, C.size_t(len(specData)))
	return Pipeline(r.handle), check("vkCreateComputePipelines", r.result)
}

// DestroyPipeline destroys a pipeline.
func (d *Device) DestroyPipeline(p Pipeline) { C.vkflowDestroyPipeline(d.handle, C.uint64_t(p)) }

// CreateCommandPool creates a command pool for a queue family.
func (d *Device) CreateCommandPool(family uint32, flags uint32) (CommandPool, error) {
	r := C.vkflowCreateCommandPool(d.handle, C.uint32_t(family), C.uint32_t(flags))
	return CommandPool(r.handle), check("vkCreateCommandPool", r.result)
}

// DestroyCommandPool destroys a pool and its command buffers.
func (d *Device) DestroyCommandPool(p CommandPool) {
	C.vkflowDestroyCommandPool(d.handle, C.uint64_t(p))
}

// AllocateCommandBuffer allocates one primary command buffer.
func (d *Device) AllocateCommandBuffer(p CommandPool) (CommandBuffer, error) {
	r := C.vkflowAllocateCommandBuffer(d.handle, C.uint64_t(p))
	return r.cmd, check("vkAllocateCommandBuffers", r.result)
}

// FreeCommandBuffer returns a command buffer to its pool.
func (d *Device) FreeCommandBuffer(p CommandPool, c CommandBuffer) {
	C.vkflowFreeCommandBuffer(d.handle, C.uint64_t(p), c)
}

// CreateTimestampPool creates a timestamp query pool.
func (d *Device) CreateTimestampPool(count uint32) (QueryPool, error) {
	r := C.vkflowCreateTimestampPool(d.handle, C.uint32_t(count))
	return QueryPool(r.handle), check("vkCreateQueryPool", r.result)
}

// DestroyQueryPool destroys a query pool.
func (d *Device) DestroyQueryPool(p QueryPool) { C.vkflowDestroyQueryPool(d.handle, C.uint64_t(p)) }

// QueryResults64 reads count 64-bit results, waiting for them.
func (d *Device) QueryResults64(p QueryPool, first uint32, out []uint64) error {
	if len(out) == 0 {
		return nil
	}
	return check("vkGetQueryPoolResults", C.vkflowQueryResults64(d.handle, C.uint64_t(p), C.uint32_t(first), C.uint32_t(len(out)), (*C.uint64_t)(unsafe.Pointer(&out[0]))))
}

// Submit is one batch for QueueSubmit. The slices are read during the call
// only; keep them in long-lived scratch to avoid allocation.
type Submit struct {
	Pre CommandBuffer // nil for none; runs before Cmd in the same batch
	Cmd CommandBuffer // nil for none
	// Begin and End (nil for none) run first and last in the batch: a
	// trace's timestamp writes.
	Begin, End   CommandBuffer
	WaitSems     []Semaphore
	WaitValues   []uint64
	WaitStages   []uint32
	SignalSems   []Semaphore
	SignalValues []uint64
}

func u64p(s []uint64) *C.uint64_t {
	if len(s) == 0 {
		return nil
	}
	return (*C.uint64_t)(unsafe.Pointer(&s[0]))
}

func semp(s []Semaphore) *C.uint64_t {
	if len(s) == 0 {
		return nil
	}
	return (*C.uint64_t)(unsafe.Pointer(&s[0]))
}

// QueueSubmit submits one batch with timeline waits and signals. The queue
// must be externally synchronized.
func QueueSubmit(q Queue, s *Submit) error {
	if r, ok := injected(fault.QueueSubmit); ok {
		return check("vkQueueSubmit", r)
	}
	var stages *C.uint32_t
	if len(s.WaitStages) > 0 {
		stages = (*C.uint32_t)(unsafe.Pointer(&s.WaitStages[0]))
	}
	return check("vkQueueSubmit", C.vkflowQueueSubmit(q, s.Begin, s.Pre, s.Cmd, s.End,
		C.uint32_t(len(s.WaitSems)), semp(s.WaitSems), u64p(s.WaitValues), stages,
		C.uint32_t(len(s.SignalSems)), semp(s.SignalSems), u64p(s.SignalValues)))
}

// QueueSubmitSignal submits cmd (nil for none) signalling one timeline
// value, the common case, without any slice.
func QueueSubmitSignal(q Queue, cmd CommandBuffer, sem Semaphore, value uint64) error {
	return QueueSubmitSignalPre(q, nil, cmd, sem, value)
}

// QueueSubmitSignalPre is QueueSubmitSignal with a command buffer pre
// (nil for none) submitted before cmd in the same batch.
func QueueSubmitSignalPre(q Queue, pre, cmd CommandBuffer, sem Semaphore, value uint64) error {
	if r, ok := injected(fault.QueueSubmit); ok {
		return check("vkQueueSubmit", r)
	}
	return check("vkQueueSubmit", C.vkflowQueueSubmit1(q, pre, cmd, C.uint64_t(sem), C.uint64_t(value)))
}
