package opcore

import (
	le "encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/tensor"
)

// GradBuilder is what a VJP rule computes with: the op's inputs, outputs,
// cotangents and attributes, and the ops it calls, which run where the
// gradient is asked for (queued on a Stream, or recorded into a backward
// graph). Every tensor its calls make belongs to it: those a rule returns
// become the gradients, the others are closed when the rule is done.
// The first error sticks: later calls return nil and do nothing.
type GradBuilder struct {
	owner  Owner
	name   string
	at     Attrs
	in     []*tensor.Tensor
	out    []*tensor.Tensor // nil entries: recomputed on first use
	cot    []*tensor.Tensor // nil entries: zeros
	wants  []bool
	err    error
	made   []*tensor.Tensor
	consts map[constKey]*tensor.Tensor
	// call runs or records one op (Stream.Call, or a graph's recording).
	call func(name string, in, out []*tensor.Tensor, at Attrs) ([]*tensor.Tensor, error)
	// keep, when set, takes the tensors the rule made and did not return
	// (a backward graph reads them at every run) instead of closing them.
	keep func([]*tensor.Tensor)
}

type constKey struct {
	dt tensor.Dtype
	v  complex128
}

// Name returns the name of the op being differentiated.
func (b *GradBuilder) Name() string { return b.name }

// Attrs returns the op's attributes.
func (b *GradBuilder) Attrs() Attrs { return b.at }

// NumIn returns the op's number of inputs.
func (b *GradBuilder) NumIn() int { return len(b.in) }

// In returns input i.
func (b *GradBuilder) In(i int) *tensor.Tensor { return b.in[i] }

// Wants reports whether input i's gradient is asked for (and its dtype
// can carry one: float or complex).
func (b *GradBuilder) Wants(i int) bool {
	return i < len(b.in) && (b.wants == nil || (i < len(b.wants) && b.wants[i])) && differentiableDtype(b.in[i].Dtype())
}

// Err returns the first error of the rule's calls.
func (b *GradBuilder) Err() error { return b.err }

func (b *GradBuilder) Fail(err error) {
	if b.err == nil && err != nil {
		b.err = err
	}
}

func (b *GradBuilder) outs() []*tensor.Tensor { return b.cot }

// Out returns output i of the forward op: the one given, or (once) the
// op run again over the inputs.
func (b *GradBuilder) Out(i int) *tensor.Tensor {
	if b.err != nil {
		return nil
	}
	if i < len(b.out) && b.out[i] != nil {
		return b.out[i]
	}
	outs, err := b.call(b.name, b.in, nil, b.at)
	if err != nil {
		b.Fail(fmt.Errorf("ops.%s: VJP: recomputing the outputs: %w", b.name, err))
		return nil
	}
	b.made = append(b.made, outs...)
	full := make([]*tensor.Tensor, max(len(outs), len(b.out)))
	copy(full, outs)
	for j, t := range b.out {
		if t != nil {
			full[j] = t
		}
	}
	b.out = full
	if i >= len(b.out) {
		b.Fail(core.Invalid("ops.%s: VJP: the op has %d outputs, not %d", b.name, len(b.out), i+1))
		return nil
	}
	return b.out[i]
}

// Cot returns the cotangent of output i: the one given, or zeros.
func (b *GradBuilder) Cot(i int) *tensor.Tensor {
	if b.err != nil {
		return nil
	}
	if b.cot[i] == nil {
		y := b.Out(i)
		if y == nil {
			return nil
		}
		b.cot[i] = b.Zeros(y.Dtype(), y.Shape())
	}
	return b.cot[i]
}

// CotOpt returns the cotangent given for output i, nil when none was.
func (b *GradBuilder) CotOpt(i int) *tensor.Tensor {
	if i < len(b.cot) {
		return b.cot[i]
	}
	return nil
}

// CallN calls the op name over in with attributes at and returns its
// first n outputs (n < 1: all of them).
func (b *GradBuilder) CallN(name string, at Attrs, n int, in ...*tensor.Tensor) []*tensor.Tensor {
	if b.err != nil {
		return nil
	}
	for _, t := range in {
		if t == nil {
			b.Fail(core.Invalid("ops.%s: VJP: a nil tensor reached %s", b.name, name))
			return nil
		}
	}
	outs, err := b.call(name, in, nil, at)
	if err != nil {
		b.Fail(fmt.Errorf("ops.%s: VJP: %w", b.name, err))
		return nil
	}
	b.made = append(b.made, outs...)
	if n > 0 && len(outs) > n {
		outs = outs[:n]
	}
	return outs
}

// Call calls the op name over in with attributes at and returns its first
// output.
func (b *GradBuilder) Call(name string, at Attrs, in ...*tensor.Tensor) *tensor.Tensor {
	outs := b.CallN(name, at, 1, in...)
	if len(outs) == 0 {
		return nil
	}
	return outs[0]
}

