package opcore

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/tensor"
)

// Integer-array indexing: take, gather and scatter. Index arrays count
// from the end when negative (i + size); what is still out of range after
// that cannot be reported from the GPU without a host round trip, so
// gather and take clamp it to the axis (as NumPy's mode="clip") and
// scatter skips it (the write is dropped). Every dtype is copied by its
// storage type; indices are any integer dtype, each its own.

func init() {
	Builtin("take", func(o Owner, in, out []*tensor.Tensor, at Attrs) (*Op, error) {
		if err := Inputs("take", in, 2); err != nil {
			return nil, err
		}
		if err := TooMany("take", out, 1); err != nil {
			return nil, err
		}
		axis, err := optionalAxis("take", at.Axes)
		if err != nil {
			return nil, err
		}
		return Take(o, in[0], in[1], axis, OutAt(out, 0))
	})
	Builtin("gather", func(o Owner, in, out []*tensor.Tensor, at Attrs) (*Op, error) {
		if len(in) < 2 {
			return nil, core.Invalid("ops.gather: %d inputs, want x and at least one index array", len(in))
		}
		if err := TooMany("gather", out, 1); err != nil {
			return nil, err
		}
		axis, err := AxisAttr("gather", at.Axes, 0)
		if err != nil {
			return nil, err
		}
		return Gather(o, in[0], in[1:], axis, OutAt(out, 0))
	})
	Builtin("scatter", func(o Owner, in, out []*tensor.Tensor, at Attrs) (*Op, error) {
		if len(in) < 2 {
			return nil, core.Invalid("ops.scatter: %d inputs, want values and at least one index array", len(in))
		}
		if len(out) != 1 || out[0] == nil {
			return nil, core.Invalid("ops.scatter: writes into its given output (the destination): give one")
		}
		axis, err := AxisAttr("scatter", at.Axes, 0)
		if err != nil {
			return nil, err
		}
		return Scatter(o, in[0], in[1:], axis, out[0])
	})
}

// Take gathers x's elements along axis at the integer indices idx
// ("take"; Attrs.Axes: one axis, nil only for a 1-d x): the result has
// shape x.shape[:axis] + idx.shape + x.shape[axis+1:]. Negative indices
// count from the end; indices still out of range are clamped.
func Take(o Owner, x, idx *tensor.Tensor, axis *int, out *tensor.Tensor) (*Op, error) {
	a := 0
	if axis != nil {
		a = *axis
	} else if x != nil && len(x.Shape()) != 1 {
		return nil, core.Invalid("ops.take: x has shape %v: give an axis (only a 1-d x may omit it)", x.Shape())
	}
	return gather("take", o, x, []*tensor.Tensor{idx}, a, out)
}

// Gather is NumPy's integer-array indexing of k consecutive axes ("gather";
// Attrs.Axes: the first of them, default 0): the index arrays idx (k of
// them, any integer dtypes) broadcast together to a shape B, and
// result[p..., b..., q...] = x[p..., idx0[b], ..., idx(k-1)[b], q...], of
// shape x.shape[:axis] + B + x.shape[axis+k:]. Negative indices count from
// the end; indices still out of range are clamped to the axis.
func Gather(o Owner, x *tensor.Tensor, idx []*tensor.Tensor, axis int, out *tensor.Tensor) (*Op, error) {
	return gather("gather", o, x, idx, axis, out)
}

// Scatter writes values into dst at integer-array indices, the inverse of
// Gather ("scatter"; the output is the destination, given and written in
// place): dst[p..., idx0[b], ..., idx(k-1)[b], q...] = values[p..., b...,
// q...], values broadcast to dst.shape[:axis] + B + dst.shape[axis+k:]
// and of dst's dtype. Negative indices count from the end; a write whose
// index is still out of range is dropped. Where indices repeat, one of the
// writes wins, unspecified which.
func Scatter(o Owner, values *tensor.Tensor, idx []*tensor.Tensor, axis int, dst *tensor.Tensor) (*Op, error) {
	if dst == nil {
		return nil, core.Invalid("ops.scatter: the destination is nil")
	}
	return scatter(o, values, idx, axis, dst)
}

// idxLayout is the geometry of an integer-array indexing: result = [pre,
// B, post] elements, and per index array its axis's size and stride.
type idxLayout struct {
	res          []int
	pre, nb, sp  int // sp: the elements of x from axis on (x.shape[axis:])
	post         int
	dims, stride []int
}

