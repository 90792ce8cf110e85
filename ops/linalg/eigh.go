package linalg

import (
	"slices"

	"github.com/vkflow/vkflow/ops/internal/opcore"
	"github.com/vkflow/vkflow/tensor"
)

func init() {
	opcore.DefSchema("1", 1, nil, "eigvalsh")
	opcore.DefSchema("1", 2, nil, "eigh")
	opcore.Builtin("eigh", func(o opcore.Owner, in, out []*tensor.Tensor, at opcore.Attrs) (*opcore.Op, error) {
		if err := opcore.Inputs("eigh", in, 1); err != nil {
			return nil, err
		}
		if err := opcore.TooMany("eigh", out, 2); err != nil {
			return nil, err
		}
		return Eigh(o, in[0], opcore.OutAt(out, 0), opcore.OutAt(out, 1))
	})
	opcore.Builtin("eigvalsh", func(o opcore.Owner, in, out []*tensor.Tensor, at opcore.Attrs) (*opcore.Op, error) {
		if err := opcore.Inputs("eigvalsh", in, 1); err != nil {
			return nil, err
		}
		if err := opcore.TooMany("eigvalsh", out, 1); err != nil {
			return nil, err
		}
		return Eigvalsh(o, in[0], opcore.OutAt(out, 0))
	})
}

// Eigh computes the eigenvalues (ascending, [..., N]) and eigenvectors
// (as columns, [..., N, N]) of each symmetric (complex: Hermitian) matrix
// of x ([..., N, N]; "eigh", two outputs). Only the lower triangle is
// read, as NumPy's default (UPLO='L'); for complex x the diagonal's
// imaginary parts are ignored, as LAPACK's. Float32, float64, complex64
// and complex128; float16 computes in float32. The eigenvalues have the
// real dtype (float32 for complex64, float64 for complex128), the
// eigenvectors x's dtype (unitary for complex x).
//
// The method is one-sided Jacobi on A + σI, σ = ||A||_1 (see
// jacobi.go), every matrix of the stack in the same dispatches:
// eigenvectors orthonormal to about sqrt(N)·eps, eigenvalues within a
// few eps·||A||_1. NaN in a matrix gives NaN in its results.
func Eigh(o opcore.Owner, x, w, v *tensor.Tensor) (*opcore.Op, error) {
	op, err := opcore.NewOp(o, "eigh", x)
	if err != nil {
		return nil, err
	}
	return op.Done(eigh(op, x, true, w, v))
}

// Eigvalsh computes the eigenvalues of each symmetric matrix of x,
// ascending ("eigvalsh"); as Eigh without the vectors.
func Eigvalsh(o opcore.Owner, x, w *tensor.Tensor) (*opcore.Op, error) {
	op, err := opcore.NewOp(o, "eigvalsh", x)
	if err != nil {
		return nil, err
	}
	return op.Done(eigh(op, x, false, w, nil))
}

func eigh(op *opcore.Op, x *tensor.Tensor, vectors bool, w, v *tensor.Tensor) error {
	if err := checkMatrices(op, x, true); err != nil {
		return err
	}
	shape := x.Shape()
	r := len(shape)
	dt := x.Dtype()
	W, err := op.Output(w, dt.Real(), slices.Clone(shape[:r-1]))
	if err != nil {
		return err
	}
	var V *tensor.Tensor
	if vectors {
		if V, err = op.Output(v, dt, slices.Clone(shape)); err != nil {
			return err
		}
	}
	if err := op.NoAlias(); err != nil {
		return err
	}
	if W.Len() == 0 {
		return nil
	}
	wk, err := jacobi(op, x, vectors, true)
	if err != nil {
		return err
	}
	B, N := wk.B, wk.N
	if err := linRun(op, svdValuesGLSL(wk.acc, dt.Real(), true), []*tensor.Tensor{wk.s, wk.perm, wk.scale, wk.shift, W}, B*N,
		uint32(B), uint32(N)); err != nil {
		return err
	}
	if !vectors {
		return nil
	}
	return linPerm(op, dt, wk.V, wk.perm, V, true, B, N, N, N, N)
}
