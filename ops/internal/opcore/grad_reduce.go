package opcore

import (
	"github.com/vkflow/vkflow/tensor"
)

// VJPs of the reductions (reduce.go), softmax and the scans.

func init() {
	DefVJP("sum", func(b *GradBuilder) []*tensor.Tensor {
		x, gk, _ := reduceCot(b)
		if b.err != nil {
			return nil
		}
		return []*tensor.Tensor{b.bcast(gk, x.Shape())}
	})
	DefVJP("mean", func(b *GradBuilder) []*tensor.Tensor {
		x, gk, axes := reduceCot(b)
		if b.err != nil {
			return nil
		}
		n := 1
		for _, a := range axes {
			n *= x.Shape()[a]
		}
		return []*tensor.Tensor{b.bcast(b.Scale(gk, complex(1/float64(max(n, 1)), 0)), x.Shape())}
	})
	DefVJP("max", extremumVJP)
	DefVJP("min", extremumVJP)
	DefVJP("prod", prodVJP)
	DefVJP("softmax", softmaxVJP)
	DefVJP("cumulative_sum", cumsumVJP)
	DefNoGrad("an index: its integer result has no derivative", "argmax", "argsort", "searchsorted", "nonzero")
	DefNoGrad("a set op: its values are the input's, counted and sorted; its shape depends on the data",
		"unique_all", "unique_counts", "unique_inverse", "unique_values")
}

// reduceCot returns a reduction's input, its cotangent with the reduced
// axes kept as 1s, and the normalized axes.
func reduceCot(b *GradBuilder) (*tensor.Tensor, *tensor.Tensor, []int) {
	x := b.In(0)
	g := b.Cot(0)
	if b.err != nil {
		return nil, nil, nil
	}
	axes, err := NormAxes(b.Name(), b.Attrs().Axes, len(x.Shape()))
	if err != nil {
		b.Fail(err)
		return nil, nil, nil
	}
	return x, b.Reshape(g, KeptShape(x.Shape(), axes)), axes
}

// extremumVJP (max, min): the cotangent goes to the elements equal to the
// result, shared evenly on ties (as JAX and PyTorch's amax).
func extremumVJP(b *GradBuilder) []*tensor.Tensor {
	x, gk, axes := reduceCot(b)
	y := b.Out(0)
	if b.err != nil {
		return nil
	}
	yk := b.Reshape(y, KeptShape(x.Shape(), axes))
	mask := b.Binary("equal", x, yk)
	count := b.sum(b.Call("cast", Attrs{Dtype: x.Dtype()}, mask), axes, true)
	return []*tensor.Tensor{b.Where(mask, b.Div(gk, count), b.Zero(x))}
}

// prodVJP: the product of the other elements, from the exclusive
// cumulative products from each side (right where x has zeros): the
// reduced axes are moved last and flattened to one.
func prodVJP(b *GradBuilder) []*tensor.Tensor {
	x, gk, axes := reduceCot(b)
	if b.err != nil {
		return nil
	}
	shape := x.Shape()
	if len(axes) == 0 || x.Len() == 0 {
		return []*tensor.Tensor{b.bcast(gk, shape)}
	}
	var perm, kept []int
	k := 1
	for i, d := range shape {
		if !ContainsInt(axes, i) {
			perm = append(perm, i)
			kept = append(kept, d)
		}
	}
	for _, a := range axes {
		perm = append(perm, a)
		k *= shape[a]
	}
	xt := b.Transpose(x, perm)
	flat := append(append([]int{}, kept...), k)
	xf := b.Reshape(xt, flat)
	last := len(flat) - 1
	scan := Attrs{Axes: []int{last}, IncludeInitial: true}
	left := b.Slice(b.Call("cumulative_prod", scan, xf), last, 0, k)
	rf := b.Call("flip", Attrs{Axes: []int{last}}, xf)
	right := b.Call("flip", Attrs{Axes: []int{last}}, b.Slice(b.Call("cumulative_prod", scan, rf), last, 0, k))
	others := b.Mul(left, right)
	gf := b.Reshape(gk, append(append([]int{}, kept...), 1))
	gt := b.Mul(gf, b.Conj(others))
	tshape := make([]int, len(perm))
	for i, p := range perm {
		tshape[i] = shape[p]
	}
	return []*tensor.Tensor{b.Transpose(b.Reshape(gt, tshape), InvPerm(perm))}
}

func ContainsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// softmaxVJP: y·(g − Σ g·y) along the axis.
func softmaxVJP(b *GradBuilder) []*tensor.Tensor {
	y := b.Out(0)
	g := b.Cot(0)
	if b.err != nil {
		return nil
	}
	axis, err := AxisAttr("softmax", b.Attrs().Axes, -1)
	if err != nil {
		b.Fail(err)
		return nil
	}
	s := b.sum(b.Mul(g, y), []int{axis}, true)
	return []*tensor.Tensor{b.Mul(y, b.Sub(g, s))}
}

// cumsumVJP: the reversed cumulative sum of the cotangent (its first
// element dropped when the result starts with the identity).
func cumsumVJP(b *GradBuilder) []*tensor.Tensor {
	_, g, axis := b.scanCot()
	if b.err != nil {
		return nil
	}
	flip := Attrs{Axes: []int{axis}}
	s := b.Call("cumulative_sum", Attrs{Axes: []int{axis}}, b.Call("flip", flip, g))
	return []*tensor.Tensor{b.Call("flip", flip, s)}
}
