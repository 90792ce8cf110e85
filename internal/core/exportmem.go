package core

import (
	"errors"
	"fmt"
	"syscall"
	"unsafe"

	"github.com/vkflow/vkflow/vk"
)

// This file shares memory and timeline semaphores with other devices,
// processes and APIs as opaque file descriptors (VK_KHR_external_memory_fd,
// VK_KHR_external_semaphore_fd); package interop is its public face.
//
// Memory: an exportable buffer gets a VkDeviceMemory of its own, never a
// range of a shared block, so an export exposes that buffer only. The
// allocation is always dedicated to the buffer (VkMemoryDedicatedAllocateInfo,
// core since Vulkan 1.1): drivers that require dedicated exports get it, the
// others accept it, and there is one code path, tested everywhere. The
// memory becomes a dedicated block of the allocator, so that Free, MemStats
// and Close treat it like any other. It is mapped when its memory type is
// host-visible (by the rules Alloc follows), so host access is zero-copy.
//
// File descriptors: an export returns a new fd the caller owns. ImportFD
// always consumes its fd: Vulkan owns it after a successful import, and on
// any failure it is closed here, exactly once. (lavapipe closes the fd
// itself when its import fails, against the specification; ImportFD knows,
// and does not close it twice.) Concurrent imports of one allocation are
// safe: see importfd.go.

// external marks a block shared as an opaque fd.
type external struct {
	dedicated bool // bound to one buffer through VkMemoryDedicatedAllocateInfo
	imported  bool // imported from an fd, not allocated here
}

// ExternalMemory describes memory shared as an opaque fd: what Export
// returns and what an importer needs.
type ExternalMemory struct {
	FD         int
	Size       uint64 // the VkDeviceMemory's allocationSize
	Offset     uint64 // where the buffer is bound in it
	MemoryType uint32 // the exporting device's memory type index
	Dedicated  bool
	DeviceUUID [16]byte
	DriverUUID [16]byte
}

// MemorySupport returns nil when buffers with usage can be exported (or,
// with imports, imported) as opaque fds, else an error wrapping
// ErrUnsupported that says why.
func (d *Device) MemorySupport(usage uint32, imports bool) error {
	if !d.ExternalMemoryFD {
		return Unsupported("%s lacks %s: memory cannot be shared as a file descriptor", d.Info.Name, vk.ExternalMemoryFDExtension)
	}
	s := d.externalBufferSupport(usage)
	if !s.Exportable && !imports {
		return Unsupported("%s cannot export storage buffers as opaque fds (vkGetPhysicalDeviceExternalBufferProperties)", d.Info.Name)
	}
	if !s.Importable && imports {
		return Unsupported("%s cannot import storage buffers from opaque fds (vkGetPhysicalDeviceExternalBufferProperties)", d.Info.Name)
	}
	return nil
}

func (d *Device) externalBufferSupport(usage uint32) vk.ExternalSupport {
	return vk.ExternalBufferSupport(d.VK.Physical(), usage, vk.ExternalMemoryOpaqueFD)
}

// AllocExportable creates a buffer of size bytes with usage in memory of
// its own that can be exported as an opaque fd (ExportFD). The buffer
// reads as zero, like Alloc's.
func (d *Device) AllocExportable(kind MemKind, size uint64, usage uint32) (*Allocation, error) {
	if size == 0 {
		return nil, Invalid("zero-size buffer")
	}
	if err := d.MemorySupport(usage, false); err != nil {
		return nil, err
	}
	if err := d.Enter(); err != nil {
		return nil, err
	}
	defer d.Exit()
	buf, err := d.VK.CreateExternalBuffer(size, usage, vk.ExternalMemoryOpaqueFD, d.families...)
	if err != nil {
		return nil, d.check(err)
	}
	req := d.VK.BufferMemoryRequirements(buf)
	// Only the types exportable buffers allow (a discrete GPU may leave
	// its host-visible device-local type out): a Device buffer in a type
	// the host cannot map is not mapped, and its host access is staged.
	typeIdx, flags, ok := d.chooseType(kind, req.TypeBits)
	if !ok {
		d.VK.DestroyBuffer(buf)
		return nil, Unsupported("%s has no memory type for exportable %v buffers among the types they allow (%#x)", d.Info.Name, kind, req.TypeBits)
	}
	mem, err := d.VK.AllocateExportableMemory(req.Size, typeIdx, vk.ExternalMemoryOpaqueFD, buf)
	if err != nil {
		d.VK.DestroyBuffer(buf)
		return nil, d.check(err)
	}
	a, err := d.adoptExternal(buf, mem, typeIdx, flags, req.Size, 0, size, kind, &external{dedicated: true})
	if err != nil {
		return nil, err
	}
	if err := d.zeroExternal(a); err != nil {
		d.Free(a)
		return nil, err
	}
	return a, nil
}

