"""The array API's manipulation functions and the statistics vkflow builds
from its reductions: ``concat stack squeeze expand_dims flip roll
broadcast_to broadcast_arrays moveaxis tile repeat unstack`` and ``argmin
var std cumulative_sum`` (vkflow.array_api names them).

Every result is computed on the device by the Go op library: ``concat
stack roll tile repeat`` are its ops of those names, the others are built
from its ops (``strided_copy``, ``cast``, the element-wise ops and the
reductions), so no tensor is read on the host; the one exception is ``repeat`` with an array
of counts, whose output shape depends on them (the counts are read; the
data is not). Views where the standard allows them: ``squeeze
expand_dims flip moveaxis broadcast_to broadcast_arrays unstack`` return
views of ``x``'s memory (offset and strides, no copy); ``concat stack roll
tile repeat`` and the statistics return new tensors.

Axes follow the standard: negative axes count from the end; an axis out of
range is NumPy's AxisError, which is both an IndexError and a ValueError
(``expand_dims`` raises IndexError, ``squeeze`` of an axis whose size is
not 1 ValueError). ``concat`` and ``stack`` promote mixed dtypes as the
standard's type promotion does (NumPy's result_type), casting on the
device.
"""

import builtins
import math
import operator

from . import _functions, _scanfuncs, _views, ops
from ._dtypes import _kind, _numpy
from ._tensor import Tensor

__all__ = ["concat", "stack", "squeeze", "expand_dims", "flip", "roll", "broadcast_to",
           "broadcast_arrays", "moveaxis", "tile", "repeat", "unstack", "argmin", "var", "std",
           "cumulative_sum"]

_axis = _functions._axis


def _tensor(x, what):
    if not isinstance(x, Tensor):
        raise TypeError("%s: expected a vkflow Tensor, got %s" % (what, type(x).__name__))
    return x


def _tensors(arrays, what):
    if not isinstance(arrays, (list, tuple)):
        raise TypeError("%s: expected a tuple or list of arrays, got %s"
                        % (what, type(arrays).__name__))
    if not arrays:
        raise ValueError("%s: need at least one array" % what)
    arrays = [_tensor(x, what) for x in arrays]
    dtypes = list(dict.fromkeys(x.dtype for x in arrays))
    if len(dtypes) > 1:
        common = _numpy().result_type(*dtypes).name
        arrays = [ops.astype(x, common, copy=False) for x in arrays]
    return arrays


def _view(x, shape, strides, offset=0):
    base, off, _, _ = _views._layout(x)
    return _views.TensorView._make(base, off + offset, shape, strides)


# --- joining and splitting ----------------------------------------------------------------

def concat(arrays, /, *, axis=0):
    """The arrays joined along an existing axis (None: flattened first), a
    new tensor: the Go op library's concat."""
    arrays = _tensors(arrays, "concat")
    if axis is None:
        arrays, axis = [x.reshape(-1) for x in arrays], 0
    elif not arrays[0].ndim:
        raise ValueError("concat: zero-dimensional arrays cannot be concatenated (axis=%r)"
                         % (axis,))
    else:
        axis = _axis(axis, arrays[0].ndim)
    for x in arrays[1:]:
        if x.ndim != arrays[0].ndim:
            raise ValueError("concat: the arrays have %d and %d dimensions"
                             % (arrays[0].ndim, x.ndim))
        if any(a != b for k, (a, b) in enumerate(zip(x.shape, arrays[0].shape)) if k != axis):
            raise ValueError("concat: shapes %r and %r differ outside axis %d"
                             % (arrays[0].shape, x.shape, axis))
    return _join("concat", arrays, axis)


# The most inputs one library call takes (vkflow_op_call's limit).
_MAX_INPUTS = 64


def _join(name, arrays, axis):
    """The op name ("concat" or "stack") over arrays: one call, or, past
    _MAX_INPUTS arrays, one per group of them, then a concat of the groups'
    results along axis (for both: stacked groups join along the new axis)."""
    if len(arrays) <= _MAX_INPUTS:
        return ops.call(name, *arrays, axis=axis)
    parts = [ops.call(name, *arrays[i:i + _MAX_INPUTS], axis=axis)
             for i in range(0, len(arrays), _MAX_INPUTS)]
    try:
        return _join("concat", parts, axis)
    finally:
        for p in parts:
            p.close()


def stack(arrays, /, *, axis=0):
    """The arrays (of one shape) joined along a new axis: the Go op
    library's stack."""
    arrays = _tensors(arrays, "stack")
    if any(x.shape != arrays[0].shape for x in arrays):
        raise ValueError("stack: the arrays must have one shape, not %s"
                         % ", ".join(str(x.shape) for x in arrays))
    return _join("stack", arrays, _axis(axis, arrays[0].ndim + 1))


