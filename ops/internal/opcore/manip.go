package opcore

import (
	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/tensor"
)

// The array API's manipulation functions as ops: concat, stack, flip,
// roll, tile, repeat and broadcast_to. Each is one or a few strided copies
// (the strided_copy kernel) into a new contiguous output, or into the
// output given; every dtype. The inputs of concat and stack must share one
// dtype (cast first: the Python layer promotes them as the standard does).

func init() {
	BuiltinOne("concat", -1, func(o Owner, in []*tensor.Tensor, at Attrs, out *tensor.Tensor) (*Op, error) {
		axis, err := AxisAttr("concat", at.Axes, 0)
		if err != nil {
			return nil, err
		}
		return Concat(o, in, axis, out)
	})
	BuiltinOne("stack", -1, func(o Owner, in []*tensor.Tensor, at Attrs, out *tensor.Tensor) (*Op, error) {
		axis, err := AxisAttr("stack", at.Axes, 0)
		if err != nil {
			return nil, err
		}
		return Stack(o, in, axis, out)
	})
	BuiltinOne("flip", 1, func(o Owner, in []*tensor.Tensor, at Attrs, out *tensor.Tensor) (*Op, error) {
		return Flip(o, in[0], at.Axes, out)
	})
	BuiltinOne("roll", 1, func(o Owner, in []*tensor.Tensor, at Attrs, out *tensor.Tensor) (*Op, error) {
		return Roll(o, in[0], at.Shift, at.Axes, out)
	})
	BuiltinOne("tile", 1, func(o Owner, in []*tensor.Tensor, at Attrs, out *tensor.Tensor) (*Op, error) {
		return Tile(o, in[0], at.Reps, out)
	})
	BuiltinOne("repeat", 1, func(o Owner, in []*tensor.Tensor, at Attrs, out *tensor.Tensor) (*Op, error) {
		return Repeat(o, in[0], at.Repeats, at.Axes, out)
	})
	BuiltinOne("broadcast_to", 1, func(o Owner, in []*tensor.Tensor, at Attrs, out *tensor.Tensor) (*Op, error) {
		return BroadcastTo(o, in[0], at.Shape, out)
	})
}

// RowMajor returns the row-major strides of shape.
func RowMajor(shape []int) []int {
	st := make([]int, len(shape))
	acc := 1
	for k := len(shape) - 1; k >= 0; k-- {
		st[k] = acc
		acc *= shape[k]
	}
	return st
}

// Concat joins xs along axis ("concat"; Attrs.Axes: one axis, nil 0): the
// xs share dtype and rank, and their shapes agree but along axis. A
// negative axis counts from the end. One copy per input.
func Concat(o Owner, xs []*tensor.Tensor, axis int, out *tensor.Tensor) (*Op, error) {
	if len(xs) == 0 {
		return nil, core.Invalid("ops.concat: no inputs")
	}
	op, err := NewOp(o, "concat", xs...)
	if err != nil {
		return nil, err
	}
	first := xs[0].Shape()
	rank := len(first)
	if rank == 0 {
		return op.Fail(op.Errorf("cannot concatenate 0-d tensors"))
	}
	ax, err := NormAxes("concat", []int{axis}, rank)
	if err != nil {
		return op.Fail(err)
	}
	a := ax[0]
	shape := append([]int(nil), first...)
	shape[a] = 0
	for i, x := range xs {
		s := x.Shape()
		if x.Dtype() != xs[0].Dtype() {
			return op.Fail(op.Errorf("input %d is %v, input 0 is %v: cast to one dtype first", i, x.Dtype(), xs[0].Dtype()))
		}
		if len(s) != rank {
			return op.Fail(op.Errorf("input %d has %d dimensions, input 0 has %d", i, len(s), rank))
		}
		for k := range s {
			if k != a && s[k] != first[k] {
				return op.Fail(op.Errorf("input %d has shape %v, input 0 %v: they differ outside axis %d", i, s, first, a))
			}
		}
		shape[a] += s[a]
	}
	y, err := op.OutputNoAlias(out, xs[0].Dtype(), shape)
	if err != nil {
		return op.Fail(err)
	}
	if err := op.RequireDtypes(xs[0].Dtype()); err != nil {
		return op.Fail(err)
	}
	ys := RowMajor(shape)
	off := 0
	for _, x := range xs {
		s := x.Shape()
		if err := op.copyView(x, y, s, 0, RowMajor(s), off*ys[a], ys); err != nil {
			return op.Fail(err)
		}
		off += s[a]
	}
	return op.Done(nil)
}

