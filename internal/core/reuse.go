package core

import "unsafe"

// Reuse makes a, whose tensor has been destroyed (so the GPU has passed
// every use of it) but which was kept instead of freed (package ops' stream
// pool), ready to back a new tensor: it forgets the old tensor's record of
// uses and failures (the next tensor over a gives it a new one,
// Object.TrackUses) and its written mark, and clears its bytes on the host,
// so that they read as zero like a new buffer's. Only memory the host can
// map is reusable (Reusable); other memory would need a GPU fill.
//
// The buffer keeps its hazard state on the queues (Free would drop it):
// later submits order themselves after the old tensor's accesses with the
// usual per-buffer barriers, instead of the global barrier a destroyed
// buffer costs the next submit.
func (d *Device) Reuse(a *Allocation) error {
	if !a.Reusable() {
		return Invalid("Reuse: the allocation is freed, or in memory the host cannot map")
	}
	a.uses, a.failed = nil, nil
	a.written.Store(false)
	b := a.block
	clear(unsafe.Slice((*byte)(unsafe.Add(b.mapped, a.offset)), a.span))
	if !a.Coherent() {
		if err := d.VK.FlushMemory(b.mem, a.offset, a.span); err != nil {
			return d.check(err)
		}
	}
	return nil
}

// Reusable reports whether Reuse can prepare a for a new tensor: a is
// vkflow's own buffer (not a view or an import), not freed, in memory the
// host maps.
func (a *Allocation) Reusable() bool {
	return a != nil && !a.view && a.block != nil && a.block.mapped != nil
}

// Span returns how many bytes of its memory block a holds (its size
// rounded up to the block's alignment): what keeping a instead of freeing
// it costs.
func (a *Allocation) Span() uint64 { return a.span }
