"""NumPy's function protocol (NEP 18) for :class:`vkflow.Tensor`:
``Tensor.__array_function__``, added by :func:`install`.

NumPy functions vkflow can compute run on the device and return vkflow
tensors (views where NumPy returns views); the rest fall back to NumPy on
host copies and return NumPy's results, so every NumPy function takes
tensors. The rule, in order:

1. A type among the arguments that implements ``__array_function__`` and is
   neither ``numpy.ndarray`` nor a vkflow tensor: NotImplemented (NEP 18:
   NumPy asks that type, and raises TypeError when all decline).
2. The device, for the functions in :data:`_BY_NAME` called the way vkflow
   can serve: ``concatenate stack vstack hstack`` (copies into a new tensor
   on the device, NumPy arrays and lists among the inputs uploaded),
   ``where(c, x, y)`` (ops.where; a non-bool condition is compared with 0),
   ``sum prod mean max amax min amin argmax`` (the reductions; ``mean`` of
   integers in float64, as NumPy), ``dot`` of 1-d and 2-d operands
   (``@``), ``clip`` with scalar bounds, ``copy``, ``copyto`` into a tensor,
   the ``*_like`` creation functions; views: ``reshape ravel transpose
   swapaxes moveaxis squeeze expand_dims``; no data at all: ``shape ndim
   size result_type``. Dtype rules are vkflow's: ``where`` promotes by the array API
   table, joining refuses mixed dtypes (TypeError) unless ``dtype=``
   names one, Python data takes the tensors' dtype.
3. NumPy for the rest, and for keywords and forms vkflow cannot honour
   (``where=``, ``initial=``, ``order='F'``, a NumPy ``out``, one-argument
   ``where``): the tensors in the arguments (also inside lists, tuples and
   dicts) become read-only NumPy arrays, after their pending GPU work (so
   a NumPy function that writes its argument raises instead of writing a
   copy), and NumPy's function runs on them. No tensor reaches NumPy, so
   NumPy's own internal calls do not come back here.
"""

import operator

from . import _creation, _ufuncs, _views, ops
from ._dtypes import _kind, _numpy
from ._errors import UnsupportedError
from ._tensor import Tensor
from ._ufuncs import FALLBACK, host_value, into

__all__ = ["install"]

_MISSING = object()


def _axis_error(axis, ndim):
    np = _numpy()
    cls = getattr(getattr(np, "exceptions", np), "AxisError")
    return cls(axis, ndim)


def _axis(axis, ndim):
    a = operator.index(axis)
    if not -ndim <= a < ndim:
        raise _axis_error(a, ndim)
    return a % ndim


