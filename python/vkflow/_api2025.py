"""Functions the array API standard added in 2025.12, on the device:
``isin`` (set functions) and ``broadcast_shapes`` (data type functions;
pure Python, no array involved). ``expand_dims`` with a tuple of axes is
in vkflow._manipulation.

``isin`` sorts the flattened ``x2`` (the Go op library's stable radix sort),
finds each element of ``x1`` in it with ``searchsorted`` and compares the
element found: O((n1 + n2) log n2) work, nothing read back to the host.
Complex values have no sort order; for them every element of ``x1`` is
compared with every element of ``x2`` (an n1 x n2 broadcast equal and an
``any``).
"""

import operator

from . import ops
from ._array import asarray
from ._creation import full
from ._dtype_functions import result_type
from ._manipulation import _broadcast_shape
from ._scanfuncs import take
from ._sorting import searchsorted, sort
from ._tensor import Tensor


def isin(x1, x2, /, *, invert=False):
    """Whether each element of x1 is in x2 (by value equality, as
    ``equal``: NaN is in nothing, -0 equals +0): a bool array of x1's shape,
    or a 0-d one when x1 is a Python scalar; ``invert`` negates it. x1 and
    x2 are promoted to one dtype (result_type); at least one must be a
    vkflow Tensor."""
    if not isinstance(x1, Tensor) and not isinstance(x2, Tensor):
        raise TypeError("isin: x1 or x2 must be a vkflow Tensor, not %s and %s"
                        % (type(x1).__name__, type(x2).__name__))
    dt = result_type(x1, x2)
    dev = (x1 if isinstance(x1, Tensor) else x2).device
    x1 = ops.astype(x1, dt) if isinstance(x1, Tensor) else asarray(x1, dtype=dt, device=dev)
    x2 = ops.astype(x2, dt) if isinstance(x2, Tensor) else asarray(x2, dtype=dt, device=dev)
    shape = x1.shape
    a = x1.reshape((-1,))
    b = x2.reshape((-1,))
    n2 = b.shape[0]
    if n2 == 0 or a.shape[0] == 0:
        found = full(shape, False, dtype="bool", device=dev)
    elif str(dt).startswith("complex"):
        eq = ops.equal(a.reshape((a.shape[0], 1)), b.reshape((1, n2)))
        found = ops.any(eq, axis=1).reshape(shape)
    else:
        s = sort(b)
        at = ops.minimum(searchsorted(s, a), n2 - 1)
        found = ops.equal(take(s, at), a).reshape(shape)
    return ops.logical_not(found) if invert else found


def broadcast_shapes(*shapes):
    """The shape that arrays of these shapes (tuples of ints) broadcast to,
    as a tuple; () for none. ValueError where they do not broadcast."""
    shapes = [tuple(operator.index(d) for d in s) for s in shapes]
    if not shapes:
        return ()
    for s in shapes:
        if any(d < 0 for d in s):
            raise ValueError("broadcast_shapes: negative dimension in %r" % (s,))
    return _broadcast_shape(shapes)
