"""The functions the array API standard added in 2024.12, on the device:
``diff`` (utility), ``count_nonzero`` (searching), ``take_along_axis``
(indexing), and ``reciprocal`` over complex dtypes too.

Each is a composition of the Go op library's ops (slices and ``subtract``;
``not_equal`` and ``sum``; one ``gather`` over every axis), queued like any
op: nothing is read back to the host.
"""

import operator

from . import ops
from ._array import asarray
from ._creation import arange
from ._dtypes import _kind
from ._manipulation import concat
from ._tensor import Tensor


def _axis(axis, ndim, what):
    a = operator.index(axis)
    if not -ndim <= a < ndim:
        raise ValueError("%s: axis %d is out of range for %d dimensions" % (what, axis, ndim))
    return a % ndim


def diff(x, /, *, axis=-1, n=1, prepend=None, append=None):
    """The n-th forward difference along axis: out[..., i, ...] =
    x[..., i + 1, ...] - x[..., i, ...], n times, in x's dtype (integers
    wrap as the subtraction does). prepend and append (x's shape but along
    axis) are joined to x first. The result has n fewer elements along axis
    (none when n is at least their number)."""
    if not isinstance(x, Tensor):
        raise TypeError("diff: x must be a vkflow Tensor, not %s" % type(x).__name__)
    if x.ndim == 0:
        raise ValueError("diff: x must have at least one dimension")
    a = _axis(axis, x.ndim, "diff")
    n = operator.index(n)
    if n < 0:
        raise ValueError("diff: n must be >= 0, got %d" % n)
    if prepend is not None or append is not None:
        parts = [p if isinstance(p, Tensor) else asarray(p, dtype=x.dtype, device=x.device)
                 for p in (prepend, x, append) if p is not None]
        x = concat(parts, axis=a)
    for _ in range(n):
        m = x.shape[a]
        if m == 0:
            break
        hi = tuple(slice(1, None) if i == a else slice(None) for i in range(x.ndim))
        lo = tuple(slice(None, m - 1) if i == a else slice(None) for i in range(x.ndim))
        x = x[hi] - x[lo]
    return x


def count_nonzero(x, /, *, axis=None, keepdims=False):
    """The number of nonzero elements along axis (None: all; an int or a
    tuple of ints), in the default index dtype int64; NaN counts as nonzero,
    as a complex value with a nonzero part does."""
    if not isinstance(x, Tensor):
        raise TypeError("count_nonzero: x must be a vkflow Tensor, not %s" % type(x).__name__)
    nz = ops.not_equal(x, False if x.dtype == "bool" else 0)
    return ops.sum(ops.astype(nz, "int64"), axis=axis, keepdims=keepdims)


def take_along_axis(x, indices, /, *, axis=-1):
    """x's elements at indices along axis: out[p..., j, q...] =
    x[p..., indices[p..., j, q...], q...], indices of x's rank and shape but
    along axis, an integer dtype. Negative indices count from the end;
    indices still out of range are clamped (they cannot be reported without
    reading them back). One gather on the device."""
    if not isinstance(x, Tensor):
        raise TypeError("take_along_axis: x must be a vkflow Tensor, not %s" % type(x).__name__)
    if not isinstance(indices, Tensor):
        indices = asarray(indices, dtype="int64", device=x.device)
    if _kind(indices.dtype) != "i":
        raise TypeError("take_along_axis: indices must have an integer dtype, not %s" % indices.dtype)
    if indices.ndim != x.ndim:
        raise ValueError("take_along_axis: indices have %d dimensions, x has %d"
                         % (indices.ndim, x.ndim))
    a = _axis(axis, x.ndim, "take_along_axis")
    for i, (s, t) in enumerate(zip(x.shape, indices.shape)):
        if i != a and s != t and t != 1:
            raise ValueError("take_along_axis: indices have shape %r, x %r: they must match but "
                             "along axis %d" % (indices.shape, x.shape, a))
    grids = []
    for i, s in enumerate(x.shape):
        if i == a:
            grids.append(indices)
        else:
            shape = [1] * x.ndim
            shape[i] = s
            grids.append(arange(s, dtype="int64", device=x.device).reshape(tuple(shape)))
    return ops.call("gather", x, *grids, axis=0)


def reciprocal(x, /):
    """1 / x element-wise; complex dtypes by complex division (the Go op
    takes real floats)."""
    if isinstance(x, Tensor) and _kind(x.dtype) == "c":
        return 1 / x
    return ops.reciprocal(x)
