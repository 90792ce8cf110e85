package linalg

import (
	"slices"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/ops/internal/opcore"
	"github.com/vkflow/vkflow/tensor"
)

func init() {
	opcore.DefSchema("1", 1, nil, "eigvals")
	opcore.DefSchema("1", 2, nil, "eig")
	opcore.Builtin("eig", func(o opcore.Owner, in, out []*tensor.Tensor, at opcore.Attrs) (*opcore.Op, error) {
		if err := opcore.Inputs("eig", in, 1); err != nil {
			return nil, err
		}
		if err := opcore.TooMany("eig", out, 2); err != nil {
			return nil, err
		}
		return Eig(o, in[0], opcore.OutAt(out, 0), opcore.OutAt(out, 1))
	})
	opcore.Builtin("eigvals", func(o opcore.Owner, in, out []*tensor.Tensor, at opcore.Attrs) (*opcore.Op, error) {
		if err := opcore.Inputs("eigvals", in, 1); err != nil {
			return nil, err
		}
		if err := opcore.TooMany("eigvals", out, 1); err != nil {
			return nil, err
		}
		return Eigvals(o, in[0], opcore.OutAt(out, 0))
	})
}

// The general (non-symmetric) eigenproblem, as LAPACK's zgeev, every
// matrix of a stack in the same dispatches, in complex arithmetic of the
// compute precision (a real input is taken as complex):
//
//  1. A is scaled by 1/max|a_ij| (so no square overflows early) into H,
//     then balanced (zgebal's scaling, without its permutations): H =
//     D⁻¹ H D with D diagonal, powers of 2, chosen row by row so that each
//     row and column have about the same 1-norm; sweeps over the rows
//     until one changes nothing (at most eigBalanceSweeps), resumable
//     between rows as the QR iteration is (see 3).
//  2. Householder reflections reduce H to upper Hessenberg form,
//     H = Qᴴ A Q, accumulated into Z = Q for the vectors (the stepped
//     kernels of steps.go: a reflection's left update by columns, then
//     its right update by rows of H and of Z).
//  3. Shifted QR (zlahqr's: one Wilkinson shift per sweep, exceptional
//     shifts at the 10th and 20th sweep without a deflation, Ahues and
//     Tisseur's deflation test) drives H to upper triangular T = Zᴴ A Z,
//     one workgroup per matrix: its first invocation picks each Givens
//     rotation, the workgroup applies it to two rows and two columns of H
//     (the whole rows and columns when vectors are wanted, else the
//     active window) and two columns of Z. The state between rotations
//     (the window, the sweep's next rotation, the counts) lives in a
//     buffer, so a dispatch stops after eigBudget loop iterations and the
//     next one goes on; the op records enough dispatches for about six
//     sweeps per eigenvalue, and those after convergence return at once.
//  4. T's diagonal, scaled back, holds the eigenvalues. The eigenvectors
//     of T are found by back substitution (ztrevc's, with its perturbation
//     of near-zero pivots and a rescale against overflow), mapped back by
//     Z and D, normalized to unit 2-norm with the largest component real
//     (as zgeev's).
//
// A matrix that has not converged after 30·max(10, N) sweeps (zlahqr's
// limit) or after the recorded dispatches, or that holds a NaN or an
// infinity, gets NaN eigenvalues and eigenvectors.
const (
	eigWG = 64
	// eigMaxN is the largest matrix side: the back substitution of one
	// vector runs in one workgroup, in about N + N²/128 loop iterations.
	eigMaxN = 1024
)

// eigBudget is the most loop iterations an invocation of a balancing or
// QR dispatch runs (below lavapipe's 65535, with room for the last row
// or rotation).
var eigBudget = 20000

// eigBalanceSweeps bounds the balancing sweeps (LAPACK's converge in a
// few).
const eigBalanceSweeps = 20

// eigBalanceOn: balance (tests turn it off for a mutation check).
var eigBalanceOn = true

// eigMutate breaks the kernel for the tests' mutation check: Z's
// rotation gets the wrong sign.
var eigMutate bool

// Eig computes the eigenvalues ([..., N]) and right eigenvectors ([...,
// N, N], as columns) of each square matrix of x ("eig", two outputs):
// x·v_j = w_j·v_j. Float32, float64, complex64 and complex128 (float16
// computes in float32); the results are complex: complex64 for float32
// and complex64 input, complex128 for float64 and complex128, as the
// array API's linalg.eig. The eigenvalues are in no particular order (the
// order of the Schur form, as LAPACK's); each eigenvector has unit
// 2-norm and its largest component real.
//
// The method is balancing, Hessenberg reduction and complex shifted QR
// (see above), backward stable: ||A·V - V·diag(w)|| is a small multiple of
// eps·||A||·N. An eigenvalue's error is about its condition number times
// that; eigenvalues of a defective matrix (a Jordan block of size k) are
// accurate to about (eps·||A||)^(1/k), as LAPACK's. A real input's
// complex eigenvalues come out in pairs conjugate to rounding (not
// exactly, as from LAPACK's real routines), and its real eigenvalues may
// carry an imaginary part of order eps·||A||. No gradient. Matrices of
// side at most 1024.
func Eig(o opcore.Owner, x, w, v *tensor.Tensor) (*opcore.Op, error) {
	op, err := opcore.NewOp(o, "eig", x)
	if err != nil {
		return nil, err
	}
	return op.Done(eig(op, x, true, w, v))
}

