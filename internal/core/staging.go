package core

import (
	"context"
	"fmt"
	"sync"

	"github.com/vkflow/vkflow/vk"
)

// stagingMax caps the staging buffer; larger transfers go in chunks.
const stagingMax = 32 << 20

// staging is the device's one staging ring: a host-visible buffer through
// which host data reaches device memory that is not mapped, and back. There
// is never a staging buffer per tensor. Transfers are synchronous and
// serialized; they run on physical queue 0.
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
	cmd  vk.CommandBuffer
	// counters
	bytesUp, bytesDown uint64

	stuckMu sync.Mutex // not mu: Free takes it while a transfer holds mu
	stuck   *stuckCopy
}

// stuckCopy is a copy whose wait timed out.
type stuckCopy struct {
	alloc *Allocation
	value uint64 // queue 0's timeline value that completes it
	freed bool   // Free was called meanwhile: free once it completes
}

func (s *staging) init(d *Device) { s.dev = d }

// ensure makes the ring at least n bytes (capped at stagingMax).
func (s *staging) ensure(n uint64) error {
	n = min(max(n, 1<<20), stagingMax)
	if s.buf != nil && s.buf.Size >= n {
		return nil
	}
	d := s.dev
	if s.pool == 0 {
		p, c, err := d.transientCommandBuffer(d.queues[0].Family)
		if err != nil {
			return err
		}
		s.pool, s.cmd = p, c
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

// Upload copies data into dst at offset through the staging ring and waits
// for the copy, at most the device's WaitTimeout. The copy is ordered after
// all work submitted earlier to physical queue 0.
func (d *Device) Upload(dst *Allocation, offset uint64, data []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), d.WaitTimeout)
	defer cancel()
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
	ctx, cancel := context.WithTimeout(context.Background(), d.WaitTimeout)
	defer cancel()
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
	if st.freed {
		s.dev.Free(st.alloc)
	}
	return nil
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
	d := s.dev
	if err := s.settle(ctx); err != nil {
		return err
	}
	if err := s.ensure(uint64(len(data))); err != nil {
		return err
	}
	ring := s.buf.Bytes()
	q := d.queues[0]
	for done := 0; done < len(data); {
		n := min(len(data)-done, len(ring))
		if up {
			copy(ring, data[done:done+n])
		}
		if err := vk.ResetCommandBuffer(s.cmd); err != nil {
			return err
		}
		if err := vk.BeginCommandBuffer(s.cmd, vk.CommandBufferOneTimeSubmit); err != nil {
			return err
		}
		// Order after earlier work on the queue, copy, then make the result
		// available to later commands and to the host.
		vk.CmdPipelineBarrier(s.cmd, vk.StageAllCommands, vk.StageTransfer,
			vk.AccessMemoryWrite, vk.AccessTransferRead|vk.AccessTransferWrite, nil)
		region := []vk.CopyRegion{{SrcOffset: 0, DstOffset: offset + uint64(done), Size: uint64(n)}}
		src, dst := s.buf.Buffer, a.Buffer
		if !up {
			region[0] = vk.CopyRegion{SrcOffset: offset + uint64(done), DstOffset: 0, Size: uint64(n)}
			src, dst = a.Buffer, s.buf.Buffer
		}
		vk.CmdCopyBuffer(s.cmd, src, dst, region)
		vk.CmdPipelineBarrier(s.cmd, vk.StageTransfer, vk.StageAllCommands|vk.StageHost,
			vk.AccessTransferWrite, vk.AccessMemoryRead|vk.AccessMemoryWrite|vk.AccessHostRead, nil)
		if err := vk.EndCommandBuffer(s.cmd); err != nil {
			return err
		}
		v, err := q.Submit(s.cmd)
		if err != nil {
			return err
		}
		if err := q.Wait(ctx, v); err != nil {
			s.stuckMu.Lock()
			s.stuck = &stuckCopy{alloc: a, value: v}
			s.stuckMu.Unlock()
			dir := "download from"
			if up {
				dir = "upload to"
			}
			return fmt.Errorf("vkflow: staging %s device memory (%d bytes at offset %d): waiting for the copy (queue 0 value %d, at %d now): %w",
				dir, n, offset+uint64(done), v, q.Completed(), err)
		}
		if !up {
			copy(data[done:done+n], ring)
			s.bytesDown += uint64(n)
		} else {
			s.bytesUp += uint64(n)
		}
		done += n
	}
	return nil
}

func (s *staging) destroy() {
	// Only after the device is idle: a stuck copy has completed by now.
	if st := s.stuck; st != nil {
		s.stuck = nil
		if st.freed {
			s.dev.Free(st.alloc)
		}
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
