package core

import (
	"sync"

	"github.com/vkflow/vkflow/vk"
)

// The placeholder buffer: a small storage buffer of the device's own,
// outside the allocator (MemStats does not count it), that descriptor sets
// are pointed at when they go back to their algorithm's pool.
//
// Why: a pooled set still naming a tensor's buffer links the two in the
// validation layer's state. If another thread destroys that buffer while
// the set is being rewritten and bound into a new command buffer, the
// layer can invalidate the new command buffer (its destroy walks the
// buffer's sets, then their command buffers, without one lock; seen in
// Python threads calling eager ops, 3 of 4 runs of 36,000 calls). Pointing
// the set at the placeholder before the references on the tensors are
// dropped (algorithm.ReturnBinding, then the caller releases) means no
// tensor buffer can be destroyed while a pooled set names it.
type placeholder struct {
	once sync.Once
	buf  vk.Buffer
	mem  vk.DeviceMemory
	err  error
}

// placeholderSize is the buffer's size: more than any fixed part of a
// storage block the kernels declare.
const placeholderSize = 256

// PlaceholderBuffer returns the device's placeholder buffer and its size,
// made at the first call.
func (d *Device) PlaceholderBuffer() (vk.Buffer, uint64, error) {
	p := &d.holder
	p.once.Do(func() {
		buf, err := d.VK.CreateBuffer(placeholderSize, TensorUsage, d.families...)
		if err != nil {
			p.err = err
			return
		}
		req := d.VK.BufferMemoryRequirements(buf)
		typeIdx, _, ok := d.chooseType(MemStorage, req.TypeBits)
		if !ok {
			d.VK.DestroyBuffer(buf)
			p.err = Unsupported("no memory type for the placeholder buffer")
			return
		}
		mem, err := d.VK.AllocateMemory(req.Size, typeIdx)
		if err != nil {
			d.VK.DestroyBuffer(buf)
			p.err = err
			return
		}
		if err := d.VK.BindBufferMemory(buf, mem, 0); err != nil {
			d.VK.DestroyBuffer(buf)
			d.VK.FreeMemory(mem)
			p.err = err
			return
		}
		p.buf, p.mem = buf, mem
	})
	return p.buf, placeholderSize, p.err
}

// destroy frees the placeholder; the device is idle.
func (p *placeholder) destroy(d *Device) {
	if p.buf != 0 {
		d.VK.DestroyBuffer(p.buf)
		d.VK.FreeMemory(p.mem)
		p.buf, p.mem = 0, 0
	}
}