func (op *Op) idxGeometry(shape []int, idx []*tensor.Tensor, axis int) (idxLayout, error) {
	var l idxLayout
	k := len(idx)
	if axis < 0 {
		axis += len(shape)
	}
	if axis < 0 || axis+k > len(shape) {
		return l, op.Errorf("%d index arrays from axis %d of a tensor of shape %v", k, axis, shape)
	}
	if k > MaxRank {
		return l, op.Errorf("%d index arrays, more than %d", k, MaxRank)
	}
	shapes := make([][]int, k)
	for m, t := range idx {
		if !isSigned(t.Dtype()) && !isUnsigned(t.Dtype()) {
			return l, op.Errorf("index array %d is %v: want an integer dtype", m, t.Dtype())
		}
		shapes[m] = t.Shape()
	}
	b, err := BroadcastShapes(op.name, shapes...)
	if err != nil {
		return l, err
	}
	l.res = slices.Concat(shape[:axis], b, shape[axis+k:])
	if len(l.res) > MaxRank {
		return l, op.Errorf("the result has %d dimensions, more than %d", len(l.res), MaxRank)
	}
	l.pre, l.nb, l.sp, l.post = Numel(shape[:axis]), Numel(b), Numel(shape[axis:]), Numel(shape[axis+k:])
	for m := range k {
		l.dims = append(l.dims, shape[axis+m])
		l.stride = append(l.stride, Numel(shape[axis+m+1:]))
	}
	if Numel(l.res) > 0 {
		for m, d := range l.dims {
			if d == 0 {
				return l, op.Errorf("index array %d indexes axis %d of size 0", m, axis+m)
			}
		}
	}
	return l, nil
}

// expand returns t broadcast to shape as a contiguous tensor: t itself
// when it has that shape, else a scratch copy (a strided_copy dispatch
// with 0 strides on the broadcast dimensions).
func (op *Op) expand(t *tensor.Tensor, shape []int) (*tensor.Tensor, error) {
	ts := t.Shape()
	if slices.Equal(ts, shape) {
		return t, nil
	}
	y, err := op.Temp(t.Dtype(), shape)
	if err != nil {
		return nil, err
	}
	n := Numel(shape)
	if n == 0 {
		return y, nil
	}
	lead := len(shape) - len(ts)
	src := make([]int, len(shape))
	dst := Contiguous(shape)
	acc := 1
	for i := len(ts) - 1; i >= 0; i-- {
		if ts[i] != 1 {
			src[lead+i] = acc
		}
		acc *= ts[i]
	}
	push := padPush[int32]([]any{uint32(n), uint32(len(shape)), int32(0), int32(0)}, shape, src, dst)
	groups, err := op.Grid(uint64(n), LocalSize)
	if err != nil {
		return nil, err
	}
	return y, op.Dispatch(stridedSource(t.Dtype()), []*tensor.Tensor{t, y}, groups, push...)
}

func gather(name string, o Owner, x *tensor.Tensor, idx []*tensor.Tensor, axis int, out *tensor.Tensor) (*Op, error) {
	op, err := NewOp(o, name, append([]*tensor.Tensor{x}, idx...)...)
	if err != nil {
		return nil, err
	}
	if GLSLType(x.Dtype()) == "invalid" {
		return op.Fail(op.Unsupported(x.Dtype(), "every real dtype"))
	}
	l, err := op.idxGeometry(x.Shape(), idx, axis)
	if err != nil {
		return op.Fail(err)
	}
	y, err := op.OutputNoAlias(out, x.Dtype(), l.res)
	if err != nil {
		return op.Fail(err)
	}
	return op.Done(op.indexDispatch(false, x, idx, y, l))
}

func scatter(o Owner, values *tensor.Tensor, idx []*tensor.Tensor, axis int, dst *tensor.Tensor) (*Op, error) {
	op, err := NewOp(o, "scatter", append([]*tensor.Tensor{values}, idx...)...)
	if err != nil {
		return nil, err
	}
	if values.Dtype() != dst.Dtype() {
		return op.Fail(op.Errorf("values are %v, the destination %v: cast first", values.Dtype(), dst.Dtype()))
	}
	if GLSLType(dst.Dtype()) == "invalid" {
		return op.Fail(op.Unsupported(dst.Dtype(), "every real dtype"))
	}
	l, err := op.idxGeometry(dst.Shape(), idx, axis)
	if err != nil {
		return op.Fail(err)
	}
	if b, err := BroadcastShapes("scatter", values.Shape(), l.res); err != nil || !slices.Equal(b, l.res) {
		return op.Fail(op.Errorf("values of shape %v do not broadcast to the indexed shape %v", values.Shape(), l.res))
	}
	y, err := op.OutputNoAlias(dst, dst.Dtype(), dst.Shape())
	if err != nil {
		return op.Fail(err)
	}
	return op.Done(op.indexDispatch(true, values, idx, y, l))
}