// adoptExternal binds buf to mem at offset, maps mem where mapsExternal
// says, and registers it as a dedicated block. On error it destroys buf and
// frees mem.
func (d *Device) adoptExternal(buf vk.Buffer, mem vk.DeviceMemory, typeIdx, flags uint32, memSize, offset, bufSize uint64, kind MemKind, ext *external) (*Allocation, error) {
	fail := func(err error) (*Allocation, error) {
		d.VK.DestroyBuffer(buf)
		d.VK.FreeMemory(mem)
		return nil, d.check(err)
	}
	if err := d.VK.BindBufferMemory(buf, mem, offset); err != nil {
		return fail(err)
	}
	var p unsafe.Pointer
	if d.mapsExternal(flags, offset, kind) {
		var err error
		if p, err = d.VK.MapMemory(mem, 0, vk.WholeSize); err != nil {
			return fail(err)
		}
	}
	span := memSize - offset
	b := &block{mem: mem, typeIdx: typeIdx, flags: flags, size: memSize, mapped: p, used: span, dedicate: true, ext: ext}
	m := &d.mem
	m.mu.Lock()
	m.vkAllocs++
	m.live++
	m.blocks[typeIdx] = append(m.blocks[typeIdx], b)
	m.mu.Unlock()
	a := &Allocation{Buffer: buf, Size: bufSize, Kind: kind, block: b, offset: offset, span: span}
	if p != nil {
		a.Mapped = unsafe.Add(p, offset)
	}
	return a, nil
}

// mapsExternal reports whether shared memory of a type with flags, with a
// buffer of kind bound at offset, is mapped for host access. Only a
// host-visible type is: the type an export chose, and an import must use
// (the exporter's, VkImportMemoryFdInfoKHR), may be device-local only (a
// discrete GPU's exportable buffers may not allow its host-visible
// device-local type), and mapping it would be
// VUID-vkMapMemory-memory-00682. Memory that is not host-coherent is mapped
// only where the buffer starts on a multiple of nonCoherentAtomSize, since
// Flush and Invalidate of its range must start on one
// (VUID-VkMappedMemoryRange-offset-00687). Storage buffers and, with
// StagedDeviceMemory, Device buffers are never mapped. What is not mapped
// is read and written through staging copies.
func (d *Device) mapsExternal(flags uint32, offset uint64, kind MemKind) bool {
	if flags&vk.MemoryHostVisible == 0 || kind == MemStorage || (kind == MemDevice && d.Staged) {
		return false
	}
	atom := d.Info.Limits.NonCoherentAtomSize
	return flags&vk.MemoryHostCoherent != 0 || atom <= 1 || offset%atom == 0
}

