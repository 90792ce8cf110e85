package linalg

import (
	"fmt"
	"strings"

	"github.com/vkflow/vkflow/ops/internal/opcore"
	"github.com/vkflow/vkflow/tensor"
)

// vecdot, outer, cross, diagonal and trace: one invocation per output
// element.

// vecdotChunk is the most elements of the contracted axis one vecdot
// dispatch sums (lavapipe's loop cap); longer axes take several
// dispatches that add to the output.
var vecdotChunk = 32768

// Vecdot prepares the dot product of a and b along axis ("vecdot";
// Attrs.Axes: one axis, nil is -1), counted in the shape a and b broadcast
// to (negative from the end, as the standard's 2023.12 asks, or from the
// start): a and b must have that axis, of one size (it does not
// broadcast); the other dimensions broadcast, and out drops the axis. For
// complex dtypes it sums conj(a)·b, as the standard asks. The
// numeric dtypes, a and b of one: integers wrap, float16 sums in float32
// (in float16 between dispatches of an axis past 32768 elements).
func Vecdot(o opcore.Owner, a, b *tensor.Tensor, axis int, out *tensor.Tensor) (*opcore.Op, error) {
	op, err := opcore.NewOp(o, "vecdot", a, b)
	if err != nil {
		return nil, err
	}
	dt, err := linProductDtype(op, a, b)
	if err != nil {
		return op.Fail(err)
	}
	as, bs := a.Shape(), b.Shape()
	r := max(len(as), len(bs))
	if axis < -r || axis >= r {
		return op.Fail(op.Errorf("axis %d is out of range for shapes %v and %v", axis, as, bs))
	}
	if axis >= 0 {
		axis -= r
	}
	if -axis > len(as) || -axis > len(bs) {
		return op.Fail(op.Errorf("axis %d: shapes %v and %v must both have it", axis, as, bs))
	}
	L := as[len(as)+axis]
	if bs[len(bs)+axis] != L {
		return op.Fail(op.Errorf("axis %d has size %d in %v and %d in %v: they must be equal", axis, L, as, bs[len(bs)+axis], bs))
	}
	drop := func(s []int) []int {
		return append(append([]int(nil), s[:len(s)+axis]...), s[len(s)+axis+1:]...)
	}
	shape, err := opcore.BroadcastShapes("vecdot", drop(as), drop(bs))
	if err != nil {
		return op.Fail(err)
	}
	y, err := op.OutputNoAlias(out, dt, shape)
	if err != nil {
		return op.Fail(err)
	}
	n := opcore.Numel(shape)
	if n == 0 {
		return op, nil
	}
	if L == 0 {
		return op.Done(op.Zeros(y))
	}
	// Strides of a and b over out's dimensions (0 where broadcast) and
	// along the axis.
	ca, cb := opcore.Contiguous(as), opcore.Contiguous(bs)
	strides := func(s, c []int) []int {
		d, dc := drop(s), drop(c)
		res := make([]int, len(shape))
		off := len(shape) - len(d)
		for i := range d {
			if d[i] != 1 {
				res[off+i] = dc[i]
			}
		}
		return res
	}
	sa, sb := strides(as, ca), strides(bs, cb)
	dims, st := opcore.Merge(shape, sa, sb)
	if len(dims) > opcore.MaxRank {
		return op.Fail(op.Errorf("%d dimensions after merging, at most %d", len(dims), opcore.MaxRank))
	}
	t, ct := opcore.GLSLType(dt), opcore.ComputeType(dt)
	rank := len(dims)
	var g strings.Builder
	g.WriteString(opcore.Header(dt))
	fmt.Fprintf(&g, `layout(local_size_x = %d) in;
layout(std430, binding = 0) readonly buffer A { %[2]s a[]; };
layout(std430, binding = 1) readonly buffer B { %[2]s b[]; };
layout(std430, binding = 2) buffer Y { %[2]s y[]; };
layout(push_constant) uniform P { uint total; uint l0, l1, ax, bx, first;`, opcore.LocalSize, t)
	if rank > 0 {
		fmt.Fprintf(&g, " uint dims[%d]; uint sa[%d]; uint sb[%d];", rank, rank, rank)
	}
	g.WriteString(" } p;\n" + opcore.IndexGLSL)
	// The standard's vecdot conjugates a: the sum of conj(a)·b.
	term := fmt.Sprintf("%[1]s(a[ia + l * p.ax]) * %[1]s(b[ib + l * p.bx])", ct)
	if dt.IsComplex() {
		g.WriteString(laScalarGLSL(dt))
		term = "laMul(laConj(a[ia + l * p.ax]), b[ib + l * p.bx])"
	}
	fmt.Fprintf(&g, "void main() {\n\tuint e = gid();\n\tif (e >= p.total) {\n\t\treturn;\n\t}\n\tuint r = e, ia = 0u, ib = 0u, d;\n")
	for d := rank - 1; d >= 0; d-- {
		fmt.Fprintf(&g, "\td = r %% p.dims[%d]; r /= p.dims[%d]; ia += d * p.sa[%d]; ib += d * p.sb[%d];\n", d, d, d, d)
	}
	fmt.Fprintf(&g, `	%[1]s s = p.first != 0u ? %[1]s(0) : %[1]s(y[e]);
	for (uint l = p.l0; l < p.l1; l++) {
		s += %[3]s;
	}
	y[e] = %[2]s(s);
}
`, ct, t, term)
	src := g.String()
	groups, err := op.Grid(uint64(n), opcore.LocalSize)
	if err != nil {
		return op.Fail(err)
	}
	ax, bx := ca[len(as)+axis], cb[len(bs)+axis]
	for l0 := 0; l0 < L; l0 += vecdotChunk {
		push := []any{uint32(n), uint32(l0), uint32(min(L, l0+vecdotChunk)), uint32(ax), uint32(bx), uint32(b2u(l0 == 0))}
		for _, v := range append(append(append([]int(nil), dims...), st[0]...), st[1]...) {
			push = append(push, uint32(v))
		}
		if err := op.Dispatch(src, []*tensor.Tensor{a, b, y}, groups, push...); err != nil {
			return op.Fail(err)
		}
	}
	return op, nil
}

