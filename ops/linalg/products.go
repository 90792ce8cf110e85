package linalg

import (
	"fmt"
	"slices"

	"github.com/vkflow/vkflow/ops/internal/opcore"
	"github.com/vkflow/vkflow/tensor"
)

// The linalg extension's products and views: matrix_power, tensordot,
// vecdot, outer, cross, diagonal, trace.

func init() {
	opcore.DefSchema("2", 1, nil, "outer")
	opcore.DefSchema("2", 1, []string{"axes=[] (outer)", "axes2=[]"}, "tensordot")
	opcore.DefSchema("2", 1, []string{"axes=-1"}, "vecdot", "cross")
	opcore.DefSchema("1", 1, []string{"offset"}, "diagonal", "trace")
	opcore.DefSchema("1", 1, []string{"n"}, "matrix_power")
	opcore.BuiltinOne("matrix_power", 1, func(o opcore.Owner, in []*tensor.Tensor, at opcore.Attrs, out *tensor.Tensor) (*opcore.Op, error) {
		return MatrixPower(o, in[0], at.N, out)
	})
	opcore.BuiltinOne("tensordot", 2, func(o opcore.Owner, in []*tensor.Tensor, at opcore.Attrs, out *tensor.Tensor) (*opcore.Op, error) {
		return Tensordot(o, in[0], in[1], at.Axes, at.Axes2, out)
	})
	opcore.BuiltinOne("vecdot", 2, func(o opcore.Owner, in []*tensor.Tensor, at opcore.Attrs, out *tensor.Tensor) (*opcore.Op, error) {
		axis, err := opcore.AxisAttr("vecdot", at.Axes, -1)
		if err != nil {
			return nil, err
		}
		return Vecdot(o, in[0], in[1], axis, out)
	})
	opcore.BuiltinOne("cross", 2, func(o opcore.Owner, in []*tensor.Tensor, at opcore.Attrs, out *tensor.Tensor) (*opcore.Op, error) {
		axis, err := opcore.AxisAttr("cross", at.Axes, -1)
		if err != nil {
			return nil, err
		}
		return Cross(o, in[0], in[1], axis, out)
	})
	opcore.BuiltinOne("outer", 2, func(o opcore.Owner, in []*tensor.Tensor, _ opcore.Attrs, out *tensor.Tensor) (*opcore.Op, error) {
		return Outer(o, in[0], in[1], out)
	})
	opcore.BuiltinOne("diagonal", 1, func(o opcore.Owner, in []*tensor.Tensor, at opcore.Attrs, out *tensor.Tensor) (*opcore.Op, error) {
		return Diagonal(o, in[0], at.Offset, out)
	})
	opcore.BuiltinOne("trace", 1, func(o opcore.Owner, in []*tensor.Tensor, at opcore.Attrs, out *tensor.Tensor) (*opcore.Op, error) {
		return Trace(o, in[0], at.Offset, out)
	})
}

// linProductDtype checks a dtype the products take: the numeric ones.
func linProductDtype(op *opcore.Op, a, b *tensor.Tensor) (tensor.Dtype, error) {
	dt := a.Dtype()
	if b != nil && b.Dtype() != dt {
		return 0, op.Errorf("mismatched dtypes: %v and %v (promote first)", dt, b.Dtype())
	}
	switch {
	case dt == tensor.Bool || !dt.Valid():
		return 0, op.Unsupported(dt, "the numeric dtypes")
	}
	return dt, op.RequireDtypes(dt, opcore.ComputeDtype(dt))
}

// matmulTemp adds c = a @ b for scratch c (matmul's output bookkeeping
// undone: c is no output of the op).
func matmulTemp(op *opcore.Op, a, b, c *tensor.Tensor) error {
	return op.ScratchOnly(func() error { return op.MatMul(a, b, c, opcore.Tiles{}) })
}