// zeroExternal clears a fresh exportable buffer: on the host when mapped,
// else by one GPU fill (zero.go), waited on.
func (d *Device) zeroExternal(a *Allocation) error {
	m := &d.mem
	if a.block.mapped != nil {
		clear(unsafe.Slice((*byte)(a.block.mapped), a.block.size))
		m.mu.Lock()
		m.z.hostClears++
		m.mu.Unlock()
		if a.block.flags&vk.MemoryHostCoherent == 0 {
			return d.VK.FlushMemory(a.block.mem, 0, vk.WholeSize)
		}
		return nil
	}
	n := a.Size &^ 3 // vkCmdFillBuffer writes whole words
	if n == 0 || m.z.off.Load() {
		return nil
	}
	m.z.mu.Lock()
	defer m.z.mu.Unlock()
	if err := m.fill(a.Buffer, []span{{0, n}}); err != nil {
		return d.check(err)
	}
	m.mu.Lock()
	m.z.fills++
	m.z.fillBytes += n
	m.mu.Unlock()
	return nil
}

// Exportable reports whether a was made by AllocExportable (and not freed).
func (a *Allocation) Exportable() bool {
	return a != nil && a.block != nil && a.block.ext != nil && !a.block.ext.imported
}

// Imported reports whether a's memory was imported from an fd.
func (a *Allocation) Imported() bool {
	return a != nil && a.block != nil && a.block.ext != nil && a.block.ext.imported
}

// ExportFD exports a's memory as a new opaque fd (vkGetMemoryFdKHR), which
// the caller owns. a must come from AllocExportable and be alive.
func (d *Device) ExportFD(a *Allocation) (ExternalMemory, error) {
	if !d.ExternalMemoryFD {
		return ExternalMemory{FD: -1}, Unsupported("%s lacks %s: memory cannot be shared as a file descriptor", d.Info.Name, vk.ExternalMemoryFDExtension)
	}
	if err := d.Enter(); err != nil {
		return ExternalMemory{FD: -1}, err
	}
	defer d.Exit()
	if !a.Exportable() {
		return ExternalMemory{FD: -1}, Invalid("the buffer's memory is not exportable: create the tensor with tensor.Exportable()")
	}
	fd, err := d.VK.MemoryFD(a.block.mem)
	if err != nil {
		return ExternalMemory{FD: -1}, d.check(err)
	}
	b := a.block
	return ExternalMemory{FD: fd, Size: b.size, Offset: a.offset, MemoryType: b.typeIdx, Dedicated: b.ext.dedicated,
		DeviceUUID: d.Info.DeviceUUID, DriverUUID: d.Info.DriverUUID}, nil
}