func b2u(v bool) int {
	if v {
		return 1
	}
	return 0
}

// Outer prepares the outer product of vectors a [m] and b [n] ("outer"):
// out [m, n], out[i, j] = a[i]·b[j]. The numeric dtypes, a and b of one
// (integers wrap).
func Outer(o opcore.Owner, a, b, out *tensor.Tensor) (*opcore.Op, error) {
	op, err := opcore.NewOp(o, "outer", a, b)
	if err != nil {
		return nil, err
	}
	dt, err := linProductDtype(op, a, b)
	if err != nil {
		return op.Fail(err)
	}
	if len(a.Shape()) != 1 || len(b.Shape()) != 1 {
		return op.Fail(op.Errorf("shapes %v and %v: want two vectors", a.Shape(), b.Shape()))
	}
	m, n := a.Len(), b.Len()
	y, err := op.OutputNoAlias(out, dt, []int{m, n})
	if err != nil {
		return op.Fail(err)
	}
	t, ct := opcore.GLSLType(dt), opcore.ComputeType(dt)
	prod, helpers := fmt.Sprintf("%[1]s(a[e / p.n]) * %[1]s(b[e %% p.n])", ct), ""
	if dt.IsComplex() {
		prod, helpers = opcore.Cfn("cmul", dt, "a[e / p.n], b[e % p.n]"), opcore.ComplexGLSL(dt)
	}
	src := opcore.Header(dt) + fmt.Sprintf(`layout(local_size_x = %d) in;
layout(std430, binding = 0) readonly buffer A { %[2]s a[]; };
layout(std430, binding = 1) readonly buffer B { %[2]s b[]; };
layout(std430, binding = 2) writeonly buffer Y { %[2]s y[]; };
layout(push_constant) uniform P { uint total; uint n; } p;
%[4]svoid main() {
	uint e = gid();
	if (e < p.total) {
		y[e] = %[2]s(%[5]s);
	}
}
`, opcore.LocalSize, t, ct, opcore.IndexGLSL+helpers, prod)
	return op.Done(elemGrid(op, src, []*tensor.Tensor{a, b, y}, m*n, uint32(n)))
}
