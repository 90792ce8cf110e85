package ops

import (
	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/tensor"
)

// Short forms of the ops the built-in VJP rules are written with.

func (b *GradBuilder) bin(name string, x, y *tensor.Tensor) *tensor.Tensor {
	return b.Call(name, Attrs{}, x, y)
}

func (b *GradBuilder) un(name string, x *tensor.Tensor) *tensor.Tensor {
	return b.Call(name, Attrs{}, x)
}

func (b *GradBuilder) add(x, y *tensor.Tensor) *tensor.Tensor { return b.bin("add", x, y) }
func (b *GradBuilder) sub(x, y *tensor.Tensor) *tensor.Tensor { return b.bin("sub", x, y) }
func (b *GradBuilder) mul(x, y *tensor.Tensor) *tensor.Tensor { return b.bin("mul", x, y) }
func (b *GradBuilder) div(x, y *tensor.Tensor) *tensor.Tensor { return b.bin("div", x, y) }
func (b *GradBuilder) neg(x *tensor.Tensor) *tensor.Tensor    { return b.un("neg", x) }

// conj is x's conjugate; x itself when x is real.
func (b *GradBuilder) conj(x *tensor.Tensor) *tensor.Tensor {
	if x == nil || !x.Dtype().IsComplex() {
		return x
	}
	return b.un("conj", x)
}

// scale is x·v, v of x's dtype.
func (b *GradBuilder) scale(x *tensor.Tensor, v complex128) *tensor.Tensor {
	if x == nil {
		return nil
	}
	return b.mul(x, b.Const(x.Dtype(), v))
}

// addc is x + v, v of x's dtype.
func (b *GradBuilder) addc(x *tensor.Tensor, v complex128) *tensor.Tensor {
	if x == nil {
		return nil
	}
	return b.add(x, b.Const(x.Dtype(), v))
}

// rsub is v - x, v of x's dtype.
func (b *GradBuilder) rsub(v complex128, x *tensor.Tensor) *tensor.Tensor {
	if x == nil {
		return nil
	}
	return b.sub(b.Const(x.Dtype(), v), x)
}

// zero is a 0-d zero of x's dtype.
func (b *GradBuilder) zero(x *tensor.Tensor) *tensor.Tensor {
	if x == nil {
		return nil
	}
	return b.Const(x.Dtype(), 0)
}

// where is cond ? x : y.
func (b *GradBuilder) where(cond, x, y *tensor.Tensor) *tensor.Tensor {
	return b.Call("where", Attrs{}, cond, x, y)
}

// castTo converts g to dt: the real part first when g is complex and dt
// is not.
func (b *GradBuilder) castTo(g *tensor.Tensor, dt tensor.Dtype) *tensor.Tensor {
	if g == nil || g.Dtype() == dt {
		return g
	}
	if g.Dtype().IsComplex() && !dt.IsComplex() {
		g = b.un("real", g)
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

// transpose permutes x's axes (x itself for the identity).
func (b *GradBuilder) transpose(x *tensor.Tensor, perm []int) *tensor.Tensor {
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

// mT swaps x's last two axes.
func (b *GradBuilder) mT(x *tensor.Tensor) *tensor.Tensor {
	if x == nil {
		return nil
	}
	r := len(x.Shape())
	perm := make([]int, r)
	for i := range perm {
		perm[i] = i
	}
	perm[r-2], perm[r-1] = perm[r-1], perm[r-2]
	return b.transpose(x, perm)
}

// slice is x[..., start:stop, ...] along axis.
func (b *GradBuilder) slice(x *tensor.Tensor, axis, start, stop int) *tensor.Tensor {
	if x == nil {
		return nil
	}
	shape := x.Shape()
	if start == 0 && stop == shape[axis] {
		return x
	}
	st := rowMajor(shape)
	sub := append([]int{}, shape...)
	sub[axis] = stop - start
	return b.Call("strided_copy", Attrs{Shape: sub, SrcOffset: start * st[axis], SrcStrides: st}, x)
}

// keptShape is shape with the reduced axes (normalized) as 1s.
func keptShape(shape, axes []int) []int {
	k := append([]int{}, shape...)
	for _, a := range axes {
		k[a] = 1
	}
	return k
}

// invPerm is perm's inverse.
func invPerm(perm []int) []int {
	inv := make([]int, len(perm))
	for i, p := range perm {
		inv[p] = i
	}
	return inv
}

// axisOf is the op's one axis (Attrs.Axes; def when unset), normalized
// against rank r; -1 after a failure (which sticks to b).
func (b *GradBuilder) axisOf(def, r int) int {
	a, err := axisAttr(b.name, b.at.Axes, def)
	if err == nil && (a < -r || a >= r) {
		err = core.Invalid("ops.%s: axis %d is out of range for %d dimensions", b.name, a, r)
	}
	if err != nil {
		b.fail(err)
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
		g = b.slice(g, axis, 1, g.Shape()[axis])
	}
	return x, g, axis
}