// copyAll adds y = x, bit for bit (same element count).
func copyAll(op *opcore.Op, x, y *tensor.Tensor) error {
	n := x.Len()
	groups, err := op.Grid(uint64(n), opcore.LocalSize)
	if err != nil || n == 0 {
		return err
	}
	return op.Dispatch(opcore.GatherGLSL(x.Dtype(), 1), []*tensor.Tensor{x, y}, groups, uint32(n), uint32(n), uint32(1))
}

// MatrixPower prepares x raised to the integer power n, for each square
// matrix of x [..., m, m] ("matrix_power"; Attrs.N): n = 0 is the identity,
// n > 0 repeated squaring with matmul (about 2·log2(n) products), n < 0
// the power -n of the inverse (Inv: float32, float64, complex64 and
// complex128). Dtypes: as
// Matmul for n ≥ 0 (integers wrap). out must not share memory with x.
func MatrixPower(o opcore.Owner, x *tensor.Tensor, n int, out *tensor.Tensor) (*opcore.Op, error) {
	op, err := opcore.NewOp(o, "matrix_power", x)
	if err != nil {
		return nil, err
	}
	dt, err := linProductDtype(op, x, nil)
	if err != nil {
		return op.Fail(err)
	}
	if n < 0 {
		if err := linFloat(op, dt); err != nil {
			return op.Fail(fmt.Errorf("%w (a negative power inverts)", err))
		}
	}
	batch, m, err := square(op, "x", x)
	if err != nil {
		return op.Fail(err)
	}
	y, err := op.OutputNoAlias(out, dt, x.Shape())
	if err != nil {
		return op.Fail(err)
	}
	if x.Len() == 0 {
		return op, nil
	}
	if n == 0 {
		src := opcore.Header(dt) + fmt.Sprintf(`layout(local_size_x = %d) in;
layout(std430, binding = 0) writeonly buffer Y { %[2]s y[]; };
layout(push_constant) uniform P { uint total; uint m; } p;
%[3]svoid main() {
	uint e = gid();
	if (e < p.total) {
		y[e] = (e %% p.m) == ((e / p.m) %% p.m) ? %[4]s : %[2]s(0);
	}
}
`, opcore.LocalSize, opcore.GLSLType(dt), opcore.IndexGLSL, laOne(dt))
		return op.Done(elemGrid(op, src, []*tensor.Tensor{y}, x.Len(), uint32(m)))
	}
	cur := x
	if n < 0 {
		f, err := lu(op, x)
		if err != nil {
			return op.Fail(err)
		}
		if cur, err = op.Temp(dt, x.Shape()); err != nil {
			return op.Fail(err)
		}
		if err := luSolve(op, f, nil, nil, cur, batch, m); err != nil {
			return op.Fail(err)
		}
		n = -n
	}
	var acc *tensor.Tensor
	for p := n; ; {
		if p&1 == 1 {
			if acc == nil {
				acc = cur
			} else {
				t, err := op.Temp(dt, x.Shape())
				if err != nil {
					return op.Fail(err)
				}
				if err := matmulTemp(op, acc, cur, t); err != nil {
					return op.Fail(err)
				}
				acc = t
			}
		}
		if p >>= 1; p == 0 {
			break
		}
		t, err := op.Temp(dt, x.Shape())
		if err != nil {
			return op.Fail(err)
		}
		if err := matmulTemp(op, cur, cur, t); err != nil {
			return op.Fail(err)
		}
		cur = t
	}
	return op.Done(copyAll(op, acc, y))
}

// normAxisList checks axes of a rank-r tensor: in range, none repeated;
// returns them non-negative, in the given order.
func normAxisList(op *opcore.Op, what string, axes []int, r int) ([]int, error) {
	out := make([]int, len(axes))
	for i, a := range axes {
		if a < -r || a >= r {
			return nil, op.Errorf("%s axis %d is out of range for %d dimensions", what, a, r)
		}
		if a < 0 {
			a += r
		}
		if slices.Contains(out[:i], a) {
			return nil, op.Errorf("%s axes %v repeat axis %d", what, axes, a)
		}
		out[i] = a
	}
	return out, nil
}