def unstack(x, /, *, axis=0):
    """The views of x along axis, a tuple (x at least 1-d)."""
    _tensor(x, "unstack")
    if x.ndim == 0:
        raise ValueError("unstack: the array must have at least one dimension")
    axis = _axis(axis, x.ndim)
    head = (slice(None),) * axis
    return tuple(_views.view_of(x, head + (i,)) for i in range(x.shape[axis]))


# --- views --------------------------------------------------------------------------------

def squeeze(x, /, axis):
    """x without the axes (an int or a tuple), each of size 1 (else
    ValueError); a view."""
    _tensor(x, "squeeze")
    axes = _functions._axes(axis, x.ndim)
    if any(x.shape[k] != 1 for k in axes):
        raise ValueError("squeeze: cannot squeeze axis %r of shape %r, whose size is not 1"
                         % (axis, x.shape))
    return _views.view_of(x, tuple(0 if k in axes else slice(None) for k in range(x.ndim)))


def expand_dims(x, /, axis=0):
    """x with a new axis of size 1 at axis (in [-x.ndim-1, x.ndim], else
    IndexError); a view. A tuple of axes (2025.12) names positions in the
    result, of x.ndim + len(axis) dimensions (negative ones count from its
    end): IndexError out of range, ValueError when two name one axis."""
    _tensor(x, "expand_dims")
    if not isinstance(axis, (tuple, list)):
        return _functions.expand_dims(x, operator.index(axis))
    n = x.ndim + len(axis)
    axes = [operator.index(a) for a in axis]
    if any(not -n <= a < n for a in axes):
        raise IndexError("expand_dims: axis %r is out of range for a result of %d dimensions"
                         % (tuple(axis), n))
    axes = sorted(a % n for a in axes)
    if len(set(axes)) != len(axes):
        raise ValueError("expand_dims: repeated axis in %r" % (tuple(axis),))
    for a in axes:
        x = _functions.expand_dims(x, a)
    return x


def flip(x, /, *, axis=None):
    """x reversed along axis (an int, a tuple, or None: every axis); a view
    with negative strides."""
    _tensor(x, "flip")
    axes = range(x.ndim) if axis is None else _functions._axes(axis, x.ndim)
    return _views.view_of(x, tuple(slice(None, None, -1) if k in axes else slice(None)
                                   for k in range(x.ndim)))


def moveaxis(x, source, destination, /):
    """x with the axes source moved to destination (ints or tuples of one
    length); a view."""
    _tensor(x, "moveaxis")
    return _functions.moveaxis(x, source, destination)


def _broadcast_shape(shapes):
    n = builtins.max(len(s) for s in shapes)
    out = []
    for k in range(n):
        dims = {s[k - n + len(s)] for s in shapes if k - n + len(s) >= 0} - {1}
        if len(dims) > 1:
            raise ValueError("shapes %s cannot be broadcast together"
                             % " ".join(repr(tuple(s)) for s in shapes))
        out.append(dims.pop() if dims else 1)
    return tuple(out)


def broadcast_to(x, /, shape):
    """x broadcast to shape (NumPy's rules; ValueError where it does not
    fit); a view with 0 strides on the broadcast axes."""
    _tensor(x, "broadcast_to")
    shape = (operator.index(shape),) if not isinstance(shape, (tuple, list)) else \
        tuple(operator.index(d) for d in shape)
    if any(d < 0 for d in shape):
        raise ValueError("broadcast_to: negative dimension in shape %r" % (shape,))
    _, _, old, strides = _views._layout(x)
    lead = len(shape) - len(old)
    if lead < 0:
        raise ValueError("broadcast_to: cannot broadcast a %r array to the shape %r (fewer "
                         "dimensions)" % (old, shape))
    new = [0] * lead
    for k, d in enumerate(old):
        if d == shape[lead + k]:
            new.append(strides[k])
        elif d == 1:
            new.append(0)
        else:
            raise ValueError("broadcast_to: cannot broadcast a %r array to the shape %r"
                             % (old, shape))
    return _view(x, shape, new)


def broadcast_arrays(*arrays):
    """The arrays broadcast against one another: a list of views."""
    arrays = [_tensor(x, "broadcast_arrays") for x in arrays]
    if not arrays:
        return []
    shape = _broadcast_shape([x.shape for x in arrays])
    return [broadcast_to(x, shape) for x in arrays]


# --- copies -------------------------------------------------------------------------------

def roll(x, /, shift, *, axis=None):
    """x with its elements shifted by shift along axis (None: the flattened
    array, shape kept); elements that leave one end come in at the other.
    shift and axis are ints or tuples of one length (shifts along one axis
    add up). A new tensor: the Go op library's roll."""
    _tensor(x, "roll")
    if axis is None:
        if isinstance(shift, (tuple, list)):
            raise ValueError("roll: with axis=None, shift must be an int")
        return ops.call("roll", x, shift=[operator.index(shift)])
    shifts = shift if isinstance(shift, (tuple, list)) else (shift,)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    if len(shifts) != len(axes):
        if len(shifts) == 1:
            shifts = shifts * len(axes)
        elif len(axes) == 1:
            axes = axes * len(shifts)
        else:
            raise ValueError("roll: shift and axis must have one length, not %d and %d"
                             % (len(shifts), len(axes)))
    axes = [_axis(a, x.ndim) for a in axes]
    return ops.call("roll", x, shift=[operator.index(s) for s in shifts], axes=axes)


