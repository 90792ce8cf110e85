package opcore

import (
	"fmt"
	"strings"

	"github.com/vkflow/vkflow/tensor"
)

// strided_copy copies a strided view of one tensor into a strided view of
// another (both 1-D buffers of elements, whatever their shapes): element
// (i0, i1, ...) of Attrs.Shape goes from src[SrcOffset + sum ik*SrcStrides[k]]
// to dst[DstOffset + sum ik*DstStrides[k]]. Strides may be negative or 0
// (a broadcast source). Nil strides are row-major contiguous over Shape. It
// is how the Python layer gathers a view (indexing, a transpose) into a
// contiguous tensor, and scatters values into a view (__setitem__, writes
// through views). With no output given, the output is a new contiguous
// tensor of Shape (and DstOffset and DstStrides must be unset).
//
// Every index the views reach must be inside its tensor, the dtypes must
// match, and src and dst must not share memory (copy through a temporary:
// the invocations would race); each is ErrInvalid naming it. A destination
// view that reaches one element twice (a 0 stride) writes it from one of
// the invocations, unspecified which, as NumPy's assignment does in
// practice. Every dtype; 8-bit and 16-bit dtypes need the device's 8- and
// 16-bit storage.

func init() {
	Builtin("strided_copy", func(o Owner, in, out []*tensor.Tensor, at Attrs) (*Op, error) {
		if err := Inputs("strided_copy", in, 1); err != nil {
			return nil, err
		}
		if err := TooMany("strided_copy", out, 1); err != nil {
			return nil, err
		}
		return StridedCopy(o, in[0], OutAt(out, 0), at)
	})
}

// StridedCopy builds strided_copy (see above) from at's Shape, SrcOffset,
// SrcStrides, DstOffset and DstStrides.
func StridedCopy(o Owner, src, dst *tensor.Tensor, at Attrs) (*Op, error) {
	op, err := NewOp(o, "strided_copy", src)
	if err != nil {
		return nil, err
	}
	shape := at.Shape
	if len(shape) > MaxRank {
		return op.Fail(op.Errorf("shape %v has %d dimensions, more than %d", shape, len(shape), MaxRank))
	}
	n := 1
	for _, d := range shape {
		if d < 0 || d > 1<<31-1 {
			return op.Fail(op.Errorf("shape %v has a bad dimension", shape))
		}
		n *= d
		if n > 1<<31-1 {
			return op.Fail(op.Errorf("shape %v has more than 2^31-1 elements", shape))
		}
	}
	sst, err := viewStrides(op, "source", shape, at.SrcStrides)
	if err != nil {
		return op.Fail(err)
	}
	dstr, err := viewStrides(op, "destination", shape, at.DstStrides)
	if err != nil {
		return op.Fail(err)
	}
	if dst == nil && (at.DstOffset != 0 || at.DstStrides != nil) {
		return op.Fail(op.Errorf("a destination offset or strides need a given output"))
	}
	y, err := op.OutputNoAlias(dst, src.Dtype(), shapeOr(dst, shape))
	if err != nil {
		return op.Fail(err)
	}
	if err := op.RequireDtypes(src.Dtype()); err != nil {
		return op.Fail(err)
	}
	if n == 0 {
		return op, nil
	}
	return op.Done(op.copyView(src, y, shape, at.SrcOffset, sst, at.DstOffset, dstr))
}

// copyView adds one strided_copy dispatch: element (i0, i1, ...) of shape
// goes from src[soff + sum ik*sst[k]] to dst[doff + sum ik*dst[k]]. Both
// views must lie inside their tensors; an empty shape adds nothing.
func (op *Op) copyView(src, dst *tensor.Tensor, shape []int, soff int, sst []int, doff int, dstr []int) error {
	if len(shape) > MaxRank {
		return op.Errorf("a copy of %d dimensions, more than %d", len(shape), MaxRank)
	}
	n := Numel(shape)
	if n == 0 {
		return nil
	}
	if n > 1<<31-1 {
		return op.Errorf("a copy of shape %v: more than 2^31-1 elements", shape)
	}
	if err := inBounds(op, "source", shape, soff, sst, src.Len()); err != nil {
		return err
	}
	if err := inBounds(op, "destination", shape, doff, dstr, dst.Len()); err != nil {
		return err
	}
	push := []any{uint32(n), uint32(len(shape)), int32(soff), int32(doff)}
	for _, arr := range [][]int{shape, sst, dstr} {
		for k := 0; k < MaxRank; k++ {
			v := 0
			if k < len(arr) {
				v = arr[k]
			}
			push = append(push, int32(v))
		}
	}
	groups, err := op.Grid(uint64(n), LocalSize)
	if err != nil {
		return err
	}
	return op.Dispatch(stridedSource(src.Dtype()), []*tensor.Tensor{src, dst}, groups, push...)
}

// shapeOr is t's shape, or shape when t is nil (the output to allocate).
func shapeOr(t *tensor.Tensor, shape []int) []int {
	if t != nil {
		return t.Shape()
	}
	return shape
}

// viewStrides checks a view's strides (nil: row-major over shape).
func viewStrides(op *Op, what string, shape, st []int) ([]int, error) {
	if st == nil {
		st = make([]int, len(shape))
		acc := 1
		for k := len(shape) - 1; k >= 0; k-- {
			st[k] = acc
			acc *= shape[k]
		}
		return st, nil
	}
	if len(st) != len(shape) {
		return nil, op.Errorf("%s strides %v for shape %v: want %d strides", what, st, shape, len(shape))
	}
	for _, v := range st {
		if v < -(1<<31-1) || v > 1<<31-1 {
			return nil, op.Errorf("%s strides %v out of range", what, st)
		}
	}
	return st, nil
}

// inBounds checks that every index of the view lies in [0, n).
func inBounds(op *Op, what string, shape []int, off int, st []int, n int) error {
	lo, hi := off, off
	for k, d := range shape {
		reach := (d - 1) * st[k]
		if reach < 0 {
			lo += reach
		} else {
			hi += reach
		}
	}
	if lo < 0 || hi >= n {
		return op.Errorf("the %s view (offset %d, strides %v, shape %v) reaches elements %d..%d of a tensor of %d", what, off, st, shape, lo, hi, n)
	}
	return nil
}

// stridedSource is the kernel for dtype dt: a plain copy of the storage
// type, indexes from the push constants.
func stridedSource(dt tensor.Dtype) string {
	var b strings.Builder
	b.WriteString(Header(dt))
	ty := GLSLType(dt)
	fmt.Fprintf(&b, `layout(local_size_x = %d) in;
layout(binding = 0) readonly buffer Src { %s src[]; };
layout(binding = 1) writeonly buffer Dst { %s dst[]; };
layout(push_constant) uniform P {
	uint n;
	uint rank;
	int soff;
	int doff;
	int shape[%d];
	int sst[%d];
	int dstr[%d];
};
%s
void main() {
	uint i = gid();
	if (i >= n) {
		return;
	}
	int s = soff;
	int d = doff;
	uint r = i;
	for (int k = int(rank) - 1; k >= 0; k--) {
		uint size = uint(shape[k]);
		int c = int(r %% size);
		r /= size;
		s += c * sst[k];
		d += c * dstr[k];
	}
	dst[d] = src[s];
}
`, LocalSize, ty, ty, MaxRank, MaxRank, MaxRank, IndexGLSL)
	return b.String()
}
