// Package record holds the command recording that package sequence and
// package graph share: a bound dispatch, a fill of exactly a tensor's bytes,
// and the access a dispatch binding makes. Callers own the command buffer
// and the barriers around each command.
package record

import (
	"bytes"
	"encoding/binary"
	"math"

	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/vk"
)

// WriteAccess is every access mask that writes.
const WriteAccess = vk.AccessShaderWrite | vk.AccessTransferWrite | vk.AccessHostWrite | vk.AccessMemoryWrite

// BindingAccess returns the shader access mask of binding i of a.
func BindingAccess(a *algorithm.Algorithm, i int) uint32 {
	switch a.Access(i) {
	case algorithm.ReadOnly:
		return vk.AccessShaderRead
	case algorithm.WriteOnly:
		return vk.AccessShaderWrite
	}
	return vk.AccessShaderRead | vk.AccessShaderWrite
}

// Bound is what a command buffer has bound so far, so that consecutive
// dispatches of one pipeline with one descriptor set and the same push
// constants record only the dispatch. The zero Bound has nothing bound.
type Bound struct {
	pipe vk.Pipeline
	set  vk.DescriptorSet
	push []byte
}

// Dispatch binds a's pipeline and the descriptor set, pushes the constants
// (each only if b, when not nil, says it differs from what is bound) and
// dispatches groups workgroups. The first piece is a plain vkCmdDispatch:
// the synchronization validation layer we test under (1.3.239) does not
// hazard-track vkCmdDispatchBase, so recording every dispatch with it would
// hide missing barriers from the tests. Dispatches wider than the device
// limit are split; the later pieces' base keeps gl_GlobalInvocationID
// counting across them.
func Dispatch(d *core.Device, cmd vk.CommandBuffer, a *algorithm.Algorithm, set vk.DescriptorSet, push []byte, g [3]uint32, b *Bound) error {
	lim := d.Info.Limits.MaxComputeWorkGroupCount
	if g[1] > lim[1] || g[2] > lim[2] {
		return core.Invalid("Dispatch: workgroups %v exceed maxComputeWorkGroupCount %v", g, lim)
	}
	if b == nil {
		b = &Bound{}
	}
	pipe, layout := a.Pipeline()
	if b.pipe != pipe {
		vk.CmdBindComputePipeline(cmd, pipe)
		// Another pipeline may have another layout: bind and push again.
		b.pipe, b.set, b.push = pipe, 0, nil
	}
	if b.set != set {
		vk.CmdBindDescriptorSet(cmd, layout, set)
		b.set = set
	}
	if b.push == nil || !bytes.Equal(b.push, push) {
		vk.CmdPushConstants(cmd, layout, push)
		b.push = push
	}
	first := min(lim[0], g[0])
	vk.CmdDispatch(cmd, first, g[1], g[2])
	for base := first; base < g[0]; {
		n := min(lim[0], g[0]-base)
		vk.CmdDispatchBase(cmd, base, 0, 0, n, g[1], g[2])
		base += n
	}
	return nil
}

// FillPlan is how a fill writes exactly a tensor's bytes: vkCmdFillBuffer
// writes whole words, so Size bytes from offset 0 are filled, and when the
// tensor is not a multiple of 4 bytes and has no padding of its own (an
// import), its last 1-3 bytes are copied from a 4-byte pattern buffer
// (Tail).
type FillPlan struct {
	Word uint32
	Size uint64
	Tail bool
}

// PlanFill checks v against t's dtype and plans the fill.
func PlanFill(t *tensor.Tensor, v any) (FillPlan, error) {
	word, err := FillWord(t.Dtype(), v)
	if err != nil {
		return FillPlan{}, err
	}
	p := FillPlan{Word: word, Size: t.Bytes()}
	if padded := (t.Bytes() + 3) &^ 3; t.Allocation().Size >= padded {
		p.Size = padded // the padding is the tensor's own
	} else if p.Size &^= 3; p.Size != t.Bytes() {
		p.Tail = true
	}
	return p, nil
}

// Fill records p on t; pattern is the buffer from Pattern when p.Tail.
// The pattern buffer is written by the host only, before any submit, so
// reading it needs no barrier.
func Fill(cmd vk.CommandBuffer, t *tensor.Tensor, p FillPlan, pattern *core.Allocation) {
	a := t.Allocation()
	if p.Size > 0 {
		vk.CmdFillBuffer(cmd, a.Buffer, 0, p.Size, p.Word)
	}
	if p.Tail && pattern != nil {
		// The tail starts at a multiple of 4: its bytes are the pattern's
		// first ones.
		tail := t.Bytes() - p.Size
		vk.CmdCopyBuffer(cmd, pattern.Buffer, a.Buffer, []vk.CopyRegion{{SrcOffset: 0, DstOffset: p.Size, Size: tail}})
	}
}

// Pattern allocates a host-written 4-byte buffer holding word, the source
// of a fill's tail. The caller frees it once no pending submit reads it.
func Pattern(d *core.Device, word uint32) (*core.Allocation, error) {
	a, err := d.Alloc(core.MemHost, 4, vk.BufferUsageTransferSrc)
	if err != nil {
		return nil, err
	}
	binary.LittleEndian.PutUint32(a.Bytes(), word)
	if err := d.Flush(a); err != nil {
		d.Free(a)
		return nil, err
	}
	return a, nil
}

// FillWord returns the 32-bit pattern that fills a tensor of dtype d with
// v, whose Go type must match d (tensor.Half for float16).
func FillWord(d tensor.Dtype, v any) (uint32, error) {
	var bits uint64
	var got tensor.Dtype
	switch x := v.(type) {
	case tensor.Half:
		bits, got = uint64(x), tensor.Float16
	case float32:
		bits, got = uint64(math.Float32bits(x)), tensor.Float32
	case float64:
		bits, got = math.Float64bits(x), tensor.Float64
	case int8:
		bits, got = uint64(uint8(x)), tensor.Int8
	case int16:
		bits, got = uint64(uint16(x)), tensor.Int16
	case int32:
		bits, got = uint64(uint32(x)), tensor.Int32
	case int64:
		bits, got = uint64(x), tensor.Int64
	case uint8:
		bits, got = uint64(x), tensor.Uint8
	case uint16:
		bits, got = uint64(x), tensor.Uint16
	case uint32:
		bits, got = uint64(x), tensor.Uint32
	case uint64:
		bits, got = x, tensor.Uint64
	case bool:
		if x {
			bits = 1
		}
		got = tensor.Bool
	case complex64:
		bits, got = uint64(math.Float32bits(real(x)))|uint64(math.Float32bits(imag(x)))<<32, tensor.Complex64
	case complex128:
		re, im := math.Float64bits(real(x)), math.Float64bits(imag(x))
		if re != im {
			return 0, core.Invalid("Fill: complex128 value %v has unequal 32-bit words; the GPU fills 32-bit words", v)
		}
		bits, got = re, tensor.Complex128
	default:
		return 0, core.Invalid("Fill: unsupported value type %T", v)
	}
	if got != d {
		return 0, core.Invalid("Fill: mismatched dtypes: tensor is %v, value is %v", d, got)
	}
	switch d.Size() {
	case 1:
		return uint32(bits) * 0x01010101, nil
	case 2:
		return uint32(bits) | uint32(bits)<<16, nil
	case 4:
		return uint32(bits), nil
	}
	if uint32(bits) != uint32(bits>>32) {
		return 0, core.Invalid("Fill: %v value %v has unequal 32-bit halves; the GPU fills 32-bit words", d, v)
	}
	return uint32(bits), nil
}