def tile(x, repetitions, /):
    """x repeated repetitions[k] times along axis k (the shorter of x.shape
    and repetitions padded with leading 1s). A new tensor: the Go op
    library's tile."""
    _tensor(x, "tile")
    reps = [operator.index(r) for r in repetitions]
    if any(r < 0 for r in reps):
        raise ValueError("tile: negative repetitions %r" % (tuple(reps),))
    if not reps:
        reps = [1]
    return ops.call("tile", x, reps=reps)


def repeat(x, repeats, /, *, axis=None):
    """Each element of x repeated along axis (None: of the flattened array).
    repeats: an int, or a 1-d array of ints (one count per element along
    axis, or one for all). A new tensor."""
    _tensor(x, "repeat")
    if axis is None:
        x, axis = x.reshape(-1), 0
    else:
        axis = _axis(axis, x.ndim)
    if x.ndim == 0:
        x, axis = x.reshape(1), 0
    np = _numpy()
    if isinstance(repeats, Tensor) or isinstance(repeats, (list, tuple, np.ndarray)):
        counts = np.asarray(repeats)  # the output shape depends on them: read on the host
        if counts.dtype.kind not in "iu":
            raise TypeError("repeat: repeats must be integers, not %s" % counts.dtype)
        if counts.ndim > 1:
            raise ValueError("repeat: repeats must be an int or a 1-d array")
        if counts.ndim == 1 and counts.size != 1:
            return _repeat_each(x, [int(c) for c in counts], axis)
        repeats = int(counts.reshape(-1)[0])
    r = operator.index(repeats)
    if r < 0:
        raise ValueError("repeat: negative repeats %d" % r)
    return ops.call("repeat", x, repeats=r, axis=axis)


def _repeat_each(x, counts, axis):
    n = x.shape[axis]
    if len(counts) != n:
        raise ValueError("repeat: %d counts for an axis of size %d" % (len(counts), n))
    if any(c < 0 for c in counts):
        raise ValueError("repeat: negative repeats %r" % (counts,))
    shape = x.shape[:axis] + (builtins.sum(counts),) + x.shape[axis + 1:]
    out = x.device.tensor(shape, dtype=x.dtype)
    head = (slice(None),) * axis
    pos = 0
    for i, c in enumerate(counts):
        if c:
            dst = _views.view_of(out, head + (slice(pos, pos + c),))
            _views.assign(dst, _views.view_of(x, head + (slice(i, i + 1),)))
            pos += c
    return out


# --- statistics ---------------------------------------------------------------------------

def argmin(x, /, *, axis=None, keepdims=False):
    """Index (int64) of the smallest element along axis (None: of the
    flattened array); the first among equals, NaN counting as the smallest
    (NumPy's first NaN). The argmax of an order-reversing map of x on the
    device: -x for floats, ~x for integers (no overflow), not x for bool."""
    _tensor(x, "argmin")
    k = _kind(x.dtype)  # "f", "b", or "i" (unsigned too)
    rev = ops.negative(x) if k == "f" else ops.logical_not(x) if k == "b" else \
        ops.bitwise_invert(x)
    return ops.argmax(rev, axis=axis, keepdims=keepdims)


def _count(shape, axis):
    if axis is None:
        return math.prod(shape)
    axes = _functions._axes(axis, len(shape))
    return math.prod(shape[k] for k in axes)


def var(x, /, *, axis=None, correction=0.0, keepdims=False):
    """The variance along axis (floats): sum((x - mean)**2) / (N -
    correction), N the number of elements reduced; NaN where N - correction
    <= 0."""
    _tensor(x, "var")
    if _kind(x.dtype) != "f":
        raise TypeError("var: needs a floating-point array, not %s" % x.dtype)
    n = _count(x.shape, axis)
    m = ops.mean(x, axis=axis, keepdims=True)
    d = ops.subtract(x, m)
    s = ops.sum(ops.multiply(d, d), axis=axis, keepdims=keepdims)
    dof = n - correction
    return ops.multiply(s, 1.0 / dof if dof > 0 else math.nan)


def std(x, /, *, axis=None, correction=0.0, keepdims=False):
    """The standard deviation along axis: sqrt(var(...)) (floats)."""
    return ops.sqrt(var(x, axis=axis, correction=correction, keepdims=keepdims))


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """Running sums along axis: the Go op cumulative_sum (a multi-pass scan
    on the device; see vkflow._scanfuncs)."""
    return _scanfuncs.cumulative_sum(x, axis=axis, dtype=dtype, include_initial=include_initial)