// ImportFD imports memory exported as an opaque fd (h, with h.FD) and binds
// a new buffer of bufSize bytes with usage to it at h.Offset; the buffer is
// created exactly as the exporter's must have been (same size and usage)
// when h.Dedicated, as Vulkan requires. It checks, before the driver sees
// the fd, that h's UUIDs are this device's (ErrInvalid naming both), that
// the memory type exists and the range fits, and that the fd is open and
// of a kind that can hold memory (a pipe or socket cannot). The memory
// type is h.MemoryType, the exporter's (an opaque fd is imported with the
// type it was allocated with); the buffer is mapped for zero-copy host
// access only where that type is host-visible here (mapsExternal), and
// otherwise read and written through staging copies.
//
// ImportFD always consumes h.FD: on success Vulkan owns it, on failure it
// is closed (or found closed by the driver already), so the caller never
// touches it again. An fd that is not open is reported, not closed, and so
// is a value outside 0..MaxInt32 (CheckFD), before any system call.
func (d *Device) ImportFD(h ExternalMemory, bufSize uint64, usage uint32) (*Allocation, error) {
	fd := h.FD
	if err := CheckFD("import", fd); err != nil {
		return nil, err // not an fd: nothing to close
	}
	owned := true // closed on return unless handed to Vulkan or not open
	defer func() {
		if owned {
			syscall.Close(fd)
		}
	}()
	if err := d.MemorySupport(usage, true); err != nil {
		return nil, err
	}
	if err := d.Enter(); err != nil {
		return nil, err
	}
	defer d.Exit()
	if h.DeviceUUID != d.Info.DeviceUUID || h.DriverUUID != d.Info.DriverUUID {
		return nil, Invalid("import: the memory comes from another device or driver (device UUID %x, driver UUID %x); %s has device UUID %x, driver UUID %x",
			h.DeviceUUID, h.DriverUUID, d.Info.Name, d.Info.DeviceUUID, d.Info.DriverUUID)
	}
	if int(h.MemoryType) >= len(d.Info.MemoryTypes) {
		return nil, Invalid("import: memory type %d does not exist on %s (it has %d)", h.MemoryType, d.Info.Name, len(d.Info.MemoryTypes))
	}
	if bufSize == 0 || h.Size == 0 || h.Offset > h.Size || bufSize > h.Size-h.Offset {
		return nil, Invalid("import: a buffer of %d bytes at offset %d does not fit memory of %d bytes", bufSize, h.Offset, h.Size)
	}
	if h.Dedicated && h.Offset != 0 {
		return nil, Invalid("import: dedicated memory must be bound at offset 0, not %d", h.Offset)
	}
	if err := d.checkMemoryFD(fd); err != nil {
		if errors.Is(err, syscall.EBADF) {
			owned = false // nothing to close
		}
		return nil, err
	}
	if !h.Dedicated && d.externalBufferSupport(usage).DedicatedOnly {
		return nil, Invalid("import: %s imports opaque fds only as dedicated allocations, and the handle is not dedicated", d.Info.Name)
	}
	buf, err := d.VK.CreateExternalBuffer(bufSize, usage, vk.ExternalMemoryOpaqueFD, d.families...)
	if err != nil {
		return nil, d.check(err)
	}
	req := d.VK.BufferMemoryRequirements(buf)
	switch {
	case req.TypeBits&(1<<h.MemoryType) == 0:
		d.VK.DestroyBuffer(buf)
		return nil, Invalid("import: memory type %d cannot back the buffer (allowed types %#x)", h.MemoryType, req.TypeBits)
	case req.Alignment > 1 && h.Offset%req.Alignment != 0:
		d.VK.DestroyBuffer(buf)
		return nil, Invalid("import: offset %d is not a multiple of the buffer's alignment %d", h.Offset, req.Alignment)
	case req.Size > h.Size-h.Offset:
		d.VK.DestroyBuffer(buf)
		return nil, Invalid("import: the buffer needs %d bytes at offset %d; the memory has %d", req.Size, h.Offset, h.Size)
	case h.Dedicated && req.Size != h.Size:
		// VUID-VkMemoryDedicatedAllocateInfo-buffer-01435
		d.VK.DestroyBuffer(buf)
		return nil, Invalid("import: dedicated memory of %d bytes for a buffer that needs %d: the handle does not match the buffer", h.Size, req.Size)
	}
	var dedicated vk.Buffer
	if h.Dedicated {
		dedicated = buf
	}
	fd, serialize := d.ownOffset(fd) // importfd.go: safe under concurrent imports
	mem, err := d.importMemoryFD(fd, serialize, h.Size, h.MemoryType, dedicated)
	if err != nil {
		d.VK.DestroyBuffer(buf)
		owned = !d.closesFailedImports(err)
		if errors.Is(err, vk.ErrorInvalidExternalHandle) {
			return nil, fmt.Errorf("%w: import of fd %d (%d bytes, memory type %d): %w", ErrInvalid, h.FD, h.Size, h.MemoryType, err)
		}
		return nil, fmt.Errorf("vkflow: import of fd %d (%d bytes, memory type %d): %w", h.FD, h.Size, h.MemoryType, d.check(err))
	}
	owned = false // Vulkan's now, freed with mem
	flags := d.Info.MemoryTypes[h.MemoryType].Flags
	a, err := d.adoptExternal(buf, mem, h.MemoryType, flags, h.Size, h.Offset, bufSize, MemDevice, &external{dedicated: h.Dedicated, imported: true})
	if err != nil {
		return nil, err
	}
	a.MarkWritten() // it holds the exporter's data
	return a, nil
}

