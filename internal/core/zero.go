package core

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/vkflow/vkflow/vk"
)

// This file makes every new buffer read as zero, so that no tensor sees
// what a freed one left behind.
//
// Memory the host can map is cleared on the host when it is handed out.
// Other blocks (and, with StagedDeviceMemory, every block, as on a discrete
// GPU) get one buffer covering the whole block. A fresh block is dirty as a
// whole; freed spans become dirty again. The allocator prefers clean bytes;
// an allocation that lands on dirty bytes zeroes all dirty ranges of its
// block in one submit (one vkCmdFillBuffer per range), waited on the host
// before the allocation is returned, so the zeros are visible to later work
// on any queue and later allocations from the block are clean.

type zeroer struct {
	mu   sync.Mutex // serializes fills; held until a fill has completed
	pool vk.CommandPool
	cmd  vk.CommandBuffer
	// last is the queue-0 value of a fill whose wait failed: its command
	// buffer may still be pending, so the next fill waits for it first,
	// and no block is destroyed before it completes (release).
	last atomic.Uint64
	off  atomic.Bool // benchmarks only: skip GPU zeroing
	// counters, under the allocator's mu
	fills      int
	fillBytes  uint64
	hostClears int
}

// SetGPUZeroing turns the GPU zero fill of new buffers off or on. It
// exists to measure the fill's cost in benchmarks; with it off, new
// buffers in unmapped memory may hold old data.
func (d *Device) SetGPUZeroing(on bool) { d.mem.z.off.Store(!on) }

// gpuZeroed reports whether blocks of this memory get a zeroing buffer.
func (m *allocator) gpuZeroed(mapped unsafe.Pointer) bool { return mapped == nil || m.dev.Staged }

// addZeroBuffer creates b's whole-block buffer and marks b dirty.
func (m *allocator) addZeroBuffer(b *block) error {
	d := m.dev
	buf, err := d.VK.CreateBuffer(b.size, vk.BufferUsageTransferDst, d.families...)
	if err != nil {
		return err
	}
	req := d.VK.BufferMemoryRequirements(buf)
	if req.Size > b.size || req.TypeBits&(1<<b.typeIdx) == 0 {
		d.VK.DestroyBuffer(buf)
		return Unsupported("a buffer over a whole %d-byte block of memory type %d does not fit it (needs %d bytes, types %#x)", b.size, b.typeIdx, req.Size, req.TypeBits)
	}
	if err := d.VK.BindBufferMemory(buf, b.mem, 0); err != nil {
		d.VK.DestroyBuffer(buf)
		return err
	}
	b.zbuf = buf
	b.dirty = []span{{0, b.size}}
	return nil
}

// zero makes a's bytes read as zero before a is handed out.
func (m *allocator) zero(a *Allocation) error {
	b := a.block
	if b.zbuf == 0 {
		if b.mapped != nil {
			clear(unsafe.Slice((*byte)(unsafe.Add(b.mapped, a.offset)), a.span))
			m.mu.Lock()
			m.z.hostClears++
			m.mu.Unlock()
			if b.flags&vk.MemoryHostCoherent == 0 {
				return m.dev.VK.FlushMemory(b.mem, a.offset, a.span)
			}
		}
		return nil
	}
	z := &m.z
	// Holding z.mu also waits out a fill in flight that may cover a's
	// bytes although they are no longer marked dirty.
	z.mu.Lock()
	defer z.mu.Unlock()
	m.mu.Lock()
	if z.off.Load() {
		// Handed out unzeroed: its bytes are live now, and a later fill of
		// the block's dirty ranges must not touch them.
		b.dirty = removeSpan(b.dirty, a.offset, a.span)
		m.mu.Unlock()
		return nil
	}
	if !overlaps(b.dirty, a.offset, a.span) {
		m.mu.Unlock()
		return nil
	}
	ranges := b.dirty
	b.dirty = nil
	m.mu.Unlock()
	if err := m.fill(b.zbuf, ranges); err != nil {
		m.mu.Lock()
		for _, r := range ranges { // they may not be zero
			b.dirty = addSpan(b.dirty, r.off, r.size)
		}
		m.mu.Unlock()
		return err
	}
	m.mu.Lock()
	z.fills++
	for _, r := range ranges {
		z.fillBytes += r.size
	}
	m.mu.Unlock()
	return nil
}

