"""The array API's scans, data-dependent and indexing functions, and the
triangles and grids: ``cumulative_sum cumulative_prod nonzero take tril
triu meshgrid`` (vkflow.array_api names them).

Each is a Go op of the library (``cumulative_sum``, ``cumulative_prod``:
multi-pass scans; ``nonzero``: flags, scan and scatter, with the count read
back to size the result; ``take``: a gather; ``tril``, ``triu``) or, for
``meshgrid``, reshapes and broadcasts copied on the device; nothing is
computed on the host.
"""

import operator

from . import _functions, _views, ops
from ._array import asarray
from ._dtypes import _dtype_name
from ._tensor import Tensor

__all__ = ["cumulative_sum", "cumulative_prod", "nonzero", "take", "tril", "triu", "meshgrid"]


def _tensor(x, what):
    if not isinstance(x, Tensor):
        raise TypeError("%s: expected a vkflow Tensor, got %s" % (what, type(x).__name__))
    return x


def _axis(axis, ndim, what):
    """axis normalized; NumPy's AxisError (an IndexError and a ValueError)
    when out of range."""
    return _functions._axis(axis, ndim)


def _scan(name, x, axis, dtype, include_initial):
    _tensor(x, name)
    if x.ndim == 0:
        raise ValueError("%s: the array must have at least one dimension" % name)
    if axis is None:
        if x.ndim != 1:
            raise ValueError("%s: axis may be None only for a 1-d array, the array has shape %r"
                             % (name, x.shape))
        axis = 0
    axis = _axis(axis, x.ndim, name)
    attrs = {"axis": axis}
    if dtype is not None:
        attrs["dtype"] = _dtype_name(dtype)
    if include_initial:
        attrs["include_initial"] = True
    return ops.call(name, x, **attrs)


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """Running sums along axis (may be None only for a 1-d x); dtype: the
    result's (default: int64 for signed ints and bool, uint64 for unsigned,
    x's for floats; x is cast to it first); include_initial puts a 0 first
    (the axis grows by one). One Go op: a multi-pass scan on the device."""
    return _scan("cumulative_sum", x, axis, dtype, include_initial)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """Running products along axis, as cumulative_sum (the initial value is 1)."""
    return _scan("cumulative_prod", x, axis, dtype, include_initial)


def nonzero(x, /):
    """The indices of x's nonzero elements, one int64 array per axis, in
    row-major order. x must have at least one dimension (ValueError for a
    0-d x, as the standard asks). The count is read back to size the
    result; the rest runs on the device."""
    _tensor(x, "nonzero")
    if x.ndim == 0:
        raise ValueError("nonzero: the array must have at least one dimension (got a 0-d "
                         "array); use nonzero(reshape(x, (1,))) or x[None]")
    r = ops.call("nonzero", x)
    return tuple(_views.view_of(r, i).contiguous() for i in range(x.ndim))


def take(x, indices, /, *, axis=None):
    """x's elements at the integer indices along axis (may be None only for
    a 1-d x): shape x.shape[:axis] + indices.shape + x.shape[axis+1:].
    Negative indices count from the end; indices still out of range are
    clamped (they cannot be reported without reading them back)."""
    _tensor(x, "take")
    if axis is None:
        if x.ndim != 1:
            raise ValueError("take: axis may be None only for a 1-d array, the array has "
                             "shape %r" % (x.shape,))
        axis = 0
    axis = _axis(axis, x.ndim, "take")
    if not isinstance(indices, Tensor):
        indices = asarray(indices, dtype="int64", device=x.device)
    return ops.call("take", x, indices, axis=axis)


def _triangle(name, x, k):
    _tensor(x, name)
    if x.ndim < 2:
        raise ValueError("%s: x must have at least 2 dimensions, it has shape %r"
                         % (name, x.shape))
    k = operator.index(k)
    return ops.call(name, x, k=k) if k else ops.call(name, x)


def tril(x, /, *, k=0):
    """The lower triangle of each matrix of x (the last two axes): element
    (i, j) is kept where j - i <= k, else 0."""
    return _triangle("tril", x, k)


def triu(x, /, *, k=0):
    """The upper triangle of each matrix of x: kept where j - i >= k."""
    return _triangle("triu", x, k)


def meshgrid(*arrays, indexing="xy"):
    """Coordinate matrices from 1-d arrays (of one dtype): a list of arrays
    of shape (N1, N0, N2, ...) ("xy", Cartesian) or (N0, N1, ...) ("ij",
    matrix indexing), each a copy of a reshaped input broadcast on the
    device."""
    if indexing not in ("xy", "ij"):
        raise ValueError("meshgrid: indexing must be 'xy' or 'ij', not %r" % (indexing,))
    for a in arrays:
        _tensor(a, "meshgrid")
        if a.ndim != 1:
            raise ValueError("meshgrid: the arrays must be 1-d, one has shape %r" % (a.shape,))
    if len({a.dtype for a in arrays}) > 1:
        raise ValueError("meshgrid: the arrays must have one dtype, they have %s"
                         % ", ".join(sorted({a.dtype for a in arrays})))
    shape = [a.shape[0] for a in arrays]
    if indexing == "xy" and len(arrays) >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, a in enumerate(arrays):
        pos = i
        if indexing == "xy" and len(arrays) >= 2 and i < 2:
            pos = 1 - i
        # a along axis pos, stride 0 along the others (None's): a broadcast view
        v = _views.view_of(a, (None,) * pos + (slice(None),) + (None,) * (len(arrays) - pos - 1))
        base, off, _, strides = _views._layout(v)
        out.append(_views.TensorView._make(base, off, shape, strides).contiguous())
    return out