// Into calls the op name writing its given output out (strided_copy into
// a view).
func (b *GradBuilder) Into(name string, at Attrs, out *tensor.Tensor, in ...*tensor.Tensor) {
	if b.err != nil {
		return
	}
	if _, err := b.call(name, in, []*tensor.Tensor{out}, at); err != nil {
		b.Fail(fmt.Errorf("ops.%s: VJP: %w", b.name, err))
	}
}

// Zeros returns a new tensor of zeros.
func (b *GradBuilder) Zeros(dt tensor.Dtype, shape []int) *tensor.Tensor {
	if b.err != nil {
		return nil
	}
	t, err := tensor.New(b.owner, dt, shape)
	if err != nil {
		b.Fail(fmt.Errorf("ops.%s: VJP: %w", b.name, err))
		return nil
	}
	b.made = append(b.made, t)
	return t
}

// Const returns a 0-d tensor of dtype dt holding v (its real part for a
// real dtype, rounded toward zero for an integer dtype).
func (b *GradBuilder) Const(dt tensor.Dtype, v complex128) *tensor.Tensor {
	k := constKey{dt, v}
	if t, ok := b.consts[k]; ok && b.err == nil {
		return t
	}
	t := b.Constant(dt, []int{}, []complex128{v})
	if t == nil {
		return nil
	}
	if b.consts == nil {
		b.consts = map[constKey]*tensor.Tensor{}
	}
	b.consts[k] = t
	return t
}

// Constant is a new tensor of dtype dt and shape holding vs (row-major),
// written from the host once: the constants, index ranges and weights
// the rules need.
func (b *GradBuilder) Constant(dt tensor.Dtype, shape []int, vs []complex128) *tensor.Tensor {
	t := b.Zeros(dt, shape)
	if t == nil {
		return nil
	}
	sz := dt.Size()
	buf := make([]byte, len(vs)*sz)
	for i, v := range vs {
		copy(buf[i*sz:], b.encode(dt, v))
	}
	if err := t.WriteBytes(buf); err != nil {
		b.Fail(fmt.Errorf("ops.%s: VJP: a constant: %w", b.name, err))
		return nil
	}
	return t
}

// encode is v's bytes in dtype dt (the real part for a real dtype,
// rounded toward zero for an integer dtype).
func (b *GradBuilder) encode(dt tensor.Dtype, v complex128) []byte {
	buf := make([]byte, dt.Size())
	re, im := real(v), imag(v)
	lb := le.LittleEndian
	switch dt {
	case tensor.Float16:
		lb.PutUint16(buf, uint16(tensor.HalfFrom(float32(re))))
	case tensor.Float32:
		lb.PutUint32(buf, math.Float32bits(float32(re)))
	case tensor.Float64:
		lb.PutUint64(buf, math.Float64bits(re))
	case tensor.Complex64:
		lb.PutUint32(buf, math.Float32bits(float32(re)))
		lb.PutUint32(buf[4:], math.Float32bits(float32(im)))
	case tensor.Complex128:
		lb.PutUint64(buf, math.Float64bits(re))
		lb.PutUint64(buf[8:], math.Float64bits(im))
	case tensor.Bool:
		if re != 0 {
			buf[0] = 1
		}
	default:
		n := uint64(int64(re))
		for i := range buf {
			buf[i] = byte(n >> (8 * i))
		}
	}
	return buf
}

// Reshape returns x with shape (the same number of elements; x itself
// when the shape is already x's).
func (b *GradBuilder) Reshape(x *tensor.Tensor, shape []int) *tensor.Tensor {
	if b.err != nil {
		return nil
	}
	if slices.Equal(x.Shape(), shape) {
		return x
	}
	if Numel(shape) != x.Len() {
		b.Fail(core.Invalid("ops.%s: VJP: reshape of %v to %v", b.name, x.Shape(), shape))
		return nil
	}
	return b.Call("strided_copy", Attrs{Shape: append([]int{}, shape...)}, x)
}

// SumTo sums g, of a shape that shape broadcasts to, down to shape: the
// gradient of an input that was broadcast.
func (b *GradBuilder) SumTo(g *tensor.Tensor, shape []int) *tensor.Tensor {
	if b.err != nil {
		return nil
	}
	gs := g.Shape()
	if slices.Equal(gs, shape) {
		return g
	}
	lead := len(gs) - len(shape)
	if lead < 0 {
		b.Fail(core.Invalid("ops.%s: VJP: a cotangent of shape %v for an input of shape %v", b.name, gs, shape))
		return nil
	}
	if lead > 0 {
		axes := make([]int, lead)
		for i := range axes {
			axes[i] = i
		}
		g = b.Call("sum", Attrs{Axes: axes}, g)
	}
	var axes []int
	for i, d := range shape {
		if d == 1 && gs[lead+i] != 1 {
			axes = append(axes, i)
		}
	}
	if len(axes) > 0 {
		g = b.Call("sum", Attrs{Axes: axes, KeepDims: true}, g)
	}
	return g
}

