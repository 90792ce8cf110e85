package core

import (
	"context"
	"fmt"
	"sync"

	"github.com/vkflow/vkflow/vk"
)

// stagingMax caps the staging buffer; larger transfers go in chunks.
var stagingMax = uint64(32 << 20)

// staging is the device's one staging ring: a host-visible buffer through
// which host data reaches device memory that is not mapped (or not read
// through its mapping: hostpath.go), and back. There is never a staging
// buffer per tensor. Transfers are synchronous and serialized; they run on
// physical queue 0. A transfer larger than the ring goes in chunks through
// its two halves, so that the GPU copies one chunk while the host copies
// the other. Large transfers skip the ring where the host's data can be
// imported (hostcopy.go): the GPU then copies to or from it directly.
//
// Every wait is bounded (the caller's context, or the device's WaitTimeout).
// A copy that times out may still run on the GPU: it is remembered as
// stuck, and until it completes the ring and its command buffer are not
// reused and the allocation it copies to or from is not freed (Free defers
// it), as a timeout must never free memory the GPU may still use.
type staging struct {
	dev  *Device
	mu   sync.Mutex
	buf  *Allocation
	pool vk.CommandPool
	cmds [2]vk.CommandBuffer // one per half of the ring
	// counters: through the ring, and copied directly to or from imports
	bytesUp, bytesDown       uint64
	importedUp, importedDown uint64

	stuckMu sync.Mutex // not mu: Free takes it while a transfer holds mu
	stuck   *stuckCopy
}

// stuckCopy is a copy whose wait timed out.
type stuckCopy struct {
	alloc *Allocation
	value uint64 // queue 0's timeline value that completes it
	freed bool   // Free was called meanwhile: free once it completes
	// imp is the import of the caller's data the copy uses (hostcopy.go),
	// freed once it completes; keep holds the data until then.
	imp  *Allocation
	keep []byte
}

func (s *staging) init(d *Device) { s.dev = d }

// ensure makes the ring at least n bytes (capped at stagingMax).
func (s *staging) ensure(n uint64) error {
	n = min(max(n, 1<<20), stagingMax)
	if s.buf != nil && s.buf.Size >= n {
		return nil
	}
	d := s.dev
	if err := s.ensurePool(); err != nil {
		return err
	}
	if s.buf != nil {
		d.Free(s.buf)
		s.buf = nil
	}
	b, err := d.Alloc(MemHost, n, vk.BufferUsageTransferSrc|vk.BufferUsageTransferDst)
	if err != nil {
		return err
	}
	s.buf = b
	return nil
}

// ensurePool makes the command pool and the ring's two command buffers.
func (s *staging) ensurePool() error {
	if s.pool != 0 {
		return nil
	}
	d := s.dev
	p, c, err := d.transientCommandBuffer(d.queues[0].Family)
	if err != nil {
		return err
	}
	c2, err := d.VK.AllocateCommandBuffer(p)
	if err != nil {
		d.VK.DestroyCommandPool(p)
		return err
	}
	s.pool, s.cmds = p, [2]vk.CommandBuffer{c, c2}
	return nil
}

// Upload copies data into dst at offset through the staging ring and waits
// for the copy, at most the device's WaitTimeout. The copy is ordered after
// all work submitted earlier to physical queue 0.
func (d *Device) Upload(dst *Allocation, offset uint64, data []byte) error {
	ctx := NewDeadline(d.WaitTimeout) // no timer per transfer
	defer ctx.Stop()
	return d.stage.transfer(ctx, dst, offset, data, true)
}

// UploadContext is Upload with the wait bounded by ctx.
func (d *Device) UploadContext(ctx context.Context, dst *Allocation, offset uint64, data []byte) error {
	return d.stage.transfer(ctx, dst, offset, data, true)
}

// Download copies len(out) bytes of src at offset into out through the
// staging ring, after all work submitted earlier to physical queue 0,
// waiting at most the device's WaitTimeout.
func (d *Device) Download(src *Allocation, offset uint64, out []byte) error {
	ctx := NewDeadline(d.WaitTimeout) // no timer per transfer
	defer ctx.Stop()
	return d.stage.transfer(ctx, src, offset, out, false)
}

