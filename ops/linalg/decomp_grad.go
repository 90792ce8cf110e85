package linalg

import (
	"fmt"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/ops/internal/opcore"
	"github.com/vkflow/vkflow/tensor"
)

// VJPs of the linalg ops JAX differentiates (lu.go, chol.go,
// eigh.go, svd.go, diag.go, norm.go), as
// compositions of the linalg ops themselves. Caveats, as JAX's: inverses
// of singular matrices are Inf or NaN, and the eigenvector and singular
// vector rules divide by differences of eigenvalues, so a degenerate
// spectrum gives Inf or NaN. cholesky and eigh read the lower triangle
// only: their VJP puts the gradient there (the upper triangle gets zeros),
// so it is the derivative of the op as computed.

func init() {
	opcore.DefVJP("inv", invVJP)
	opcore.DefVJP("solve", solveVJP)
	opcore.DefVJP("det", detVJP)
	opcore.DefVJP("slogdet", slogdetVJP)
	opcore.DefVJP("cholesky", choleskyVJP)
	opcore.DefVJP("eigh", eighVJP)
	opcore.DefVJP("eigvalsh", eighVJP)
	opcore.DefVJP("svdvals", svdvalsVJP)
	opcore.DefVJP("trace", traceVJP)
	opcore.DefVJP("diagonal", diagonalVJP)
	opcore.DefVJP("vector_norm", vectorNormVJP)
	opcore.DefVJP("matrix_norm", matrixNormVJP)
	opcore.DefVJP("matrix_power", matrixPowerVJP)
	opcore.DefVJP("pinv", pinvVJP)
	opcore.DefVJP("qr", qrVJP)
	opcore.DefVJP("svd", svdVJP)
}

// pinvVJP (real, where the rank is locally constant; Golub and Pereyra):
// with P = A⁺, gA = −Pᵀ·Ḡ·Pᵀ + (I − A·P)·Ḡᵀ·P·Pᵀ + Pᵀ·P·Ḡᵀ·(I − P·A).
// The rtol input, if any, gets none.
func pinvVJP(b *opcore.GradBuilder) []*tensor.Tensor {
	a := b.In(0)
	res := make([]*tensor.Tensor, b.NumIn())
	if b.Err() != nil || !b.RealOnly(a) {
		return nil
	}
	p := b.Out(0)
	g := b.Cot(0)
	if b.Err() != nil {
		return nil
	}
	pt, gt := b.MT(p), b.MT(g)
	t1 := b.Neg(b.MatMul(b.MatMul(pt, g), pt))
	ap := b.MatMul(a, p) // m×m
	t2 := b.MatMul(b.Sub(gt, b.MatMul(ap, gt)), b.MatMul(p, pt))
	pa := b.MatMul(p, a) // n×n
	t3 := b.MatMul(b.MatMul(pt, p), b.Sub(gt, b.MatMul(gt, pa)))
	res[0] = b.Add(b.Add(t1, t2), t3)
	return res
}

// expand2 gives a batch of scalars [...] two trailing axes of 1.
func expand2(b *opcore.GradBuilder, x *tensor.Tensor) *tensor.Tensor {
	if x == nil {
		return nil
	}
	return b.Reshape(x, append(x.Shape(), 1, 1))
}

// invVJP: gA = -Yᴴ·G·Yᴴ.
func invVJP(b *opcore.GradBuilder) []*tensor.Tensor {
	y := b.Out(0)
	g := b.Cot(0)
	if b.Err() != nil {
		return nil
	}
	yh := b.MH(y)
	return []*tensor.Tensor{b.Neg(b.MatMul(b.MatMul(yh, g), yh))}
}

