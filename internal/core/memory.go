package core

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/vkflow/vkflow/vk"
)

// MemKind is where a buffer's memory lives.
type MemKind int

// Memory kinds.
const (
	// MemDevice is device-local memory; mapped for zero-copy host access
	// when the device-local memory type is also host-visible.
	MemDevice MemKind = iota
	// MemHost is host-visible, coherent memory.
	MemHost
	// MemStorage is GPU-only memory with no host access.
	MemStorage
)

func (k MemKind) String() string {
	switch k {
	case MemDevice:
		return "Device"
	case MemHost:
		return "Host"
	case MemStorage:
		return "Storage"
	}
	return fmt.Sprintf("MemKind(%d)", int(k))
}

// blockSize is the size of the memory blocks buffers are carved from.
// Larger buffers get a block of their own.
const blockSize = 64 << 20

// Allocation is a buffer bound to a range of a memory block.
type Allocation struct {
	Buffer vk.Buffer
	Size   uint64         // the buffer's size in bytes
	Mapped unsafe.Pointer // host address, nil without host access
	Kind   MemKind

	block  *block
	offset uint64 // in the block
	span   uint64 // bytes taken from the block
	view   bool   // another owner's buffer: Free leaves it alone
	// uses is the per-physical-queue last use of the buffer, shared by
	// every handle of it (Prefix views, dlpack views: ShareUses), so that
	// a use marked through one tensor is waited for through every other
	// (Object.TrackUses). Nil until a tensor over the buffer exists.
	uses   []atomic.Uint64
	failed *atomic.Pointer[failedUse] // shared like uses (Object.Fail)

	// written is set once anything may have written the buffer: the host
	// (a write, a mapped accessor, an import) or recorded GPU work. Package
	// graph warns about reads of buffers nothing wrote.
	written atomic.Bool

	pin pinState // pin.go
}

// MarkWritten records that the buffer may hold data.
func (a *Allocation) MarkWritten() { a.written.Store(true) }

// Written reports whether MarkWritten was called.
func (a *Allocation) Written() bool { return a.written.Load() }

// Coherent reports whether host writes need no flush.
func (a *Allocation) Coherent() bool { return a.block.flags&vk.MemoryHostCoherent != 0 }

// Bytes returns the mapped memory as a byte slice, nil without host access.
func (a *Allocation) Bytes() []byte {
	if a.Mapped == nil {
		return nil
	}
	return unsafe.Slice((*byte)(a.Mapped), a.Size)
}

type span struct{ off, size uint64 }

type block struct {
	mem      vk.DeviceMemory
	typeIdx  uint32
	flags    uint32
	size     uint64
	mapped   unsafe.Pointer
	free     []span // sorted by offset, coalesced
	used     uint64
	dedicate bool
	// zbuf covers the whole block for zero fills (zero.go); 0 for memory
	// cleared on the host. dirty lists free bytes not known to be zero,
	// sorted and coalesced.
	zbuf  vk.Buffer
	dirty []span
	// ext is set for memory shared as an opaque fd (exportmem.go): a
	// dedicated block of one exportable or imported buffer.
	ext *external
	// hostMem is set for the host's own memory imported by ImportHost:
	// it is read through its mapping whatever its memory type's flags.
	hostMem bool
}

// allocator sub-allocates buffers from large blocks, one list per memory
// type. Alignment follows the buffer's requirements, the storage buffer
// offset alignment and, for non-coherent memory, nonCoherentAtomSize.
type allocator struct {
	dev    *Device
	mu     sync.Mutex
	blocks map[uint32][]*block
	z      zeroer
	// counters, for tests and benchmarks
	vkAllocs int
	live     int
}

func (m *allocator) init(d *Device) {
	m.dev = d
	m.blocks = make(map[uint32][]*block)
}

// MemStats counts allocator activity.
type MemStats struct {
	Blocks      int // VkDeviceMemory objects alive
	Allocations int // buffers alive
	TotalAllocs int // vkAllocateMemory calls so far
	BlockBytes  uint64
	// New buffers are zeroed: by GPU fills (one submit zeroing every dirty
	// range of a block) or on the host for mapped memory.
	ZeroFills     int    // fill submits so far
	ZeroFillBytes uint64 // bytes they zeroed
	HostClears    int    // buffers cleared on the host so far
}

