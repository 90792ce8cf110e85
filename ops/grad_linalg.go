package ops

import (
	"slices"

	"github.com/vkflow/vkflow/tensor"
)

// VJPs of the products (matmul.go, linalg_products.go, linalg_vec.go)
// and the triangles (tril.go). Complex products take the conjugate of
// the other factor, as PyTorch does.

func init() {
	defVJP("matmul", matmulVJP)
	defVJP("tensordot", tensordotVJP)
	defVJP("vecdot", vecdotVJP)
	defVJP("outer", func(bl *GradBuilder) []*tensor.Tensor {
		a, b := bl.In(0), bl.In(1)
		g := bl.Cot(0)
		if bl.err != nil {
			return nil
		}
		res := make([]*tensor.Tensor, 2)
		if bl.Wants(0) {
			res[0] = bl.bin("matmul", g, bl.conj(b))
		}
		if bl.Wants(1) {
			res[1] = bl.bin("matmul", bl.conj(a), g)
		}
		return res
	})
	defVJP("cross", func(bl *GradBuilder) []*tensor.Tensor {
		a, b := bl.In(0), bl.In(1)
		g := bl.Cot(0)
		if bl.err != nil {
			return nil
		}
		at := bl.Attrs()
		res := make([]*tensor.Tensor, 2)
		if bl.Wants(0) {
			res[0] = bl.SumTo(bl.Call("cross", at, bl.conj(b), g), a.Shape())
		}
		if bl.Wants(1) {
			res[1] = bl.SumTo(bl.Call("cross", at, g, bl.conj(a)), b.Shape())
		}
		return res
	})
	for _, name := range []string{"tril", "triu"} {
		defVJP(name, func(b *GradBuilder) []*tensor.Tensor {
			g := b.Cot(0)
			if b.err != nil {
				return nil
			}
			return []*tensor.Tensor{b.Call(name, b.Attrs(), g)}
		})
	}
	defNoGrad("the rank is an integer count", "matrix_rank")
}

// matmulVJP: ga = g·bᴴ and gb = aᴴ·g, with 1-d operands as a row (a) and a
// column (b), and broadcast batch dimensions summed back.
func matmulVJP(bl *GradBuilder) []*tensor.Tensor {
	a, b := bl.In(0), bl.In(1)
	g := bl.Cot(0)
	if bl.err != nil {
		return nil
	}
	as, bs := a.Shape(), b.Shape()
	a2, b2 := a, b
	if len(as) == 1 {
		a2 = bl.Reshape(a, []int{1, as[0]})
	}
	if len(bs) == 1 {
		b2 = bl.Reshape(b, []int{bs[0], 1})
	}
	if bl.err != nil {
		return nil
	}
	a2s, b2s := a2.Shape(), b2.Shape()
	batch, err := broadcastShapes("matmul", a2s[:len(a2s)-2], b2s[:len(b2s)-2])
	if err != nil {
		bl.fail(err)
		return nil
	}
	g2 := bl.Reshape(g, append(append([]int{}, batch...), a2s[len(a2s)-2], b2s[len(b2s)-1]))
	res := make([]*tensor.Tensor, 2)
	if bl.Wants(0) {
		res[0] = bl.Reshape(bl.SumTo(bl.bin("matmul", g2, bl.conj(bl.mT(b2))), a2s), as)
	}
	if bl.Wants(1) {
		res[1] = bl.Reshape(bl.SumTo(bl.bin("matmul", bl.conj(bl.mT(a2)), g2), b2s), bs)
	}
	return res
}

// tensordotVJP contracts the cotangent with the other factor over that
// factor's free axes, then puts the axes back in the input's order.
func tensordotVJP(bl *GradBuilder) []*tensor.Tensor {
	a, b := bl.In(0), bl.In(1)
	g := bl.Cot(0)
	if bl.err != nil {
		return nil
	}
	at := bl.Attrs()
	ca, err := orderedAxes("tensordot", at.Axes, len(a.Shape()))
	if err != nil {
		bl.fail(err)
		return nil
	}
	cb, err := orderedAxes("tensordot", at.Axes2, len(b.Shape()))
	if err != nil {
		bl.fail(err)
		return nil
	}
	fa, fb := freeAxes(ca, len(a.Shape())), freeAxes(cb, len(b.Shape()))
	res := make([]*tensor.Tensor, 2)
	if bl.Wants(0) {
		gpos := make([]int, len(fb))
		for i := range gpos {
			gpos[i] = len(fa) + i
		}
		t := bl.Call("tensordot", Attrs{Axes: gpos, Axes2: fb}, g, bl.conj(b))
		res[0] = bl.transpose(t, invPerm(append(append([]int{}, fa...), pairedInOrder(cb, ca)...)))
	}
	if bl.Wants(1) {
		gpos := make([]int, len(fa))
		for i := range gpos {
			gpos[i] = i
		}
		t := bl.Call("tensordot", Attrs{Axes: fa, Axes2: gpos}, bl.conj(a), g)
		res[1] = bl.transpose(t, invPerm(append(pairedInOrder(ca, cb), fb...)))
	}
	return res
}

// pairedInOrder lists, for each axis of own in ascending order (the
// order tensordot leaves contracted axes of the other factor in), the
// axis of other it is paired with.
func pairedInOrder(own, other []int) []int {
	idx := make([]int, len(own))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(i, j int) int { return own[i] - own[j] })
	res := make([]int, len(own))
	for k, i := range idx {
		res[k] = other[i]
	}
	return res
}

// freeAxes are the axes of rank r not in contracted, in order.
func freeAxes(contracted []int, r int) []int {
	var f []int
	for i := 0; i < r; i++ {
		if !containsInt(contracted, i) {
			f = append(f, i)
		}
	}
	return f
}

// vecdotVJP: y = Σ conj(a)·b, so ga = b·conj(g) and gb = a·g, with the
// cotangent given back its axis.
func vecdotVJP(bl *GradBuilder) []*tensor.Tensor {
	a, b := bl.In(0), bl.In(1)
	g := bl.Cot(0)
	if bl.err != nil {
		return nil
	}
	axis, err := axisAttr("vecdot", bl.Attrs().Axes, -1)
	if err != nil {
		bl.fail(err)
		return nil
	}
	shape, err := broadcastShapes("vecdot", a.Shape(), b.Shape())
	if err != nil {
		bl.fail(err)
		return nil
	}
	if axis < 0 {
		axis += len(shape)
	}
	gk := bl.Reshape(g, keptShape(shape, []int{axis}))
	res := make([]*tensor.Tensor, 2)
	if bl.Wants(0) {
		res[0] = bl.SumTo(bl.mul(b, bl.conj(gk)), a.Shape())
	}
	if bl.Wants(1) {
		res[1] = bl.SumTo(bl.mul(a, gk), b.Shape())
	}
	return res
}
