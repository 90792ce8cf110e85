package ops

import (
	"fmt"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/tensor"
)

// VJPs of the linalg ops JAX differentiates (linalg_lu.go, linalg_chol.go,
// linalg_eigh.go, linalg_svd.go, linalg_diag.go, linalg_norm.go), as
// compositions of the linalg ops themselves. Caveats, as JAX's: inverses
// of singular matrices are Inf or NaN, and the eigenvector and singular
// vector rules divide by differences of eigenvalues, so a degenerate
// spectrum gives Inf or NaN. cholesky and eigh read the lower triangle
// only: their VJP puts the gradient there (the upper triangle gets zeros),
// so it is the derivative of the op as computed.

func init() {
	defVJP("inv", invVJP)
	defVJP("solve", solveVJP)
	defVJP("det", detVJP)
	defVJP("slogdet", slogdetVJP)
	defVJP("cholesky", choleskyVJP)
	defVJP("eigh", eighVJP)
	defVJP("eigvalsh", eighVJP)
	defVJP("svdvals", svdvalsVJP)
	defVJP("trace", traceVJP)
	defVJP("diagonal", diagonalVJP)
	defVJP("vector_norm", vectorNormVJP)
	defVJP("matrix_norm", matrixNormVJP)
	defVJP("matrix_power", matrixPowerVJP)
	defVJP("pinv", pinvVJP)
}

// pinvVJP (real, where the rank is locally constant; Golub and Pereyra):
// with P = A⁺, gA = −Pᵀ·Ḡ·Pᵀ + (I − A·P)·Ḡᵀ·P·Pᵀ + Pᵀ·P·Ḡᵀ·(I − P·A).
// The rtol input, if any, gets none.
func pinvVJP(b *GradBuilder) []*tensor.Tensor {
	a := b.In(0)
	res := make([]*tensor.Tensor, b.NumIn())
	if b.err != nil || !b.realOnly(a) {
		return nil
	}
	p := b.Out(0)
	g := b.Cot(0)
	if b.err != nil {
		return nil
	}
	pt, gt := b.mT(p), b.mT(g)
	t1 := b.neg(b.mm(b.mm(pt, g), pt))
	ap := b.mm(a, p) // m×m
	t2 := b.mm(b.sub(gt, b.mm(ap, gt)), b.mm(p, pt))
	pa := b.mm(p, a) // n×n
	t3 := b.mm(b.mm(pt, p), b.sub(gt, b.mm(gt, pa)))
	res[0] = b.add(b.add(t1, t2), t3)
	return res
}

// mH is x's conjugate transpose over its last two axes.
func (b *GradBuilder) mH(x *tensor.Tensor) *tensor.Tensor { return b.conj(b.mT(x)) }

// mm is the matrix product.
func (b *GradBuilder) mm(x, y *tensor.Tensor) *tensor.Tensor { return b.bin("matmul", x, y) }

// expand2 gives a batch of scalars [...] two trailing axes of 1.
func (b *GradBuilder) expand2(x *tensor.Tensor) *tensor.Tensor {
	if x == nil {
		return nil
	}
	return b.Reshape(x, append(x.Shape(), 1, 1))
}

// realOnly fails for a complex input: the rule is written for real
// matrices only.
func (b *GradBuilder) realOnly(x *tensor.Tensor) bool {
	if x.Dtype().IsComplex() {
		b.fail(fmt.Errorf("ops.%s: VJP: %w: the complex %s's VJP is not written yet: %w", b.name, ErrNoGradient, b.name, core.ErrInvalid))
		return false
	}
	return true
}

// invVJP: gA = -Yᴴ·G·Yᴴ.
func invVJP(b *GradBuilder) []*tensor.Tensor {
	y := b.Out(0)
	g := b.Cot(0)
	if b.err != nil {
		return nil
	}
	yh := b.mH(y)
	return []*tensor.Tensor{b.neg(b.mm(b.mm(yh, g), yh))}
}

