package vk

/*
#include "vk.h"
*/
import "C"

import (
	"unsafe"

	"github.com/vkflow/vkflow/internal/fault"
)

// BeginCommandBuffer starts recording.
func BeginCommandBuffer(c CommandBuffer, flags uint32) error {
	return check("vkBeginCommandBuffer", C.vkflowBeginCommandBuffer(c, C.uint32_t(flags)))
}

// EndCommandBuffer ends recording.
func EndCommandBuffer(c CommandBuffer) error {
	if r, ok := injected(fault.EndCommandBuffer); ok {
		return check("vkEndCommandBuffer", r)
	}
	return check("vkEndCommandBuffer", C.vkflowEndCommandBuffer(c))
}

// ResetCommandBuffer resets a command buffer of a resettable pool.
func ResetCommandBuffer(c CommandBuffer) error {
	return check("vkResetCommandBuffer", C.vkflowResetCommandBuffer(c))
}

// BufferBarrier is a buffer memory barrier. Use QueueFamilyIgnored for both
// families unless it transfers ownership.
type BufferBarrier struct {
	Buffer    Buffer
	Offset    uint64
	Size      uint64
	SrcAccess uint32
	DstAccess uint32
	SrcFamily uint32
	DstFamily uint32
}

// CmdPipelineBarrier records one pipeline barrier with an optional global
// memory barrier (when either access mask is non-zero) and buffer barriers.
// bufs must not hold Go pointers (it does not); keep it in scratch.
func CmdPipelineBarrier(c CommandBuffer, srcStages, dstStages, memSrcAccess, memDstAccess uint32, bufs []BufferBarrier) {
	var p *C.vkflowBufferBarrier
	if len(bufs) > 0 {
		p = (*C.vkflowBufferBarrier)(unsafe.Pointer(&bufs[0]))
	}
	C.vkflowCmdPipelineBarrier(c, C.uint32_t(srcStages), C.uint32_t(dstStages), C.uint32_t(memSrcAccess), C.uint32_t(memDstAccess), C.uint32_t(len(bufs)), p)
}

// CmdBindComputePipeline binds a compute pipeline.
func CmdBindComputePipeline(c CommandBuffer, p Pipeline) {
	C.vkflowCmdBindComputePipeline(c, C.uint64_t(p))
}

// CmdBindDescriptorSet binds set 0 of a compute pipeline layout.
func CmdBindDescriptorSet(c CommandBuffer, l PipelineLayout, s DescriptorSet) {
	C.vkflowCmdBindDescriptorSet(c, C.uint64_t(l), C.uint64_t(s))
}

// CmdPushConstants records push constants at offset 0.
func CmdPushConstants(c CommandBuffer, l PipelineLayout, data []byte) {
	if len(data) == 0 {
		return
	}
	C.vkflowCmdPushConstants(c, C.uint64_t(l), C.uint32_t(len(data)), unsafe.Pointer(&data[0]))
}

// CmdDispatch records a dispatch.
func CmdDispatch(c CommandBuffer, x, y, z uint32) {
	C.vkflowCmdDispatch(c, C.uint32_t(x), C.uint32_t(y), C.uint32_t(z))
}

// CmdDispatchBase records a dispatch whose workgroup IDs start at base.
// Pipelines created by CreateComputePipeline allow it.
func CmdDispatchBase(c CommandBuffer, bx, by, bz, x, y, z uint32) {
	C.vkflowCmdDispatchBase(c, C.uint32_t(bx), C.uint32_t(by), C.uint32_t(bz), C.uint32_t(x), C.uint32_t(y), C.uint32_t(z))
}

// CopyRegion is a VkBufferCopy.
type CopyRegion struct {
	SrcOffset uint64
	DstOffset uint64
	Size      uint64
}

// CmdCopyBuffer records a buffer copy.
func CmdCopyBuffer(c CommandBuffer, src, dst Buffer, regions []CopyRegion) {
	if len(regions) == 0 {
		return
	}
	C.vkflowCmdCopyBuffer(c, C.uint64_t(src), C.uint64_t(dst), C.uint32_t(len(regions)), (*C.vkflowCopyRegion)(unsafe.Pointer(&regions[0])))
}

// CmdFillBuffer fills size bytes (a multiple of 4) at offset with data.
func CmdFillBuffer(c CommandBuffer, b Buffer, offset, size uint64, data uint32) {
	C.vkflowCmdFillBuffer(c, C.uint64_t(b), C.uint64_t(offset), C.uint64_t(size), C.uint32_t(data))
}

// CmdResetQueryPool resets queries before they are written.
func CmdResetQueryPool(c CommandBuffer, p QueryPool, first, count uint32) {
	C.vkflowCmdResetQueryPool(c, C.uint64_t(p), C.uint32_t(first), C.uint32_t(count))
}

// CmdWriteTimestamp writes a timestamp when stage completes.
func CmdWriteTimestamp(c CommandBuffer, stage uint32, p QueryPool, query uint32) {
	C.vkflowCmdWriteTimestamp(c, C.uint32_t(stage), C.uint64_t(p), C.uint32_t(query))
}
