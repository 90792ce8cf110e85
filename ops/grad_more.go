package ops

import (
	"fmt"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/tensor"
)

// VJPs of sort, gather, cumulative_prod, qr and svd. Gathers and sorts
// move the cotangent back by index with deterministic ops (a gather by the
// inverse permutation; a product with a one-hot matrix where indices may
// repeat), never a scatter with float atomics.

func init() {
	defVJP("sort", sortVJP)
	defVJP("gather", gatherVJP)
	defVJP("cumulative_prod", cumprodVJP)
	defVJP("qr", qrVJP)
	defVJP("svd", svdVJP)
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
		b.fail(core.Invalid("ops.%s: VJP: %d index arrays from axis %d of %v", b.name, k, axis, xs))
		return nil
	}
	it := tensor.Int64
	var lin *tensor.Tensor
	stride := 1
	for i := k - 1; i >= 0; i-- {
		n := xs[axis+i]
		if b.In(1 + i).Dtype().IsComplex() {
			b.fail(core.Invalid("ops.%s: VJP: index %d is complex", b.name, i))
			return nil
		}
		iv := b.castTo(b.In(1+i), it)
		iv = b.where(b.bin("less", iv, b.Const(it, 0)), b.addc(iv, complex(float64(n), 0)), iv)
		iv = b.Call("clip", Attrs{Min: ptr(0.0), Max: ptr(float64(max(n-1, 0)))}, iv)
		if stride != 1 {
			iv = b.mul(iv, b.Const(it, complex(float64(stride), 0)))
		}
		if lin == nil {
			lin = iv
		} else {
			lin = b.add(lin, iv)
		}
		stride *= n
	}
	if b.err != nil {
		return nil
	}
	S := stride
	pre, post := numel(xs[:axis]), numel(xs[axis+k:])
	nb := g.Len() / max(pre*post, 1)
	oh := b.Call("cast", Attrs{Dtype: g.Dtype()}, b.bin("equal", b.Reshape(lin, []int{nb, 1}), b.arange(it, S)))
	g3 := b.Reshape(g, []int{pre, nb, post})
	t := b.Call("tensordot", Attrs{Axes: []int{0}, Axes2: []int{1}}, oh, g3) // [S, pre, post]
	res[0] = b.Reshape(b.transpose(t, []int{1, 0, 2}), xs)
	return res
}

// cumprodVJP (real): gx_j = Σ_{i≥j} g_i·Π_{k≤i, k≠j} x_k, from the
// cumulative products of the n×n matrix whose row j is x with x_j set to
// 1 (right where x has zeros; memory n² per row along the axis).
func cumprodVJP(b *GradBuilder) []*tensor.Tensor {
	x, g, axis := b.scanCot()
	if b.err != nil || !b.realOnly(x) {
		return nil
	}
	r := len(x.Shape())
	n := x.Shape()[axis]
	if n == 0 {
		return []*tensor.Tensor{b.Zeros(x.Dtype(), x.Shape())}
	}
	perm := axisLast(axis, r)
	xt := b.transpose(b.castTo(x, x.Dtype()), perm)
	gt := b.transpose(g, perm)
	ts := xt.Shape()
	eye := b.diagMask(tensor.Bool, n, n, 0)
	rows := b.bcast(b.Reshape(xt, append(append([]int{}, ts[:r-1]...), 1, n)), append(append([]int{}, ts[:r-1]...), n, n))
	z := b.where(eye, b.Const(x.Dtype(), 1), rows) // [..., j, i]
	c := b.Call("cumulative_prod", Attrs{Axes: []int{r}}, z)
	c = b.Call("triu", Attrs{}, c)                                           // i ≥ j
	gx := b.mm(c, b.Reshape(gt, append(append([]int{}, ts[:r-1]...), n, 1))) // [..., j, 1]
	return []*tensor.Tensor{b.transpose(b.Reshape(gx, ts), invPerm(perm))}
}