// solveVJP: X = A⁻¹B, gB = A⁻ᴴ·G and gA = -gB·Xᴴ (a 1-d b as a column).
func solveVJP(bl *GradBuilder) []*tensor.Tensor {
	a, b := bl.In(0), bl.In(1)
	x := bl.Out(0)
	g := bl.Cot(0)
	if bl.err != nil {
		return nil
	}
	vec := len(b.Shape()) == 1
	if vec {
		x = bl.Reshape(x, append(x.Shape(), 1))
		g = bl.Reshape(g, append(g.Shape(), 1))
	}
	gb := bl.Call("solve", Attrs{}, bl.mH(a), g)
	res := make([]*tensor.Tensor, 2)
	if bl.Wants(0) {
		res[0] = bl.SumTo(bl.neg(bl.mm(gb, bl.mH(x))), a.Shape())
	}
	if bl.Wants(1) {
		if vec {
			gb = bl.Reshape(gb, gb.Shape()[:len(gb.Shape())-1])
		}
		res[1] = bl.SumTo(gb, b.Shape())
	}
	return res
}

// detVJP: gA = g·conj(det A)·A⁻ᴴ.
func detVJP(b *GradBuilder) []*tensor.Tensor {
	a := b.In(0)
	d := b.Out(0)
	g := b.Cot(0)
	if b.err != nil {
		return nil
	}
	s := b.expand2(b.mul(g, b.conj(d)))
	return []*tensor.Tensor{b.mul(s, b.mH(b.un("inv", a)))}
}

// slogdetVJP: gA = g_logabsdet·A⁻ᵀ (the sign is constant where it is
// differentiable).
func slogdetVJP(b *GradBuilder) []*tensor.Tensor {
	a := b.In(0)
	if !b.realOnly(a) {
		return nil
	}
	g := b.cotOpt(1)
	if g == nil {
		return []*tensor.Tensor{b.Zeros(a.Dtype(), a.Shape())}
	}
	return []*tensor.Tensor{b.mul(b.expand2(g), b.mT(b.un("inv", a)))}
}

// lowerOf maps a gradient S of the symmetric matrix an op saw to the
// gradient of the input whose lower triangle it read: S + Sᵀ below the
// diagonal, S's diagonal, zeros above.
func (b *GradBuilder) lowerOf(s *tensor.Tensor) *tensor.Tensor {
	sym := b.add(s, b.mT(s))
	return b.add(b.Call("tril", Attrs{K: -1}, sym), b.mul(s, b.eye(s)))
}

// eye is the identity of x's last two axes (square), in x's dtype.
func (b *GradBuilder) eye(x *tensor.Tensor) *tensor.Tensor {
	sh := x.Shape()
	m, n := sh[len(sh)-2], sh[len(sh)-1]
	return b.diagMask(x.Dtype(), m, n, 0)
}

// diagMask is the [m, n] matrix of dtype dt with ones on diagonal offset
// (true for bool), a constant.
func (b *GradBuilder) diagMask(dt tensor.Dtype, m, n, offset int) *tensor.Tensor {
	vs := make([]complex128, m*n)
	for i := 0; i < m; i++ {
		if j := i + offset; j >= 0 && j < n {
			vs[i*n+j] = 1
		}
	}
	return b.constant(dt, []int{m, n}, vs)
}

// choleskyVJP (real): with A = L·Lᵀ, S = L⁻ᵀ·Φ(Lᵀ·Ḡ)·L⁻¹ symmetrized,
// Φ the lower triangle with its diagonal halved (Murray 2016).
func choleskyVJP(b *GradBuilder) []*tensor.Tensor {
	a := b.In(0)
	l := b.Out(0)
	g := b.Cot(0)
	if b.err != nil || !b.realOnly(a) {
		return nil
	}
	if b.Attrs().Upper {
		l, g = b.mT(l), b.mT(g)
	}
	p := b.mm(b.mT(l), g)
	phi := b.sub(b.Call("tril", Attrs{}, p), b.scale(b.mul(p, b.eye(p)), 0.5))
	li := b.un("inv", l)
	s := b.mm(b.mm(b.mT(li), phi), li)
	s = b.scale(b.add(s, b.mT(s)), 0.5)
	return []*tensor.Tensor{b.lowerOf(s)}
}

