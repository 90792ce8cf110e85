package linalg

import (
	"slices"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/ops/internal/opcore"
	"github.com/vkflow/vkflow/tensor"
)

func init() {
	opcore.DefSchema("1", 3, []string{"full_matrices"}, "svd")
	opcore.DefSchema("1", 1, nil, "svdvals")
	opcore.Builtin("svd", func(o opcore.Owner, in, out []*tensor.Tensor, at opcore.Attrs) (*opcore.Op, error) {
		if err := opcore.Inputs("svd", in, 1); err != nil {
			return nil, err
		}
		if err := opcore.TooMany("svd", out, 3); err != nil {
			return nil, err
		}
		full := at.FullMatrices == nil || *at.FullMatrices
		return SVD(o, in[0], full, opcore.OutAt(out, 0), opcore.OutAt(out, 1), opcore.OutAt(out, 2))
	})
	opcore.Builtin("svdvals", func(o opcore.Owner, in, out []*tensor.Tensor, at opcore.Attrs) (*opcore.Op, error) {
		if err := opcore.Inputs("svdvals", in, 1); err != nil {
			return nil, err
		}
		if err := opcore.TooMany("svdvals", out, 1); err != nil {
			return nil, err
		}
		return SVDVals(o, in[0], opcore.OutAt(out, 0))
	})
}

// checkMatrices checks the input of a spectral linalg op: a stack of
// matrices ([..., M, N]) of a floating-point or complex dtype the device
// computes in.
func checkMatrices(op *opcore.Op, x *tensor.Tensor, square bool) error {
	dt := x.Dtype()
	if !opcore.IsFloat(dt) && !dt.IsComplex() {
		return op.Unsupported(dt, "float16 (computed in float32), float32, float64, complex64, complex128")
	}
	if err := op.RequireDtypes(dt, opcore.ComputeDtype(dt.Real())); err != nil {
		return err
	}
	shape := x.Shape()
	if len(shape) < 2 {
		return op.Errorf("input of shape %v: want a stack of matrices (at least 2 dimensions)", shape)
	}
	if r := len(shape); square && shape[r-1] != shape[r-2] {
		return op.Errorf("input of shape %v: want square matrices", shape)
	}
	return nil
}

// SVD computes the singular value decomposition x = U diag(S) Vh of each
// matrix of x ([..., M, N]; "svd", Attrs.FullMatrices, default true):
// U [..., M, M] and Vh [..., N, N] when full, else [..., M, K] and
// [..., K, N] (K = min(M, N)); S [..., K] descending. Float32, float64,
// complex64 and complex128; float16 computes in float32. S has the real
// dtype (float32 for complex64); U and Vh have x's. U's and Vh's rows
// and columns are orthonormal (unitary for complex x); where singular values are zero (and for the columns a
// full U adds), U's columns complete an orthonormal basis (Gram-Schmidt,
// twice, of pseudo-random vectors).
//
// One-sided Jacobi (Hestenes), every matrix of the stack in the same
// dispatches (see jacobi.go); a wide matrix is decomposed as its
// transpose (complex: its conjugate transpose). Accuracy: singular values within a few eps·S[0] (tested
// against a CPU reference and NumPy's LAPACK), vectors orthogonal to
// about sqrt(max(M, N))·eps. NaN in a matrix gives NaN in its results.
// Completing U loops over M·(U's columns) per invocation, so svd
// (but not svdvals) refuses matrices with M·M (full) or M·N past about
// 3.8M elements.
func SVD(o opcore.Owner, x *tensor.Tensor, full bool, u, s, vh *tensor.Tensor) (*opcore.Op, error) {
	op, err := opcore.NewOp(o, "svd", x)
	if err != nil {
		return nil, err
	}
	return op.Done(svd(op, x, full, u, s, vh))
}

func svd(op *opcore.Op, x *tensor.Tensor, full bool, u, s, vh *tensor.Tensor) error {
	if err := checkMatrices(op, x, false); err != nil {
		return err
	}
	shape := x.Shape()
	r := len(shape)
	batch, M0, N0 := shape[:r-2], shape[r-2], shape[r-1]
	K := min(M0, N0)
	uc, vr := K, K
	if full {
		uc, vr = M0, N0
	}
	dt := x.Dtype()
	U, err := op.Output(u, dt, append(slices.Clone(batch), M0, uc))
	if err != nil {
		return err
	}
	S, err := op.Output(s, dt.Real(), append(slices.Clone(batch), K))
	if err != nil {
		return err
	}
	Vh, err := op.Output(vh, dt, append(slices.Clone(batch), vr, N0))
	if err != nil {
		return err
	}
	if err := op.NoAlias(); err != nil {
		return err
	}
	B := opcore.Numel(batch)
	if B == 0 {
		return nil
	}
	if K == 0 {
		// U and Vh are identities (or empty).
		for _, t := range []*tensor.Tensor{U, Vh} {
			n := t.Shape()[r-1]
			if err := linRun(op, linEyeGLSL(dt), []*tensor.Tensor{t}, t.Len(), uint32(t.Len()), uint32(n)); err != nil {
				return err
			}
		}
		return nil
	}
	w, err := jacobi(op, x, true, false)
	if err != nil {
		return err
	}
	M, N := w.M, w.N
	Mc := N
	if full {
		Mc = M
	}
	if err := svdValues(op, w, S); err != nil {
		return err
	}
	uw, err := svdU(op, w, Mc)
	if err != nil {
		return err
	}
	if !w.trans {
		if err := linPerm(op, dt, uw, nil, U, true, B, M, Mc, Mc, N); err != nil {
			return err
		}
		return linPerm(op, dt, w.V, w.perm, Vh, false, B, N, N, N, N)
	}
	// The work matrix is x^H = U' S V'^H: x = V' S U'^H.
	if err := linPerm(op, dt, w.V, w.perm, U, true, B, N, N, N, N); err != nil {
		return err
	}
	return linPerm(op, dt, uw, nil, Vh, false, B, M, Mc, Mc, N)
}

