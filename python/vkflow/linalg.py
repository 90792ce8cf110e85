"""The array API standard's ``linalg`` extension (``vkflow.array_api.linalg``).

Every function runs on the device, from ops of the Go op library (named in
each docstring), batched over leading dimensions: a stack of matrices is
one op, not a loop on the host.

* ``cholesky solve inv det slogdet qr matrix_power``: float32, float64,
  complex64 and complex128 (float16 and integer inputs are refused: cast
  to float32 first). LU with partial pivoting (solve, inv, det, slogdet),
  right-looking Cholesky (complex: Hermitian, x = L @ L.mT.conj()),
  Householder QR (complex: Q unitary, R's diagonal real, as LAPACK's).
* ``svd svdvals eigh eigvalsh pinv matrix_rank matrix_norm vector_norm``
  (vkflow._linalg_spectral): one-sided Jacobi on the GPU, float32 and
  float64.
* ``eig eigvals`` (2025.12; vkflow._linalg_spectral): general matrices,
  Hessenberg reduction and shifted QR on the GPU, complex results.
* ``tensordot vecdot outer cross trace diagonal matmul matrix_transpose``:
  every numeric dtype, complex included (``vecdot`` conjugates x1); two
  inputs of different dtypes promote by the standard's table first.

Where NumPy raises LinAlgError the device does not stop: ``cholesky`` of a
matrix that is not positive definite gives NaN throughout that matrix (the
others in the stack are computed); ``inv`` and ``solve`` of a singular
matrix give Inf or NaN; ``det`` gives 0 and ``slogdet`` (0, -inf), as
NumPy's.
"""

from collections import namedtuple

from . import ops
from ._dtype_functions import result_type
from ._dtypes import _dtype_name
from ._tensor import Tensor

__all__ = ["cholesky", "solve", "inv", "det", "slogdet", "qr", "matrix_power", "tensordot",
           "vecdot", "outer", "cross", "trace", "diagonal", "matmul", "matrix_transpose"]

SlogdetResult = namedtuple("SlogdetResult", ["sign", "logabsdet"])
QRResult = namedtuple("QRResult", ["Q", "R"])


def _promote(x1, x2):
    """x1 and x2 in their promoted dtype (cast on the device)."""
    if not isinstance(x1, Tensor) or not isinstance(x2, Tensor) or x1.dtype == x2.dtype:
        return x1, x2
    dt = result_type(x1, x2)
    return ops.astype(x1, dt, copy=False), ops.astype(x2, dt, copy=False)


def cholesky(x, /, *, upper=False):
    """The Cholesky factor L (x = L @ L.mT, complex: L @ conj(L.mT)), or
    with upper=True U = conj(L.mT) (op "cholesky"; reads x's lower
    triangle). NaN throughout for a matrix that is not positive definite."""
    return ops.call("cholesky", x, upper=bool(upper))


def solve(x1, x2, /):
    """x with x1 @ x = x2 (op "solve"): x1 (..., M, M); x2 (..., M, K), or
    (M,) a vector (the 2023.12 rule); batch dimensions broadcast."""
    x1, x2 = _promote(x1, x2)
    return ops.call("solve", x1, x2)


def inv(x, /):
    """The inverse of each square matrix (op "inv")."""
    return ops.call("inv", x)


def det(x, /):
    """The determinant of each square matrix (op "det")."""
    return ops.call("det", x)


def slogdet(x, /):
    """(sign, logabsdet) of the determinant of each square matrix (op
    "slogdet"; complex: sign of modulus 1, logabsdet real); a singular
    matrix gives (0, -inf)."""
    return SlogdetResult(*ops.call("slogdet", x, out=(None, None)))


def qr(x, /, *, mode="reduced"):
    """(Q, R) with x = Q @ R (op "qr", Householder reflections); mode
    "reduced" (Q (..., M, K), R (..., K, N), K = min(M, N)) or "complete"
    (Q (..., M, M), R (..., M, N))."""
    if mode not in ("reduced", "complete"):
        raise ValueError("qr: mode must be 'reduced' or 'complete', not %r" % (mode,))
    return QRResult(*ops.call("qr", x, out=(None, None), mode=mode))


def matrix_power(x, n, /):
    """x to the integer power n (op "matrix_power"): repeated squaring;
    n = 0 the identity, n < 0 powers of the inverse."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError("matrix_power: n must be an int, not %s" % type(n).__name__)
    return ops.call("matrix_power", x, n=n)


def tensordot(x1, x2, /, *, axes=2):
    """Contraction over axes (op "tensordot"): an int N (x1's last N axes with
    x2's first N) or a pair of sequences of axes."""
    x1, x2 = _promote(x1, x2)
    if isinstance(axes, int) and not isinstance(axes, bool):
        if axes < 0 or axes > min(x1.ndim, x2.ndim):
            raise ValueError("tensordot: axes=%d for arrays of %d and %d dimensions"
                             % (axes, x1.ndim, x2.ndim))
        a1 = list(range(x1.ndim - axes, x1.ndim))
        a2 = list(range(axes))
    else:
        try:
            a1, a2 = axes
            a1, a2 = [int(a) for a in a1], [int(a) for a in a2]
        except (TypeError, ValueError):
            raise ValueError("tensordot: axes must be an int or a pair of sequences, not %r"
                             % (axes,)) from None
    return ops.call("tensordot", x1, x2, axes=a1, axes2=a2)


def vecdot(x1, x2, /, *, axis=-1):
    """The dot product along axis, sum(conj(x1) * x2), other dimensions
    broadcast (op "vecdot")."""
    x1, x2 = _promote(x1, x2)
    return ops.call("vecdot", x1, x2, axis=int(axis))


def outer(x1, x2, /):
    """The outer product of two vectors (op "outer")."""
    x1, x2 = _promote(x1, x2)
    return ops.call("outer", x1, x2)


def cross(x1, x2, /, *, axis=-1):
    """The cross product of 3-vectors along axis, other dimensions broadcast
    (op "cross")."""
    x1, x2 = _promote(x1, x2)
    return ops.call("cross", x1, x2, axis=int(axis))


def diagonal(x, /, *, offset=0):
    """The diagonal offset of each matrix (op "diagonal")."""
    return ops.call("diagonal", x, offset=int(offset))


def trace(x, /, *, offset=0, dtype=None):
    """The sum of diagonal offset of each matrix (op "trace"), in dtype
    (default: floats in their own dtype, signed integers and bool in int64,
    unsigned in uint64)."""
    if dtype is not None:
        dtype = _dtype_name(dtype)
        if x.dtype != dtype:
            x = ops.astype(x, dtype)
    r = ops.call("trace", x, offset=int(offset))
    return r if dtype is None or r.dtype == dtype else ops.astype(r, dtype)


def matmul(x1, x2, /):
    """x1 @ x2 (op "matmul")."""
    x1, x2 = _promote(x1, x2)
    return ops.matmul(x1, x2)


def matrix_transpose(x, /):
    """The last two axes swapped (x.mT, a view)."""
    return x.mT


# --- the spectral functions (vkflow._linalg_spectral: one-sided Jacobi) -----------
from ._linalg_spectral import (eig, eigh, eigvals, eigvalsh, matrix_norm,  # noqa: E402,F401
                               matrix_rank, pinv, svd, svdvals, vector_norm)