// indexDispatch adds the gather (x to y) or scatter (values x into y)
// dispatch, broadcasting the index arrays (and scatter's values) first.
func (op *Op) indexDispatch(isScatter bool, x *tensor.Tensor, idx []*tensor.Tensor, y *tensor.Tensor, l idxLayout) error {
	total := Numel(l.res)
	if total == 0 {
		return nil
	}
	dtypes := []tensor.Dtype{x.Dtype()}
	bshape := bShape(idx)
	ts := make([]*tensor.Tensor, 0, len(idx)+2)
	src := x
	if isScatter {
		var err error
		if src, err = op.expand(x, l.res); err != nil {
			return err
		}
	}
	ts = append(ts, src)
	for _, t := range idx {
		e, err := op.expand(t, bshape)
		if err != nil {
			return err
		}
		ts = append(ts, e)
		dtypes = append(dtypes, t.Dtype())
	}
	ts = append(ts, y)
	if err := op.RequireDtypes(append(dtypes, tensor.Int64)...); err != nil {
		return err
	}
	push := padPush[uint32]([]any{uint32(total), uint32(l.post), uint32(l.nb), uint32(l.sp)}, l.dims, l.stride)
	groups, err := op.Grid(uint64(total), LocalSize)
	if err != nil {
		return err
	}
	return op.Dispatch(indexSource(isScatter, x.Dtype(), dtypes[1:]), ts, groups, push...)
}

// bShape is the index arrays' broadcast shape.
func bShape(idx []*tensor.Tensor) []int {
	shapes := make([][]int, len(idx))
	for m, t := range idx {
		shapes[m] = t.Shape()
	}
	b, _ := BroadcastShapes("gather", shapes...) // checked by idxGeometry
	return b
}

// indexSource is the gather or scatter kernel over the result's elements
// e = (p, j, q) of [pre, nb, post].
func indexSource(isScatter bool, dt tensor.Dtype, idt []tensor.Dtype) string {
	var b strings.Builder
	b.WriteString(Header(append([]tensor.Dtype{dt, tensor.Int64}, idt...)...))
	t := GLSLType(dt)
	k := len(idt)
	fmt.Fprintf(&b, "layout(local_size_x = %d) in;\n", LocalSize)
	fmt.Fprintf(&b, "layout(binding = 0) readonly buffer X { %s x[]; };\n", t)
	for m, d := range idt {
		fmt.Fprintf(&b, "layout(binding = %d) readonly buffer I%d { %s i%d[]; };\n", m+1, m, GLSLType(d), m)
	}
	fmt.Fprintf(&b, "layout(binding = %d) writeonly buffer Y { %s y[]; };\n", k+1, t)
	fmt.Fprintf(&b, `layout(push_constant) uniform P { uint total; uint post; uint nb; uint sp; uint dims[%d]; uint strides[%d]; };
%s
void main() {
	uint e = gid();
	if (e >= total) return;
	uint q = e %% post;
	uint j = (e / post) %% nb;
	uint p = e / (post * nb);
	uint off = p * sp + q;
	bool ok = true;
`, MaxRank, MaxRank, IndexGLSL)
	for m, d := range idt {
		// Narrow indices compute in int: lavapipe mis-converts them to
		// int64 (a negative int32 index came out wrong).
		it := "int"
		if d == tensor.Int64 || d == tensor.Uint32 || d == tensor.Uint64 {
			it = "int64_t"
		}
		fmt.Fprintf(&b, `	{
		%[2]s v = %[2]s(i%[1]d[j]);
		%[2]s n = %[2]s(dims[%[1]d]);
		if (v < %[2]s(0)) v += n;
		if (v < %[2]s(0)) {
			ok = false;
			v = %[2]s(0);
		} else if (v >= n) {
			ok = false;
			v = n - %[2]s(1);
		}
		off += uint(v) * strides[%[1]d];
	}
`, m, it)
	}
	if isScatter {
		b.WriteString("\tif (ok) y[off] = x[e];\n}\n")
	} else {
		b.WriteString("\ty[e] = x[off];\n}\n")
	}
	return b.String()
}