// finish turns a rule's results into the gradients: each of its input's
// shape and dtype, new tensors (a cotangent or input passed through is
// copied), and closes every other tensor the rule made.
func (b *GradBuilder) finish(gs []*tensor.Tensor) ([]*tensor.Tensor, error) {
	res := make([]*tensor.Tensor, len(b.in))
	if b.err == nil && len(gs) != len(b.in) {
		b.Fail(core.Invalid("ops.%s: VJP rule gave %d gradients for %d inputs", b.name, len(gs), len(b.in)))
	}
	for i := 0; b.err == nil && i < len(gs); i++ {
		g := gs[i]
		if g == nil || !b.Wants(i) {
			continue
		}
		x := b.in[i]
		if g.Dtype() != x.Dtype() {
			g = b.CastTo(g, x.Dtype())
		}
		if b.err == nil && !slices.Equal(g.Shape(), x.Shape()) {
			if g.Len() == x.Len() {
				g = b.Reshape(g, x.Shape())
			} else {
				b.Fail(core.Invalid("ops.%s: VJP gave input %d a gradient of shape %v, the input is %v", b.name, i, g.Shape(), x.Shape()))
			}
		}
		if g != nil && (!slices.Contains(b.made, g) || slices.Contains(res, g) || b.isConst(g)) {
			g = b.Call("strided_copy", Attrs{Shape: g.Shape()}, g)
		}
		res[i] = g
	}
	var rest []*tensor.Tensor
	for _, t := range b.made {
		if !slices.Contains(res, t) {
			rest = append(rest, t)
		}
	}
	b.made = nil
	if b.keep != nil {
		b.keep(rest)
	} else {
		for _, t := range rest {
			_ = t.Close()
		}
	}
	if b.err != nil {
		for _, t := range res {
			if t != nil {
				_ = t.Close()
			}
		}
		return nil, b.err
	}
	return res, nil
}

// isConst reports whether t is one of the rule's cached constants, which
// other ops may share: returned as a gradient, it is copied.
func (b *GradBuilder) isConst(t *tensor.Tensor) bool {
	for _, c := range b.consts {
		if c == t {
			return true
		}
	}
	return false
}

// runVJP runs the rule of op name with the backend call.
func runVJP(o Owner, call func(string, []*tensor.Tensor, []*tensor.Tensor, Attrs) ([]*tensor.Tensor, error),
	keep func([]*tensor.Tensor), name string, in, out, cot []*tensor.Tensor, at Attrs, wants []bool) ([]*tensor.Tensor, error) {
	fn, err := vjpRule(name)
	if err != nil {
		return nil, err
	}
	if err := checkVJPArgs(name, in, out, cot); err != nil {
		return nil, err
	}
	if wants != nil && len(wants) != len(in) {
		return nil, core.Invalid("ops.%s: VJP: %d wants for %d inputs", name, len(wants), len(in))
	}
	b := &GradBuilder{owner: o, name: name, at: at, in: in,
		out: append([]*tensor.Tensor(nil), out...), cot: append([]*tensor.Tensor(nil), cot...),
		wants: wants, call: call, keep: keep}
	any := false
	for i := range in {
		any = any || b.Wants(i)
	}
	if !any {
		return make([]*tensor.Tensor, len(in)), nil
	}
	return b.finish(fn(b))
}

// VJP queues the vector-Jacobian product of the op name on the stream:
// the gradient of each input, given the op's inputs in, its outputs out
// (nil, or nil entries: recomputed), the cotangents cot (one per output;
// a nil entry is zeros) and its attributes at. wants selects the inputs
// whose gradient is computed (nil: every float or complex input). It
// returns one tensor per input, nil where no gradient is computed; the
// caller owns them. Nothing waits on the host, and nothing is read back:
// the rule's ops are queued on the stream like any call. An op without a
// VJP is ErrNoGradient, and then nothing is queued.
func (s *Stream) VJP(name string, in, out, cot []*tensor.Tensor, at Attrs, wants []bool) ([]*tensor.Tensor, error) {
	if s == nil {
		return nil, core.Invalid("ops: nil Stream")
	}
	call := func(n string, in, out []*tensor.Tensor, at Attrs) ([]*tensor.Tensor, error) {
		return s.Call(n, in, out, at)
	}
	return runVJP(s.owner, call, nil, name, in, out, cot, at, wants)
}
