package interop

import (
	"fmt"
	"math"
	"syscall"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/timeline"
)

// Owner is what Import and ImportTimeline take: a *vkflow.Manager.
type Owner = core.Owner

// MemoryHandle is an exported tensor's memory: an opaque file descriptor
// and what an importer needs to know about it. It is a plain value; FD is
// the only part that must not be copied carelessly (see Export).
type MemoryHandle struct {
	// FD is an opaque fd from vkGetMemoryFdKHR for the whole allocation,
	// -1 for none.
	FD int
	// Size is the allocation's size in bytes.
	Size uint64
	// Offset is where the tensor's bytes start in the allocation (0 for
	// vkflow's exports).
	Offset uint64
	// Bytes is the exported tensor's size in bytes.
	Bytes uint64
	// MemoryType is the exporting device's memory type index: an opaque
	// fd must be imported with the same one.
	MemoryType uint32
	// Dedicated reports that the allocation is dedicated to one buffer;
	// the importer must import it dedicated too (vkflow's exports always
	// are).
	Dedicated bool
	// DeviceUUID and DriverUUID are the exporting device's
	// (VkPhysicalDeviceIDProperties); an import needs both to match.
	DeviceUUID [16]byte
	DriverUUID [16]byte
}

// String prints the handle with sizes and UUIDs in hex.
func (h MemoryHandle) String() string {
	d := ""
	if h.Dedicated {
		d = ", dedicated"
	}
	return fmt.Sprintf("MemoryHandle{fd %d, size %#x, offset %#x, bytes %#x, memory type %d%s, device %x, driver %x}",
		h.FD, h.Size, h.Offset, h.Bytes, h.MemoryType, d, h.DeviceUUID, h.DriverUUID)
}

// Supported returns nil when the owner's device can export and import
// tensor memory as opaque fds, else an error wrapping ErrUnsupported that
// names what is missing (VK_KHR_external_memory_fd, say), or ErrClosed for
// a closed Manager.
func Supported(o Owner) error {
	d, err := core.From(o)
	if err != nil {
		return err
	}
	if err := d.MemorySupport(core.TensorUsage, false); err != nil {
		return err
	}
	return d.MemorySupport(core.TensorUsage, true)
}

// TimelinesSupported returns nil when the owner's device can export and
// import timeline semaphores as opaque fds, else an error wrapping
// ErrUnsupported naming VK_KHR_external_semaphore_fd (lavapipe lacks it:
// use a host relay, see the package documentation).
func TimelinesSupported(o Owner) error {
	d, err := core.From(o)
	if err != nil {
		return err
	}
	return d.TimelineSupport()
}

// Export exports t's memory as a new opaque fd. t must have been created
// with tensor.Exportable(). Each call returns a new fd, which the caller
// owns: close it, or hand it to Import (or to CUDA, which takes it over
// on a successful import). The memory lives as long as any fd or import
// of it: closing t, or its Manager, later does not invalidate an importer's
// tensor.
//
// Errors: ErrInvalid for a nil tensor or one that is not exportable,
// ErrClosed for a closed tensor or Manager, ErrUnsupported without
// VK_KHR_external_memory_fd.
func Export(t *tensor.Tensor) (MemoryHandle, error) {
	none := MemoryHandle{FD: -1}
	if t == nil {
		return none, core.Invalid("Export: nil tensor")
	}
	obj := t.Object()
	if !obj.TryAcquire() {
		return none, core.Closed("tensor")
	}
	defer obj.Release()
	m, err := obj.Device().ExportFD(t.Allocation())
	if err != nil {
		return none, fmt.Errorf("Export: %w", err)
	}
	return MemoryHandle{FD: m.FD, Size: m.Size, Offset: m.Offset, Bytes: t.Bytes(), MemoryType: m.MemoryType,
		Dedicated: m.Dedicated, DeviceUUID: m.DeviceUUID, DriverUUID: m.DriverUUID}, nil
}

