package linalg

import (
	"fmt"
	"strings"

	"github.com/vkflow/vkflow/ops/internal/opcore"
	"github.com/vkflow/vkflow/tensor"
)

// Cross prepares the cross product of 3-vectors along axis of a and b
// ("cross"; Attrs.Axes: one axis, nil is -1), counted in the shape a and
// b broadcast to: that axis must have size 3 in both (it does not
// broadcast); the other dimensions broadcast. The numeric dtypes, a and b
// of one (integers wrap).
func Cross(o opcore.Owner, a, b *tensor.Tensor, axis int, out *tensor.Tensor) (*opcore.Op, error) {
	op, err := opcore.NewOp(o, "cross", a, b)
	if err != nil {
		return nil, err
	}
	dt, err := linProductDtype(op, a, b)
	if err != nil {
		return op.Fail(err)
	}
	as, bs := a.Shape(), b.Shape()
	shape, err := opcore.BroadcastShapes("cross", as, bs)
	if err != nil {
		return op.Fail(err)
	}
	r := len(shape)
	if axis < -r || axis >= r {
		return op.Fail(op.Errorf("axis %d is out of range for shapes %v and %v", axis, as, bs))
	}
	if axis < 0 {
		axis += r
	}
	ia, ib := axis-(r-len(as)), axis-(r-len(bs))
	if ia < 0 || ib < 0 || as[ia] != 3 || bs[ib] != 3 {
		return op.Fail(op.Errorf("axis %d: shapes %v and %v must both have size 3 there", axis-r, as, bs))
	}
	if r > opcore.MaxRank {
		return op.Fail(op.Errorf("%d dimensions, at most %d", r, opcore.MaxRank))
	}
	y, err := op.OutputNoAlias(out, dt, shape)
	if err != nil {
		return op.Fail(err)
	}
	n := opcore.Numel(shape)
	if n == 0 {
		return op, nil
	}
	sa, sb := opcore.StridesFor(as, shape), opcore.StridesFor(bs, shape)
	t, ct := opcore.GLSLType(dt), opcore.ComputeType(dt)
	var g strings.Builder
	g.WriteString(opcore.Header(dt))
	fmt.Fprintf(&g, `layout(local_size_x = %d) in;
layout(std430, binding = 0) readonly buffer A { %[2]s a[]; };
layout(std430, binding = 1) readonly buffer B { %[2]s b[]; };
layout(std430, binding = 2) writeonly buffer Y { %[2]s y[]; };
layout(push_constant) uniform P { uint total; uint dims[%[3]d]; uint sa[%[3]d]; uint sb[%[3]d]; } p;
%[4]s%[5]svoid main() {
	uint e = gid();
	if (e >= p.total) {
		return;
	}
	uint r = e, ia = 0u, ib = 0u, c = 0u, d;
`, opcore.LocalSize, t, r, opcore.IndexGLSL, condGLSL(dt.IsComplex(), opcore.ComplexGLSL(dt)))
	for d := r - 1; d >= 0; d-- {
		if d == axis {
			fmt.Fprintf(&g, "\tc = r %% 3u; r /= 3u;\n")
			continue
		}
		fmt.Fprintf(&g, "\td = r %% p.dims[%d]; r /= p.dims[%d]; ia += d * p.sa[%d]; ib += d * p.sb[%d];\n", d, d, d, d)
	}
	mul := func(x, y string) string { return fmt.Sprintf("%[1]s(%[2]s) * %[1]s(%[3]s)", ct, x, y) }
	if dt.IsComplex() {
		mul = func(x, y string) string { return opcore.Cfn("cmul", dt, x+", "+y) }
	}
	fmt.Fprintf(&g, `	uint c1 = (c + 1u) %% 3u, c2 = (c + 2u) %% 3u, xa = p.sa[%[2]d], xb = p.sb[%[2]d];
	y[e] = %[1]s(%[3]s - %[4]s);
}
`, t, axis, mul("a[ia + c1 * xa]", "b[ib + c2 * xb]"), mul("a[ia + c2 * xa]", "b[ib + c1 * xb]"))
	push := []any{}
	for _, v := range append(append(append([]int(nil), shape...), sa...), sb...) {
		push = append(push, uint32(v))
	}
	return op.Done(elemGrid(op, g.String(), []*tensor.Tensor{a, b, y}, n, push...))
}

