"""The array API's set functions: ``unique_all unique_counts
unique_inverse unique_values`` (vkflow.array_api names them).

Each is the Go op library's dynamic op of that name: a stable radix sort of
the flattened array, a flag at the first element of each run of equal
values, the compaction of the flags (the number of distinct values is the
one number read back to the host) and gathers and scatters by the run
starts, all on the device. Values are ascending; -0 and +0 are one value and
every NaN is its own (count 1, last), as the standard says; ``indices`` are
first occurrences in the flattened array; ``inverse_indices`` has x's
shape; indices, inverse indices and counts are int64. Complex arrays are
composed from other ops (_unique_complex): ordered by real part, then
imaginary part.
"""

from collections import namedtuple

from . import ops
from ._creation import empty, full, ones, zeros_like
from ._manipulation import concat
from ._scanfuncs import cumulative_sum, nonzero, take
from ._sorting import argsort
from ._tensor import Tensor

__all__ = ["unique_all", "unique_counts", "unique_inverse", "unique_values"]

UniqueAllResult = namedtuple("UniqueAllResult", ["values", "indices", "inverse_indices", "counts"])
UniqueCountsResult = namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = namedtuple("UniqueInverseResult", ["values", "inverse_indices"])


def _unique(name, x, n):
    if not isinstance(x, Tensor):
        raise TypeError("%s: expected a vkflow Tensor, got %s" % (name, type(x).__name__))
    if str(x.dtype).startswith("complex"):
        return _unique_complex(name, x)
    return ops.call(name, x, out=(None,) * n)


def _unique_complex(name, x):
    """The unique_* results of a complex x, composed on the device: the
    flattened values sorted by (real, imaginary) with two stable argsorts
    (imaginary parts first, then real parts; -0 keys made +0, so that -0
    and +0 are one value), a flag where a value differs from the one
    before it (NaN differs from everything: each is its own), the run
    starts read back by nonzero (the one data-dependent size), and gathers
    by them. Values come out ordered by real part, then imaginary part."""
    flat = x.reshape((-1,))
    size = flat.shape[0]
    if size == 0:
        none = empty((0,), dtype="int64", device=x.device)
        return _results(name, flat, none, empty(x.shape, dtype="int64", device=x.device), none)

    def key(part):
        return ops.where(ops.equal(part, 0), zeros_like(part), part)

    p1 = argsort(key(ops.imag(flat)))
    perm = take(p1, argsort(take(key(ops.real(flat)), p1)))
    s = take(flat, perm)
    first = ones((1,), dtype="bool", device=x.device)
    flags = concat([first, ops.not_equal(s[1:], s[:-1])]) if size > 1 else first
    starts = nonzero(flags)[0]
    values = take(s, starts)
    indices = take(perm, starts)
    ends = concat([starts[1:], full((1,), size, dtype="int64", device=x.device)])
    counts = ends - starts
    run = cumulative_sum(ops.astype(flags, "int64")) - 1
    inverse = take(run, argsort(perm)).reshape(x.shape)
    return _results(name, values, indices, inverse, counts)


def _results(name, values, indices, inverse, counts):
    return {"unique_all": (values, indices, inverse, counts),
            "unique_counts": (values, counts),
            "unique_inverse": (values, inverse),
            "unique_values": (values,)}[name]


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