// svdValues writes the singular values, descending, into S.
func svdValues(op *opcore.Op, w *svdWork, S *tensor.Tensor) error {
	return linRun(op, svdValuesGLSL(w.acc, w.dt.Real(), false), []*tensor.Tensor{w.s, w.perm, w.scale, S}, w.B*w.N,
		uint32(w.B), uint32(w.N))
}

// svdU builds the work matrix's U, Mc columns of M (columns one after
// another, in rank order): w_j / σ_j, then Gram-Schmidt completion of the
// columns of zero σ and those past N.
func svdU(op *opcore.Op, w *svdWork, Mc int) (*tensor.Tensor, error) {
	B, M, N := w.B, w.M, w.N
	lc := 64
	if M > 128 {
		lc = 256
	}
	rows, cols := (M+lc-1)/lc, (Mc+lc-1)/lc
	cost := 3*rows + 2*(cols*M+rows*Mc) + 16
	if cost > jacobiHardCap {
		return nil, core.Unsupported("ops.%s: %d×%d matrices: completing U (%d×%d) is past what one dispatch covers", op.Name(), w.M0, w.N0, M, Mc)
	}
	uw, err := op.Temp(w.el.dt(), []int{B * Mc * M})
	if err != nil {
		return nil, err
	}
	need, err := op.Temp(tensor.Uint32, []int{B * Mc})
	if err != nil {
		return nil, err
	}
	coef, err := op.Temp(w.el.dt(), []int{B * Mc})
	if err != nil {
		return nil, err
	}
	thresh := 1e-15
	if w.acc == tensor.Float64 {
		thresh = 1e-140
	}
	if err := linRun(op, svdUGLSL(w.el, thresh), []*tensor.Tensor{w.W, w.s, w.perm, uw, need}, B*Mc*M,
		uint32(B), uint32(M), uint32(N), uint32(Mc)); err != nil {
		return nil, err
	}
	per := max(1, jacobiBudget/cost)
	groups, err := op.Grid(uint64(B), 1)
	if err != nil {
		return nil, err
	}
	k := &opcore.Repeated{Src: svdCompleteGLSL(w.el, lc), Ts: []*tensor.Tensor{uw, need, coef}, Groups: groups}
	for c0 := 0; c0 < Mc; c0 += per {
		if err := op.Again(k, uint32(B), uint32(M), uint32(Mc), uint32(c0), uint32(min(Mc, c0+per))); err != nil {
			return nil, err
		}
	}
	return uw, nil
}

// linPerm writes out[b] from the k vectors of n elements of src[b] (each
// matrix of cnt vectors), the r-th being vector perm[b*N + r] (or r
// without perm): as out's columns (transposed: out[b][i][r]) or rows
// (out[b][r][i]; conjugated for complex dtypes: the rows of a matrix's
// conjugate transpose).
func linPerm(op *opcore.Op, dt tensor.Dtype, src, perm, out *tensor.Tensor, transposed bool, B, n, k, cnt, N int) error {
	ts := []*tensor.Tensor{src}
	if perm != nil {
		ts = append(ts, perm)
	}
	ts = append(ts, out)
	return linRun(op, linPermGLSL(src.Dtype(), dt, transposed, perm != nil, dt.IsComplex() && !transposed), ts, B*k*n,
		uint32(B), uint32(n), uint32(k), uint32(cnt), uint32(N))
}

// SVDVals computes the singular values of each matrix of x, descending
// ("svdvals"): [..., K] for x [..., M, N], K = min(M, N), of x's real
// dtype. As SVD without the vectors (whose rotations it skips).
func SVDVals(o opcore.Owner, x *tensor.Tensor, out *tensor.Tensor) (*opcore.Op, error) {
	op, err := opcore.NewOp(o, "svdvals", x)
	if err != nil {
		return nil, err
	}
	return op.Done(svdvals(op, x, out))
}

func svdvals(op *opcore.Op, x *tensor.Tensor, out *tensor.Tensor) error {
	if err := checkMatrices(op, x, false); err != nil {
		return err
	}
	shape := x.Shape()
	r := len(shape)
	S, err := op.Output(out, x.Dtype().Real(), append(slices.Clone(shape[:r-2]), min(shape[r-2], shape[r-1])))
	if err != nil {
		return err
	}
	if err := op.NoAlias(); err != nil {
		return err
	}
	if S.Len() == 0 {
		return nil
	}
	w, err := jacobi(op, x, false, false)
	if err != nil {
		return err
	}
	return svdValues(op, w, S)
}
