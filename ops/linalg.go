// Deprecated forwards of the linear algebra ops, moved to package ops/linalg.

package ops

import (
	"github.com/vkflow/vkflow/ops/linalg"
	"github.com/vkflow/vkflow/tensor"
)

// Cholesky is linalg.Cholesky.
//
// Deprecated: use linalg.Cholesky (package github.com/vkflow/vkflow/ops/linalg).
func Cholesky(o Owner, x *tensor.Tensor, upper bool, out *tensor.Tensor) (*Op, error) {
	return linalg.Cholesky(o, x, upper, out)
}

// Cross is linalg.Cross.
//
// Deprecated: use linalg.Cross (package github.com/vkflow/vkflow/ops/linalg).
func Cross(o Owner, a *tensor.Tensor, b *tensor.Tensor, axis int, out *tensor.Tensor) (*Op, error) {
	return linalg.Cross(o, a, b, axis, out)
}

// Det is linalg.Det.
//
// Deprecated: use linalg.Det (package github.com/vkflow/vkflow/ops/linalg).
func Det(o Owner, x *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return linalg.Det(o, x, out)
}

// Diagonal is linalg.Diagonal.
//
// Deprecated: use linalg.Diagonal (package github.com/vkflow/vkflow/ops/linalg).
func Diagonal(o Owner, x *tensor.Tensor, offset int, out *tensor.Tensor) (*Op, error) {
	return linalg.Diagonal(o, x, offset, out)
}

// Eigh is linalg.Eigh.
//
// Deprecated: use linalg.Eigh (package github.com/vkflow/vkflow/ops/linalg).
func Eigh(o Owner, x *tensor.Tensor, w *tensor.Tensor, v *tensor.Tensor) (*Op, error) {
	return linalg.Eigh(o, x, w, v)
}

// Eigvalsh is linalg.Eigvalsh.
//
// Deprecated: use linalg.Eigvalsh (package github.com/vkflow/vkflow/ops/linalg).
func Eigvalsh(o Owner, x *tensor.Tensor, w *tensor.Tensor) (*Op, error) {
	return linalg.Eigvalsh(o, x, w)
}

// Inv is linalg.Inv.
//
// Deprecated: use linalg.Inv (package github.com/vkflow/vkflow/ops/linalg).
func Inv(o Owner, x *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return linalg.Inv(o, x, out)
}

// MatrixNorm is linalg.MatrixNorm.
//
// Deprecated: use linalg.MatrixNorm (package github.com/vkflow/vkflow/ops/linalg).
func MatrixNorm(o Owner, x *tensor.Tensor, ord string, keepDims bool, out *tensor.Tensor) (*Op, error) {
	return linalg.MatrixNorm(o, x, ord, keepDims, out)
}

// MatrixPower is linalg.MatrixPower.
//
// Deprecated: use linalg.MatrixPower (package github.com/vkflow/vkflow/ops/linalg).
func MatrixPower(o Owner, x *tensor.Tensor, n int, out *tensor.Tensor) (*Op, error) {
	return linalg.MatrixPower(o, x, n, out)
}

// MatrixRank is linalg.MatrixRank.
//
// Deprecated: use linalg.MatrixRank (package github.com/vkflow/vkflow/ops/linalg).
func MatrixRank(o Owner, x *tensor.Tensor, rtolT *tensor.Tensor, rtol *float64, out *tensor.Tensor) (*Op, error) {
	return linalg.MatrixRank(o, x, rtolT, rtol, out)
}

// Outer is linalg.Outer.
//
// Deprecated: use linalg.Outer (package github.com/vkflow/vkflow/ops/linalg).
func Outer(o Owner, a *tensor.Tensor, b *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return linalg.Outer(o, a, b, out)
}

// Pinv is linalg.Pinv.
//
// Deprecated: use linalg.Pinv (package github.com/vkflow/vkflow/ops/linalg).
func Pinv(o Owner, x *tensor.Tensor, rtolT *tensor.Tensor, rtol *float64, out *tensor.Tensor) (*Op, error) {
	return linalg.Pinv(o, x, rtolT, rtol, out)
}

// QR is linalg.QR.
//
// Deprecated: use linalg.QR (package github.com/vkflow/vkflow/ops/linalg).
func QR(o Owner, x *tensor.Tensor, mode string, qOut *tensor.Tensor, rOut *tensor.Tensor) (*Op, error) {
	return linalg.QR(o, x, mode, qOut, rOut)
}

// SVD is linalg.SVD.
//
// Deprecated: use linalg.SVD (package github.com/vkflow/vkflow/ops/linalg).
func SVD(o Owner, x *tensor.Tensor, full bool, u *tensor.Tensor, s *tensor.Tensor, vh *tensor.Tensor) (*Op, error) {
	return linalg.SVD(o, x, full, u, s, vh)
}

// SVDVals is linalg.SVDVals.
//
// Deprecated: use linalg.SVDVals (package github.com/vkflow/vkflow/ops/linalg).
func SVDVals(o Owner, x *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return linalg.SVDVals(o, x, out)
}

// Slogdet is linalg.Slogdet.
//
// Deprecated: use linalg.Slogdet (package github.com/vkflow/vkflow/ops/linalg).
func Slogdet(o Owner, x *tensor.Tensor, sign *tensor.Tensor, logabs *tensor.Tensor) (*Op, error) {
	return linalg.Slogdet(o, x, sign, logabs)
}

// Solve is linalg.Solve.
//
// Deprecated: use linalg.Solve (package github.com/vkflow/vkflow/ops/linalg).
func Solve(o Owner, a *tensor.Tensor, b *tensor.Tensor, out *tensor.Tensor) (*Op, error) {
	return linalg.Solve(o, a, b, out)
}

// Tensordot is linalg.Tensordot.
//
// Deprecated: use linalg.Tensordot (package github.com/vkflow/vkflow/ops/linalg).
func Tensordot(o Owner, a *tensor.Tensor, b *tensor.Tensor, axesA []int, axesB []int, out *tensor.Tensor) (*Op, error) {
	return linalg.Tensordot(o, a, b, axesA, axesB, out)
}

// Trace is linalg.Trace.
//
// Deprecated: use linalg.Trace (package github.com/vkflow/vkflow/ops/linalg).
func Trace(o Owner, x *tensor.Tensor, offset int, out *tensor.Tensor) (*Op, error) {
	return linalg.Trace(o, x, offset, out)
}

// Vecdot is linalg.Vecdot.
//
// Deprecated: use linalg.Vecdot (package github.com/vkflow/vkflow/ops/linalg).
func Vecdot(o Owner, a *tensor.Tensor, b *tensor.Tensor, axis int, out *tensor.Tensor) (*Op, error) {
	return linalg.Vecdot(o, a, b, axis, out)
}

// VectorNorm is linalg.VectorNorm.
//
// Deprecated: use linalg.VectorNorm (package github.com/vkflow/vkflow/ops/linalg).
func VectorNorm(o Owner, x *tensor.Tensor, axes []int, keepDims bool, ord float64, out *tensor.Tensor) (*Op, error) {
	return linalg.VectorNorm(o, x, axes, keepDims, ord, out)
}
