"""The array API's set functions: ``unique_all unique_counts
unique_inverse unique_values`` (vkflow.array_api names them).

Each is the Go op library's dynamic op of that name: a stable radix sort of
the flattened array, a flag at the first element of each run of equal
values, the compaction of the flags (the number of distinct values is the
one number read back to the host) and gathers and scatters by the run
starts, all on the device. Values are ascending; -0 and +0 are one value and
every NaN is its own (count 1, last), as the standard says; ``indices`` are
first occurrences in the flattened array; ``inverse_indices`` has x's
shape; indices, inverse indices and counts are int64.
"""

from collections import namedtuple

from . import ops
from ._tensor import Tensor

__all__ = ["unique_all", "unique_counts", "unique_inverse", "unique_values"]

UniqueAllResult = namedtuple("UniqueAllResult", ["values", "indices", "inverse_indices", "counts"])
UniqueCountsResult = namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = namedtuple("UniqueInverseResult", ["values", "inverse_indices"])


def _unique(name, x, n):
    if not isinstance(x, Tensor):
        raise TypeError("%s: expected a vkflow Tensor, got %s" % (name, type(x).__name__))
    if str(x.dtype).startswith("complex"):
        raise TypeError("%s: complex values have no order (the array is %s)" % (name, x.dtype))
    return ops.call(name, x, out=(None,) * n)


def unique_all(x, /):
    """(values, indices, inverse_indices, counts) of x's distinct values."""
    return UniqueAllResult(*_unique("unique_all", x, 4))


def unique_counts(x, /):
    """(values, counts) of x's distinct values."""
    return UniqueCountsResult(*_unique("unique_counts", x, 2))


def unique_inverse(x, /):
    """(values, inverse_indices) of x's distinct values."""
    return UniqueInverseResult(*_unique("unique_inverse", x, 2))


def unique_values(x, /):
    """x's distinct values, ascending."""
    return _unique("unique_values", x, 1)[0]
