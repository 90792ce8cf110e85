package linalg

import (
	"math"
	"slices"

	"github.com/vkflow/vkflow/ops/internal/opcore"
	"github.com/vkflow/vkflow/tensor"
)

// The one-sided Jacobi (Hestenes) singular value decomposition that svd,
// svdvals, pinv, matrix_rank, the spectral matrix norms, eigh and
// eigvalsh share.
//
// Each matrix A (M×N with M >= N: a wide input is transposed, complex:
// conjugate transposed, as it is loaded) is scaled by 1/max|a_ij| (so squares neither overflow nor
// underflow early) and copied, column by column, into W. Jacobi rotations
// of pairs of W's columns, accumulated in V (V = I at first), make W's
// columns orthogonal: then A V = W, so A = U Σ Vᵀ with σ_j = ||w_j|| and
// u_j = w_j / σ_j. A rotation of columns p, q zeroes their dot product γ
// (with α = ||w_p||², β = ||w_q||²): ζ = (β - α) / 2γ, t = sign(ζ) / (|ζ| +
// sqrt(1 + ζ²)), c = 1 / sqrt(1 + t²), s = c t; it is applied when |γ| >
// tol sqrt(αβ), tol = sqrt(M) eps.
//
// Complex matrices (W and V of vec2/dvec2) rotate with the phase of γ =
// w_pᴴ w_q as spectral_complex_glsl.go describes; α, β, the norms
// and the scale stay real.
//
// A sweep rotates every pair once in the parallel (round-robin) ordering:
// Np - 1 steps (Np = N rounded up to even; a padding column is skipped),
// each of Np/2 disjoint pairs rotated at once. A workgroup works on one
// matrix: R lanes per pair (they split the rows and sum the three dot
// products in shared memory), P pairs per workgroup. When one workgroup
// holds all of a matrix's pairs it runs several steps per dispatch, with
// a barrier between them; otherwise (N > 512) a step is one dispatch of
// several workgroups per matrix. Every dispatch's loops are bounded by
// jacobiBudget iterations per invocation (lavapipe ends an invocation's
// loops after 65535 iterations in all).
//
// Convergence is checked on the GPU: a lane that rotates sets its
// matrix's flag; a dispatch after each sweep marks the matrices whose
// flag stayed clear as converged (and clears the flag), and every later
// dispatch of a converged matrix returns at once. The op records a fixed
// number of sweeps (jacobiSweeps); those after convergence cost a check.
//
// eigh uses the same iteration on B = A + σI with σ = ||A||_1 (which is at
// least A's spectral radius): B is symmetric positive semidefinite, so its
// singular values are its eigenvalues λ_j + σ and V holds eigenvectors of
// A. Eigenvalues come out with an absolute error of about eps ||A||_1, as
// a backward-stable symmetric eigensolver's.

// jacobiBudget is the most loop iterations one invocation of a Jacobi
// dispatch runs (see above).
const jacobiBudget = 16384

// jacobiHardCap is the most loop iterations any one invocation may run:
// below lavapipe's 65535.
const jacobiHardCap = 60000

// jacobiLocal is the largest workgroup of the Jacobi kernels.
const jacobiLocal = 256

// jacobiSweeps is how many sweeps the op records: enough for convergence
// to the tolerance in every case we measured (Jacobi converges
// quadratically; random 256×256 matrices take 8 to 10 in float64).
func jacobiSweeps(acc tensor.Dtype) int {
	if acc == tensor.Float64 {
		return 20
	}
	return 16
}

// epsOf returns the machine epsilon of a float dtype.
func epsOf(dt tensor.Dtype) float64 {
	switch dt {
	case tensor.Float16:
		return 0x1p-10
	case tensor.Float32:
		return 0x1p-23
	}
	return 0x1p-52
}

// svdWork is a decomposition in progress: the scratch tensors the later
// kernels read.
type svdWork struct {
	// dt is the input's dtype, acc the real compute dtype, el W's and
	// V's elements: real, or complex of acc.
	dt, acc tensor.Dtype
	el      linEl
	batch   []int // the stack's shape
	B       int   // matrices
	M0, N0  int   // the input's matrix shape
	M, N    int   // the work matrix's: M >= N
	trans   bool  // work = inputᵀ (N0 > M0)
	W       *tensor.Tensor
	V       *tensor.Tensor // nil without vectors
	scale   *tensor.Tensor // [B] max |a_ij|: A = scale * (what W started as)
	shift   *tensor.Tensor // [B] σ (eigh), or nil
	s       *tensor.Tensor // [B, N] column norms of W, in scaled units
	perm    *tensor.Tensor // uint32 [B, N]: perm[b][r] is the column of rank r
}

// jacobiHooks change the Jacobi kernel's plan, for tests: pairsPerGroup
// caps the pairs per workgroup (so that small matrices take the step per
// dispatch path of N > 512), mutate breaks the rotation (a wrong sign).
var jacobiHooks struct {
	pairsPerGroup int
	mutate        bool
}

