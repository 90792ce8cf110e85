// Package linalg holds the linear algebra ops of the array API's linalg
// extension over stacks of matrices: solve, inv, det and slogdet (LU with
// partial pivoting), cholesky, qr (Householder), eigh and eigvalsh, svd,
// svdvals, pinv and matrix_rank (one-sided Jacobi), eig and eigvals
// (balancing, Hessenberg reduction and shifted QR), vector_norm and
// matrix_norm, and the products tensordot, vecdot, outer, cross,
// diagonal, trace and matrix_power.
//
// Each op sits beside its schema and its VJP (the *_grad.go files), and
// registers all three, under the array API's name, in the ops registry
// when the package is linked (package ops imports it), so Stream.Call,
// graphs, the C API and Python reach them by name. The Go functions here
// prepare an op over given tensors, as ops.Matmul does.
//
// Singular matrices are no error (Inf or NaN entries, as LAPACK gives);
// degenerate spectra make the eigenvector and singular-vector VJPs Inf or
// NaN, as JAX's and PyTorch's.
package linalg