// DownloadContext is Download with the wait bounded by ctx.
func (d *Device) DownloadContext(ctx context.Context, src *Allocation, offset uint64, out []byte) error {
	return d.stage.transfer(ctx, src, offset, out, false)
}

// settle waits (bounded by ctx) for a stuck copy to complete, then frees
// its allocation if Free was called meanwhile. Called with mu held.
func (s *staging) settle(ctx context.Context) error {
	s.stuckMu.Lock()
	st := s.stuck
	s.stuckMu.Unlock()
	if st == nil {
		return nil
	}
	if err := s.dev.queues[0].Wait(ctx, st.value); err != nil {
		return fmt.Errorf("vkflow: staging: an earlier copy through the staging ring (queue 0 value %d) has still not completed: %w", st.value, err)
	}
	s.stuckMu.Lock()
	s.stuck = nil
	s.stuckMu.Unlock()
	s.release(st)
	return nil
}

// release frees what a completed stuck copy held.
func (s *staging) release(st *stuckCopy) {
	if st.imp != nil {
		s.dev.Free(st.imp)
	}
	if st.freed {
		s.dev.Free(st.alloc)
	}
}

// deferFree reports whether a is the allocation of a stuck copy; Free then
// leaves it to settle, which frees it once the copy completed.
func (s *staging) deferFree(a *Allocation) bool {
	s.stuckMu.Lock()
	defer s.stuckMu.Unlock()
	if s.stuck == nil || s.stuck.alloc != a {
		return false
	}
	s.stuck.freed = true
	return true
}

// StagingBytes returns the bytes moved through the ring so far, up and down.
func (d *Device) StagingBytes() (up, down uint64) {
	d.stage.mu.Lock()
	defer d.stage.mu.Unlock()
	return d.stage.bytesUp, d.stage.bytesDown
}

// ImportedBytes returns the bytes copied directly to or from imports of
// the host's data so far (hostcopy.go), up and down.
func (d *Device) ImportedBytes() (up, down uint64) {
	d.stage.mu.Lock()
	defer d.stage.mu.Unlock()
	return d.stage.importedUp, d.stage.importedDown
}

func (s *staging) transfer(ctx context.Context, a *Allocation, offset uint64, data []byte, up bool) error {
	if len(data) == 0 {
		return nil
	}
	if err := s.dev.Enter(); err != nil {
		return err
	}
	defer s.dev.Exit()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.settle(ctx); err != nil {
		return err
	}
	if err := s.ensurePool(); err != nil {
		return err
	}
	if done, err := s.direct(ctx, a, offset, data, up); done {
		return err
	}
	if err := s.ensure(uint64(len(data))); err != nil {
		return err
	}
	return s.ring(ctx, a, offset, data, up)
}

