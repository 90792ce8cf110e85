"""The array API's spectral linalg functions (``vkflow.array_api.linalg``):
``svd svdvals eigh eigvalsh eig eigvals pinv matrix_rank matrix_norm
vector_norm``.

Each is one op of the Go op library (``svd``, ``svdvals``, ``eigh``,
``eigvalsh``, ``pinv``, ``matrix_rank``, ``matrix_norm``, ``vector_norm``),
computed on the device for a whole stack of matrices at once (leading
dimensions are the stack): the decompositions by one-sided Jacobi, the norms
by reductions. float32, float64, complex64 and complex128; float16 computes
in float32. Complex x gives complex (unitary) U, Vh and eigenvectors and a
complex pinv, and real singular values, eigenvalues and norms (float32 for
complex64); eigh takes Hermitian matrices. ``svd`` and ``eigh`` return named tuples
(``U, S, Vh`` and ``eigenvalues, eigenvectors``); singular values are
descending, eigenvalues ascending; ``eigh`` reads the lower triangle (as
NumPy's default).

``eig`` and ``eigvals`` (2025.12) take general square matrices: Hessenberg
reduction and shifted QR on the device (the Go op library's ``eig``, see
ops/linalg/eig.go), complex results (complex64 for float32 and complex64
input, complex128 for float64 and complex128), eigenvalues in no particular
order, eigenvectors as columns of unit 2-norm with the largest component
real, as LAPACK's zgeev. A matrix that holds a NaN or an infinity, or does
not converge, gives NaN eigenvalues and eigenvectors (NumPy raises
LinAlgError). Matrices of side at most 1024.
"""

import math
from collections import namedtuple

from . import ops
from ._manipulation import broadcast_to
from ._tensor import Tensor

__all__ = ["svd", "svdvals", "eigh", "eigvalsh", "eig", "eigvals", "pinv", "matrix_rank",
           "matrix_norm", "vector_norm", "SVDResult", "EighResult", "EigResult"]

SVDResult = namedtuple("SVDResult", ["U", "S", "Vh"])
EighResult = namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
EigResult = namedtuple("EigResult", ["eigenvalues", "eigenvectors"])


def _matrices(x, what):
    if not isinstance(x, Tensor):
        raise TypeError("%s: expected a vkflow Tensor, got %s" % (what, type(x).__name__))
    if x.ndim < 2:
        raise ValueError("%s: x has shape %r; want a stack of matrices (at least 2-d)"
                         % (what, tuple(x.shape)))
    return x


def svd(x, /, *, full_matrices=True):
    """U, S, Vh with x = U @ diag(S) @ Vh for each matrix of x (S descending)."""
    _matrices(x, "svd")
    u, s, vh = ops.call("svd", x, out=(None, None, None), full_matrices=bool(full_matrices))
    return SVDResult(u, s, vh)


def svdvals(x, /):
    """The singular values of each matrix of x, descending."""
    return ops.call("svdvals", _matrices(x, "svdvals"))


def eigh(x, /):
    """Eigenvalues (ascending) and eigenvectors (columns) of each symmetric
    matrix of x."""
    w, v = ops.call("eigh", _matrices(x, "eigh"), out=(None, None))
    return EighResult(w, v)


def eigvalsh(x, /):
    """The eigenvalues of each symmetric matrix of x, ascending."""
    return ops.call("eigvalsh", _matrices(x, "eigvalsh"))


def eig(x, /):
    """Eigenvalues and right eigenvectors (columns) of each square matrix of
    x, complex: x @ v[..., :, j] == w[..., j] * v[..., :, j]."""
    w, v = ops.call("eig", _matrices(x, "eig"), out=(None, None))
    return EigResult(w, v)


def eigvals(x, /):
    """The eigenvalues of each square matrix of x, complex (as eig's)."""
    return ops.call("eigvals", _matrices(x, "eigvals"))


def _rtol_call(name, x, rtol):
    _matrices(x, name)
    if rtol is None:
        return ops.call(name, x)
    if isinstance(rtol, Tensor):
        stack = tuple(x.shape[:-2])
        if tuple(rtol.shape) != stack and rtol.size != 1:
            rtol = broadcast_to(rtol, stack)
        return ops.call(name, x, rtol)
    return ops.call(name, x, rtol=float(rtol))


def pinv(x, /, *, rtol=None):
    """The Moore-Penrose pseudo-inverse of each matrix of x; singular values
    at or below rtol * the largest are dropped (rtol: a float, an array
    broadcast to the stack, or None for max(M, N) * eps)."""
    return _rtol_call("pinv", x, rtol)


def matrix_rank(x, /, *, rtol=None):
    """The count of singular values above rtol * the largest (as pinv), int64."""
    return _rtol_call("matrix_rank", x, rtol)


def _ord(ord):
    if isinstance(ord, str):
        return ord
    if isinstance(ord, bool):
        raise TypeError("ord must be a number or a string, not bool")
    v = float(ord)
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if math.isnan(v):
        raise ValueError("ord must not be NaN")
    return repr(v)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """A norm of each matrix of x: "fro", "nuc", 1, -1, 2, -2, inf or -inf."""
    _matrices(x, "matrix_norm")
    o = _ord(ord)
    if o not in ("fro", "nuc", "1.0", "-1.0", "2.0", "-2.0", "inf", "-inf"):
        raise ValueError("matrix_norm: ord %r: want 'fro', 'nuc', 1, -1, 2, -2, inf or -inf"
                         % (ord,))
    return ops.call("matrix_norm", x, keepdims=bool(keepdims), ord=o)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """The ord-norm (any real ord, inf, -inf; 0 counts nonzeros) of x along
    axis (None: all of x)."""
    if not isinstance(x, Tensor):
        raise TypeError("vector_norm: expected a vkflow Tensor, got %s" % type(x).__name__)
    if isinstance(ord, str):
        raise TypeError("vector_norm: ord must be a number, not %r" % (ord,))
    attrs = {"keepdims": bool(keepdims), "ord": _ord(ord)}
    if axis is not None:
        attrs["axes"] = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    return ops.call("vector_norm", x, **attrs)