// Eigvals computes the eigenvalues of each square matrix of x ("eigvals");
// as Eig without the vectors (the QR sweeps then touch only the active
// window).
func Eigvals(o opcore.Owner, x, w *tensor.Tensor) (*opcore.Op, error) {
	op, err := opcore.NewOp(o, "eigvals", x)
	if err != nil {
		return nil, err
	}
	return op.Done(eig(op, x, false, w, nil))
}

// eigWork is the scratch of an eig op.
type eigWork struct {
	acc, cdt tensor.Dtype // real and complex compute dtypes
	B, N     int
	vectors  bool
	H, Z     *tensor.Tensor // [B, N, N] complex, row-major
	tau      *tensor.Tensor // [B, N] the reflections' factors
	st       *tensor.Tensor // uint32 [B, 8]: the QR state
	bst      *tensor.Tensor // uint32 [B, 4]: the balancing state
	scale    *tensor.Tensor // [B] max |a_ij|
	d        *tensor.Tensor // [B, N] the balancing's D
}

func eig(op *opcore.Op, x *tensor.Tensor, vectors bool, w, v *tensor.Tensor) error {
	if err := checkMatrices(op, x, true); err != nil {
		return err
	}
	shape := x.Shape()
	r := len(shape)
	acc := opcore.ComputeDtype(x.Dtype().Real())
	wk := &eigWork{acc: acc, cdt: complexOfReal(acc), N: shape[r-1], vectors: vectors}
	W, err := op.Output(w, wk.cdt, slices.Clone(shape[:r-1]))
	if err != nil {
		return err
	}
	var V *tensor.Tensor
	if vectors {
		if V, err = op.Output(v, wk.cdt, slices.Clone(shape)); err != nil {
			return err
		}
	}
	if err := op.NoAlias(); err != nil {
		return err
	}
	if W.Len() == 0 {
		return nil
	}
	if wk.N > eigMaxN {
		return core.Unsupported("ops.%s: matrices of side %d: at most %d", op.Name(), wk.N, eigMaxN)
	}
	wk.B = opcore.Numel(shape[:r-2])
	if err := eigTemps(op, wk); err != nil {
		return err
	}
	if err := eigLoad(op, x, wk); err != nil {
		return err
	}
	if err := eigHessenberg(op, wk); err != nil {
		return err
	}
	if err := eigQR(op, wk); err != nil {
		return err
	}
	B, N := wk.B, wk.N
	if err := linRun(op, eigValuesGLSL(wk), []*tensor.Tensor{wk.H, wk.st, wk.scale, W}, B*N, uint32(B*N), uint32(N)); err != nil {
		return err
	}
	if !vectors {
		return nil
	}
	return eigVectors(op, wk, V)
}

func eigTemps(op *opcore.Op, wk *eigWork) error {
	B, N := wk.B, wk.N
	var err error
	t := func(dt tensor.Dtype, n int) *tensor.Tensor {
		if err != nil {
			return nil
		}
		var tt *tensor.Tensor
		tt, err = op.Temp(dt, []int{n})
		return tt
	}
	wk.H = t(wk.cdt, B*N*N)
	if wk.vectors {
		wk.Z = t(wk.cdt, B*N*N)
	}
	wk.tau = t(wk.cdt, B*N)
	wk.st = t(tensor.Uint32, B*8)
	wk.bst = t(tensor.Uint32, B*4)
	wk.scale = t(wk.acc, B)
	wk.d = t(wk.acc, B*N)
	return err
}

// eigLoad writes H = A / max|a_ij| (and Z = I) and the scale, then
// balances H.
func eigLoad(op *opcore.Op, x *tensor.Tensor, wk *eigWork) error {
	B, N, acc := wk.B, wk.N, wk.acc
	mx, err := op.Temp(acc, []int{B})
	if err != nil {
		return err
	}
	ts := []*tensor.Tensor{x, mx}
	var mn *tensor.Tensor
	if !x.Dtype().IsComplex() {
		if mn, err = op.Temp(acc, []int{B}); err != nil {
			return err
		}
		ts = append(ts, mn)
	}
	if err := matrixMaxAbs(op, x, B, acc, mx, mn); err != nil {
		return err
	}
	ts = append(ts, wk.scale, wk.H, wk.d, wk.bst)
	if wk.vectors {
		ts = append(ts, wk.Z)
	}
	if err := linRun(op, eigLoadGLSL(x.Dtype(), wk), ts, B*N*N, uint32(B*N*N), uint32(N)); err != nil {
		return err
	}
	return eigBalance(op, wk)
}