// Stack joins xs, all of one dtype and shape, along a new axis ("stack";
// Attrs.Axes: one axis, nil 0, in [-(rank+1), rank]).
func Stack(o Owner, xs []*tensor.Tensor, axis int, out *tensor.Tensor) (*Op, error) {
	if len(xs) == 0 {
		return nil, core.Invalid("ops.stack: no inputs")
	}
	op, err := NewOp(o, "stack", xs...)
	if err != nil {
		return nil, err
	}
	first := xs[0].Shape()
	ax, err := NormAxes("stack", []int{axis}, len(first)+1)
	if err != nil {
		return op.Fail(err)
	}
	a := ax[0]
	for i, x := range xs {
		if x.Dtype() != xs[0].Dtype() {
			return op.Fail(op.Errorf("input %d is %v, input 0 is %v: cast to one dtype first", i, x.Dtype(), xs[0].Dtype()))
		}
		if !equalShapes(x.Shape(), first) {
			return op.Fail(op.Errorf("input %d has shape %v, input 0 %v: stack needs one shape", i, x.Shape(), first))
		}
	}
	shape := append(append(append([]int(nil), first[:a]...), len(xs)), first[a:]...)
	y, err := op.OutputNoAlias(out, xs[0].Dtype(), shape)
	if err != nil {
		return op.Fail(err)
	}
	if err := op.RequireDtypes(xs[0].Dtype()); err != nil {
		return op.Fail(err)
	}
	ys := RowMajor(shape)
	dst := append(append([]int(nil), ys[:a]...), ys[a+1:]...)
	for i, x := range xs {
		if err := op.copyView(x, y, first, 0, RowMajor(first), i*ys[a], dst); err != nil {
			return op.Fail(err)
		}
	}
	return op.Done(nil)
}

