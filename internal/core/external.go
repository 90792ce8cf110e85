package core

import (
	"context"
	"os"
	"unsafe"

	"github.com/vkflow/vkflow/vk"
)

// This file holds what DLPack needs from the runtime: where a buffer lives,
// buffers over foreign memory, and single ready points for pending work.

// Memory returns the VkDeviceMemory the buffer is bound to, 0 once freed.
func (a *Allocation) Memory() vk.DeviceMemory {
	if a.block == nil {
		return 0
	}
	return a.block.mem
}

// MemoryOffset returns where the buffer is bound in Memory.
func (a *Allocation) MemoryOffset() uint64 { return a.offset }

// View wraps a buffer another owner created on this device and bound to
// mem at offset, without taking it over: Free leaves it alone. Host access
// goes through the staging ring.
func View(buf vk.Buffer, size uint64, mem vk.DeviceMemory, offset uint64) *Allocation {
	return &Allocation{Buffer: buf, Size: size, Kind: MemDevice, block: &block{mem: mem}, offset: offset, view: true}
}

var pageSize = uint64(os.Getpagesize())

// HostImportAlignment returns the alignment a host pointer needs for
// ImportHost to wrap it without a copy, 0 without VK_EXT_external_memory_host.
//
// The rule: when minImportedHostPointerAlignment (A) is at most the page
// size, ImportHost imports the A-aligned range around the data and binds
// the buffer at the data's offset in it, so the pointer must be aligned to
// the lower of A and the buffer's own alignment (its memory requirements'
// alignment and minStorageBufferOffsetAlignment): 64 bytes on lavapipe,
// where A is 4096 but buffers need 64. With a larger A, the pointer (and
// the size) must be multiples of A.
func (d *Device) HostImportAlignment() uint64 {
	if !d.HostImport {
		return 0
	}
	a := d.Info.Limits.MinImportedHostPointerAlignment
	if a > pageSize {
		return a
	}
	buf, err := d.VK.CreateHostImportBuffer(pageSize, vk.BufferUsageStorage|vk.BufferUsageTransferSrc|vk.BufferUsageTransferDst, d.families...)
	if err != nil {
		return a
	}
	need := max(d.VK.BufferMemoryRequirements(buf).Alignment, d.Info.Limits.MinStorageBufferOffsetAlignment, 1)
	d.VK.DestroyBuffer(buf)
	return min(need, a)
}

// ImportHost wraps size bytes of host memory at p in a buffer without a
// copy (VK_EXT_external_memory_host). The memory must stay allocated until
// the allocation is freed. p must meet HostImportAlignment. It returns
// ErrUnsupported when the memory cannot be imported, so the caller can copy
// instead.
func (d *Device) ImportHost(p unsafe.Pointer, size uint64, usage uint32) (*Allocation, error) {
	align := d.Info.Limits.MinImportedHostPointerAlignment
	if !d.HostImport {
		return nil, Unsupported("%s lacks %s", d.Info.Name, vk.HostImportExtension)
	}
	if p == nil || size == 0 {
		return nil, Invalid("ImportHost: nil pointer or zero size")
	}
	if err := d.Enter(); err != nil {
		return nil, err
	}
	defer d.Exit()
	addr := uint64(uintptr(p))
	if align&(align-1) != 0 || addr+size < addr {
		return nil, Invalid("ImportHost: bad alignment %d or range", align)
	}
	base, end := addr&^(align-1), alignUp(addr+size, align)
	if align > pageSize && (base != addr || end != addr+size) {
		return nil, Unsupported("host pointer %#x (%d bytes) does not meet minImportedHostPointerAlignment %d", addr, size, align)
	}
	off := addr - base
	buf, err := d.VK.CreateHostImportBuffer(size, usage, d.families...)
	if err != nil {
		return nil, err
	}
	req := d.VK.BufferMemoryRequirements(buf)
	need := max(req.Alignment, d.Info.Limits.MinStorageBufferOffsetAlignment, 1)
	if off%need != 0 {
		d.VK.DestroyBuffer(buf)
		return nil, Unsupported("host pointer %#x is %d bytes into its page; buffers need %d-byte alignment", addr, off, need)
	}
	basePtr := unsafe.Add(p, -int(off))
	bits, err := d.VK.HostPointerTypeBits(basePtr)
	if err != nil {
		d.VK.DestroyBuffer(buf)
		return nil, Unsupported("host memory at %#x cannot be imported: %v", base, err)
	}
	typeIdx, flags, ok := d.chooseType(MemHost, bits&req.TypeBits)
	if !ok {
		d.VK.DestroyBuffer(buf)
		return nil, Unsupported("no coherent host-visible memory type can import host memory")
	}
	mem, err := d.VK.ImportHostMemory(basePtr, end-base, typeIdx)
	if err != nil {
		d.VK.DestroyBuffer(buf)
		return nil, Unsupported("importing host memory at %#x: %v", base, err)
	}
	if err := d.VK.BindBufferMemory(buf, mem, off); err != nil {
		d.VK.DestroyBuffer(buf)
		d.VK.FreeMemory(mem)
		return nil, err
	}
	// The memory becomes a dedicated block of the allocator, so Free and
	// the counters treat it like any other.
	b := &block{mem: mem, typeIdx: typeIdx, flags: flags, size: end - base, used: size, dedicate: true, hostMem: true}
	m := &d.mem
	m.mu.Lock()
	m.vkAllocs++
	m.live++
	m.blocks[typeIdx] = append(m.blocks[typeIdx], b)
	m.mu.Unlock()
	return &Allocation{Buffer: buf, Size: size, Mapped: p, Kind: MemHost, block: b, offset: off, span: size}, nil
}

