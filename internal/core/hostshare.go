package core

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Zero-copy host imports that alias.
//
// Each ImportHost is a VkDeviceMemory and a VkBuffer of its own, and the
// hazard tracking (within a command buffer and across submits) is keyed by
// VkBuffer: two imports of overlapping host memory (a NumPy array and a
// slice of it, or one array imported twice) would be two buffers to it, and
// a GPU write through one would not be ordered before a read through the
// other. Nor can the synchronization validation layer see it: it tracks
// each VkDeviceMemory on its own.
//
// So the device keeps its live host imports by host address range (the
// tensor's bytes, [addr, addr+size)), and ImportHostShared never makes a
// second import over bytes a live one covers:
//   - a range that starts where a live import starts and ends within it
//     (the same array again, a prefix slice) becomes a view of that import:
//     the same VkBuffer, bound from offset 0 with the new, shorter size,
//     like a kDLVulkan view, so both are one buffer to the barriers;
//   - any other overlap is refused with a *HostAliasError (which is
//     ErrUnsupported: the caller copies, or fails when it may not copy). A
//     range inside a live import at a later start would need a view at an
//     offset in its buffer, and vkflow's tensors begin at offset 0 of their
//     VkBuffer (descriptors, copies, fills and the graph's ranges assume
//     it); a range that covers a live import and more would need the live
//     import to become a view of the new one, and a live tensor cannot
//     change its buffer;
//   - so is a range in a mapped memory block of the device's own allocator
//     (a vkflow tensor exported to the host and handed back by another
//     framework). vkflow's own export handed straight back is recognised
//     by package dlpack, which makes it a view of the tensor.
//
// Live imports are therefore pairwise disjoint. An entry lives as long as
// its memory: until every tensor over it (the first and its views) has
// been destroyed, which happens once each is closed and the GPU has
// finished with it, not at Close.

// hostImports is a device's registry of live zero-copy host imports. The
// zero value is ready to use.
type hostImports struct {
	// importMu serializes imports, so that two imports of one range cannot
	// both find it free; it is held across vkAllocateMemory (the import),
	// and never taken by drops, which run from destruction (collect).
	importMu sync.Mutex
	mu       sync.Mutex
	live     []*hostImport // sorted by addr, disjoint
	off      atomic.Bool   // test-only: SetHostImportSharing(false)
}

// hostImport is one live import, shared by every tensor over it.
type hostImport struct {
	addr, size uint64
	usage      uint32
	alloc      *Allocation // the import itself; freed by the last drop
	refs       int         // holders (tensors) not yet dropped; guarded by hostImports.mu
	release    func()      // the first holder's release: runs after the memory is freed
}

// HostAliasError reports a host range that overlaps a live zero-copy import
// of the same device and cannot be served as a view of it. It matches
// ErrUnsupported (errors.Is): the range cannot be imported without a copy.
type HostAliasError struct {
	Addr, Size         uint64 // the range asked for
	LiveAddr, LiveSize uint64 // the live import it overlaps
	// Own: the live range is not an import but a memory block of vkflow's
	// own allocator, mapped for the host.
	Own bool
	// Why says how they overlap and why no view can serve it.
	Why string
}

func (e *HostAliasError) Error() string {
	what := "the live zero-copy import of"
	if e.Own {
		what = "vkflow's own memory block"
	}
	return fmt.Sprintf("host range [%#x, %#x) (%d bytes) overlaps %s [%#x, %#x) (%d bytes) on this device: %s; a second buffer over that memory would alias it with no barrier between them",
		e.Addr, e.Addr+e.Size, e.Size, what, e.LiveAddr, e.LiveAddr+e.LiveSize, e.LiveSize, e.Why)
}

// Is makes a HostAliasError match ErrUnsupported.
func (e *HostAliasError) Is(target error) bool { return target == ErrUnsupported }

// SetHostImportSharing turns the host import registry off or on (on by
// default). It exists for the test that shows what the registry prevents:
// with it off, every ImportHostShared is a separate import, as before, and
// aliasing imports are separate VkBuffers with no barriers between them.
func (d *Device) SetHostImportSharing(on bool) { d.foreign.hosts.off.Store(!on) }

// LiveHostImports returns how many host imports are live, for tests.
func (d *Device) LiveHostImports() int {
	r := &d.foreign.hosts
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.live)
}