// ring copies data through the staging ring: in one piece when it fits,
// else in chunks of half the ring, the GPU copying one half while the
// host fills or drains the other. Called with mu held.
func (s *staging) ring(ctx context.Context, a *Allocation, offset uint64, data []byte, up bool) error {
	d := s.dev
	q := d.queues[0]
	ring := s.buf.Bytes()
	chunk := len(ring)
	if len(data) > chunk {
		chunk = len(ring) / 2
	}
	n := (len(data) + chunk - 1) / chunk
	part := func(i int) (lo, hi int) { return i * chunk, min((i+1)*chunk, len(data)) }
	half := func(i int) uint64 { return uint64(i%2) * uint64(chunk) }
	var values [2]uint64 // the submit of the chunk each half holds
	submit := func(i int) error {
		lo, hi := part(i)
		if up {
			copy(ring[half(i):], data[lo:hi])
		}
		reg := vk.CopyRegion{SrcOffset: half(i), DstOffset: offset + uint64(lo), Size: uint64(hi - lo)}
		src, dst := s.buf.Buffer, a.Buffer
		if !up {
			reg = vk.CopyRegion{SrcOffset: offset + uint64(lo), DstOffset: half(i), Size: uint64(hi - lo)}
			src, dst = a.Buffer, s.buf.Buffer
		}
		v, err := s.copyCmd(s.cmds[i%2], src, dst, reg)
		values[i%2] = v
		return err
	}
	wait := func(i int) error {
		if err := q.Wait(ctx, values[i%2]); err != nil {
			last := max(values[0], values[1])
			s.stuckMu.Lock()
			s.stuck = &stuckCopy{alloc: a, value: last}
			s.stuckMu.Unlock()
			lo, hi := part(i)
			return fmt.Errorf("vkflow: staging %s device memory (%d bytes at offset %d): waiting for the copy (queue 0 value %d, at %d now): %w",
				direction(up), hi-lo, offset+uint64(lo), last, q.Completed(), err)
		}
		return nil
	}
	if up {
		for i := range n {
			if i >= 2 { // the half is free once its earlier chunk is copied
				if err := wait(i - 2); err != nil {
					return err
				}
			}
			if err := submit(i); err != nil {
				return err
			}
			lo, hi := part(i)
			s.bytesUp += uint64(hi - lo)
		}
		return wait(n - 1)
	}
	if err := submit(0); err != nil {
		return err
	}
	for i := range n {
		if i+1 < n { // the other half's chunk was drained last round
			if err := submit(i + 1); err != nil {
				return err
			}
		}
		if err := wait(i); err != nil {
			return err
		}
		lo, hi := part(i)
		copy(data[lo:hi], ring[half(i):half(i)+uint64(hi-lo)])
		s.bytesDown += uint64(hi - lo)
	}
	return nil
}

// direction names a transfer in errors.
func direction(up bool) string {
	if up {
		return "upload to"
	}
	return "download from"
}

// copyCmd records into cmd a copy of region from src to dst, ordered after
// all earlier work on physical queue 0 and made visible to later commands
// and the host, submits it to queue 0 and returns its timeline value.
func (s *staging) copyCmd(cmd vk.CommandBuffer, src, dst vk.Buffer, region vk.CopyRegion) (uint64, error) {
	if err := vk.ResetCommandBuffer(cmd); err != nil {
		return 0, err
	}
	if err := vk.BeginCommandBuffer(cmd, vk.CommandBufferOneTimeSubmit); err != nil {
		return 0, err
	}
	vk.CmdPipelineBarrier(cmd, vk.StageAllCommands, vk.StageTransfer,
		vk.AccessMemoryWrite, vk.AccessTransferRead|vk.AccessTransferWrite, nil)
	vk.CmdCopyBuffer(cmd, src, dst, []vk.CopyRegion{region})
	vk.CmdPipelineBarrier(cmd, vk.StageTransfer, vk.StageAllCommands|vk.StageHost,
		vk.AccessTransferWrite, vk.AccessMemoryRead|vk.AccessMemoryWrite|vk.AccessHostRead, nil)
	if err := vk.EndCommandBuffer(cmd); err != nil {
		return 0, err
	}
	return s.dev.queues[0].Submit(cmd)
}

func (s *staging) destroy() {
	// Only after the device is idle: a stuck copy has completed by now.
	if st := s.stuck; st != nil {
		s.stuck = nil
		s.release(st)
	}
	if s.buf != nil {
		s.dev.Free(s.buf)
		s.buf = nil
	}
	if s.pool != 0 {
		s.dev.VK.DestroyCommandPool(s.pool)
		s.pool = 0
	}
}

// transientCommandBuffer creates a pool of short-lived, resettable command
// buffers on family and one command buffer from it, for the device's own
// transfers (the staging ring, zero fills). The caller destroys the pool.
func (d *Device) transientCommandBuffer(family uint32) (vk.CommandPool, vk.CommandBuffer, error) {
	p, err := d.VK.CreateCommandPool(family, vk.CommandPoolTransient|vk.CommandPoolResetBuffer)
	if err != nil {
		return 0, nil, err
	}
	c, err := d.VK.AllocateCommandBuffer(p)
	if err != nil {
		d.VK.DestroyCommandPool(p)
		return 0, nil, err
	}
	return p, c, nil
}
