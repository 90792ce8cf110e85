package linalg

import (
	"slices"

	"github.com/vkflow/vkflow/ops/internal/opcore"
	"github.com/vkflow/vkflow/tensor"
)

// VJPs of the products (products.go, vec.go). Complex
// products take the conjugate of the other factor, as PyTorch does.

func init() {
	opcore.DefVJP("tensordot", tensordotVJP)
	opcore.DefVJP("vecdot", vecdotVJP)
	opcore.DefVJP("outer", func(bl *opcore.GradBuilder) []*tensor.Tensor {
		a, b := bl.In(0), bl.In(1)
		g := bl.Cot(0)
		if bl.Err() != nil {
			return nil
		}
		res := make([]*tensor.Tensor, 2)
		if bl.Wants(0) {
			res[0] = bl.Binary("matmul", g, bl.Conj(b))
		}
		if bl.Wants(1) {
			res[1] = bl.Binary("matmul", bl.Conj(a), g)
		}
		return res
	})
	opcore.DefVJP("cross", func(bl *opcore.GradBuilder) []*tensor.Tensor {
		a, b := bl.In(0), bl.In(1)
		g := bl.Cot(0)
		if bl.Err() != nil {
			return nil
		}
		at := bl.Attrs()
		res := make([]*tensor.Tensor, 2)
		if bl.Wants(0) {
			res[0] = bl.SumTo(bl.Call("cross", at, bl.Conj(b), g), a.Shape())
		}
		if bl.Wants(1) {
			res[1] = bl.SumTo(bl.Call("cross", at, g, bl.Conj(a)), b.Shape())
		}
		return res
	})
	opcore.DefNoGrad("the rank is an integer count", "matrix_rank")
}

// tensordotVJP contracts the cotangent with the other factor over that
// factor's free axes, then puts the axes back in the input's order.
func tensordotVJP(bl *opcore.GradBuilder) []*tensor.Tensor {
	a, b := bl.In(0), bl.In(1)
	g := bl.Cot(0)
	if bl.Err() != nil {
		return nil
	}
	at := bl.Attrs()
	ca, err := opcore.OrderedAxes("tensordot", at.Axes, len(a.Shape()))
	if err != nil {
		bl.Fail(err)
		return nil
	}
	cb, err := opcore.OrderedAxes("tensordot", at.Axes2, len(b.Shape()))
	if err != nil {
		bl.Fail(err)
		return nil
	}
	fa, fb := freeAxes(ca, len(a.Shape())), freeAxes(cb, len(b.Shape()))
	res := make([]*tensor.Tensor, 2)
	if bl.Wants(0) {
		gpos := make([]int, len(fb))
		for i := range gpos {
			gpos[i] = len(fa) + i
		}
		t := bl.Call("tensordot", opcore.Attrs{Axes: gpos, Axes2: fb}, g, bl.Conj(b))
		res[0] = bl.Transpose(t, opcore.InvPerm(append(append([]int{}, fa...), pairedInOrder(cb, ca)...)))
	}
	if bl.Wants(1) {
		gpos := make([]int, len(fa))
		for i := range gpos {
			gpos[i] = i
		}
		t := bl.Call("tensordot", opcore.Attrs{Axes: fa, Axes2: gpos}, bl.Conj(a), g)
		res[1] = bl.Transpose(t, opcore.InvPerm(append(pairedInOrder(ca, cb), fb...)))
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
		if !opcore.ContainsInt(contracted, i) {
			f = append(f, i)
		}
	}
	return f
}

// vecdotVJP: y = Σ conj(a)·b, so ga = b·conj(g) and gb = a·g, with the
// cotangent given back its axis.
func vecdotVJP(bl *opcore.GradBuilder) []*tensor.Tensor {
	a, b := bl.In(0), bl.In(1)
	g := bl.Cot(0)
	if bl.Err() != nil {
		return nil
	}
	axis, err := opcore.AxisAttr("vecdot", bl.Attrs().Axes, -1)
	if err != nil {
		bl.Fail(err)
		return nil
	}
	shape, err := opcore.BroadcastShapes("vecdot", a.Shape(), b.Shape())
	if err != nil {
		bl.Fail(err)
		return nil
	}
	if axis < 0 {
		axis += len(shape)
	}
	gk := bl.Reshape(g, opcore.KeptShape(shape, []int{axis}))
	res := make([]*tensor.Tensor, 2)
	if bl.Wants(0) {
		res[0] = bl.SumTo(bl.Mul(b, bl.Conj(gk)), a.Shape())
	}
	if bl.Wants(1) {
		res[1] = bl.SumTo(bl.Mul(a, gk), b.Shape())
	}
	return res
}