def _axes(axis, ndim):
    axes = tuple(_axis(a, ndim) for a in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    if len(set(axes)) != len(axes):
        raise ValueError("repeated axis")
    return axes


# --- joining ----------------------------------------------------------------------------

def _item(x):
    """(value, dtype or None for Python data, shape) of a joined input, or
    None when vkflow does not take it."""
    np = _numpy()
    if isinstance(x, Tensor):
        return x, x.dtype, x.shape
    if isinstance(x, (np.ndarray, np.generic)):
        return x, x.dtype.name, np.shape(x)
    if isinstance(x, (list, tuple, bool, int, float)):
        arr = np.asarray(x)
        return (arr, None, arr.shape) if arr.dtype.kind in "biuf" else None
    return None


def _join(items, axis, out, dtype, casting, what):
    """concatenate of _item triples along axis (None: flattened)."""
    np = _numpy()
    tensors = [v for v, _, _ in items if isinstance(v, Tensor)]
    mgr = (tensors[0] if tensors else out).device
    kinds = [d for _, d, _ in items if d is not None]
    if dtype is not None:
        dtype = np.dtype(dtype).name
        for d in kinds:
            _ufuncs._can_cast(d, dtype, casting, "array data")
    elif len(set(kinds)) > 1:
        raise TypeError("%s: the arrays' dtypes differ (%s): vkflow does not promote dtypes; "
                        "cast with astype" % (what, ", ".join(map(str, dict.fromkeys(kinds)))))
    dtype = dtype or kinds[0]
    if axis is None:
        items = [(v.reshape(-1) if isinstance(v, Tensor) else np.ravel(v), d,
                  (int(np.prod(s, dtype=np.int64)),)) for v, d, s in items]
        axis = 0
    if not items:
        raise ValueError("need at least one array to concatenate")
    nd = len(items[0][2])
    if nd == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    axis = _axis(axis, nd)
    first = items[0][2]
    for i, (_, _, s) in enumerate(items[1:], 1):
        if len(s) != nd:
            raise ValueError("all the input arrays must have same number of dimensions, but the "
                             "array at index 0 has %d dimension(s) and the array at index %d has "
                             "%d dimension(s)" % (nd, i, len(s)))
        for k in range(nd):
            if k != axis and s[k] != first[k]:
                raise ValueError("all the input array dimensions except for the concatenation "
                                 "axis must match exactly, but along dimension %d, the array at "
                                 "index 0 has size %d and the array at index %d has size %d"
                                 % (k, first[k], i, s[k]))
    shape = first[:axis] + (sum(s[axis] for _, _, s in items),) + first[axis + 1:]
    if out is None:
        res = mgr.tensor(shape, dtype=dtype)
    else:
        if out.shape != shape:
            raise ValueError("Output array is the wrong shape: %r, not %r" % (out.shape, shape))
        _ufuncs._can_cast(dtype, out.dtype, casting, "%s output" % what)
        res = out
    pos = 0
    for v, _, s in items:
        if s[axis]:
            key = (slice(None),) * axis + (slice(pos, pos + s[axis]),)
            _views.assign(_views.view_of(res, key), v)
            pos += s[axis]
    return res


def _items(arrays):
    if not isinstance(arrays, (list, tuple)):
        return None
    items = [_item(x) for x in arrays]
    return None if any(i is None for i in items) else items


def concatenate(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    items = _items(arrays)
    if items is None or (out is not None and not isinstance(out, Tensor)):
        return FALLBACK
    return _join(items, axis, out, dtype, casting, "concatenate")


def _expanded(item, axis):
    v, d, s = item
    key = (slice(None),) * axis + (None,)
    if isinstance(v, Tensor):
        return _views.view_of(v, key), d, s[:axis] + (1,) + s[axis:]
    arr = _numpy().asarray(v)[key]
    return arr, d, arr.shape


def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    items = _items(arrays)
    if items is None or (out is not None and not isinstance(out, Tensor)):
        return FALLBACK
    if not items:
        raise ValueError("need at least one array to stack")
    if len({s for _, _, s in items}) != 1:
        raise ValueError("all input arrays must have the same shape")
    axis = _axis(axis, len(items[0][2]) + 1)
    return _join([_expanded(i, axis) for i in items], axis, out, dtype, casting, "stack")


def _at_least(item, n):
    """An item with at least n (1 or 2) dimensions, as NumPy's atleast_nd."""
    v, d, s = item
    if len(s) >= n:
        return item
    key = (None,) * (n - len(s)) + (Ellipsis,)
    if isinstance(v, Tensor):
        return _views.view_of(v, key), d, (1,) * (n - len(s)) + tuple(s)
    arr = _numpy().asarray(v)[key]
    return arr, d, arr.shape


def vstack(tup, *, dtype=None, casting="same_kind"):
    items = _items(tup)
    if items is None:
        return FALLBACK
    return _join([_at_least(i, 2) for i in items], 0, None, dtype, casting, "vstack")


def hstack(tup, *, dtype=None, casting="same_kind"):
    items = _items(tup)
    if items is None:
        return FALLBACK
    items = [_at_least(i, 1) for i in items]
    axis = 0 if items and len(items[0][2]) == 1 else 1
    return _join(items, axis, None, dtype, casting, "hstack")


# --- element-wise -------------------------------------------------------------------------

def where(condition, x=_MISSING, y=_MISSING):
    if x is _MISSING or y is _MISSING:
        return FALLBACK  # where(condition) is nonzero: NumPy's
    if isinstance(condition, Tensor):
        if condition.dtype != "bool":
            condition = ops.not_equal(condition, 0)
    else:
        condition = _numpy().asarray(condition, dtype=bool)
    return _ufuncs._run("where", lambda: ops.where(condition, x, y))


def clip(a, a_min=_MISSING, a_max=_MISSING, out=None, **kwargs):
    np = _numpy()
    bounds = [None if b is _MISSING else b for b in (a_min, a_max)]
    if kwargs or not isinstance(a, Tensor) or all(b is None for b in bounds) or \
            (out is not None and not isinstance(out, Tensor)) or \
            any(b is not None and np.ndim(b) != 0 for b in bounds):
        return FALLBACK
    return ops.clip(a, bounds[0], bounds[1], out=out)


def copy(a, order="K", subok=False):
    return a.copy() if isinstance(a, Tensor) else FALLBACK


def copyto(dst, src, casting="same_kind", where=True):
    np = _numpy()
    if not isinstance(dst, Tensor) or where is not True:
        return FALLBACK
    if isinstance(src, Tensor):
        _ufuncs._can_cast(src.dtype, dst.dtype, casting, "array data")
    elif not _ufuncs._is_python_scalar(src):
        _ufuncs._can_cast(np.asarray(src).dtype.name, dst.dtype, casting, "array data")
    _views.assign(dst, src)
    return None


def dot(a, b, out=None):
    nd = [getattr(x, "ndim", None) for x in (a, b)]
    if out is not None and not isinstance(out, Tensor):
        return FALLBACK
    if not all(n in (1, 2) for n in nd):
        return FALLBACK  # scalars and N-d: NumPy's rules differ from matmul's
    res = _ufuncs._run("dot", lambda: _ufuncs._binary("matmul", a, b, None))
    if res is NotImplemented:
        return FALLBACK
    if out is None:
        return res
    try:
        return into(out, res, "same_kind", "dot")
    finally:
        res.close()


# --- reductions ---------------------------------------------------------------------------

def _reduction(name):
    def f(a, axis=None, dtype=None, out=None, keepdims=False, initial=_MISSING,
          where=_MISSING):
        if not isinstance(a, Tensor) or initial is not _MISSING or \
                (where is not _MISSING and where is not True) or \
                (out is not None and not isinstance(out, Tensor)):
            return FALLBACK
        if name == "mean" and dtype is None and _kind(a.dtype) in "bi":
            try:  # NumPy's mean of integers is float64
                a = ops.astype(a, "float64")
            except UnsupportedError:
                a = ops.astype(a, "float32")
        if dtype is not None:
            a = ops.astype(a, _numpy().dtype(dtype).name, copy=False)
        return getattr(ops, name)(a, axis=axis, keepdims=bool(keepdims), out=out)
    return f


def _extremum(name):
    def f(a, axis=None, out=None, keepdims=False, initial=_MISSING, where=_MISSING):
        if not isinstance(a, Tensor) or initial is not _MISSING or \
                (where is not _MISSING and where is not True) or \
                (out is not None and not isinstance(out, Tensor)):
            return FALLBACK
        return getattr(ops, name)(a, axis=axis, keepdims=bool(keepdims), out=out)
    return f


def argmax(a, axis=None, out=None, *, keepdims=False):
    if not isinstance(a, Tensor) or (out is not None and not isinstance(out, Tensor)):
        return FALLBACK
    return ops.argmax(a, axis=axis, keepdims=bool(keepdims), out=out)


# --- views and metadata -------------------------------------------------------------------

def reshape(a, newshape=None, order="C", *, shape=None, copy=None):
    if not isinstance(a, Tensor) or order != "C":
        return FALLBACK
    new = shape if shape is not None else newshape
    return a.reshape(new, copy=copy)


def ravel(a, order="C"):
    if not isinstance(a, Tensor) or order != "C":
        return FALLBACK
    return a.reshape(-1)


def _permute(a, axes):
    return _views._permuted(a, axes)


def transpose(a, axes=None):
    if not isinstance(a, Tensor):
        return FALLBACK
    n = a.ndim
    if axes is None:
        return _permute(a, tuple(reversed(range(n))))
    axes = tuple(_axis(k, n) for k in axes)
    if sorted(axes) != list(range(n)):
        raise ValueError("axes don't match array")
    return _permute(a, axes)


def swapaxes(a, axis1, axis2):
    if not isinstance(a, Tensor):
        return FALLBACK
    perm = list(range(a.ndim))
    i, j = _axis(axis1, a.ndim), _axis(axis2, a.ndim)
    perm[i], perm[j] = j, i
    return _permute(a, perm)


def moveaxis(a, source, destination):
    if not isinstance(a, Tensor):
        return FALLBACK
    src, dst = _axes(source, a.ndim), _axes(destination, a.ndim)
    if len(src) != len(dst):
        raise ValueError("`source` and `destination` arguments must have the same number of "
                         "elements")
    order = [k for k in range(a.ndim) if k not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return _permute(a, order)


def squeeze(a, axis=None):
    if not isinstance(a, Tensor):
        return FALLBACK
    if axis is None:
        axes = tuple(k for k, d in enumerate(a.shape) if d == 1)
    else:
        axes = _axes(axis, a.ndim)
        if any(a.shape[k] != 1 for k in axes):
            raise ValueError("cannot select an axis to squeeze out which has size not equal "
                             "to one")
    return _views.view_of(a, tuple(0 if k in axes else slice(None) for k in range(a.ndim)))


def expand_dims(a, axis):
    if not isinstance(a, Tensor):
        return FALLBACK
    axes = _axes(axis, a.ndim + (len(axis) if isinstance(axis, (tuple, list)) else 1))
    n = a.ndim + len(axes)
    return _views.view_of(a, tuple(None if k in axes else slice(None) for k in range(n)))


def shape(a):
    return tuple(a.shape) if isinstance(a, Tensor) else FALLBACK


def ndim(a):
    return a.ndim if isinstance(a, Tensor) else FALLBACK


def size(a, axis=None):
    if not isinstance(a, Tensor):
        return FALLBACK
    return a.size if axis is None else a.shape[_axis(axis, a.ndim)]


def result_type(*arrays_and_dtypes):
    np = _numpy()
    return np.result_type(*[np.dtype(x.dtype) if isinstance(x, Tensor) else x
                            for x in arrays_and_dtypes])


def _make_like(name, a, fill, dtype, order, shape):
    if not isinstance(a, Tensor) or order not in ("K", "A", "C"):
        return FALLBACK
    args = () if fill is _MISSING else (fill,)
    if shape is not None:
        shp = (shape,) if isinstance(shape, int) else tuple(shape)
        return getattr(_creation, name)(shp, *args, dtype=dtype or a.dtype, device=a.device)
    return getattr(_creation, name + "_like")(a, *args, dtype=dtype)


def _like(name):
    def f(a, dtype=None, order="K", subok=True, shape=None):
        return _make_like(name, a, _MISSING, dtype, order, shape)
    return f


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None):
    return _make_like("full", a, fill_value, dtype, order, shape)


# NumPy function name: the device implementation (FALLBACK declines).
_BY_NAME = {
    "concatenate": concatenate, "stack": stack, "vstack": vstack, "hstack": hstack,
    "where": where, "clip": clip, "copy": copy, "copyto": copyto, "dot": dot,
    "sum": _reduction("sum"), "prod": _reduction("prod"), "mean": _reduction("mean"),
    "max": _extremum("max"), "amax": _extremum("max"), "min": _extremum("min"),
    "amin": _extremum("min"), "argmax": argmax,
    "reshape": reshape, "ravel": ravel, "transpose": transpose, "swapaxes": swapaxes,
    "moveaxis": moveaxis, "squeeze": squeeze, "expand_dims": expand_dims,
    "shape": shape, "ndim": ndim, "size": size, "result_type": result_type,
    "zeros_like": _like("zeros"), "ones_like": _like("ones"), "empty_like": _like("empty"),
    "full_like": full_like,
}
_table = {}  # NumPy function object: implementation, filled on first use


def _host_args(x):
    """x with every tensor (also in lists, tuples and dicts) a read-only
    NumPy array."""
    if isinstance(x, Tensor):
        return host_value(x)
    if type(x) in (list, tuple):
        return type(x)(_host_args(v) for v in x)
    if type(x) is dict:
        return {k: _host_args(v) for k, v in x.items()}
    return x


def array_function(self, func, types, args, kwargs):
    """NumPy's function protocol (NEP 18): vkflow's implementation on the
    device where it has one (vkflow tensors), else NumPy's on host copies;
    NotImplemented for arguments of other overriding types. The rules are in
    the module doc of vkflow._functions."""
    np = _numpy()
    if not all(issubclass(t, (Tensor, np.ndarray)) for t in types):
        return NotImplemented
    if not _table:
        _table.update({getattr(np, n): f for n, f in _BY_NAME.items() if hasattr(np, n)})
    impl = _table.get(func)
    if impl is not None:
        res = impl(*args, **kwargs)
        if res is not FALLBACK:
            return res
    return func(*_host_args(args), **_host_args(kwargs))


array_function.__name__ = "__array_function__"
array_function.__qualname__ = "Tensor.__array_function__"


def install(cls):
    """Adds ``__array_function__`` to cls."""
    cls.__array_function__ = array_function