// fill zeroes ranges of buf in one submit on physical queue 0 and waits
// for it, at most the device's WaitTimeout (the Manager's close timeout).
// Called with z.mu held.
func (m *allocator) fill(buf vk.Buffer, ranges []span) error {
	d, z := m.dev, &m.z
	q := d.queues[0]
	ctx, cancel := context.WithTimeout(context.Background(), d.WaitTimeout)
	defer cancel()
	if last := z.last.Load(); last != 0 {
		if err := q.Wait(ctx, last); err != nil {
			return fmt.Errorf("vkflow: zero fill: an earlier vkCmdFillBuffer submit (queue value %d) has not completed: %w", last, err)
		}
		z.last.Store(0)
	}
	if z.pool == 0 {
		p, c, err := d.transientCommandBuffer(q.Family)
		if err != nil {
			return err
		}
		z.pool, z.cmd = p, c
	}
	if err := vk.ResetCommandBuffer(z.cmd); err != nil {
		return err
	}
	if err := vk.BeginCommandBuffer(z.cmd, vk.CommandBufferOneTimeSubmit); err != nil {
		return err
	}
	// After earlier work on the queue (the freed bytes' last users), then
	// visible to everything after: later commands on this queue through the
	// barrier, other queues through the host wait below.
	vk.CmdPipelineBarrier(z.cmd, vk.StageAllCommands, vk.StageTransfer,
		vk.AccessMemoryWrite, vk.AccessTransferWrite, nil)
	for _, r := range ranges {
		vk.CmdFillBuffer(z.cmd, buf, r.off, r.size, 0)
	}
	vk.CmdPipelineBarrier(z.cmd, vk.StageTransfer, vk.StageAllCommands|vk.StageHost,
		vk.AccessTransferWrite, vk.AccessMemoryRead|vk.AccessMemoryWrite|vk.AccessHostRead|vk.AccessHostWrite, nil)
	if err := vk.EndCommandBuffer(z.cmd); err != nil {
		return err
	}
	v, err := q.Submit(z.cmd)
	if err != nil {
		return err
	}
	if err := q.Wait(ctx, v); err != nil {
		z.last.Store(v)
		return fmt.Errorf("vkflow: zero fill: vkCmdFillBuffer of %d ranges did not complete in %v: %w", len(ranges), d.WaitTimeout, err)
	}
	return nil
}

// fillPending reports whether a zero fill whose wait failed may still run:
// until it completes, no block may be destroyed under it.
func (m *allocator) fillPending() bool {
	last := m.z.last.Load()
	return last != 0 && !m.dev.queues[0].Done(last)
}

func (m *allocator) destroyZeroer() {
	if m.z.pool != 0 {
		m.dev.VK.DestroyCommandPool(m.z.pool)
		m.z.pool = 0
	}
}

// overlaps reports whether [off, off+size) meets any of the sorted spans.
func overlaps(spans []span, off, size uint64) bool {
	i := sort.Search(len(spans), func(i int) bool { return spans[i].off+spans[i].size > off })
	return i < len(spans) && spans[i].off < off+size
}

// removeSpan takes [off, off+size) out of sorted, coalesced spans.
func removeSpan(spans []span, off, size uint64) []span {
	end := off + size
	var out []span
	for _, s := range spans {
		se := s.off + s.size
		if se <= off || s.off >= end {
			out = append(out, s)
			continue
		}
		if s.off < off {
			out = append(out, span{s.off, off - s.off})
		}
		if se > end {
			out = append(out, span{end, se - end})
		}
	}
	return out
}

// addSpan inserts [off, off+size) into sorted, coalesced spans.
func addSpan(spans []span, off, size uint64) []span {
	end := off + size
	i := sort.Search(len(spans), func(i int) bool { return spans[i].off+spans[i].size >= off })
	j := i
	for j < len(spans) && spans[j].off <= end {
		off = min(off, spans[j].off)
		end = max(end, spans[j].off+spans[j].size)
		j++
	}
	merged := span{off, end - off}
	if i == j {
		spans = append(spans, span{})
		copy(spans[i+1:], spans[i:])
		spans[i] = merged
		return spans
	}
	spans[i] = merged
	return append(spans[:i+1], spans[j:]...)
}
