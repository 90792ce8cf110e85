package opcore

import (
	"fmt"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/tensor"
)

// Short forms of the ops the built-in VJP rules are written with.

func (b *GradBuilder) Binary(name string, x, y *tensor.Tensor) *tensor.Tensor {
	return b.Call(name, Attrs{}, x, y)
}

func (b *GradBuilder) Unary(name string, x *tensor.Tensor) *tensor.Tensor {
	return b.Call(name, Attrs{}, x)
}

func (b *GradBuilder) Add(x, y *tensor.Tensor) *tensor.Tensor { return b.Binary("add", x, y) }
func (b *GradBuilder) Sub(x, y *tensor.Tensor) *tensor.Tensor { return b.Binary("sub", x, y) }
func (b *GradBuilder) Mul(x, y *tensor.Tensor) *tensor.Tensor { return b.Binary("mul", x, y) }
func (b *GradBuilder) Div(x, y *tensor.Tensor) *tensor.Tensor { return b.Binary("div", x, y) }
func (b *GradBuilder) Neg(x *tensor.Tensor) *tensor.Tensor    { return b.Unary("neg", x) }

// Conj is x's conjugate; x itself when x is real.
func (b *GradBuilder) Conj(x *tensor.Tensor) *tensor.Tensor {
	if x == nil || !x.Dtype().IsComplex() {
		return x
	}
	return b.Unary("conj", x)
}

// Scale is x·v, v of x's dtype.
func (b *GradBuilder) Scale(x *tensor.Tensor, v complex128) *tensor.Tensor {
	if x == nil {
		return nil
	}
	return b.Mul(x, b.Const(x.Dtype(), v))
}

// addc is x + v, v of x's dtype.
func (b *GradBuilder) addc(x *tensor.Tensor, v complex128) *tensor.Tensor {
	if x == nil {
		return nil
	}
	return b.Add(x, b.Const(x.Dtype(), v))
}

// Rsub is v - x, v of x's dtype.
func (b *GradBuilder) Rsub(v complex128, x *tensor.Tensor) *tensor.Tensor {
	if x == nil {
		return nil
	}
	return b.Sub(b.Const(x.Dtype(), v), x)
}

// Zero is a 0-d zero of x's dtype.
func (b *GradBuilder) Zero(x *tensor.Tensor) *tensor.Tensor {
	if x == nil {
		return nil
	}
	return b.Const(x.Dtype(), 0)
}

// Where is cond ? x : y.
func (b *GradBuilder) Where(cond, x, y *tensor.Tensor) *tensor.Tensor {
	return b.Call("where", Attrs{}, cond, x, y)
}

// CastTo converts g to dt: the real part first when g is complex and dt
// is not.
func (b *GradBuilder) CastTo(g *tensor.Tensor, dt tensor.Dtype) *tensor.Tensor {
	if g == nil || g.Dtype() == dt {
		return g
	}
	if g.Dtype().IsComplex() && !dt.IsComplex() {
		g = b.Unary("real", g)
		if g == nil || g.Dtype() == dt {
			return g
		}
	}
	return b.Call("cast", Attrs{Dtype: dt}, g)
}

// sum sums x over axes.
func (b *GradBuilder) sum(x *tensor.Tensor, axes []int, keep bool) *tensor.Tensor {
	return b.Call("sum", Attrs{Axes: axes, KeepDims: keep}, x)
}

// bcast broadcasts x to shape (x itself when it has it).
func (b *GradBuilder) bcast(x *tensor.Tensor, shape []int) *tensor.Tensor {
	if x == nil {
		return nil
	}
	if equalShapes(x.Shape(), shape) {
		return x
	}
	return b.Call("broadcast_to", Attrs{Shape: append([]int{}, shape...)}, x)
}

// Transpose permutes x's axes (x itself for the identity).
func (b *GradBuilder) Transpose(x *tensor.Tensor, perm []int) *tensor.Tensor {
	if x == nil {
		return nil
	}
	identity := true
	for i, p := range perm {
		identity = identity && p == i
	}
	if identity {
		return x
	}
	return b.Call("transpose", Attrs{Perm: perm}, x)
}

