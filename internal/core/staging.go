package core

import (
	"context"
	"sync"

	"github.com/vkflow/vkflow/vk"
)

// stagingMax caps the staging buffer; larger transfers go in chunks.
const stagingMax = 32 << 20

// staging is the device's one staging ring: a host-visible buffer through
// which host data reaches device memory that is not mapped, and back. There
// is never a staging buffer per tensor. Transfers are synchronous and
// serialized; they run on physical queue 0.
type staging struct {
	dev  *Device
	mu   sync.Mutex
	buf  *Allocation
	pool vk.CommandPool
	cmd  vk.CommandBuffer
	// pending is the queue value of a copy whose wait failed (Close
	// started): the command buffer may still be in use.
	pending uint64
	// counters
	bytesUp, bytesDown uint64
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
		p, err := d.VK.CreateCommandPool(d.queues[0].Family, vk.CommandPoolTransient|vk.CommandPoolResetBuffer)
		if err != nil {
			return err
		}
		c, err := d.VK.AllocateCommandBuffer(p)
		if err != nil {
			d.VK.DestroyCommandPool(p)
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
// for the copy. The copy is ordered after all work submitted earlier to
// physical queue 0.
func (d *Device) Upload(dst *Allocation, offset uint64, data []byte) error {
	return d.stage.transfer(dst, offset, data, true)
}

// Download copies len(out) bytes of src at offset into out through the
// staging ring, after all work submitted earlier to physical queue 0.
func (d *Device) Download(src *Allocation, offset uint64, out []byte) error {
	return d.stage.transfer(src, offset, out, false)
}

// StagingBytes returns the bytes moved through the ring so far, up and down.
func (d *Device) StagingBytes() (up, down uint64) {
	d.stage.mu.Lock()
	defer d.stage.mu.Unlock()
	return d.stage.bytesUp, d.stage.bytesDown
}

func (s *staging) transfer(a *Allocation, offset uint64, data []byte, up bool) error {
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
	if s.pending != 0 {
		if err := d.queues[0].Wait(context.Background(), s.pending); err != nil {
			return err
		}
		s.pending = 0
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
		if err := q.Wait(context.Background(), v); err != nil {
			s.pending = v
			return err
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
	if s.buf != nil {
		s.dev.Free(s.buf)
		s.buf = nil
	}
	if s.pool != 0 {
		s.dev.VK.DestroyCommandPool(s.pool)
		s.pool = 0
	}
}