// checkMemoryFD refuses fds that cannot be memory before the driver sees
// them: fds that are not open (an error wrapping syscall.EBADF), pipes,
// sockets and directories on every driver (lavapipe would block reading a
// pipe), and on lavapipe, whose opaque fds are memfds, anything but a
// regular file.
func (d *Device) checkMemoryFD(fd int) error {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return fmt.Errorf("%w: import: fd %d: %w", ErrInvalid, fd, err)
	}
	kind := ""
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFIFO:
		kind = "a pipe"
	case syscall.S_IFSOCK:
		kind = "a socket"
	case syscall.S_IFDIR:
		kind = "a directory"
	case syscall.S_IFREG:
		// Exported memory is never a file of a file system: lavapipe's
		// are memfds, other drivers' are driver objects. A file would
		// reach the driver's import and fail there, as
		// VK_ERROR_INVALID_EXTERNAL_HANDLE on lavapipe but
		// VK_ERROR_OUT_OF_DEVICE_MEMORY on NVIDIA's driver.
		if !isMemfd(fd) {
			kind = "a regular file"
		}
	default:
		if d.lavapipe() {
			kind = fmt.Sprintf("a special file (mode %#o), and %s exports memory as memfds", st.Mode, d.Info.DriverName)
		}
	}
	if kind != "" {
		return Invalid("import: fd %d is %s, not exported device memory", fd, kind)
	}
	return nil
}

// isMemfd reports whether fd is a memfd: only memfds answer F_GET_SEALS
// (other files: EINVAL).
func isMemfd(fd int) bool {
	_, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), fGetSeals, 0)
	return e == 0
}

// fGetSeals is F_GET_SEALS (Linux's fcntl.h: F_LINUX_SPECIFIC_BASE + 10).
const fGetSeals = 1034

// lavapipe reports whether the driver is Mesa's lavapipe (llvmpipe).
func (d *Device) lavapipe() bool { return d.Info.DriverName == "llvmpipe" }

// closesFailedImports reports whether the driver closed the fd of an import
// that failed with err. The specification leaves the fd with the
// application, but lavapipe (Mesa 22.3 and later, lvp_AllocateMemory)
// closes it once the import has started, that is on every failure but host
// memory exhaustion, which it meets before.
func (d *Device) closesFailedImports(err error) bool {
	return d.lavapipe() && !errors.Is(err, vk.ErrOutOfHostMemory)
}

// TimelineSupport returns nil when timeline semaphores can be exported and
// imported as opaque fds, else an error wrapping ErrUnsupported naming
// VK_KHR_external_semaphore_fd. Having the extension is not enough: the
// driver must report opaque fds exportable and importable for timeline
// semaphores, asked with a VkSemaphoreTypeCreateInfo for a timeline chained
// (a driver may share binary semaphores only), as
// VUID-VkExportSemaphoreCreateInfo-handleTypes-01124 requires of the
// exportable timelines CreateExportableTimeline creates.
func (d *Device) TimelineSupport() error {
	if !d.ExternalSemaphoreFD {
		return Unsupported("%s lacks %s: timelines cannot be shared as file descriptors (use a host relay)", d.Info.Name, vk.ExternalSemaphoreFDExtension)
	}
	s := externalTimelineSupport(d.VK.Physical(), vk.ExternalSemaphoreOpaqueFD)
	if !s.Exportable || !s.Importable {
		return Unsupported("%s has %s but cannot export and import timeline semaphores as opaque fds (vkGetPhysicalDeviceExternalSemaphoreProperties: exportable %v, importable %v)",
			d.Info.Name, vk.ExternalSemaphoreFDExtension, s.Exportable, s.Importable)
	}
	return nil
}

// externalTimelineSupport is vk.ExternalTimelineSupport; tests replace it
// to stand in for a driver that shares timelines, or one that has the
// extension but shares binary semaphores only.
var externalTimelineSupport = vk.ExternalTimelineSupport

