"""NumPy's ufunc protocol (NEP 13) for :class:`vkflow.Tensor`:
``Tensor.__array_ufunc__``, added by :func:`install`.

``np.exp(t)``, ``np.add(a, t, out=o)``, ``ndarray + t`` and
``np.add.reduce(t)`` run on the tensor's device and return vkflow tensors
where vkflow has the op; everything else falls back to NumPy on host copies
of the tensors and returns NumPy's result. The rule, in order:

1. An input or ``out`` whose type overrides ``__array_ufunc__`` (other than
   ``numpy.ndarray`` and vkflow tensors) gets the call: NotImplemented, as
   NEP 13 says (NumPy then asks that operand, and raises TypeError when all
   decline).
2. The device, for the method ``__call__`` of a ufunc with one output
   whose vkflow op exists: the binary operators' ufuncs (``add subtract
   multiply divide floor_divide remainder power matmul``, the bitwise ones,
   the shifts, the comparisons) call the tensor's operator, so their dtype
   rules are the operators' (promotion by the standard's table; Python scalars and lists take
   the tensor's dtype; ``/`` of integers is float64); ``negative positive
   absolute invert`` the unary operators; any other ufunc calls the
   ``vkflow.ops`` function of its name (``exp log sqrt tanh maximum minimum
   logical_and ...``, and ops added later) with the inputs. Inputs are
   tensors, NumPy arrays and scalars (uploaded to the tensor's device, as
   the operators do), and Python scalars. ``out`` is a vkflow tensor or
   view (the result is written into it on the device: by the op itself
   when it fits, through the in-place operator when ``out`` is the first
   input, else computed and copied in, broadcast, with NumPy's
   ``casting='same_kind'`` check); ``dtype`` casts the inputs on the device
   (not for comparisons); ``casting``, ``order`` (K, A, C) and ``subok``
   are accepted. Also ``reduce`` of ``add multiply maximum minimum``
   (``axis``, ``dtype``, ``out``, ``keepdims``): the ``vkflow.ops``
   reductions.
3. NumPy on the host for the rest: other methods (``accumulate outer
   reduceat``, ``at``, which writes its result back into the tensor),
   ufuncs without a vkflow op or with two outputs, ``where=``,
   ``initial=``, a NumPy ``out``. The tensors become read-only NumPy arrays
   (after their pending GPU work); a tensor ``out`` receives the result,
   checked with ``casting``.

Errors of the device path are vkflow's: dtypes without a promotion and a
dtype an op lacks are TypeErrors (``np.exp`` of an int32 tensor: cast it first), shapes
that do not broadcast ValueErrors.
"""

from . import _views, ops
from ._array import asarray
from ._dtypes import _numpy
from ._operators import _DTYPE_ERROR, _python_data
from ._tensor import Tensor

__all__ = ["install", "host_value", "into", "FALLBACK"]

FALLBACK = object()  # a device path declines: NumPy on the host

# ufunc name: the operator stem (binary: x.__stem__(y), y.__rstem__(x)).
_BINARY = {
    "add": "add", "subtract": "sub", "multiply": "mul", "divide": "truediv",
    "true_divide": "truediv", "floor_divide": "floordiv", "remainder": "mod",
    "power": "pow", "matmul": "matmul", "bitwise_and": "and", "bitwise_or": "or",
    "bitwise_xor": "xor", "left_shift": "lshift", "right_shift": "rshift",
    "less": "lt", "less_equal": "le", "greater": "gt", "greater_equal": "ge",
    "equal": "eq", "not_equal": "ne",
}
# A comparison with the tensor second is the mirrored one: a < t is t > a.
_MIRROR = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq", "ne": "ne"}
_UNARY = {"negative": "__neg__", "positive": "__pos__", "absolute": "__abs__",
          "invert": "__invert__"}
# ufunc name: vkflow.ops name, where they differ (else the same name).
_OPS_NAMES = {"bitwise_not": "bitwise_invert", "arcsin": "asin", "arccos": "acos", "arctan": "atan",
              "arctan2": "atan2", "arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh"}
# ufunc.reduce: the vkflow.ops reduction.
_REDUCE = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min"}
# Results whose dtype is bool whatever the inputs': dtype= is NumPy's then.
_BOOL_RESULT = {"less", "less_equal", "greater", "greater_equal", "equal", "not_equal",
                "logical_and", "logical_or", "logical_xor", "logical_not"}
_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")
_REGISTRY = {"call", "names", "register", "unregister", "synchronize", "cache_stats"}