// ImportHostShared is ImportHost for a tensor that may alias other imports
// of this device (see the top of this file). It returns the allocation for
// one holder, which the holder frees with Free once the GPU has finished
// its uses (Free leaves the shared buffer alone), and drop, which the
// holder calls exactly once after that. drop runs release: for the holder
// whose call made the import, after the import's memory is freed, once
// every holder has dropped; for a holder that got a view of a live import,
// at once (the first holder's producer keeps the memory alive).
//
// A range that overlaps a live import but cannot be its view, or overlaps
// the allocator's own mapped memory, fails with a *HostAliasError; other
// failures are ImportHost's. On failure release has not run.
func (d *Device) ImportHostShared(p unsafe.Pointer, size uint64, usage uint32, release func()) (a *Allocation, drop func(), err error) {
	r := &d.foreign.hosts
	if r.off.Load() || !d.HostImport || p == nil || size == 0 {
		// Not tracked: the holder's Free frees the import itself.
		a, err := d.ImportHost(p, size, usage)
		if err != nil {
			return nil, nil, err
		}
		var once sync.Once
		return a, func() { once.Do(release) }, nil
	}
	if err := d.Enter(); err != nil {
		return nil, nil, err
	}
	defer d.Exit()
	addr := uint64(uintptr(p))
	if addr+size < addr {
		return nil, nil, Invalid("ImportHost: range at %#x of %d bytes wraps", addr, size)
	}
	r.importMu.Lock()
	defer r.importMu.Unlock()

	r.mu.Lock()
	e, err := r.find(addr, size, usage)
	if e != nil {
		e.refs++ // under mu: the last drop cannot free it meanwhile
	}
	r.mu.Unlock()
	var once sync.Once
	switch {
	case err != nil:
		return nil, nil, err
	case e != nil:
		return e.alloc.Prefix(size), func() {
			once.Do(func() {
				release()
				d.dropHostImport(e)
			})
		}, nil
	}
	if lo, hi, ok := d.ownMemory(addr, addr+size); ok {
		return nil, nil, &HostAliasError{Addr: addr, Size: size, LiveAddr: lo, LiveSize: hi - lo, Own: true,
			Why: "the range is this Manager's own mapped memory (a vkflow tensor exported to the host and handed back through another framework); import vkflow's own DLPack export of the tensor for a view of it"}
	}

	imp, err := d.ImportHost(p, size, usage)
	if err != nil {
		return nil, nil, err
	}
	// Every holder's tensor tracks its uses in one record (Prefix shares
	// it): a wait on a view covers the work submitted on the first import.
	imp.uses = make([]atomic.Uint64, len(d.queues))
	imp.failed = new(atomic.Pointer[failedUse])
	e = &hostImport{addr: addr, size: size, usage: usage, alloc: imp, refs: 1, release: release}
	r.mu.Lock()
	i := sort.Search(len(r.live), func(i int) bool { return r.live[i].addr > addr })
	r.live = append(r.live, nil)
	copy(r.live[i+1:], r.live[i:])
	r.live[i] = e
	r.mu.Unlock()
	return imp.Prefix(size), func() { once.Do(func() { d.dropHostImport(e) }) }, nil
}

// find returns the live import that [addr, addr+size) is a view of, nil
// when it overlaps none, or a *HostAliasError. Called with r.mu held.
func (r *hostImports) find(addr, size uint64, usage uint32) (*hostImport, error) {
	end := addr + size
	// The first import ending after addr is the only candidate for a view,
	// and the first overlap there is (the imports are disjoint and sorted).
	i := sort.Search(len(r.live), func(i int) bool { return r.live[i].addr+r.live[i].size > addr })
	if i == len(r.live) || r.live[i].addr >= end {
		return nil, nil
	}
	e := r.live[i]
	eEnd := e.addr + e.size
	why := ""
	switch {
	case e.addr == addr && end <= eEnd && usage&^e.usage == 0:
		return e, nil
	case e.addr == addr && end <= eEnd:
		why = fmt.Sprintf("it was imported for buffer usage %#x, the range needs %#x", e.usage, usage)
	case e.addr <= addr && end <= eEnd:
		why = fmt.Sprintf("the range lies inside it, %d bytes from its start; a vkflow tensor begins at offset 0 of its VkBuffer, so only a range starting where the live import starts can be a view of it", addr-e.addr)
	case addr <= e.addr && eEnd <= end:
		why = "the range covers it and more; the live import's tensors cannot move to a new buffer"
	default:
		why = "they overlap partially"
	}
	return nil, &HostAliasError{Addr: addr, Size: size, LiveAddr: e.addr, LiveSize: e.size, Why: why}
}

// Prefix returns a view of a's first size bytes (at most a.Size): the same
// VkBuffer from offset 0, the same memory and mapping, which Free leaves
// alone. The caller keeps a alive until the view is freed.
func (a *Allocation) Prefix(size uint64) *Allocation {
	return &Allocation{Buffer: a.Buffer, Size: min(size, a.Size), Mapped: a.Mapped, Kind: a.Kind, block: a.block, offset: a.offset, span: min(size, a.Size), view: true, uses: a.uses, failed: a.failed}
}

// ShareUses makes view, a new allocation over root's buffer (a dlpack
// import of a buffer vkflow exported), share root's record of uses. Call
// it before a tensor adopts view.
func (view *Allocation) ShareUses(root *Allocation) {
	view.uses, view.failed = root.uses, root.failed
}

// ownMemory returns the mapped range of a memory block of the device's
// allocator that [addr, end) overlaps, if any: memory of vkflow's own
// tensors (or its staging ring), which an import would alias.
func (d *Device) ownMemory(addr, end uint64) (lo, hi uint64, ok bool) {
	m := &d.mem
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, bs := range m.blocks {
		for _, b := range bs {
			if b.mapped == nil {
				continue
			}
			lo := uint64(uintptr(b.mapped))
			if hi := lo + b.size; addr < hi && lo < end {
				return lo, hi, true
			}
		}
	}
	return 0, 0, false
}

// dropHostImport drops one holder of e; the last frees the import and runs
// the first holder's release.
func (d *Device) dropHostImport(e *hostImport) {
	r := &d.foreign.hosts
	r.mu.Lock()
	e.refs--
	last := e.refs == 0
	if last {
		for i, x := range r.live {
			if x == e {
				r.live = append(r.live[:i], r.live[i+1:]...)
				break
			}
		}
	}
	r.mu.Unlock()
	if last {
		d.Free(e.alloc)
		e.release()
	}
}