// qrVJP (real, reduced, m ≥ n): M = R·ḡRᵀ − ḡQᵀ·Q and
// gA = (ḡQ + Q·copyltu(M))·R⁻ᵀ, copyltu(M) = tril(M) + tril(M, −1)ᵀ
// (Liao et al. 2019).
func qrVJP(b *GradBuilder) []*tensor.Tensor {
	a := b.In(0)
	if b.err != nil || !b.realOnly(a) {
		return nil
	}
	sh := a.Shape()
	m, n := sh[len(sh)-2], sh[len(sh)-1]
	if mode := b.Attrs().Mode; (mode != "" && mode != "reduced") || m < n {
		b.fail(fmt.Errorf("ops.qr: VJP: %w: only the reduced QR of a matrix with m ≥ n has a VJP (this is %d×%d, mode %q): %w", ErrNoGradient, m, n, mode, core.ErrInvalid))
		return nil
	}
	q, rr := b.Out(0), b.Out(1)
	if b.err != nil {
		return nil
	}
	gq, gr := b.cotOpt(0), b.cotOpt(1)
	var mm *tensor.Tensor
	if gr != nil {
		mm = b.mm(rr, b.mT(gr))
	}
	if gq != nil {
		t := b.mm(b.mT(gq), q)
		if mm == nil {
			mm = b.neg(t)
		} else {
			mm = b.sub(mm, t)
		}
	}
	if mm == nil {
		return []*tensor.Tensor{b.Zeros(a.Dtype(), sh)}
	}
	cl := b.add(b.Call("tril", Attrs{}, mm), b.mT(b.Call("tril", Attrs{K: -1}, mm)))
	lhs := b.mm(q, cl)
	if gq != nil {
		lhs = b.add(gq, lhs)
	}
	return []*tensor.Tensor{b.mm(lhs, b.mT(b.un("inv", rr)))}
}

// svdVJP (real; the reduced SVD, or a square matrix): with A = U·S·Vᵀ and
// F_ij = 1/(s_j² − s_i²) off the diagonal (Townsend 2016),
// gA = U·[(F∘(UᵀŪ − ŪᵀU))·S + diag(S̄) + S·(F∘(VᵀV̄ − V̄ᵀV))]·Vᵀ
// + (I − UUᵀ)·Ū·S⁻¹·Vᵀ + U·S⁻¹·V̄ᵀ·(I − VVᵀ). Repeated or zero singular
// values give Inf or NaN in the vectors' part.
func svdVJP(bl *GradBuilder) []*tensor.Tensor {
	a := bl.In(0)
	if bl.err != nil || !bl.realOnly(a) {
		return nil
	}
	sh := a.Shape()
	r := len(sh)
	m, n := sh[r-2], sh[r-1]
	full := bl.Attrs().FullMatrices == nil || *bl.Attrs().FullMatrices
	if full && m != n {
		bl.fail(fmt.Errorf("ops.svd: VJP: %w: only the reduced SVD (full_matrices false) of a non-square matrix has a VJP: %w", ErrNoGradient, core.ErrInvalid))
		return nil
	}
	u, s, vh := bl.Out(0), bl.Out(1), bl.Out(2)
	if bl.err != nil {
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
	eye := bl.diagMask(dt, k, k, 0)
	v := bl.mT(vh)
	s2 := bl.mul(s, s)
	e := bl.add(bl.sub(row(s2), col(s2)), eye)
	f := bl.mul(bl.div(bl.Const(dt, 1), e), bl.rsub(1, eye))
	var inner *tensor.Tensor
	addTo := func(t *tensor.Tensor) {
		if inner == nil {
			inner = t
		} else {
			inner = bl.add(inner, t)
		}
	}
	gu, gs, gvh := bl.cotOpt(0), bl.cotOpt(1), bl.cotOpt(2)
	var extra *tensor.Tensor
	sinv := bl.div(bl.Const(dt, 1), s)
	if gs != nil {
		addTo(bl.mul(row(gs), eye))
	}
	if gu != nil {
		ut := bl.mm(bl.mT(u), gu)
		j := bl.mul(f, bl.sub(ut, bl.mT(ut)))
		addTo(bl.mul(j, row(s)))
		if m > k {
			proj := bl.sub(gu, bl.mm(u, ut))
			extra = bl.mm(bl.mul(proj, row(sinv)), vh)
		}
	}
	if gvh != nil {
		gv := bl.mT(gvh)
		vt := bl.mm(vh, gv)
		kk := bl.mul(f, bl.sub(vt, bl.mT(vt)))
		addTo(bl.mul(col(s), kk))
		if n > k {
			proj := bl.sub(gvh, bl.mm(bl.mT(vt), vh)) // V̄ᵀ·(I − VVᵀ)
			t := bl.mm(bl.mul(u, row(sinv)), proj)
			if extra == nil {
				extra = t
			} else {
				extra = bl.add(extra, t)
			}
		}
	}
	if inner == nil && extra == nil {
		return []*tensor.Tensor{bl.Zeros(dt, sh)}
	}
	var ga *tensor.Tensor
	if inner != nil {
		ga = bl.mm(bl.mm(u, inner), bl.mT(v))
	}
	if extra != nil {
		if ga == nil {
			ga = extra
		} else {
			ga = bl.add(ga, extra)
		}
	}
	return []*tensor.Tensor{ga}
}