// gatherTo adds y = x's elements in the order of x's axes order (a
// permutation of them): y, contiguous, of x.Len() elements.
func gatherTo(op *opcore.Op, x *tensor.Tensor, order []int, y *tensor.Tensor) error {
	s, st := x.Shape(), opcore.Contiguous(x.Shape())
	dims, src := make([]int, len(order)), make([]int, len(order))
	for i, a := range order {
		dims[i], src[i] = s[a], st[a]
	}
	md, ms := opcore.Merge(dims, opcore.Contiguous(dims), src)
	if len(md) > opcore.MaxRank {
		return op.Errorf("%d dimensions after merging, at most %d", len(md), opcore.MaxRank)
	}
	n := x.Len()
	groups, err := op.Grid(uint64(n), opcore.LocalSize)
	if err != nil {
		return err
	}
	push := []any{uint32(n)}
	for _, v := range append(slices.Clone(md), ms[1]...) {
		push = append(push, uint32(v))
	}
	return op.Dispatch(opcore.GatherGLSL(x.Dtype(), len(md)), []*tensor.Tensor{x, y}, groups, push...)
}

// Tensordot prepares the tensor contraction of a and b over axesA of a
// and axesB of b, paired in order ("tensordot"; Attrs.Axes and
// Attrs.Axes2): out's shape is a's other axes then b's, and each paired
// axis must have the same size (they do not broadcast). Empty axes give
// the outer product. The numeric dtypes, a and b of one (integers wrap;
// float16 sums in float32). It gathers a into [M, K] and b into [K, N],
// multiplies with Matmul's kernel, and copies to out.
func Tensordot(o opcore.Owner, a, b *tensor.Tensor, axesA, axesB []int, out *tensor.Tensor) (*opcore.Op, error) {
	op, err := opcore.NewOp(o, "tensordot", a, b)
	if err != nil {
		return nil, err
	}
	dt, err := linProductDtype(op, a, b)
	if err != nil {
		return op.Fail(err)
	}
	as, bs := a.Shape(), b.Shape()
	if len(axesA) != len(axesB) {
		return op.Fail(op.Errorf("axes %v and %v: as many of each", axesA, axesB))
	}
	xa, err := normAxisList(op, "x1", axesA, len(as))
	if err != nil {
		return op.Fail(err)
	}
	xb, err := normAxisList(op, "x2", axesB, len(bs))
	if err != nil {
		return op.Fail(err)
	}
	K := 1
	for i := range xa {
		if as[xa[i]] != bs[xb[i]] {
			return op.Fail(op.Errorf("contracted axes %d of %v and %d of %v differ in size", xa[i], as, xb[i], bs))
		}
		K *= as[xa[i]]
	}
	var freeA, freeB, shape []int
	M, N := 1, 1
	for i, d := range as {
		if !slices.Contains(xa, i) {
			freeA = append(freeA, i)
			shape = append(shape, d)
			M *= d
		}
	}
	for i, d := range bs {
		if !slices.Contains(xb, i) {
			freeB = append(freeB, i)
			shape = append(shape, d)
			N *= d
		}
	}
	y, err := op.OutputNoAlias(out, dt, shape)
	if err != nil {
		return op.Fail(err)
	}
	if M*N == 0 {
		return op, nil
	}
	if K == 0 {
		return op.Done(op.Zeros(y))
	}
	a2, err := op.Temp(dt, []int{M, K})
	if err != nil {
		return op.Fail(err)
	}
	b2, err := op.Temp(dt, []int{K, N})
	if err != nil {
		return op.Fail(err)
	}
	c, err := op.Temp(dt, []int{M, N})
	if err != nil {
		return op.Fail(err)
	}
	if err := gatherTo(op, a, append(slices.Clone(freeA), xa...), a2); err != nil {
		return op.Fail(err)
	}
	if err := gatherTo(op, b, append(slices.Clone(xb), freeB...), b2); err != nil {
		return op.Fail(err)
	}
	if err := matmulTemp(op, a2, b2, c); err != nil {
		return op.Fail(err)
	}
	return op.Done(copyAll(op, c, y))
}