// eigBalance adds the balancing dispatches: enough for eigBalanceSweeps
// sweeps.
func eigBalance(op *opcore.Op, wk *eigWork) error {
	B, N := wk.B, wk.N
	if N < 2 || !eigBalanceOn {
		return nil
	}
	groups, err := op.Grid(uint64(B), 1)
	if err != nil {
		return err
	}
	u := 3*linCeil(N, eigWG) + 2
	k := &opcore.Repeated{Src: eigBalanceGLSL(wk), Ts: []*tensor.Tensor{wk.H, wk.d, wk.bst}, Groups: groups}
	for range linCeil(eigBalanceSweeps*N*u, eigBudget) + 1 {
		if err := op.Again(k, uint32(B), uint32(N), uint32(eigBudget), uint32(eigBalanceSweeps), uint32(u)); err != nil {
			return err
		}
	}
	return nil
}

// eigHessenberg reduces H to upper Hessenberg form (accumulating Z),
// zeroes what lies below the subdiagonal and sets the QR state. Step 2c
// makes the reflection of column c and applies it from the left (a
// column of H per element); step 2c+1 applies it from the right (a row
// of H, then of Z, per element).
func eigHessenberg(op *opcore.Op, wk *eigWork) error {
	B, N := wk.B, wk.N
	ts := []*tensor.Tensor{wk.H, wk.tau}
	if wk.vectors {
		ts = append(ts, wk.Z)
	}
	if N > 2 {
		rows := N
		if wk.vectors {
			rows = 2 * N
		}
		sk := eigHessKernel(wk)
		sk.steps = 2 * (N - 2)
		sk.hostK = func(s int) int { return s }
		sk.hostCount = func(s int) int {
			if s%2 == 1 {
				return rows
			}
			return N - s/2 - 1
		}
		sk.panelCost = func(s int) int {
			if s%2 == 1 {
				return 0
			}
			return 2*linCeil(N, linWG) + 2
		}
		sk.updateCost = func(s int) int { return 2*(N-s/2-1) + 1 }
		if err := runSteps(op, sk, B, ts, uint32(N)); err != nil {
			return err
		}
	}
	return linRun(op, eigCleanGLSL(wk), []*tensor.Tensor{wk.H, wk.st, wk.scale}, B*N*N, uint32(B*N*N), uint32(N))
}

// eigQR adds the QR dispatches: enough for about six sweeps of the
// active window per eigenvalue.
func eigQR(op *opcore.Op, wk *eigWork) error {
	B, N := wk.B, wk.N
	if N < 2 {
		return nil
	}
	ts := []*tensor.Tensor{wk.H, wk.st}
	if wk.vectors {
		ts = append(ts, wk.Z)
	}
	groups, err := op.Grid(uint64(B), 1)
	if err != nil {
		return err
	}
	u := eigRotUnits(N)
	work := 0
	for n := 2; n <= N; n++ {
		work += 6 * n * (u + 1)
	}
	budget := eigBudget
	if budget+N+u+8 > jacobiHardCap {
		return core.Unsupported("ops.%s: matrices of side %d: one QR step passes the kernel's loop bound", op.Name(), N)
	}
	k := &opcore.Repeated{Src: eigQRGLSL(wk), Ts: ts, Groups: groups}
	for range linCeil(work, budget) + 2 {
		if err := op.Again(k, uint32(B), uint32(N), uint32(budget), uint32(30*max(10, N)), uint32(u)); err != nil {
			return err
		}
	}
	return nil
}

// eigRotUnits bounds the loop iterations of one rotation of a QR sweep
// (its two row, two column and two Z column updates and the choice).
func eigRotUnits(N int) int { return 3*linCeil(N, eigWG) + 4 }

// eigVectors: T's eigenvectors into Y (a workgroup each), V = D·Z·Y,
// then each column normalized.
func eigVectors(op *opcore.Op, wk *eigWork, V *tensor.Tensor) error {
	B, N := wk.B, wk.N
	y, err := op.Temp(wk.cdt, []int{B * N * N})
	if err != nil {
		return err
	}
	if err := linGroups(op, eigTriVecGLSL(wk), []*tensor.Tensor{wk.H, y}, B*N, uint32(B*N), uint32(N)); err != nil {
		return err
	}
	if err := linRun(op, eigBackGLSL(wk), []*tensor.Tensor{wk.Z, y, wk.d, V}, B*N*N, uint32(B*N*N), uint32(N)); err != nil {
		return err
	}
	return linGroups(op, eigNormGLSL(wk), []*tensor.Tensor{V, wk.st}, B*N, uint32(B*N), uint32(N))
}