// eighVJP (real; eigh and eigvalsh): S = V·(diag(ḡw) + F∘(Vᵀ·ḡV))·Vᵀ
// symmetrized, F_ij = 1/(w_j − w_i) off the diagonal.
func eighVJP(b *GradBuilder) []*tensor.Tensor {
	a := b.In(0)
	if !b.realOnly(a) || b.err != nil {
		return nil
	}
	var w, v, gw, gv *tensor.Tensor
	if b.name == "eigvalsh" {
		outs := b.CallN("eigh", Attrs{}, 2, a)
		if b.err != nil {
			return nil
		}
		w, v = outs[0], outs[1]
		gw = b.Cot(0)
	} else {
		w, v = b.Out(0), b.Out(1)
		gw, gv = b.cotOpt(0), b.cotOpt(1)
	}
	if b.err != nil {
		return nil
	}
	n := w.Shape()[len(w.Shape())-1]
	eye := b.diagMask(a.Dtype(), n, n, 0)
	var inner *tensor.Tensor
	if gw != nil {
		inner = b.mul(b.Reshape(gw, append(gw.Shape()[:len(gw.Shape())-1], 1, n)), eye)
	}
	if gv != nil {
		ws := w.Shape()
		wr := b.Reshape(w, append(append([]int{}, ws[:len(ws)-1]...), 1, n))
		wc := b.Reshape(w, append(append([]int{}, ws[:len(ws)-1]...), n, 1))
		e := b.add(b.sub(wr, wc), eye) // 1 on the diagonal: no division by 0 there
		f := b.mul(b.div(b.Const(a.Dtype(), 1), e), b.rsub(1, eye))
		t := b.mul(f, b.mm(b.mT(v), gv))
		if inner == nil {
			inner = t
		} else {
			inner = b.add(inner, t)
		}
	}
	if inner == nil {
		return []*tensor.Tensor{b.Zeros(a.Dtype(), a.Shape())}
	}
	s := b.mm(b.mm(v, inner), b.mT(v))
	s = b.scale(b.add(s, b.mT(s)), 0.5)
	return []*tensor.Tensor{b.SumTo(b.lowerOf(s), a.Shape())}
}

// svdvalsVJP: gA = U·diag(ḡs)·Vᴴ, from the reduced SVD.
func svdvalsVJP(b *GradBuilder) []*tensor.Tensor {
	a := b.In(0)
	g := b.Cot(0)
	if b.err != nil {
		return nil
	}
	outs := b.CallN("svd", Attrs{FullMatrices: ptr(false)}, 3, a)
	if b.err != nil {
		return nil
	}
	u, vh := outs[0], outs[2]
	gs := b.castTo(g, a.Dtype())
	gs = b.Reshape(gs, append(gs.Shape()[:len(gs.Shape())-1], 1, gs.Shape()[len(gs.Shape())-1]))
	return []*tensor.Tensor{b.mm(b.mul(u, gs), vh)}
}

// traceVJP: g on the diagonal.
func traceVJP(b *GradBuilder) []*tensor.Tensor {
	a := b.In(0)
	g := b.Cot(0)
	if b.err != nil {
		return nil
	}
	sh := a.Shape()
	mask := b.diagMask(a.Dtype(), sh[len(sh)-2], sh[len(sh)-1], b.Attrs().Offset)
	return []*tensor.Tensor{b.mul(b.expand2(g), mask)}
}

// diagonalVJP writes the cotangent into zeros through the diagonal view.
func diagonalVJP(b *GradBuilder) []*tensor.Tensor {
	a := b.In(0)
	g := b.Cot(0)
	if b.err != nil {
		return nil
	}
	sh := a.Shape()
	r := len(sh)
	n := sh[r-1]
	z := b.Zeros(a.Dtype(), sh)
	if g.Len() == 0 {
		return []*tensor.Tensor{z}
	}
	off := b.Attrs().Offset
	start := off
	if off < 0 {
		start = -off * n
	}
	st := rowMajor(sh)
	dst := append(append([]int{}, st[:r-2]...), n+1)
	b.into("strided_copy", Attrs{Shape: g.Shape(), DstOffset: start, DstStrides: dst}, z, g)
	return []*tensor.Tensor{z}
}