// Import imports exported memory into the owner's device and returns a
// Device tensor of dtype and shape over it, zero-copy for the host where
// the memory type is host-visible (and, if it is not host-coherent, the
// tensor starts on a multiple of nonCoherentAtomSize); elsewhere, as for
// an export in a type the host cannot map (a discrete GPU's device-local
// memory), its host reads and writes are copies. Before the driver sees
// the fd it checks that h.DeviceUUID and h.DriverUUID are the importing
// device's (ErrInvalid naming both), that dtype×shape fits the exported
// tensor (h.Bytes, at h.Offset within h.Size), that the memory type
// exists, and that h.FD is an open fd of a kind that can hold memory (a
// pipe cannot).
//
// Import always consumes h.FD: on success Vulkan owns it, on failure Import
// closes it; the caller never touches it again. Two exceptions, both
// ErrInvalid and left alone: an fd that is not open, and a value that
// cannot be an fd at all (negative, or beyond int32: an fd is a C int, and
// Import checks this first, so it never closes or imports the fd that the
// low 32 bits of such a value would name).
//
// The tensor is an ordinary tensor of the importing Manager: Close it (or
// the Manager) when done. Nothing orders its reads and writes against the
// exporter's: use a timeline or a host relay.
func Import(o Owner, h MemoryHandle, dtype tensor.Dtype, shape []int) (*tensor.Tensor, error) {
	if err := core.CheckFD("Import", h.FD); err != nil {
		return nil, err // not an fd: nothing to consume
	}
	d, err := core.Enter(o)
	if err != nil {
		closeFD(h.FD)
		return nil, fmt.Errorf("Import: %w", err)
	}
	defer d.Exit()
	n, err := byteSize(dtype, shape)
	if err != nil {
		closeFD(h.FD)
		return nil, fmt.Errorf("Import: %w", err)
	}
	if n > h.Bytes || h.Offset > h.Size || h.Bytes > h.Size-h.Offset {
		closeFD(h.FD)
		return nil, core.Invalid("Import: %v%v (%d bytes) does not fit the exported tensor (%d bytes at offset %d of %d)",
			dtype, shape, n, h.Bytes, h.Offset, h.Size)
	}
	a, err := d.ImportFD(core.ExternalMemory{FD: h.FD, Size: h.Size, Offset: h.Offset, MemoryType: h.MemoryType,
		Dedicated: h.Dedicated, DeviceUUID: h.DeviceUUID, DriverUUID: h.DriverUUID}, core.TensorBufferSize(h.Bytes), core.TensorUsage)
	if err != nil {
		return nil, fmt.Errorf("Import: %w", err)
	}
	t, err := tensor.Adopt(d, a, dtype, shape, false, nil)
	if err != nil {
		d.Free(a)
		return nil, fmt.Errorf("Import: %w", err)
	}
	return t, nil
}

// byteSize returns the bytes of a dtype×shape tensor, or ErrInvalid.
func byteSize(dtype tensor.Dtype, shape []int) (uint64, error) {
	if !dtype.Valid() {
		return 0, core.Invalid("unknown dtype %v", dtype)
	}
	n := uint64(dtype.Size())
	for _, s := range shape {
		if s < 0 {
			return 0, core.Invalid("tensor shape %v has a negative dimension", shape)
		}
		if s > 0 && n > math.MaxInt64/uint64(s) {
			return 0, core.Invalid("tensor shape %v overflows", shape)
		}
		n *= uint64(s)
	}
	return n, nil
}

// closeFD closes an fd the caller handed over (checked with core.CheckFD).
func closeFD(fd int) {
	if core.ValidFD(fd) {
		syscall.Close(fd)
	}
}

// ExportTimeline exports a timeline created with timeline.Exportable() as
// a new opaque fd (vkGetSemaphoreFdKHR), which the caller owns.
//
// Errors: ErrUnsupported naming VK_KHR_external_semaphore_fd where the
// device cannot share timelines (lavapipe), ErrInvalid for a nil or
// non-exportable timeline, ErrClosed for a closed one.
func ExportTimeline(t *timeline.Timeline) (int, error) {
	if t == nil {
		return -1, core.Invalid("ExportTimeline: nil timeline")
	}
	obj := t.Object()
	if !obj.TryAcquire() {
		return -1, core.Closed("timeline")
	}
	defer obj.Release()
	fd, err := obj.Device().ExportTimelineFD(t.State())
	if err != nil {
		return -1, fmt.Errorf("ExportTimeline: %w", err)
	}
	return fd, nil
}

// ImportTimeline imports an exported timeline semaphore's fd into a new
// timeline of the owner's device (vkImportSemaphoreFdKHR), starting at the
// semaphore's current value. It consumes fd as Import does (a value outside
// 0..MaxInt32 is ErrInvalid, checked first, and nothing is closed). The timeline is
// shared: submits that wait on it go to the driver at once, so the other
// side must signal what they wait for.
func ImportTimeline(o Owner, fd int) (*timeline.Timeline, error) {
	if err := core.CheckFD("ImportTimeline", fd); err != nil {
		return nil, err // not an fd: nothing to consume
	}
	d, err := core.Enter(o)
	if err != nil {
		closeFD(fd)
		return nil, fmt.Errorf("ImportTimeline: %w", err)
	}
	defer d.Exit()
	sem, v, err := d.ImportTimelineFD(fd)
	if err != nil {
		return nil, fmt.Errorf("ImportTimeline: %w", err)
	}
	t, err := timeline.Adopt(d, sem, v)
	if err != nil {
		return nil, fmt.Errorf("ImportTimeline: %w", err)
	}
	return t, nil
}
