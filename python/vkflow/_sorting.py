"""The array API's sorting functions ``sort argsort`` and ``searchsorted``
(vkflow.array_api names them), over the Go op library's ``sort``,
``argsort`` and ``searchsorted`` ops: a stable radix sort and a binary search
per element, on the device.

Order: real dtypes only (bool, the integers, the floats; complex is a
TypeError). The sort is stable in both directions: elements that compare
equal keep their input order, so a descending sort is not a reversed
ascending one. Floats sort -inf < ... < -0 == +0 < ... < +inf < NaN: -0 and
+0 are equal (each keeps its sign and place) and every NaN goes last, after
the numbers, ascending and descending, as NumPy's sort puts NaNs last.
``searchsorted`` compares in the same order, so inserting each value at its
index keeps x1 sorted as ``sort`` sorts it.
"""

from . import _functions, ops
from ._array import asarray
from ._dtype_functions import result_type
from ._dtypes import _dtype_name
from ._tensor import Tensor
from ._views import TensorView

__all__ = ["sort", "argsort", "searchsorted"]


def _real(x, what):
    if not isinstance(x, (Tensor, TensorView)):
        raise TypeError("%s: expected a vkflow Tensor, got %s" % (what, type(x).__name__))
    if _dtype_name(x.dtype).startswith("complex"):
        raise TypeError("%s: %s has no order; sort the real dtypes" % (what, x.dtype))
    return x


def _sort_axis(x, axis):
    """axis checked against x (a 0-d x takes 0 or -1, as a row of one)."""
    return _functions._axis(axis, max(x.ndim, 1))


def sort(x, /, *, axis=-1, descending=False, stable=True):
    """A sorted copy of x along axis (default the last): ascending, or
    descending; stable either way (``stable`` is accepted: the sort is
    always stable). NaNs go last."""
    x = _real(x, "sort")
    return ops.sort(x, axis=_sort_axis(x, axis), descending=bool(descending))


def argsort(x, /, *, axis=-1, descending=False, stable=True):
    """The int64 indices that sort x along axis, as :func:`sort` orders it:
    equal elements in increasing index order, also descending."""
    x = _real(x, "argsort")
    return ops.argsort(x, axis=_sort_axis(x, axis), descending=bool(descending))


def searchsorted(x1, x2, /, *, side="left", sorter=None):
    """int64 indices, x2's shape, where each element v of x2 goes in the 1-d
    x1 sorted ascending (or read through ``sorter``, the integer indices that
    sort it): the first i with v <= x1[i] (``side="left"``) or v < x1[i]
    (``"right"``), len(x1) when none. x1 and x2 of different dtypes are
    promoted (result_type); a Python scalar x2 takes x1's dtype."""
    x1 = _real(x1, "searchsorted")
    if side not in ("left", "right"):
        raise ValueError("searchsorted: side must be 'left' or 'right', not %r" % (side,))
    if x1.ndim != 1:
        raise ValueError("searchsorted: x1 must be 1-d, not of shape %r" % (tuple(x1.shape),))
    if not isinstance(x2, (Tensor, TensorView)):
        x2 = asarray(x2, dtype=x1.dtype, device=x1.device)
    x2 = _real(x2, "searchsorted")
    if x2.dtype != x1.dtype:
        common = result_type(x1.dtype, x2.dtype)
        x1, x2 = ops.astype(x1, common, copy=False), ops.astype(x2, common, copy=False)
    if sorter is not None:
        sorter = _real(sorter, "searchsorted")
        if sorter.dtype in ("bool", "float16", "float32", "float64"):
            raise TypeError("searchsorted: sorter must have an integer dtype, not %s"
                            % sorter.dtype)
        if tuple(sorter.shape) != tuple(x1.shape):
            raise ValueError("searchsorted: sorter has shape %r, x1 %r"
                             % (tuple(sorter.shape), tuple(x1.shape)))
    return ops.searchsorted(x1, x2, side=side, sorter=sorter)