// jacobiPlan is how the Jacobi kernel covers a sweep.
type jacobiPlan struct {
	R, P, L int // lanes per pair, pairs per workgroup, workgroup size
	G       int // workgroups per matrix
	S       int // steps per dispatch
	Np      int // columns rounded up to even
}

// planJacobi picks the Jacobi kernel's shape for M×N work matrices, or
// fails for matrices whose one step would pass the loop budget.
func planJacobi(op *opcore.Op, M, N int, vectors bool) (jacobiPlan, error) {
	Np := N + N%2
	pairs := Np / 2
	R := 1
	for R < 64 && R*8 < M {
		R *= 2
	}
	pl := jacobiPlan{Np: Np}
	switch {
	case pairs*R <= jacobiLocal:
		pl.R, pl.P = R, pairs
	case pairs <= jacobiLocal:
		for pairs*R > jacobiLocal {
			R /= 2
		}
		pl.R, pl.P = R, pairs
	default:
		pl.R, pl.P = R, jacobiLocal/R
	}
	if jacobiHooks.pairsPerGroup > 0 && pl.P > jacobiHooks.pairsPerGroup {
		pl.P = jacobiHooks.pairsPerGroup
	}
	pl.L = pl.R * pl.P
	pl.G = (pairs + pl.P - 1) / pl.P
	rows := (M + pl.R - 1) / pl.R
	step := 2*rows + 8
	if vectors {
		step += (N + pl.R - 1) / pl.R
	}
	if step > jacobiHardCap {
		return pl, op.Errorf("%d×%d matrices: a column of %d rows is more than one Jacobi step can cover", M, N, M)
	}
	pl.S = 1
	if pl.G == 1 {
		pl.S = max(1, jacobiBudget/step)
	}
	return pl, nil
}

// jacobi prepares the decomposition of x's matrices (x: [..., M0, N0],
// float16, float32, float64, complex64 or complex128): scaling, the sweeps, the column norms and
// their order (descending, or ascending for eigh). vectors: accumulate V.
// eig: x is symmetric and the work is eigh's (see above).
func jacobi(op *opcore.Op, x *tensor.Tensor, vectors, eig bool) (*svdWork, error) {
	shape := x.Shape()
	r := len(shape)
	dt := x.Dtype()
	acc := opcore.ComputeDtype(dt.Real())
	el := linEl{acc: acc, cx: dt.IsComplex()}
	w := &svdWork{dt: dt, acc: acc, el: el, batch: shape[:r-2], M0: shape[r-2], N0: shape[r-1]}
	w.B = opcore.Numel(w.batch)
	w.M, w.N = w.M0, w.N0
	if w.N0 > w.M0 {
		w.M, w.N, w.trans = w.N0, w.M0, true
	}
	if w.N >= 1<<16 {
		return nil, op.Errorf("matrices of shape %d×%d: both sides past 65535 are not supported", w.M0, w.N0)
	}
	if w.B == 0 || w.N == 0 {
		return w, nil
	}
	pl, err := planJacobi(op, w.M, w.N, vectors)
	if err != nil {
		return nil, err
	}
	B, M, N := w.B, w.M, w.N
	t := func(dt tensor.Dtype, n int) *tensor.Tensor {
		if err != nil {
			return nil
		}
		var tt *tensor.Tensor
		tt, err = op.Temp(dt, []int{n})
		return tt
	}
	mx, mn := t(acc, B), t(acc, B)
	w.scale = t(acc, B)
	flags := t(tensor.Uint32, 2*B)
	if err == nil {
		w.W, err = op.Temp(el.dt(), append(slices.Clone(w.batch), N, M))
	}
	if err == nil && vectors {
		w.V, err = op.Temp(el.dt(), append(slices.Clone(w.batch), N, N))
	}
	w.s = t(acc, B*N)
	w.perm = t(tensor.Uint32, B*N)
	if err != nil {
		return nil, err
	}
	if err := jacobiLoad(op, x, w, eig, mx, mn); err != nil {
		return nil, err
	}
	if eig {
		if err := jacobiShift(op, w); err != nil {
			return nil, err
		}
	}
	init := []*tensor.Tensor{flags}
	if vectors {
		init = append(init, w.V)
	}
	if err := linRun(op, jacobiInitGLSL(el, vectors), init, max(2*B, B*N*N), uint32(B), uint32(N)); err != nil {
		return nil, err
	}
	if N > 1 {
		if err := jacobiSweepsOf(op, w, pl, flags, vectors); err != nil {
			return nil, err
		}
	}
	if err := linGroups(op, jacobiNormsGLSL(el), []*tensor.Tensor{w.W, w.s}, B*N, uint32(B*N), uint32(M)); err != nil {
		return nil, err
	}
	return w, linRun(op, jacobiSortGLSL(acc, eig), []*tensor.Tensor{w.s, w.perm}, B*N, uint32(B), uint32(N))
}