// MT swaps x's last two axes.
func (b *GradBuilder) MT(x *tensor.Tensor) *tensor.Tensor {
	if x == nil {
		return nil
	}
	r := len(x.Shape())
	perm := make([]int, r)
	for i := range perm {
		perm[i] = i
	}
	perm[r-2], perm[r-1] = perm[r-1], perm[r-2]
	return b.Transpose(x, perm)
}

// Slice is x[..., start:stop, ...] along axis.
func (b *GradBuilder) Slice(x *tensor.Tensor, axis, start, stop int) *tensor.Tensor {
	if x == nil {
		return nil
	}
	shape := x.Shape()
	if start == 0 && stop == shape[axis] {
		return x
	}
	st := RowMajor(shape)
	sub := append([]int{}, shape...)
	sub[axis] = stop - start
	return b.Call("strided_copy", Attrs{Shape: sub, SrcOffset: start * st[axis], SrcStrides: st}, x)
}

// KeptShape is shape with the reduced axes (normalized) as 1s.
func KeptShape(shape, axes []int) []int {
	k := append([]int{}, shape...)
	for _, a := range axes {
		k[a] = 1
	}
	return k
}

// InvPerm is perm's inverse.
func InvPerm(perm []int) []int {
	inv := make([]int, len(perm))
	for i, p := range perm {
		inv[p] = i
	}
	return inv
}

// axisOf is the op's one axis (Attrs.Axes; def when unset), normalized
// against rank r; -1 after a failure (which sticks to b).
func (b *GradBuilder) axisOf(def, r int) int {
	a, err := AxisAttr(b.name, b.at.Axes, def)
	if err == nil && (a < -r || a >= r) {
		err = core.Invalid("ops.%s: axis %d is out of range for %d dimensions", b.name, a, r)
	}
	if err != nil {
		b.Fail(err)
		return -1
	}
	if a < 0 {
		a += r
	}
	return a
}

// scanCot returns a scan's input, its cotangent (the leading identity
// dropped when the result starts with it) and its axis.
func (b *GradBuilder) scanCot() (*tensor.Tensor, *tensor.Tensor, int) {
	x := b.In(0)
	g := b.Cot(0)
	if b.err != nil {
		return nil, nil, -1
	}
	axis := b.axisOf(0, len(x.Shape()))
	if b.err == nil && b.at.IncludeInitial {
		g = b.Slice(g, axis, 1, g.Shape()[axis])
	}
	return x, g, axis
}

// MH is x's conjugate transpose over its last two axes.
func (b *GradBuilder) MH(x *tensor.Tensor) *tensor.Tensor { return b.Conj(b.MT(x)) }

// MatMul is the matrix product.
func (b *GradBuilder) MatMul(x, y *tensor.Tensor) *tensor.Tensor { return b.Binary("matmul", x, y) }

// RealOnly fails for a complex input: the rule is written for real
// matrices only.
func (b *GradBuilder) RealOnly(x *tensor.Tensor) bool {
	if x.Dtype().IsComplex() {
		b.Fail(fmt.Errorf("ops.%s: VJP: %w: the complex %s's VJP is not written yet: %w", b.name, ErrNoGradient, b.name, core.ErrInvalid))
		return false
	}
	return true
}

// Eye is the identity of x's last two axes (square), in x's dtype.
func (b *GradBuilder) Eye(x *tensor.Tensor) *tensor.Tensor {
	sh := x.Shape()
	m, n := sh[len(sh)-2], sh[len(sh)-1]
	return b.DiagMask(x.Dtype(), m, n, 0)
}

// DiagMask is the [m, n] matrix of dtype dt with ones on diagonal offset
// (true for bool), a constant.
func (b *GradBuilder) DiagMask(dt tensor.Dtype, m, n, offset int) *tensor.Tensor {
	vs := make([]complex128, m*n)
	for i := 0; i < m; i++ {
		if j := i + offset; j >= 0 && j < n {
			vs[i*n+j] = 1
		}
	}
	return b.Constant(dt, []int{m, n}, vs)
}