// diagLen is the length of diagonal offset of an m×n matrix.
func diagLen(m, n, offset int) int {
	if offset >= 0 {
		return max(0, min(m, n-offset))
	}
	return max(0, min(m+offset, n))
}

// Diagonal prepares the diagonal offset (Attrs.Offset: 0 the main one, > 0
// above it, < 0 below) of each matrix of x [..., m, n] ("diagonal"): out
// [..., k], k its length (0 when the offset is past the matrix). Any
// dtype, copied bit for bit.
func Diagonal(o opcore.Owner, x *tensor.Tensor, offset int, out *tensor.Tensor) (*opcore.Op, error) {
	op, err := opcore.NewOp(o, "diagonal", x)
	if err != nil {
		return nil, err
	}
	return op.Done(diagonal(op, x, offset, out))
}

func diagonal(op *opcore.Op, x *tensor.Tensor, offset int, out *tensor.Tensor) error {
	s := x.Shape()
	if len(s) < 2 {
		return op.Errorf("x has shape %v: want a matrix or a stack of them (..., m, n)", s)
	}
	if !x.Dtype().Valid() {
		return op.Unsupported(x.Dtype(), "any real dtype")
	}
	m, n := s[len(s)-2], s[len(s)-1]
	k := diagLen(m, n, offset)
	shape := append(append([]int(nil), s[:len(s)-2]...), k)
	y, err := op.Output(out, x.Dtype(), shape)
	if err != nil {
		return err
	}
	if err := op.NoAlias(); err != nil {
		return err
	}
	total := opcore.Numel(shape)
	if total == 0 {
		return nil
	}
	start := max(0, -offset)*n + max(0, offset)
	buf, _, head := opcore.BitTypes(x.Dtype())
	src := head + fmt.Sprintf(`layout(local_size_x = %d) in;
layout(std430, binding = 0) readonly buffer X { %[2]s x[]; };
layout(std430, binding = 1) writeonly buffer Y { %[2]s y[]; };
layout(push_constant) uniform P { uint total; uint k, mn, start, n; } p;
%[3]svoid main() {
	uint e = gid();
	if (e < p.total) {
		uint i = e %% p.k;
		y[e] = x[(e / p.k) * p.mn + p.start + i * (p.n + 1u)];
	}
}
`, opcore.LocalSize, buf, opcore.IndexGLSL)
	return elemGrid(op, src, []*tensor.Tensor{x, y}, total, uint32(k), uint32(m*n), uint32(start), uint32(n))
}

// Trace prepares the sum of diagonal offset (Attrs.Offset, as Diagonal)
// of each matrix of x [..., m, n] ("trace"): out [...]. Dtypes as Sum's,
// the standard's accumulation rules: complex and floats in their own dtype (float16
// summed in float32), signed integers and bool as int64, unsigned as
// uint64. An empty diagonal sums to 0.
func Trace(o opcore.Owner, x *tensor.Tensor, offset int, out *tensor.Tensor) (*opcore.Op, error) {
	op, err := opcore.NewOp(o, "trace", x)
	if err != nil {
		return nil, err
	}
	dt := x.Dtype()
	s := x.Shape()
	if len(s) < 2 {
		return op.Fail(op.Errorf("x has shape %v: want a matrix or a stack of them (..., m, n)", s))
	}
	outDt, acc, err := op.ReduceDtypes(opcore.KindSum, opcore.ReducePlain, dt)
	if err != nil {
		return op.Fail(err)
	}
	if err := op.RequireDtypes(dt, acc, outDt); err != nil {
		return op.Fail(err)
	}
	batch := s[:len(s)-2]
	k := diagLen(s[len(s)-2], s[len(s)-1], offset)
	y, err := op.OutputNoAlias(out, outDt, batch)
	if err != nil {
		return op.Fail(err)
	}
	nb := opcore.Numel(batch)
	if nb == 0 {
		return op, nil
	}
	if k == 0 {
		return op.Done(op.Zeros(y))
	}
	d, err := op.Temp(dt, append(append([]int(nil), batch...), k))
	if err != nil {
		return op.Fail(err)
	}
	err = op.ScratchOnly(func() error { return diagonal(op, x, offset, d) })
	if err != nil {
		return op.Fail(err)
	}
	lay, err := op.ReduceLayout([]int{nb, k}, []int{1})
	if err != nil {
		return op.Fail(err)
	}
	return op.Done(op.ReducePasses(opcore.PassSpec{Kind: opcore.KindSum, In: dt, Acc: acc, Out: outDt}, d, nil, lay, y))
}