// CreateExportableTimeline creates a timeline semaphore that ExportTimelineFD
// can export. The caller makes its scheduler state with NewTimeline and
// marks it with SetExportable.
func (d *Device) CreateExportableTimeline(initial uint64) (vk.Semaphore, error) {
	if err := d.TimelineSupport(); err != nil {
		return 0, err
	}
	sem, err := d.VK.CreateExportableTimeline(initial)
	return sem, d.check(err)
}

// SetExportable marks t as created by CreateExportableTimeline, and shared:
// from its creation, since its fd may be handed out at any time, the
// scheduler passes waits on it to the driver at once. Call before t is
// used.
func (t *Timeline) SetExportable() {
	t.dev.sched.mu.Lock()
	t.exportable, t.shared = true, true
	t.dev.sched.mu.Unlock()
}

// SetShared marks t as signalled outside this device as well (an imported
// timeline): the scheduler passes waits on it to the driver at once
// instead of holding them until a local signal promises the value. Call
// before t is used.
func (t *Timeline) SetShared() {
	t.dev.sched.mu.Lock()
	t.shared = true
	t.dev.sched.mu.Unlock()
}

// Shared reports whether t is shared (SetShared, SetExportable).
func (t *Timeline) Shared() bool {
	t.dev.sched.mu.Lock()
	defer t.dev.sched.mu.Unlock()
	return t.shared
}

// ExportTimelineFD exports t as a new opaque fd (vkGetSemaphoreFdKHR),
// which the caller owns. t must be exportable (SetExportable).
func (d *Device) ExportTimelineFD(t *Timeline) (int, error) {
	if err := d.TimelineSupport(); err != nil {
		return -1, err
	}
	if err := d.Enter(); err != nil {
		return -1, err
	}
	defer d.Exit()
	d.sched.mu.Lock()
	ok := t.exportable
	d.sched.mu.Unlock()
	if !ok {
		return -1, Invalid("the timeline is not exportable: create it with timeline.Exportable()")
	}
	fd, err := d.VK.SemaphoreFD(t.Sem)
	return fd, d.check(err)
}

// ImportTimelineFD creates a timeline semaphore over the payload of an
// opaque fd (vkImportSemaphoreFdKHR) and returns it with its current value.
// It always consumes fd, as ImportFD does. The caller is inside the gate,
// makes the scheduler state with NewTimeline and marks it with SetShared.
func (d *Device) ImportTimelineFD(fd int) (vk.Semaphore, uint64, error) {
	if err := CheckFD("import", fd); err != nil {
		return 0, 0, err // not an fd: nothing to close
	}
	owned := true
	defer func() {
		if owned {
			syscall.Close(fd)
		}
	}()
	if err := d.TimelineSupport(); err != nil {
		return 0, 0, err
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		owned = false
		return 0, 0, fmt.Errorf("%w: import: fd %d: %w", ErrInvalid, fd, err)
	}
	if m := st.Mode & syscall.S_IFMT; m == syscall.S_IFIFO || m == syscall.S_IFSOCK || m == syscall.S_IFDIR {
		return 0, 0, Invalid("import: fd %d (mode %#o) is not an exported timeline semaphore", fd, st.Mode)
	}
	sem, err := d.VK.CreateTimeline(0)
	if err != nil {
		return 0, 0, d.check(err)
	}
	if err := d.VK.ImportSemaphoreFD(sem, fd); err != nil {
		d.VK.DestroySemaphore(sem)
		if errors.Is(err, vk.ErrorInvalidExternalHandle) {
			return 0, 0, fmt.Errorf("%w: import of timeline fd %d: %w", ErrInvalid, fd, err)
		}
		return 0, 0, fmt.Errorf("vkflow: import of timeline fd %d: %w", fd, d.check(err))
	}
	owned = false
	v, err := d.VK.SemaphoreValue(sem)
	if err != nil {
		d.VK.DestroySemaphore(sem)
		return 0, 0, d.check(err)
	}
	return sem, v, nil
}