// jacobiLoad scales x's matrices into W (see jacobiLoadGLSL) and sets
// w.scale: max |a| = max(max a, -min a) for real x (mx, mn: scratch),
// the largest |a| (hypot-style) for complex x.
func jacobiLoad(op *opcore.Op, x *tensor.Tensor, w *svdWork, eig bool, mx, mn *tensor.Tensor) error {
	B, M, N, dt, acc := w.B, w.M, w.N, w.dt, w.acc
	if err := matrixMaxAbs(op, x, B, acc, mx, mn); err != nil {
		return err
	}
	if w.el.cx {
		return linRun(op, jacobiLoadCxGLSL(dt, w.el, w.trans, eig), []*tensor.Tensor{x, mx, w.scale, w.W}, B*N*M,
			uint32(B), uint32(M), uint32(N))
	}
	return linRun(op, jacobiLoadGLSL(dt, acc, w.trans, eig), []*tensor.Tensor{x, mx, mn, w.scale, w.W}, B*N*M,
		uint32(B), uint32(M), uint32(N))
}

// matrixMaxAbs adds the reductions that give max|a_ij| of each of the B
// matrices of x, in acc: for complex x, mx is the largest |a| (hypot-
// style) and mn is not used; for real x, mx is the largest and mn the
// smallest entry, and the kernel that reads them takes max(mx, -mn).
func matrixMaxAbs(op *opcore.Op, x *tensor.Tensor, B int, acc tensor.Dtype, mx, mn *tensor.Tensor) error {
	lay := opcore.RedLayout{M: B, N: opcore.Numel(x.Shape()) / B}
	if x.Dtype().IsComplex() {
		abs, err := op.Temp(acc, []int{lay.M * lay.N})
		if err != nil {
			return err
		}
		if err := normGather(op, x, lay, false, abs); err != nil {
			return err
		}
		return op.ReducePasses(opcore.PassSpec{Kind: opcore.KindMax, In: acc, Acc: acc, Out: acc}, abs, nil, lay, mx)
	}
	if err := op.ReducePasses(opcore.PassSpec{Kind: opcore.KindMax, In: x.Dtype(), Acc: acc, Out: acc}, x, nil, lay, mx); err != nil {
		return err
	}
	return op.ReducePasses(opcore.PassSpec{Kind: opcore.KindMin, In: x.Dtype(), Acc: acc, Out: acc}, x, nil, lay, mn)
}

// jacobiShift adds σ = ||A||_1 (of the scaled, symmetric A) to W's
// diagonal: the sums of |w| down each column, then their maximum.
func jacobiShift(op *opcore.Op, w *svdWork) error {
	B, N := w.B, w.N
	abs, err := op.Temp(w.acc, []int{B * N * N})
	if err != nil {
		return err
	}
	cols, err := op.Temp(w.acc, []int{B * N})
	if err != nil {
		return err
	}
	w.shift, err = op.Temp(w.acc, []int{B})
	if err != nil {
		return err
	}
	if err := linRun(op, linAbsGLSL(w.el), []*tensor.Tensor{w.W, abs}, B*N*N, uint32(B*N*N)); err != nil {
		return err
	}
	s := opcore.PassSpec{Kind: opcore.KindSum, In: w.acc, Acc: w.acc, Out: w.acc}
	if err := op.ReducePasses(s, abs, nil, opcore.RedLayout{M: B * N, N: N}, cols); err != nil {
		return err
	}
	s.Kind = opcore.KindMax
	if err := op.ReducePasses(s, cols, nil, opcore.RedLayout{M: B, N: N}, w.shift); err != nil {
		return err
	}
	return linRun(op, jacobiAddDiagGLSL(w.el), []*tensor.Tensor{w.W, w.shift}, B*N, uint32(B), uint32(N))
}

// jacobiSweepsOf adds the sweeps: per sweep, the steps' dispatches and
// the one that updates the convergence flags.
func jacobiSweepsOf(op *opcore.Op, w *svdWork, pl jacobiPlan, flags *tensor.Tensor, vectors bool) error {
	B, M, N := w.B, w.M, w.N
	tol := math.Sqrt(float64(M)) * epsOf(w.acc)
	ts := []*tensor.Tensor{w.W, flags}
	if vectors {
		ts = append(ts, w.V)
	}
	groups, err := op.Grid(uint64(B*pl.G), 1)
	if err != nil {
		return err
	}
	cgroups, err := op.Grid(uint64(B), opcore.LocalSize)
	if err != nil {
		return err
	}
	stepK := &opcore.Repeated{Src: jacobiStepGLSL(w.el, pl, tol, vectors), Ts: ts, Groups: groups}
	convK := &opcore.Repeated{Src: jacobiConvGLSL(), Ts: []*tensor.Tensor{flags}, Groups: cgroups}
	steps := pl.Np - 1
	for range jacobiSweeps(w.acc) {
		for s0 := 0; s0 < steps; s0 += pl.S {
			s1 := min(steps, s0+pl.S)
			if err := op.Again(stepK, uint32(B), uint32(M), uint32(N), uint32(pl.Np), uint32(pl.G), uint32(s0), uint32(s1)); err != nil {
				return err
			}
		}
		if err := op.Again(convK, uint32(B)); err != nil {
			return err
		}
	}
	return nil
}