// QueueSemaphore returns physical queue i's timeline semaphore.
func (d *Device) QueueSemaphore(i int) vk.Semaphore { return d.queues[i].sem }

// WaitUses waits until the GPU has finished every submitted use of o.
func (d *Device) WaitUses(ctx context.Context, o *Object) error {
	for i, q := range d.queues {
		if v := o.LastUse(i); v != 0 {
			if err := q.Wait(ctx, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// ReadyPoint returns one point on a physical queue's timeline after which
// every use of o submitted so far has completed. Uses on one queue need no
// submit; uses on several get an empty submit on one of them that waits for
// the others (a queue's signal covers all earlier work on that queue).
func (d *Device) ReadyPoint(o *Object) (queue int, value uint64, err error) {
	waits := d.pendingUses(o)
	switch len(waits) {
	case 0:
		return 0, d.queues[0].Completed(), nil
	case 1:
		return waits[0].Queue, waits[0].Value, nil
	}
	s := &Submission{Q: d.queues[waits[0].Queue], After: waits[1:]}
	if err := d.Schedule(s); err != nil {
		return 0, 0, err
	}
	// Nothing to wait for or signal: Schedule released it already.
	v, err := s.Result()
	return waits[0].Queue, v, err
}

// SignalWhenReady makes the user timeline points signal once every use of
// o submitted so far has completed. It does not block; the signal is
// ordered like any other submit's (after earlier signals of the same
// timelines).
func (d *Device) SignalWhenReady(o *Object, signals []Point) error {
	waits := d.pendingUses(o)
	q := 0
	if len(waits) > 0 {
		q = waits[0].Queue
		waits = waits[1:]
	}
	return d.Schedule(&Submission{Q: d.queues[q], After: waits, Signals: signals})
}

// UsesElsewhere returns, for each physical queue other than q, the last
// not yet completed use of any of objs: the points a submit on q must wait
// for to come after every submitted use of objs. Nil when there are none.
func (d *Device) UsesElsewhere(q *Queue, objs ...*Object) []QueuePoint {
	var out []QueuePoint
	for i, other := range d.queues {
		if other == q {
			continue
		}
		var v uint64
		for _, o := range objs {
			v = max(v, o.LastUse(i))
		}
		if v != 0 && other.Completed() < v {
			out = append(out, QueuePoint{Queue: i, Value: v})
		}
	}
	return out
}

// pendingUses lists, per physical queue, the last use of o not yet
// completed.
func (d *Device) pendingUses(o *Object) []QueuePoint {
	var out []QueuePoint
	for i, q := range d.queues {
		if v := o.LastUse(i); v != 0 && q.Completed() < v {
			out = append(out, QueuePoint{Queue: i, Value: v})
		}
	}
	return out
}
