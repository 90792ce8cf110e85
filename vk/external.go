package vk

/*
#include "vk.h"
*/
import "C"

import (
	"fmt"
	"slices"

	"github.com/vkflow/vkflow/internal/fault"
)

// Extensions for memory and timeline semaphores shared as opaque file
// descriptors with other devices, processes and APIs. VK_KHR_external_memory
// and VK_KHR_external_semaphore, which they build on, are core in Vulkan 1.1.
const (
	ExternalMemoryFDExtension    = "VK_KHR_external_memory_fd"
	ExternalSemaphoreFDExtension = "VK_KHR_external_semaphore_fd"
)

// Opaque fd handle types (VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT,
// VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT).
const (
	ExternalMemoryOpaqueFD    = C.VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT
	ExternalSemaphoreOpaqueFD = C.VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT
)

// ExternalSupport is what a driver can do with one external handle type
// (VkExternalMemoryProperties, VkExternalSemaphoreProperties).
type ExternalSupport struct {
	Exportable    bool // objects can be exported as this handle type
	Importable    bool // handles of this type can be imported
	DedicatedOnly bool // memory only: exports and imports need a dedicated allocation
	// ExportFromImported and Compatible are the handle type bits of the
	// same names.
	ExportFromImported uint32
	Compatible         uint32
}

// ExternalBufferSupport asks whether buffers with usage can live in memory
// shared as handleType (vkGetPhysicalDeviceExternalBufferProperties).
func ExternalBufferSupport(pd PhysicalDevice, usage, handleType uint32) ExternalSupport {
	p := C.vkflowExternalBufferProperties(pd, C.uint32_t(usage), C.uint32_t(handleType))
	f := uint32(p.features)
	return ExternalSupport{
		Exportable:         f&C.VK_EXTERNAL_MEMORY_FEATURE_EXPORTABLE_BIT != 0,
		Importable:         f&C.VK_EXTERNAL_MEMORY_FEATURE_IMPORTABLE_BIT != 0,
		DedicatedOnly:      f&C.VK_EXTERNAL_MEMORY_FEATURE_DEDICATED_ONLY_BIT != 0,
		ExportFromImported: uint32(p.exportFrom),
		Compatible:         uint32(p.compatible),
	}
}

// ExternalTimelineSupport asks whether timeline semaphores can be shared as
// handleType (vkGetPhysicalDeviceExternalSemaphoreProperties with a
// VkSemaphoreTypeCreateInfo for a timeline chained).
func ExternalTimelineSupport(pd PhysicalDevice, handleType uint32) ExternalSupport {
	p := C.vkflowExternalTimelineProperties(pd, C.uint32_t(handleType))
	f := uint32(p.features)
	return ExternalSupport{
		Exportable:         f&C.VK_EXTERNAL_SEMAPHORE_FEATURE_EXPORTABLE_BIT != 0,
		Importable:         f&C.VK_EXTERNAL_SEMAPHORE_FEATURE_IMPORTABLE_BIT != 0,
		ExportFromImported: uint32(p.exportFrom),
		Compatible:         uint32(p.compatible),
	}
}

// Physical returns the physical device the device was created on.
func (d *Device) Physical() PhysicalDevice { return d.physical }

// loadExternal resolves the KHR functions of the enabled fd extensions.
func (d *Device) loadExternal(exts []string) {
	mem := slices.Contains(exts, ExternalMemoryFDExtension)
	sem := slices.Contains(exts, ExternalSemaphoreFDExtension)
	if !mem && !sem {
		return
	}
	d.ext = C.vkflowLoadExternalFuncs(d.handle, cbool(mem), cbool(sem))
}

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// notEnabled is the error of a call whose extension the device lacks.
func notEnabled(call, ext string) error {
	return fmt.Errorf("vulkan: %s: %s is not enabled on the device: %w", call, ext, ErrNotSupported)
}

// ExternalMemoryFD reports whether vkGetMemoryFdKHR is available
// (ExternalMemoryFDExtension enabled).
func (d *Device) ExternalMemoryFD() bool { return d.ext.getMemoryFd != nil }

// ExternalSemaphoreFD reports whether vkGetSemaphoreFdKHR and
// vkImportSemaphoreFdKHR are available (ExternalSemaphoreFDExtension
// enabled).
func (d *Device) ExternalSemaphoreFD() bool {
	return d.ext.getSemaphoreFd != nil && d.ext.importSemaphoreFd != nil
}

// CreateExternalBuffer is CreateBuffer for a buffer bound to memory that is
// exported or imported as one of handleTypes
// (VkExternalMemoryBufferCreateInfo).
func (d *Device) CreateExternalBuffer(size uint64, usage, handleTypes uint32, families ...uint32) (Buffer, error) {
	var fp *C.uint32_t
	if len(families) > 1 {
		fp = (*C.uint32_t)(&families[0])
	}
	r := C.vkflowCreateBuffer(d.handle, C.uint64_t(size), C.uint32_t(usage), C.uint32_t(len(families)), fp, C.uint32_t(handleTypes))
	return Buffer(r.handle), check("vkCreateBuffer", r.result)
}