func equalShapes(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// manipOut adds the output of a one-input manipulation op (out, or a new
// tensor of x's dtype and shape) and checks it.
func (op *Op) manipOut(x, out *tensor.Tensor, shape []int) (*tensor.Tensor, error) {
	y, err := op.Output(out, x.Dtype(), shape)
	if err != nil {
		return nil, err
	}
	if err := op.NoAlias(); err != nil {
		return nil, err
	}
	if err := op.RequireDtypes(x.Dtype()); err != nil {
		return nil, err
	}
	return y, nil
}

// Flip reverses x along axes ("flip"; Attrs.Axes, nil: every axis). One
// copy with negative source strides.
func Flip(o Owner, x *tensor.Tensor, axes []int, out *tensor.Tensor) (*Op, error) {
	op, err := NewOp(o, "flip", x)
	if err != nil {
		return nil, err
	}
	shape := x.Shape()
	ax, err := NormAxes("flip", axes, len(shape))
	if err != nil {
		return op.Fail(err)
	}
	y, err := op.manipOut(x, out, shape)
	if err != nil {
		return op.Fail(err)
	}
	if len(shape) == 0 {
		return op.Done(op.copyView(x, y, []int{1}, 0, []int{1}, 0, []int{1}))
	}
	st := RowMajor(shape)
	off := 0
	for _, a := range ax {
		if shape[a] > 0 {
			off += (shape[a] - 1) * st[a]
		}
		st[a] = -st[a]
	}
	return op.Done(op.copyView(x, y, shape, off, st, 0, RowMajor(shape)))
}

// Roll shifts x's elements along axes by shift, wrapping around ("roll";
// Attrs.Shift and Attrs.Axes): with no axes, x is rolled as if flattened
// (one shift); else shift has one entry per axis, or one for all of them,
// and repeated axes add their shifts, as in NumPy. Up to 2^len(axes)
// copies (the blocks that wrap).
func Roll(o Owner, x *tensor.Tensor, shift, axes []int, out *tensor.Tensor) (*Op, error) {
	op, err := NewOp(o, "roll", x)
	if err != nil {
		return nil, err
	}
	shape := x.Shape()
	y, err := op.manipOut(x, out, shape)
	if err != nil {
		return op.Fail(err)
	}
	view, shifts := shape, map[int]int{}
	switch {
	case axes == nil:
		if len(shift) != 1 {
			return op.Fail(op.Errorf("rolling the flattened tensor takes one shift, not %v", shift))
		}
		view = []int{x.Len()}
		shifts[0] = shift[0]
	case len(shift) == len(axes) || len(shift) == 1:
		for i, a := range axes {
			if a < -len(shape) || a >= len(shape) {
				return op.Fail(op.Errorf("axis %d is out of range for %d dimensions", a, len(shape)))
			}
			if a < 0 {
				a += len(shape)
			}
			s := shift[0]
			if len(shift) > 1 {
				s = shift[i]
			}
			shifts[a] += s
		}
	default:
		return op.Fail(op.Errorf("%d shifts for %d axes", len(shift), len(axes)))
	}
	if len(view) == 0 {
		return op.Done(op.copyView(x, y, []int{1}, 0, []int{1}, 0, []int{1}))
	}
	st := RowMajor(view)
	var rolled []int // the axes with a nonzero shift
	norm := make([]int, len(view))
	for a, s := range shifts {
		if d := view[a]; d > 0 {
			norm[a] = ((s % d) + d) % d
			if norm[a] != 0 {
				rolled = append(rolled, a)
			}
		}
	}
	// Each combination of blocks: along a rolled axis a of size d and shift
	// s, source [0, d-s) goes to [s, d), and source [d-s, d) to [0, s).
	for mask := 0; mask < 1<<len(rolled); mask++ {
		part := append([]int(nil), view...)
		soff, doff := 0, 0
		for i, a := range rolled {
			d, s := view[a], norm[a]
			if mask&(1<<i) == 0 {
				part[a] = d - s
				doff += s * st[a]
			} else {
				part[a] = s
				soff += (d - s) * st[a]
			}
		}
		if err := op.copyView(x, y, part, soff, st, doff, st); err != nil {
			return op.Fail(err)
		}
	}
	return op.Done(nil)
}

// Tile repeats x reps times along each axis ("tile"; Attrs.Reps): reps
// shorter than x's rank is padded with leading 1s, longer pads x's shape
// with leading 1s, as in NumPy. One copy, where each tiled axis of size
// over 1 takes one more dimension (at most 8 in all).
func Tile(o Owner, x *tensor.Tensor, reps []int, out *tensor.Tensor) (*Op, error) {
	op, err := NewOp(o, "tile", x)
	if err != nil {
		return nil, err
	}
	shape := x.Shape()
	n := max(len(shape), len(reps))
	xs := make([]int, n)
	rs := make([]int, n)
	for i := range xs {
		xs[i], rs[i] = 1, 1
	}
	copy(xs[n-len(shape):], shape)
	copy(rs[n-len(reps):], reps)
	outShape := make([]int, n)
	for i := range rs {
		if rs[i] < 0 {
			return op.Fail(op.Errorf("repetitions %v: negative", reps))
		}
		outShape[i] = xs[i] * rs[i]
	}
	y, err := op.manipOut(x, out, outShape)
	if err != nil {
		return op.Fail(err)
	}
	if Numel(outShape) == 0 {
		return op.Done(nil)
	}
	// The copy's view: for axis i, the dimension rs[i] (source stride 0,
	// destination stride xs[i]*ost[i]) when rs[i] > 1 and xs[i] > 1, then
	// xs[i] (source stride sst[i], destination ost[i]).
	sst, ost := RowMajor(xs), RowMajor(outShape)
	var vshape, vs, vd []int
	for i := range xs {
		switch {
		case rs[i] > 1 && xs[i] > 1:
			vshape = append(vshape, rs[i], xs[i])
			vs = append(vs, 0, sst[i])
			vd = append(vd, xs[i]*ost[i], ost[i])
		case rs[i] > 1:
			vshape, vs, vd = append(vshape, rs[i]), append(vs, 0), append(vd, ost[i])
		default:
			vshape, vs, vd = append(vshape, xs[i]), append(vs, sst[i]), append(vd, ost[i])
		}
	}
	return op.Done(op.copyView(x, y, vshape, 0, vs, 0, vd))
}

// Repeat repeats each element of x repeats times along axis ("repeat";
// Attrs.Repeats, Attrs.Axes: one axis, or nil for the flattened x). One
// copy. (Per-element counts, which give a data-dependent shape, are the
// Python layer's: it reads the counts.)
func Repeat(o Owner, x *tensor.Tensor, repeats int, axes []int, out *tensor.Tensor) (*Op, error) {
	op, err := NewOp(o, "repeat", x)
	if err != nil {
		return nil, err
	}
	if repeats < 0 {
		return op.Fail(op.Errorf("repeats %d is negative", repeats))
	}
	shape := x.Shape()
	a := 0
	switch {
	case axes == nil:
		shape = []int{x.Len()}
	case len(axes) == 1:
		ax, err := NormAxes("repeat", axes, len(shape))
		if err != nil {
			return op.Fail(err)
		}
		a = ax[0]
	default:
		return op.Fail(op.Errorf("takes one axis, not %v", axes))
	}
	outShape := append([]int(nil), shape...)
	outShape[a] *= repeats
	y, err := op.manipOut(x, out, outShape)
	if err != nil {
		return op.Fail(err)
	}
	// View: shape with a dimension of repeats after axis a (source stride 0).
	sst, ost := RowMajor(shape), RowMajor(outShape)
	vshape := append(append(append([]int(nil), shape[:a+1]...), repeats), shape[a+1:]...)
	vs := append(append(append([]int(nil), sst[:a+1]...), 0), sst[a+1:]...)
	vd := append(append(append([]int(nil), ost[:a]...), repeats*ost[a], ost[a]), ost[a+1:]...)
	return op.Done(op.copyView(x, y, vshape, 0, vs, 0, vd))
}

// BroadcastTo copies x broadcast to shape ("broadcast_to"; Attrs.Shape)
// by NumPy's rules: x's dimensions, aligned at the end, are 1 or equal to
// shape's. One copy (source stride 0 along broadcast axes).
func BroadcastTo(o Owner, x *tensor.Tensor, shape []int, out *tensor.Tensor) (*Op, error) {
	op, err := NewOp(o, "broadcast_to", x)
	if err != nil {
		return nil, err
	}
	xs := x.Shape()
	if len(xs) > len(shape) {
		return op.Fail(op.Errorf("cannot broadcast shape %v to %v: more dimensions", xs, shape))
	}
	st := RowMajor(xs)
	vs := make([]int, len(shape))
	lead := len(shape) - len(xs)
	for i, d := range shape {
		if d < 0 {
			return op.Fail(op.Errorf("shape %v has a negative dimension", shape))
		}
		if i < lead {
			continue
		}
		switch xd := xs[i-lead]; {
		case xd == d:
			vs[i] = st[i-lead]
		case xd == 1:
		default:
			return op.Fail(op.Errorf("cannot broadcast shape %v to %v", xs, shape))
		}
	}
	y, err := op.manipOut(x, out, shape)
	if err != nil {
		return op.Fail(err)
	}
	if len(shape) == 0 {
		return op.Done(op.copyView(x, y, []int{1}, 0, []int{1}, 0, []int{1}))
	}
	return op.Done(op.copyView(x, y, shape, 0, vs, 0, RowMajor(shape)))
}