// MemStats returns the allocator's counters.
func (d *Device) MemStats() MemStats {
	m := &d.mem
	m.mu.Lock()
	defer m.mu.Unlock()
	s := MemStats{Allocations: m.live, TotalAllocs: m.vkAllocs, ZeroFills: m.z.fills, ZeroFillBytes: m.z.fillBytes, HostClears: m.z.hostClears}
	for _, bs := range m.blocks {
		s.Blocks += len(bs)
		for _, b := range bs {
			s.BlockBytes += b.size
		}
	}
	return s
}

// DeviceMemoryMapped reports whether Device memory is host-mapped here.
func (d *Device) DeviceMemoryMapped() bool {
	_, flags, ok := d.chooseType(MemDevice, ^uint32(0))
	return ok && flags&vk.MemoryHostVisible != 0
}

// chooseType picks a memory type for kind among the allowed type bits.
func (d *Device) chooseType(kind MemKind, allowed uint32) (uint32, uint32, bool) {
	types := d.Info.MemoryTypes
	largestLocal := -1
	for i, h := range d.Info.MemoryHeaps {
		if h.Flags&vk.HeapDeviceLocal != 0 && (largestLocal < 0 || h.Size > d.Info.MemoryHeaps[largestLocal].Size) {
			largestLocal = i
		}
	}
	best, bestScore := -1, -1
	for i, t := range types {
		if allowed&(1<<uint(i)) == 0 || t.Flags&(vk.MemoryProtected|vk.MemoryLazily) != 0 {
			continue
		}
		local := t.Flags&vk.MemoryDeviceLocal != 0
		visible := t.Flags&vk.MemoryHostVisible != 0
		coherent := t.Flags&vk.MemoryHostCoherent != 0
		cached := t.Flags&vk.MemoryHostCached != 0
		score := -1
		switch kind {
		case MemDevice:
			if !local {
				continue
			}
			score = 10
			// Host-visible device-local memory on the main heap (integrated
			// GPUs, CPU drivers, resizable BAR) gives zero-copy access.
			if visible && coherent && int(t.Heap) == largestLocal && !d.Staged {
				score += 10
			}
			if visible && d.Staged {
				score -= 5
			}
		case MemHost:
			if !visible || !coherent {
				continue
			}
			score = 10
			if cached {
				score += 4
			}
			if !local {
				score += 2
			}
		case MemStorage:
			if !local {
				continue
			}
			score = 10
			if !visible {
				score += 2
			}
		}
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	if best < 0 {
		return 0, 0, false
	}
	return uint32(best), types[best].Flags, true
}

func alignUp(v, a uint64) uint64 {
	if a <= 1 {
		return v
	}
	return (v + a - 1) / a * a
}

// Alloc creates a buffer of size bytes with usage and binds it to memory of
// the given kind.
func (d *Device) Alloc(kind MemKind, size uint64, usage uint32) (*Allocation, error) {
	if size == 0 {
		return nil, Invalid("zero-size buffer")
	}
	if err := d.Enter(); err != nil {
		return nil, err
	}
	defer d.Exit()
	buf, err := d.VK.CreateBuffer(size, usage, d.families...)
	if err != nil {
		return nil, d.check(err)
	}
	req := d.VK.BufferMemoryRequirements(buf)
	typeIdx, flags, ok := d.chooseType(kind, req.TypeBits)
	if !ok {
		d.VK.DestroyBuffer(buf)
		return nil, Unsupported("no memory type for %v buffers", kind)
	}
	align := max(req.Alignment, d.Info.Limits.MinStorageBufferOffsetAlignment, 16)
	if flags&vk.MemoryHostVisible != 0 && flags&vk.MemoryHostCoherent == 0 {
		align = max(align, d.Info.Limits.NonCoherentAtomSize)
	}
	need := alignUp(req.Size, align)
	a, err := d.mem.alloc(typeIdx, flags, need, align)
	if err != nil {
		d.VK.DestroyBuffer(buf)
		return nil, d.check(err)
	}
	a.Buffer, a.Size, a.Kind = buf, size, kind
	if err := d.VK.BindBufferMemory(buf, a.block.mem, a.offset); err != nil {
		d.mem.release(a)
		d.VK.DestroyBuffer(buf)
		return nil, d.check(err)
	}
	if a.block.mapped != nil && kind != MemStorage && !(kind == MemDevice && d.Staged) {
		a.Mapped = unsafe.Add(a.block.mapped, a.offset)
	}
	// Every new buffer reads as zero, whatever its kind (zero.go).
	if err := d.mem.zero(a); err != nil {
		d.VK.DestroyBuffer(buf)
		d.mem.release(a)
		return nil, err
	}
	return a, nil
}

// Free destroys the buffer and returns its memory to the block. The caller
// guarantees the GPU is done with it. A pinned buffer is freed at its last
// UnpinBuffer instead (pin.go).
func (d *Device) Free(a *Allocation) {
	if a == nil || a.block == nil {
		return
	}
	if !a.view && a.pinned() { // a kept recording names it (pin.go)
		return
	}
	// The queues forget the buffer's hazard state (a view's too: its
	// owner may destroy the buffer once our views are gone).
	d.forgetBuffer(a.Buffer)
	if a.view {
		return
	}
	if d.stage.deferFree(a) { // a staging copy that timed out may still use it
		return
	}
	d.VK.DestroyBuffer(a.Buffer)
	d.mem.release(a)
	a.block = nil
	a.Mapped = nil
}

// Flush makes host writes to a's mapped memory visible to the device when
// the memory is not coherent.
func (d *Device) Flush(a *Allocation) error {
	if a.Mapped == nil || a.Coherent() {
		return nil
	}
	if err := d.Enter(); err != nil {
		return err
	}
	defer d.Exit()
	return d.VK.FlushMemory(a.block.mem, a.offset, a.span)
}

// Invalidate makes device writes visible to the host when the memory is not
// coherent.
func (d *Device) Invalidate(a *Allocation) error {
	if a.Mapped == nil || a.Coherent() {
		return nil
	}
	if err := d.Enter(); err != nil {
		return err
	}
	defer d.Exit()
	return d.VK.InvalidateMemory(a.block.mem, a.offset, a.span)
}

func (m *allocator) alloc(typeIdx, flags uint32, size, align uint64) (*Allocation, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if size <= blockSize/2 {
		// Clean bytes first, so that zero fills batch many freed spans.
		for pass := 0; pass < 2; pass++ {
			for _, b := range m.blocks[typeIdx] {
				clean := pass == 0 && b.zbuf != 0
				if b.dedicate || (pass == 1 && b.zbuf == 0) {
					continue
				}
				if off, ok := b.take(size, align, clean); ok {
					m.live++
					return &Allocation{block: b, offset: off, span: size}, nil
				}
			}
		}
	}
	bsize := uint64(blockSize)
	dedicate := size > blockSize/2
	if dedicate {
		bsize = size
	}
	b, err := m.newBlock(typeIdx, flags, bsize)
	if err != nil {
		return nil, err
	}
	b.dedicate = dedicate
	off, ok := b.take(size, align, false)
	if !ok {
		return nil, fmt.Errorf("vkflow: allocator: fresh block of %d bytes cannot hold %d", bsize, size)
	}
	m.live++
	return &Allocation{block: b, offset: off, span: size}, nil
}

func (m *allocator) newBlock(typeIdx, flags uint32, size uint64) (*block, error) {
	mem, err := m.dev.VK.AllocateMemory(size, typeIdx)
	if err != nil {
		return nil, err
	}
	b := &block{mem: mem, typeIdx: typeIdx, flags: flags, size: size, free: []span{{0, size}}}
	if flags&vk.MemoryHostVisible != 0 {
		p, err := m.dev.VK.MapMemory(mem, 0, vk.WholeSize)
		if err != nil {
			m.dev.VK.FreeMemory(mem)
			return nil, err
		}
		b.mapped = p
	}
	if m.gpuZeroed(b.mapped) {
		if err := m.addZeroBuffer(b); err != nil {
			if b.mapped != nil {
				m.dev.VK.UnmapMemory(mem)
			}
			m.dev.VK.FreeMemory(mem)
			return nil, err
		}
	}
	m.vkAllocs++
	m.blocks[typeIdx] = append(m.blocks[typeIdx], b)
	return b, nil
}

// take carves size bytes aligned to align from the first free span that
// fits; with clean, only from bytes not marked dirty.
func (b *block) take(size, align uint64, clean bool) (uint64, bool) {
	for i, s := range b.free {
		lo, end := s.off, s.off+s.size
		d := sort.Search(len(b.dirty), func(k int) bool { return b.dirty[k].off+b.dirty[k].size > lo })
		for lo < end {
			hi := end
			if clean && d < len(b.dirty) && b.dirty[d].off < end {
				hi = max(lo, b.dirty[d].off)
			}
			if off := alignUp(lo, align); off+size <= hi {
				b.carve(i, off, size)
				return off, true
			}
			if !clean || d >= len(b.dirty) || b.dirty[d].off >= end {
				break
			}
			lo = b.dirty[d].off + b.dirty[d].size
			d++
		}
	}
	return 0, false
}

// carve takes [off, off+size) out of free span i.
func (b *block) carve(i int, off, size uint64) {
	s := b.free[i]
	end := s.off + s.size
	var repl []span
	if off > s.off {
		repl = append(repl, span{s.off, off - s.off})
	}
	if off+size < end {
		repl = append(repl, span{off + size, end - off - size})
	}
	b.free = append(b.free[:i], append(repl, b.free[i+1:]...)...)
	b.used += size
}

// give returns a span and coalesces neighbours.
func (b *block) give(off, size uint64) {
	i := sort.Search(len(b.free), func(i int) bool { return b.free[i].off > off })
	b.free = append(b.free, span{})
	copy(b.free[i+1:], b.free[i:])
	b.free[i] = span{off, size}
	if i+1 < len(b.free) && b.free[i].off+b.free[i].size == b.free[i+1].off {
		b.free[i].size += b.free[i+1].size
		b.free = append(b.free[:i+1], b.free[i+2:]...)
	}
	if i > 0 && b.free[i-1].off+b.free[i-1].size == b.free[i].off {
		b.free[i-1].size += b.free[i].size
		b.free = append(b.free[:i], b.free[i+1:]...)
	}
	b.used -= size
}

func (m *allocator) release(a *Allocation) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b := a.block
	b.give(a.offset, a.span)
	if b.zbuf != 0 {
		b.dirty = addSpan(b.dirty, a.offset, a.span)
	}
	m.live--
	if b.used != 0 || (b.zbuf != 0 && m.fillPending()) {
		return
	}
	// Keep one empty shared block per type for reuse; free the rest.
	bs := m.blocks[b.typeIdx]
	if !b.dedicate {
		empty := 0
		for _, o := range bs {
			if o.used == 0 && !o.dedicate {
				empty++
			}
		}
		if empty <= 1 {
			return
		}
	}
	for i, o := range bs {
		if o == b {
			m.blocks[b.typeIdx] = append(bs[:i], bs[i+1:]...)
			break
		}
	}
	m.freeBlock(b)
}

func (m *allocator) freeBlock(b *block) {
	if b.zbuf != 0 {
		m.dev.VK.DestroyBuffer(b.zbuf)
	}
	if b.mapped != nil {
		m.dev.VK.UnmapMemory(b.mem)
	}
	m.dev.VK.FreeMemory(b.mem)
}

func (m *allocator) destroy() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for t, bs := range m.blocks {
		for _, b := range bs {
			m.freeBlock(b)
		}
		delete(m.blocks, t)
	}
	m.destroyZeroer()
}

// TensorUsage is the usage of every tensor's buffer. Importers create
// their buffers with it too: a dedicated import needs a buffer identical to
// the exporter's.
const TensorUsage = vk.BufferUsageStorage | vk.BufferUsageTransferSrc | vk.BufferUsageTransferDst

// TensorBufferSize returns the size of the buffer behind a tensor of n
// bytes: padded to 4 bytes so that Fill covers every element, and 4 bytes
// for an empty tensor, so that it can be bound.
func TensorBufferSize(n uint64) uint64 { return max((n+3)&^3, 4) }