// vectorNormVJP (ord 2, the default, and 1): g·x/‖x‖ (0 where ‖x‖ is
// 0), and g·sgn(x).
func vectorNormVJP(b *GradBuilder) []*tensor.Tensor {
	x := b.In(0)
	g := b.Cot(0)
	if b.err != nil {
		return nil
	}
	at := b.Attrs()
	axes, err := normAxes(b.name, at.Axes, len(x.Shape()))
	if err != nil {
		b.fail(err)
		return nil
	}
	gk := b.Reshape(g, keptShape(x.Shape(), axes))
	switch at.Ord {
	case "", "2":
		yk := b.Reshape(b.Out(0), keptShape(x.Shape(), axes))
		return []*tensor.Tensor{b.normGrad(x, yk, gk)}
	case "1":
		return []*tensor.Tensor{b.mul(b.castTo(gk, x.Dtype()), b.un("sign", x))}
	}
	b.fail(fmt.Errorf("ops.vector_norm: VJP: %w: ord %q's VJP is not written yet (2 and 1 are): %w", ErrNoGradient, at.Ord, core.ErrInvalid))
	return nil
}

// normGrad is gk·x/yk, 0 where yk is 0.
func (b *GradBuilder) normGrad(x, yk, gk *tensor.Tensor) *tensor.Tensor {
	q := b.where(b.bin("equal", yk, b.zero(yk)), b.zero(gk), b.div(gk, yk))
	return b.mul(b.castTo(q, x.Dtype()), x)
}

// matrixNormVJP (Frobenius, the default): g·x/‖x‖.
func matrixNormVJP(b *GradBuilder) []*tensor.Tensor {
	x := b.In(0)
	g := b.Cot(0)
	y := b.Out(0)
	if b.err != nil {
		return nil
	}
	if o := b.Attrs().Ord; o != "" && o != "fro" {
		b.fail(fmt.Errorf("ops.matrix_norm: VJP: %w: ord %q's VJP is not written yet (fro is): %w", ErrNoGradient, o, core.ErrInvalid))
		return nil
	}
	r := len(x.Shape())
	kept := keptShape(x.Shape(), []int{r - 2, r - 1})
	return []*tensor.Tensor{b.normGrad(x, b.Reshape(y, kept), b.Reshape(g, kept))}
}

// matrixPowerVJP (n ≥ 0): gA = Σ_k (Aᴴ)^k·G·(Aᴴ)^(n−1−k).
func matrixPowerVJP(b *GradBuilder) []*tensor.Tensor {
	a := b.In(0)
	g := b.Cot(0)
	if b.err != nil {
		return nil
	}
	n := b.Attrs().N
	if n < 0 {
		b.fail(fmt.Errorf("ops.matrix_power: VJP: %w: negative powers' VJP is not written yet: %w", ErrNoGradient, core.ErrInvalid))
		return nil
	}
	if n == 0 {
		return []*tensor.Tensor{b.Zeros(a.Dtype(), a.Shape())}
	}
	ah := b.mH(a)
	pows := []*tensor.Tensor{nil} // pows[k] = (Aᴴ)^k, nil for the identity
	for k := 1; k < n; k++ {
		if k == 1 {
			pows = append(pows, ah)
		} else {
			pows = append(pows, b.mm(pows[k-1], ah))
		}
	}
	var sum *tensor.Tensor
	for k := 0; k < n; k++ {
		t := g
		if pows[k] != nil {
			t = b.mm(pows[k], t)
		}
		if p := pows[n-1-k]; p != nil {
			t = b.mm(t, p)
		}
		if sum == nil {
			sum = t
		} else {
			sum = b.add(sum, t)
		}
	}
	return []*tensor.Tensor{sum}
}