def _overrides(x):
    """Whether x's type overrides __array_ufunc__ (None included), other
    than ndarray and vkflow tensors: it gets the call."""
    np = _numpy()
    f = getattr(type(x), "__array_ufunc__", FALLBACK)
    return f is not FALLBACK and f is not np.ndarray.__array_ufunc__ and \
        f is not Tensor.__array_ufunc__


def host_value(x):
    """A tensor as a read-only NumPy array (after its pending GPU work), so
    a NumPy function cannot write a copy of it silently; anything else as
    it is."""
    if not isinstance(x, Tensor):
        return x
    arr = x.__array__()
    if arr.flags.writeable:
        arr = arr.view()
        arr.flags.writeable = False
    return arr


def _is_python_scalar(x):
    return isinstance(x, (bool, int, float)) and not hasattr(x, "dtype")


def _can_cast(src, dst, casting, what):
    """NumPy's casting check (TypeError as NumPy's UFuncTypeError says)."""
    np = _numpy()
    if src != dst and not np.can_cast(src, dst, casting):
        raise TypeError("Cannot cast %s from dtype('%s') to dtype('%s') with casting rule %r"
                        % (what, src, dst, casting))


def into(out, res, casting, name):
    """res (a tensor, or NumPy data) written into the tensor out on the
    device, broadcast to out's shape, after NumPy's checks; returns out."""
    np = _numpy()
    dtype = res.dtype if isinstance(res, Tensor) else np.asarray(res).dtype.name
    shape = res.shape if isinstance(res, Tensor) else np.shape(res)
    _can_cast(dtype, out.dtype, casting, "%s output" % name)
    try:
        full = np.broadcast_shapes(tuple(shape), out.shape)
    except ValueError:
        full = None
    if full != out.shape:
        raise ValueError("%s: non-broadcastable output operand with shape %r doesn't match the "
                         "broadcast shape %r" % (name, out.shape, full or tuple(shape)))
    _views.assign(out, res)
    return out


def _run(name, f):
    """f() with the library's dtype errors as TypeError, as the operators."""
    try:
        return f()
    except ValueError as e:
        if _DTYPE_ERROR.search(str(e)):
            raise TypeError("numpy.%s on vkflow tensors: %s" % (name, e)) from e
        raise


def _binary(stem, a, b, o):
    """The operator stem on a and b (one a Tensor); in place when o is a."""
    if isinstance(a, Tensor):
        if o is a and stem not in _MIRROR:
            return getattr(a, "__i%s__" % stem)(b)
        return getattr(a, "__%s__" % stem)(b)
    if stem in _MIRROR:
        return getattr(b, "__%s__" % _MIRROR[stem])(a)
    return getattr(b, "__r%s__" % stem)(a)


def _op_function(name):
    name = _OPS_NAMES.get(name, name)
    if name.startswith("_") or name in _REGISTRY:
        return None
    f = getattr(ops, name, None)
    return f if callable(f) else None


def _cast_inputs(inputs, dtype, casting, name):
    """The array inputs converted to dtype (dtype=), after NumPy's check."""
    np = _numpy()
    res = []
    for i, x in enumerate(inputs):
        if isinstance(x, Tensor):
            _can_cast(x.dtype, dtype, casting, "ufunc %r input %d" % (name, i))
            x = ops.astype(x, dtype, copy=False)
        elif not _is_python_scalar(x):
            x = np.asarray(x)
            _can_cast(x.dtype.name, dtype, casting, "ufunc %r input %d" % (name, i))
            x = x.astype(dtype, copy=False)
        res.append(x)
    return tuple(res)


def _lists_as_data(inputs, name):
    """Python lists and tuples among the inputs in the first tensor's dtype,
    by the operators' rules for Python data (TypeError, OverflowError)."""
    np = _numpy()
    t = next((x for x in inputs if isinstance(x, Tensor)), None)
    res = []
    for x in inputs:
        if t is not None and isinstance(x, (list, tuple)):
            arr = np.asarray(x)
            if arr.dtype.kind in "biuf":
                x = _python_data(arr, t.dtype, "numpy." + name, (t, x))
        res.append(x)
    return tuple(res)


