package tensor

import "github.com/vkflow/vkflow/internal/core"

// NewOver makes a zero-filled tensor of dtype and shape over a, a buffer
// vkflow carved from its own blocks (core.Device.Alloc) for a tensor of that
// dtype and shape, whose bytes read as zero (new, or cleared by
// core.Device.Reuse). When the tensor is destroyed (closed, and the GPU
// done with every use) give(a) runs instead of freeing a: package ops'
// stream pool keeps a for a later output of the same size, or frees it
// (core.Device.Free). It is for vkflow's own packages; the caller is
// inside the device's gate. On error neither a nor give is touched.
func NewOver(d *core.Device, a *core.Allocation, dtype Dtype, shape []int, give func(*core.Allocation)) (*Tensor, error) {
	if !dtype.Valid() {
		return nil, core.Invalid("unknown dtype %v", dtype)
	}
	n, size, err := checkSize(dtype, shape)
	if err != nil {
		return nil, err
	}
	if core.TensorBufferSize(size) != a.Size {
		return nil, core.Invalid("NewOver: %v%v needs a buffer of %d bytes, not %d", dtype, shape, core.TensorBufferSize(size), a.Size)
	}
	t := &Tensor{dev: d, alloc: a, dtype: dtype, shape: append([]int(nil), shape...), n: n, kind: a.Kind, mapped: d.ReadsMapped(a)}
	if err := t.obj.Init(d, core.KindTensor, func() { give(a) }, nil); err != nil {
		return nil, err
	}
	t.obj.TrackUses(a)
	return t, nil
}