// solveVJP: X = A⁻¹B, gB = A⁻ᴴ·G and gA = -gB·Xᴴ (a 1-d b as a column).
func solveVJP(bl *opcore.GradBuilder) []*tensor.Tensor {
	a, b := bl.In(0), bl.In(1)
	x := bl.Out(0)
	g := bl.Cot(0)
	if bl.Err() != nil {
		return nil
	}
	vec := len(b.Shape()) == 1
	if vec {
		x = bl.Reshape(x, append(x.Shape(), 1))
		g = bl.Reshape(g, append(g.Shape(), 1))
	}
	gb := bl.Call("solve", opcore.Attrs{}, bl.MH(a), g)
	res := make([]*tensor.Tensor, 2)
	if bl.Wants(0) {
		res[0] = bl.SumTo(bl.Neg(bl.MatMul(gb, bl.MH(x))), a.Shape())
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
func detVJP(b *opcore.GradBuilder) []*tensor.Tensor {
	a := b.In(0)
	d := b.Out(0)
	g := b.Cot(0)
	if b.Err() != nil {
		return nil
	}
	s := expand2(b, b.Mul(g, b.Conj(d)))
	return []*tensor.Tensor{b.Mul(s, b.MH(b.Unary("inv", a)))}
}

// slogdetVJP: gA = g_logabsdet·A⁻ᵀ (the sign is constant where it is
// differentiable).
func slogdetVJP(b *opcore.GradBuilder) []*tensor.Tensor {
	a := b.In(0)
	if !b.RealOnly(a) {
		return nil
	}
	g := b.CotOpt(1)
	if g == nil {
		return []*tensor.Tensor{b.Zeros(a.Dtype(), a.Shape())}
	}
	return []*tensor.Tensor{b.Mul(expand2(b, g), b.MT(b.Unary("inv", a)))}
}

// lowerOf maps a gradient S of the symmetric matrix an op saw to the
// gradient of the input whose lower triangle it read: S + Sᵀ below the
// diagonal, S's diagonal, zeros above.
func lowerOf(b *opcore.GradBuilder, s *tensor.Tensor) *tensor.Tensor {
	sym := b.Add(s, b.MT(s))
	return b.Add(b.Call("tril", opcore.Attrs{K: -1}, sym), b.Mul(s, b.Eye(s)))
}

// choleskyVJP (real): with A = L·Lᵀ, S = L⁻ᵀ·Φ(Lᵀ·Ḡ)·L⁻¹ symmetrized,
// Φ the lower triangle with its diagonal halved (Murray 2016).
func choleskyVJP(b *opcore.GradBuilder) []*tensor.Tensor {
	a := b.In(0)
	l := b.Out(0)
	g := b.Cot(0)
	if b.Err() != nil || !b.RealOnly(a) {
		return nil
	}
	if b.Attrs().Upper {
		l, g = b.MT(l), b.MT(g)
	}
	p := b.MatMul(b.MT(l), g)
	phi := b.Sub(b.Call("tril", opcore.Attrs{}, p), b.Scale(b.Mul(p, b.Eye(p)), 0.5))
	li := b.Unary("inv", l)
	s := b.MatMul(b.MatMul(b.MT(li), phi), li)
	s = b.Scale(b.Add(s, b.MT(s)), 0.5)
	return []*tensor.Tensor{lowerOf(b, s)}
}

// eighVJP (real; eigh and eigvalsh): S = V·(diag(ḡw) + F∘(Vᵀ·ḡV))·Vᵀ
// symmetrized, F_ij = 1/(w_j − w_i) off the diagonal.
func eighVJP(b *opcore.GradBuilder) []*tensor.Tensor {
	a := b.In(0)
	if !b.RealOnly(a) || b.Err() != nil {
		return nil
	}
	var w, v, gw, gv *tensor.Tensor
	if b.Name() == "eigvalsh" {
		outs := b.CallN("eigh", opcore.Attrs{}, 2, a)
		if b.Err() != nil {
			return nil
		}
		w, v = outs[0], outs[1]
		gw = b.Cot(0)
	} else {
		w, v = b.Out(0), b.Out(1)
		gw, gv = b.CotOpt(0), b.CotOpt(1)
	}
	if b.Err() != nil {
		return nil
	}
	n := w.Shape()[len(w.Shape())-1]
	eye := b.DiagMask(a.Dtype(), n, n, 0)
	var inner *tensor.Tensor
	if gw != nil {
		inner = b.Mul(b.Reshape(gw, append(gw.Shape()[:len(gw.Shape())-1], 1, n)), eye)
	}
	if gv != nil {
		ws := w.Shape()
		wr := b.Reshape(w, append(append([]int{}, ws[:len(ws)-1]...), 1, n))
		wc := b.Reshape(w, append(append([]int{}, ws[:len(ws)-1]...), n, 1))
		e := b.Add(b.Sub(wr, wc), eye) // 1 on the diagonal: no division by 0 there
		f := b.Mul(b.Div(b.Const(a.Dtype(), 1), e), b.Rsub(1, eye))
		t := b.Mul(f, b.MatMul(b.MT(v), gv))
		if inner == nil {
			inner = t
		} else {
			inner = b.Add(inner, t)
		}
	}
	if inner == nil {
		return []*tensor.Tensor{b.Zeros(a.Dtype(), a.Shape())}
	}
	s := b.MatMul(b.MatMul(v, inner), b.MT(v))
	s = b.Scale(b.Add(s, b.MT(s)), 0.5)
	return []*tensor.Tensor{b.SumTo(lowerOf(b, s), a.Shape())}
}

// svdvalsVJP: gA = U·diag(ḡs)·Vᴴ, from the reduced SVD.
func svdvalsVJP(b *opcore.GradBuilder) []*tensor.Tensor {
	a := b.In(0)
	g := b.Cot(0)
	if b.Err() != nil {
		return nil
	}
	outs := b.CallN("svd", opcore.Attrs{FullMatrices: opcore.Ptr(false)}, 3, a)
	if b.Err() != nil {
		return nil
	}
	u, vh := outs[0], outs[2]
	gs := b.CastTo(g, a.Dtype())
	gs = b.Reshape(gs, append(gs.Shape()[:len(gs.Shape())-1], 1, gs.Shape()[len(gs.Shape())-1]))
	return []*tensor.Tensor{b.MatMul(b.Mul(u, gs), vh)}
}

// traceVJP: g on the diagonal.
func traceVJP(b *opcore.GradBuilder) []*tensor.Tensor {
	a := b.In(0)
	g := b.Cot(0)
	if b.Err() != nil {
		return nil
	}
	sh := a.Shape()
	mask := b.DiagMask(a.Dtype(), sh[len(sh)-2], sh[len(sh)-1], b.Attrs().Offset)
	return []*tensor.Tensor{b.Mul(expand2(b, g), mask)}
}

// diagonalVJP writes the cotangent into zeros through the diagonal view.
func diagonalVJP(b *opcore.GradBuilder) []*tensor.Tensor {
	a := b.In(0)
	g := b.Cot(0)
	if b.Err() != nil {
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
	st := opcore.RowMajor(sh)
	dst := append(append([]int{}, st[:r-2]...), n+1)
	b.Into("strided_copy", opcore.Attrs{Shape: g.Shape(), DstOffset: start, DstStrides: dst}, z, g)
	return []*tensor.Tensor{z}
}

// vectorNormVJP (ord 2, the default, and 1): g·x/‖x‖ (0 where ‖x‖ is
// 0), and g·sgn(x).
func vectorNormVJP(b *opcore.GradBuilder) []*tensor.Tensor {
	x := b.In(0)
	g := b.Cot(0)
	if b.Err() != nil {
		return nil
	}
	at := b.Attrs()
	axes, err := opcore.NormAxes(b.Name(), at.Axes, len(x.Shape()))
	if err != nil {
		b.Fail(err)
		return nil
	}
	gk := b.Reshape(g, opcore.KeptShape(x.Shape(), axes))
	switch at.Ord {
	case "", "2":
		yk := b.Reshape(b.Out(0), opcore.KeptShape(x.Shape(), axes))
		return []*tensor.Tensor{normGrad(b, x, yk, gk)}
	case "1":
		return []*tensor.Tensor{b.Mul(b.CastTo(gk, x.Dtype()), b.Unary("sign", x))}
	}
	b.Fail(fmt.Errorf("ops.vector_norm: VJP: %w: ord %q's VJP is not written yet (2 and 1 are): %w", opcore.ErrNoGradient, at.Ord, core.ErrInvalid))
	return nil
}

// normGrad is gk·x/yk, 0 where yk is 0.
func normGrad(b *opcore.GradBuilder, x, yk, gk *tensor.Tensor) *tensor.Tensor {
	q := b.Where(b.Binary("equal", yk, b.Zero(yk)), b.Zero(gk), b.Div(gk, yk))
	return b.Mul(b.CastTo(q, x.Dtype()), x)
}

// matrixNormVJP (Frobenius, the default): g·x/‖x‖.
func matrixNormVJP(b *opcore.GradBuilder) []*tensor.Tensor {
	x := b.In(0)
	g := b.Cot(0)
	y := b.Out(0)
	if b.Err() != nil {
		return nil
	}
	if o := b.Attrs().Ord; o != "" && o != "fro" {
		b.Fail(fmt.Errorf("ops.matrix_norm: VJP: %w: ord %q's VJP is not written yet (fro is): %w", opcore.ErrNoGradient, o, core.ErrInvalid))
		return nil
	}
	r := len(x.Shape())
	kept := opcore.KeptShape(x.Shape(), []int{r - 2, r - 1})
	return []*tensor.Tensor{normGrad(b, x, b.Reshape(y, kept), b.Reshape(g, kept))}
}

// matrixPowerVJP (n ≥ 0): gA = Σ_k (Aᴴ)^k·G·(Aᴴ)^(n−1−k).
func matrixPowerVJP(b *opcore.GradBuilder) []*tensor.Tensor {
	a := b.In(0)
	g := b.Cot(0)
	if b.Err() != nil {
		return nil
	}
	n := b.Attrs().N
	if n < 0 {
		b.Fail(fmt.Errorf("ops.matrix_power: VJP: %w: negative powers' VJP is not written yet: %w", opcore.ErrNoGradient, core.ErrInvalid))
		return nil
	}
	if n == 0 {
		return []*tensor.Tensor{b.Zeros(a.Dtype(), a.Shape())}
	}
	ah := b.MH(a)
	pows := []*tensor.Tensor{nil} // pows[k] = (Aᴴ)^k, nil for the identity
	for k := 1; k < n; k++ {
		if k == 1 {
			pows = append(pows, ah)
		} else {
			pows = append(pows, b.MatMul(pows[k-1], ah))
		}
	}
	var sum *tensor.Tensor
	for k := 0; k < n; k++ {
		t := g
		if pows[k] != nil {
			t = b.MatMul(pows[k], t)
		}
		if p := pows[n-1-k]; p != nil {
			t = b.MatMul(t, p)
		}
		if sum == nil {
			sum = t
		} else {
			sum = b.Add(sum, t)
		}
	}
	return []*tensor.Tensor{sum}
}

// qrVJP (real, reduced, m ≥ n): M = R·ḡRᵀ − ḡQᵀ·Q and
// gA = (ḡQ + Q·copyltu(M))·R⁻ᵀ, copyltu(M) = tril(M) + tril(M, −1)ᵀ
// (Liao et al. 2019).
func qrVJP(b *opcore.GradBuilder) []*tensor.Tensor {
	a := b.In(0)
	if b.Err() != nil || !b.RealOnly(a) {
		return nil
	}
	sh := a.Shape()
	m, n := sh[len(sh)-2], sh[len(sh)-1]
	if mode := b.Attrs().Mode; (mode != "" && mode != "reduced") || m < n {
		b.Fail(fmt.Errorf("ops.qr: VJP: %w: only the reduced QR of a matrix with m ≥ n has a VJP (this is %d×%d, mode %q): %w", opcore.ErrNoGradient, m, n, mode, core.ErrInvalid))
		return nil
	}
	q, rr := b.Out(0), b.Out(1)
	if b.Err() != nil {
		return nil
	}
	gq, gr := b.CotOpt(0), b.CotOpt(1)
	var mm *tensor.Tensor
	if gr != nil {
		mm = b.MatMul(rr, b.MT(gr))
	}
	if gq != nil {
		t := b.MatMul(b.MT(gq), q)
		if mm == nil {
			mm = b.Neg(t)
		} else {
			mm = b.Sub(mm, t)
		}
	}
	if mm == nil {
		return []*tensor.Tensor{b.Zeros(a.Dtype(), sh)}
	}
	cl := b.Add(b.Call("tril", opcore.Attrs{}, mm), b.MT(b.Call("tril", opcore.Attrs{K: -1}, mm)))
	lhs := b.MatMul(q, cl)
	if gq != nil {
		lhs = b.Add(gq, lhs)
	}
	return []*tensor.Tensor{b.MatMul(lhs, b.MT(b.Unary("inv", rr)))}
}

// svdVJP (real; the reduced SVD, or a square matrix): with A = U·S·Vᵀ and
// F_ij = 1/(s_j² − s_i²) off the diagonal (Townsend 2016),
// gA = U·[(F∘(UᵀŪ − ŪᵀU))·S + diag(S̄) + S·(F∘(VᵀV̄ − V̄ᵀV))]·Vᵀ
// + (I − UUᵀ)·Ū·S⁻¹·Vᵀ + U·S⁻¹·V̄ᵀ·(I − VVᵀ). Repeated or zero singular
// values give Inf or NaN in the vectors' part.
func svdVJP(bl *opcore.GradBuilder) []*tensor.Tensor {
	a := bl.In(0)
	if bl.Err() != nil || !bl.RealOnly(a) {
		return nil
	}
	sh := a.Shape()
	r := len(sh)
	m, n := sh[r-2], sh[r-1]
	full := bl.Attrs().FullMatrices == nil || *bl.Attrs().FullMatrices
	if full && m != n {
		bl.Fail(fmt.Errorf("ops.svd: VJP: %w: only the reduced SVD (full_matrices false) of a non-square matrix has a VJP: %w", opcore.ErrNoGradient, core.ErrInvalid))
		return nil
	}
	u, s, vh := bl.Out(0), bl.Out(1), bl.Out(2)
	if bl.Err() != nil {
		return nil
	}
	k := min(m, n)
	batch := sh[:r-2]
	row := func(t *tensor.Tensor) *tensor.Tensor { // [..., k] → [..., 1, k]
		return bl.Reshape(t, append(append([]int{}, batch...), 1, k))
	}
	col := func(t *tensor.Tensor) *tensor.Tensor { // [..., k] → [..., k, 1]
		return bl.Reshape(t, append(append([]int{}, batch...), k, 1))
	}
	dt := a.Dtype()
	eye := bl.DiagMask(dt, k, k, 0)
	v := bl.MT(vh)
	s2 := bl.Mul(s, s)
	e := bl.Add(bl.Sub(row(s2), col(s2)), eye)
	f := bl.Mul(bl.Div(bl.Const(dt, 1), e), bl.Rsub(1, eye))
	var inner *tensor.Tensor
	addTo := func(t *tensor.Tensor) {
		if inner == nil {
			inner = t
		} else {
			inner = bl.Add(inner, t)
		}
	}
	gu, gs, gvh := bl.CotOpt(0), bl.CotOpt(1), bl.CotOpt(2)
	var extra *tensor.Tensor
	sinv := bl.Div(bl.Const(dt, 1), s)
	if gs != nil {
		addTo(bl.Mul(row(gs), eye))
	}
	if gu != nil {
		ut := bl.MatMul(bl.MT(u), gu)
		j := bl.Mul(f, bl.Sub(ut, bl.MT(ut)))
		addTo(bl.Mul(j, row(s)))
		if m > k {
			proj := bl.Sub(gu, bl.MatMul(u, ut))
			extra = bl.MatMul(bl.Mul(proj, row(sinv)), vh)
		}
	}
	if gvh != nil {
		gv := bl.MT(gvh)
		vt := bl.MatMul(vh, gv)
		kk := bl.Mul(f, bl.Sub(vt, bl.MT(vt)))
		addTo(bl.Mul(col(s), kk))
		if n > k {
			proj := bl.Sub(gvh, bl.MatMul(bl.MT(vt), vh)) // V̄ᵀ·(I − VVᵀ)
			t := bl.MatMul(bl.Mul(u, row(sinv)), proj)
			if extra == nil {
				extra = t
			} else {
				extra = bl.Add(extra, t)
			}
		}
	}
	if inner == nil && extra == nil {
		return []*tensor.Tensor{bl.Zeros(dt, sh)}
	}
	var ga *tensor.Tensor
	if inner != nil {
		ga = bl.MatMul(bl.MatMul(u, inner), bl.MT(v))
	}
	if extra != nil {
		if ga == nil {
			ga = extra
		} else {
			ga = bl.Add(ga, extra)
		}
	}
	return []*tensor.Tensor{ga}
}
