package opcore

import (
	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/tensor"
)

// VJPs of sort, gather and cumulative_prod. Gathers and sorts
// move the cotangent back by index with deterministic ops (a gather by the
// inverse permutation; a product with a one-hot matrix where indices may
// repeat), never a scatter with float atomics.

func init() {
	DefVJP("sort", sortVJP)
	DefVJP("gather", gatherVJP)
	DefVJP("cumulative_prod", cumprodVJP)
	defPending("scatter writes its destination in place: its VJP is not written yet", "scatter")
}

// axisLast returns the permutation that moves axis a of rank r last.
func axisLast(a, r int) []int {
	perm := make([]int, 0, r)
	for i := 0; i < r; i++ {
		if i != a {
			perm = append(perm, i)
		}
	}
	return append(perm, a)
}

// sortVJP: the cotangent gathered by the inverse of the sorting
// permutation (argsort is stable, as sort, so ties map as sort moved them).
func sortVJP(b *GradBuilder) []*tensor.Tensor {
	x := b.In(0)
	g := b.Cot(0)
	if b.err != nil {
		return nil
	}
	at := b.Attrs()
	r := len(x.Shape())
	axis := -1
	if len(at.Axes) == 1 {
		axis = at.Axes[0]
	}
	if axis < 0 {
		axis += r
	}
	perm := b.Call("argsort", Attrs{Axes: []int{axis}, Descending: at.Descending}, x)
	inv := b.Call("argsort", Attrs{Axes: []int{axis}}, perm)
	idx := make([]*tensor.Tensor, r)
	sh := x.Shape()
	for d := 0; d < r; d++ {
		if d == axis {
			idx[d] = inv
			continue
		}
		s := make([]int, r)
		for i := range s {
			s[i] = 1
		}
		s[d] = sh[d]
		idx[d] = b.Reshape(b.arange(perm.Dtype(), sh[d]), s)
	}
	return []*tensor.Tensor{b.Call("gather", Attrs{Axes: []int{0}}, append([]*tensor.Tensor{g}, idx...)...)}
}

// gatherVJP (gather, and take, a gather of one index array): the indexed
// axes flattened to one of size S, the broadcast
// indices to linear ones (normalized and clamped as gather does), and the
// cotangent summed into place by a product with their one-hot [nb, S]
// matrix. Memory and work grow with nb·S.
func gatherVJP(b *GradBuilder) []*tensor.Tensor {
	x := b.In(0)
	g := b.Cot(0)
	res := make([]*tensor.Tensor, b.NumIn())
	if b.err != nil || !b.Wants(0) {
		return res
	}
	xs := x.Shape()
	k := b.NumIn() - 1
	axis := b.axisOf(0, len(xs))
	if b.err != nil {
		return nil
	}
	if axis+k > len(xs) {
		b.Fail(core.Invalid("ops.%s: VJP: %d index arrays from axis %d of %v", b.name, k, axis, xs))
		return nil
	}
	it := tensor.Int64
	var lin *tensor.Tensor
	stride := 1
	for i := k - 1; i >= 0; i-- {
		n := xs[axis+i]
		if b.In(1 + i).Dtype().IsComplex() {
			b.Fail(core.Invalid("ops.%s: VJP: index %d is complex", b.name, i))
			return nil
		}
		iv := b.CastTo(b.In(1+i), it)
		iv = b.Where(b.Binary("less", iv, b.Const(it, 0)), b.addc(iv, complex(float64(n), 0)), iv)
		iv = b.Call("clip", Attrs{Min: Ptr(0.0), Max: Ptr(float64(max(n-1, 0)))}, iv)
		if stride != 1 {
			iv = b.Mul(iv, b.Const(it, complex(float64(stride), 0)))
		}
		if lin == nil {
			lin = iv
		} else {
			lin = b.Add(lin, iv)
		}
		stride *= n
	}
	if b.err != nil {
		return nil
	}
	S := stride
	pre, post := Numel(xs[:axis]), Numel(xs[axis+k:])
	nb := g.Len() / max(pre*post, 1)
	oh := b.Call("cast", Attrs{Dtype: g.Dtype()}, b.Binary("equal", b.Reshape(lin, []int{nb, 1}), b.arange(it, S)))
	g3 := b.Reshape(g, []int{pre, nb, post})
	t := b.Call("tensordot", Attrs{Axes: []int{0}, Axes2: []int{1}}, oh, g3) // [S, pre, post]
	res[0] = b.Reshape(b.Transpose(t, []int{1, 0, 2}), xs)
	return res
}

// cumprodVJP (real): gx_j = Σ_{i≥j} g_i·Π_{k≤i, k≠j} x_k, from the
// cumulative products of the n×n matrix whose row j is x with x_j set to
// 1 (right where x has zeros; memory n² per row along the axis).
func cumprodVJP(b *GradBuilder) []*tensor.Tensor {
	x, g, axis := b.scanCot()
	if b.err != nil || !b.RealOnly(x) {
		return nil
	}
	r := len(x.Shape())
	n := x.Shape()[axis]
	if n == 0 {
		return []*tensor.Tensor{b.Zeros(x.Dtype(), x.Shape())}
	}
	perm := axisLast(axis, r)
	xt := b.Transpose(b.CastTo(x, x.Dtype()), perm)
	gt := b.Transpose(g, perm)
	ts := xt.Shape()
	eye := b.DiagMask(tensor.Bool, n, n, 0)
	rows := b.bcast(b.Reshape(xt, append(append([]int{}, ts[:r-1]...), 1, n)), append(append([]int{}, ts[:r-1]...), n, n))
	z := b.Where(eye, b.Const(x.Dtype(), 1), rows) // [..., j, i]
	c := b.Call("cumulative_prod", Attrs{Axes: []int{r}}, z)
	c = b.Call("triu", Attrs{}, c)                                               // i ≥ j
	gx := b.MatMul(c, b.Reshape(gt, append(append([]int{}, ts[:r-1]...), n, 1))) // [..., j, 1]
	return []*tensor.Tensor{b.Transpose(b.Reshape(gx, ts), InvPerm(perm))}
}