def _call(ufunc, inputs, out, kwargs):
    """ufunc(*inputs) on the device, or FALLBACK."""
    np = _numpy()
    name = ufunc.__name__
    o = out[0] if out else None
    dtype = kwargs.pop("dtype", None)
    casting = kwargs.pop("casting", "same_kind")
    if ufunc.nout != 1 or len(out) > 1 or (o is not None and not isinstance(o, Tensor)):
        return FALLBACK
    if kwargs.pop("order", "K") not in ("K", "A", "C", None) or kwargs.pop("where", True) \
            is not True or casting not in _CASTINGS:
        return FALLBACK
    kwargs.pop("subok", None)
    if kwargs or len(inputs) != ufunc.nin:
        return FALLBACK
    if not any(isinstance(x, Tensor) for x in inputs):  # only out is a tensor
        if all(_is_python_scalar(x) for x in inputs):
            return FALLBACK
        inputs = tuple(x if _is_python_scalar(x) else asarray(x, device=o.device, copy=True)
                       for x in inputs)
    if dtype is not None:
        if name in _BOOL_RESULT:
            return FALLBACK
        inputs = _cast_inputs(inputs, np.dtype(dtype).name, casting, name)
    stem, unary = _BINARY.get(name), _UNARY.get(name)
    if stem is not None:
        # In place (out is the first input) checks NumPy's default casting only.
        inplace = o if casting == "same_kind" else None
        res = _run(name, lambda: _binary(stem, inputs[0], inputs[1], inplace))
    elif unary is not None:
        res = _run(name, lambda: getattr(inputs[0], unary)())
    else:
        f = _op_function(name)
        if f is None:
            return FALLBACK
        inputs = _lists_as_data(inputs, name)
        if o is not None:
            try:  # straight into out when the op's result fits it
                return _run(name, lambda: f(*inputs, out=o))
            except (ValueError, TypeError):
                pass  # computed below, then copied in (or NumPy's error)
        res = _run(name, lambda: f(*inputs))
    if res is NotImplemented:
        return FALLBACK
    if o is None or res is o:
        return res
    try:
        return into(o, res, casting, name)
    finally:
        res.close()


def _reduce(ufunc, inputs, out, kwargs):
    """ufunc.reduce(x) on the device (a vkflow.ops reduction), or FALLBACK."""
    np = _numpy()
    op = _REDUCE.get(ufunc.__name__)
    o = out[0] if out else None
    x = inputs[0] if len(inputs) == 1 else None
    axis = kwargs.pop("axis", 0)
    dtype = kwargs.pop("dtype", None)
    keepdims = kwargs.pop("keepdims", False)
    if kwargs.pop("where", True) is not True:
        return FALLBACK
    if op is None or kwargs or not isinstance(x, Tensor) or axis == () or len(out) > 1 or \
            (o is not None and not isinstance(o, Tensor)) or \
            (x.dtype == "bool" and op != "sum" and dtype is None):
        return FALLBACK
    if dtype is not None:
        x = ops.astype(x, np.dtype(dtype).name, copy=False)
    return _run(ufunc.__name__ + ".reduce",
                lambda: getattr(ops, op)(x, axis=axis, keepdims=bool(keepdims), out=o))


def _on_host(ufunc, method, inputs, out, kwargs):
    """NumPy's ufunc method on host copies; tensor outs receive the result."""
    np = _numpy()
    if method == "at" and isinstance(inputs[0], Tensor):
        t = inputs[0]
        arr = t.__array__(copy=True)
        ufunc.at(arr, *[host_value(x) for x in inputs[1:]])
        _views.assign(t, arr)
        return None
    casting = kwargs.get("casting", "same_kind")
    host_out = tuple(None if isinstance(o, Tensor) else o for o in out)
    if any(o is not None for o in host_out):
        kwargs["out"] = host_out
    res = getattr(ufunc, method)(*[host_value(x) for x in inputs], **kwargs)
    if not any(isinstance(o, Tensor) for o in out):
        return res
    many = isinstance(res, tuple)
    res = list(res) if many else [res]
    for i, o in enumerate(out):
        if isinstance(o, Tensor):
            res[i] = into(o, np.asarray(res[i]), casting, ufunc.__name__)
    return tuple(res) if many else res[0]


def array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """NumPy's ufunc protocol (NEP 13): the ufunc on the device where vkflow
    has its op (a vkflow Tensor), else NumPy on host copies (NumPy's
    result); NotImplemented when another operand overrides the protocol.
    The rules are in the module doc of vkflow._ufuncs."""
    out = kwargs.pop("out", None) or ()
    out = out if isinstance(out, tuple) else (out,)
    if all(o is None for o in out):
        out = ()
    if any(_overrides(x) for x in inputs + out):
        return NotImplemented
    res = FALLBACK
    if method == "__call__":
        res = _call(ufunc, inputs, out, dict(kwargs))
    elif method == "reduce":
        res = _reduce(ufunc, inputs, out, dict(kwargs))
    if res is FALLBACK:
        res = _on_host(ufunc, method, inputs, out, kwargs)
    return res


array_ufunc.__name__ = "__array_ufunc__"
array_ufunc.__qualname__ = "Tensor.__array_ufunc__"


def install(cls):
    """Adds ``__array_ufunc__`` to cls."""
    cls.__array_ufunc__ = array_ufunc