// AllocateExportableMemory allocates memory that can be exported as
// handleTypes (VkExportMemoryAllocateInfo), dedicated to one buffer
// (VkMemoryDedicatedAllocateInfo) unless dedicated is 0. Fault injection
// treats it as vkAllocateMemory.
func (d *Device) AllocateExportableMemory(size uint64, typeIndex, handleTypes uint32, dedicated Buffer) (DeviceMemory, error) {
	if r, ok := injected(fault.AllocateMemory); ok {
		return 0, check("vkAllocateMemory", r)
	}
	r := C.vkflowAllocateExternalMemory(d.handle, C.vkflowExternalAlloc{
		size:        C.uint64_t(size),
		typeIndex:   C.uint32_t(typeIndex),
		exportTypes: C.uint32_t(handleTypes),
		dedicated:   C.uint64_t(dedicated),
	})
	return DeviceMemory(r.handle), check("vkAllocateMemory", r.result)
}

// ImportMemoryFD imports an opaque fd as memory of size bytes and one
// memory type (VkImportMemoryFdInfoKHR), dedicated to one buffer unless
// dedicated is 0. On success the driver owns fd. On failure the
// specification leaves fd with the caller, but some drivers close it
// anyway (see package core's ImportFD).
func (d *Device) ImportMemoryFD(fd int, size uint64, typeIndex uint32, dedicated Buffer) (DeviceMemory, error) {
	if !d.ExternalMemoryFD() {
		return 0, notEnabled("vkAllocateMemory", ExternalMemoryFDExtension)
	}
	r := C.vkflowAllocateExternalMemory(d.handle, C.vkflowExternalAlloc{
		size:       C.uint64_t(size),
		typeIndex:  C.uint32_t(typeIndex),
		importType: ExternalMemoryOpaqueFD,
		importFd:   C.int(fd),
		dedicated:  C.uint64_t(dedicated),
	})
	return DeviceMemory(r.handle), check("vkAllocateMemory", r.result)
}

// MemoryFD exports m as a new opaque fd (vkGetMemoryFdKHR), which the
// caller owns.
func (d *Device) MemoryFD(m DeviceMemory) (int, error) {
	if !d.ExternalMemoryFD() {
		return -1, notEnabled("vkGetMemoryFdKHR", ExternalMemoryFDExtension)
	}
	r := C.vkflowGetMemoryFd(d.ext.getMemoryFd, d.handle, C.uint64_t(m), ExternalMemoryOpaqueFD)
	if err := check("vkGetMemoryFdKHR", r.result); err != nil {
		return -1, err
	}
	return int(r.fd), nil
}

// CreateExportableTimeline creates a timeline semaphore that can be
// exported as an opaque fd (VkExportSemaphoreCreateInfo chained with
// VkSemaphoreTypeCreateInfo).
func (d *Device) CreateExportableTimeline(initial uint64) (Semaphore, error) {
	if !d.ExternalSemaphoreFD() {
		return 0, notEnabled("vkCreateSemaphore", ExternalSemaphoreFDExtension)
	}
	r := C.vkflowCreateExportableTimeline(d.handle, C.uint64_t(initial), ExternalSemaphoreOpaqueFD)
	return Semaphore(r.handle), check("vkCreateSemaphore", r.result)
}

// SemaphoreFD exports s as a new opaque fd (vkGetSemaphoreFdKHR), which the
// caller owns.
func (d *Device) SemaphoreFD(s Semaphore) (int, error) {
	if !d.ExternalSemaphoreFD() {
		return -1, notEnabled("vkGetSemaphoreFdKHR", ExternalSemaphoreFDExtension)
	}
	r := C.vkflowGetSemaphoreFd(d.ext.getSemaphoreFd, d.handle, C.uint64_t(s), ExternalSemaphoreOpaqueFD)
	if err := check("vkGetSemaphoreFdKHR", r.result); err != nil {
		return -1, err
	}
	return int(r.fd), nil
}

// ImportSemaphoreFD makes s use the payload of an opaque fd, permanently
// (vkImportSemaphoreFdKHR). On success the driver owns fd.
func (d *Device) ImportSemaphoreFD(s Semaphore, fd int) error {
	if !d.ExternalSemaphoreFD() {
		return notEnabled("vkImportSemaphoreFdKHR", ExternalSemaphoreFDExtension)
	}
	return check("vkImportSemaphoreFdKHR", C.vkflowImportSemaphoreFd(d.ext.importSemaphoreFd, d.handle, C.uint64_t(s), ExternalSemaphoreOpaqueFD, C.int(fd)))
}
