"""Array behaviour for :class:`vkflow.Tensor`: Python operators, the NumPy
protocol (``__array__``, ``__float__``, ``len``, iteration, ``repr``), ``T``,
``mT``, ``reshape``, ``astype`` and ``__array_namespace__``.

Attached by ``install(Tensor)`` at the end of vkflow/__init__.py: the methods
are defined on :class:`_ArrayMethods` and on the operator table below, and
copied onto Tensor (which stays hashable, by identity: Managers keep their
tensors in weak sets).

Operators call :mod:`vkflow.ops` (looked up by name at call time) and follow
its rules: the two operands must have the same dtype (no promotion: a
TypeError names both), a Python scalar takes the tensor's dtype (a float with
an integer or bool tensor, or a number with a bool tensor, is a TypeError; an
int out of the dtype's range an OverflowError, as NumPy 2 says). Exceptions:
``/`` of integer or bool tensors casts them to float64 first (float32 where
the device lacks float64), as NumPy's true_divide; bool ``+ * & | ^ ~`` are
the logical operations. docs/PYTHON.md has the full rules.
"""

import numbers
import operator
import re

from . import Tensor, UnsupportedError, _HostView, _dtype_name, _numpy, ops
from . import _array

__all__ = ["install"]

_FLOAT = {"float16", "float32", "float64"}
_INT = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"}

# Dunder stem: (symbol, vkflow.ops name, category).
_SPECS = {
    "add": ("+", "add", "arith"), "sub": ("-", "sub", "arith"),
    "mul": ("*", "mul", "arith"), "truediv": ("/", "div", "div"),
    "floordiv": ("//", "floor_divide", "arith"), "mod": ("%", "remainder", "arith"),
    "pow": ("**", "pow", "arith"), "matmul": ("@", "matmul", "matmul"),
    "and": ("&", "bitwise_and", "bitwise"), "or": ("|", "bitwise_or", "bitwise"),
    "xor": ("^", "bitwise_xor", "bitwise"),
    "lshift": ("<<", "bitwise_left_shift", "shift"),
    "rshift": (">>", "bitwise_right_shift", "shift"),
    "lt": ("<", "less", "compare"), "le": ("<=", "less_equal", "compare"),
    "gt": (">", "greater", "compare"), "ge": (">=", "greater_equal", "compare"),
    "eq": ("==", "equal", "compare"), "ne": ("!=", "not_equal", "compare"),
}
# What the operators are on bool tensors (NumPy's bool + and * are or, and).
_BOOL_OPS = {"add": "logical_or", "mul": "logical_and", "and": "logical_and",
             "or": "logical_or", "xor": "logical_xor"}
# Library messages that mean "wrong dtype": TypeError, as NumPy's ufuncs.
_DTYPE_ERROR = re.compile(r"dtype \w+ is not supported|must have the same dtype")


def _kind(dtype):
    return "b" if dtype == "bool" else "f" if dtype in _FLOAT else "i" if dtype in _INT else "?"


def _describe(x):
    if isinstance(x, Tensor):
        return "vkflow.Tensor of %s" % x.dtype
    if isinstance(x, (bool, int, float)) and not hasattr(x, "dtype"):
        return "Python %s %r" % (type(x).__name__, x)
    dt = _array._producer_dtype(x)
    name = "%s.%s" % (type(x).__module__.split(".")[0], type(x).__name__)
    return name + (" of %s" % dt if dt else "")


def _run(name, sym, args, out=None):
    """vkflow.ops.<name>(*args, out=out), with the library's dtype errors
    as TypeError naming the operator."""
    fn = getattr(ops, name, None)
    if fn is None:
        raise TypeError("operator %s needs vkflow.ops.%s, which this vkflow lacks" % (sym, name))
    try:
        return fn(*args, out=out)
    except ValueError as e:
        if _DTYPE_ERROR.search(str(e)):
            raise TypeError("operator %s: %s" % (sym, e)) from e
        raise


def _operand(x):
    """(value, dtype, shape, python_data) for an operand; None when x is no
    operand (the operator returns NotImplemented). dtype is None for Python
    scalars and for producers whose dtype is unknown."""
    if isinstance(x, Tensor):
        return x, x.dtype, x.shape, False
    np = _numpy()
    if isinstance(x, (np.ndarray, np.generic)):
        return x, x.dtype.name, x.shape, False
    if isinstance(x, (bool, int, float)):
        return x, None, (), True
    if isinstance(x, (list, tuple)):
        arr = np.asarray(x)
        return (arr, None, arr.shape, True) if arr.dtype.kind in "biuf" else None
    if hasattr(x, "__dlpack__"):
        shape = getattr(x, "shape", None)
        return x, _array._producer_dtype(x), None if shape is None else tuple(shape), False
    if hasattr(x, "__array__"):
        arr = np.asarray(x)
        return arr, arr.dtype.name, arr.shape, False
    return None


def _python_data(value, dtype, sym, pair):
    """Python data (a scalar, or a list already made a NumPy array) in the
    tensor's dtype, by the library's scalar rules; TypeError or
    OverflowError. pair: the operands in order, for messages."""
    np = _numpy()
    arr = value if isinstance(value, np.ndarray) else None
    kind = arr.dtype.kind if arr is not None else (
        "b" if isinstance(value, bool) else "i" if isinstance(value, int) else "f")
    tk = _kind(dtype)
    if (tk == "b" and kind != "b") or (tk == "i" and kind == "f"):
        what = "Python data" if arr is not None else "a Python %s" % type(value).__name__
        raise TypeError("operator %s: %s and %s: %s does not take the tensor's dtype %s "
                        "(vkflow does not promote; cast the tensor first, e.g. x.astype(%r))"
                        % (sym, _describe(pair[0]), _describe(pair[1]), what, dtype,
                           "int32" if tk == "b" and kind == "i" else "float32"))
    if tk == "i" and kind == "i":
        info = np.iinfo(dtype)
        lo, hi = (value, value) if arr is None else (
            (int(arr.min()), int(arr.max())) if arr.size else (0, 0))
        if lo < info.min or hi > info.max:
            raise OverflowError("operator %s: Python integer %d out of bounds for %s"
                                % (sym, lo if lo < info.min else hi, dtype))
    return value if arr is None else arr.astype(dtype)


def _broadcast(s1, s2, sym):
    try:
        return tuple(_numpy().broadcast_shapes(s1, s2))
    except ValueError:
        raise ValueError("operator %s: operands could not be broadcast together with shapes "
                         "%r %r" % (sym, s1, s2)) from None


def _as_dtype(x, dtype):
    """An operand of / converted to dtype (Python scalars stay as they are)."""
    if isinstance(x, Tensor):
        return ops.astype(x, dtype)
    if isinstance(x, (bool, int, float)) and not hasattr(x, "dtype"):
        return x
    return _numpy().asarray(x, dtype=dtype)


def _true_divide(a, b, dtype, out=None):
    """a / b: integer and bool operands as float64 (float32 where the device
    lacks float64)."""
    if dtype in _FLOAT:
        return _run("div", "/", (a, b), out)
    try:
        return _run("div", "/", (_as_dtype(a, "float64"), _as_dtype(b, "float64")), out)
    except UnsupportedError:
        return _run("div", "/", (_as_dtype(a, "float32"), _as_dtype(b, "float32")), out)


def _check_pow(exp):
    """NumPy refuses negative integer powers of integers: True when the
    integer exponent exp (a tensor, Python data or a NumPy array) has a
    negative element."""
    np = _numpy()
    if isinstance(exp, Tensor):
        return exp.size > 0 and int(ops.min(exp)) < 0
    if isinstance(exp, (bool, int, float, np.ndarray, np.generic)):
        return np.size(exp) > 0 and np.min(exp) < 0
    return False


def _apply(self, stem, other, reflected=False, inplace=False):
    """The operator stem between self and other (other first when reflected;
    into self when inplace). NotImplemented when other is no operand."""
    sym, name, cat = _SPECS[stem]
    sym = sym + "=" if inplace else sym
    op = _operand(other)
    if op is None or (cat == "matmul" and op[3] and not isinstance(op[0], _numpy().ndarray)):
        return NotImplemented
    value, odt, oshape, python = op
    dtype = self.dtype
    pair = (other, self) if reflected else (self, other)
    if python:
        if not (cat == "div" and _kind(dtype) != "f"):  # / casts integer tensors to float
            value = _python_data(value, dtype, sym, pair)
    elif odt is not None and odt != dtype:
        raise TypeError("operator %s: operand dtypes differ: %s and %s (vkflow does not promote "
                        "dtypes; cast one with astype)" % (sym, _describe(pair[0]),
                                                           _describe(pair[1])))
    k = _kind(dtype)
    if k == "b" and (cat in ("arith", "bitwise", "shift")):
        if stem not in _BOOL_OPS:
            hint = (" use the ^ operator or logical_xor instead" if stem == "sub" else
                    " cast to an integer dtype first")
            raise TypeError("operator %s is not supported for bool tensors:%s" % (sym, hint))
        name = _BOOL_OPS[stem]
    elif (cat == "bitwise" and k not in "bi") or (cat == "shift" and k != "i"):
        raise TypeError("operator %s is not supported for %s tensors (integer%s dtypes only)"
                        % (sym, dtype, "" if cat == "shift" else " or bool"))
    shape = None
    if oshape is not None and cat != "matmul":
        shape = _broadcast(*((oshape, self.shape) if reflected else (self.shape, oshape)), sym)
    args = (value, self) if reflected else (self, value)
    if stem == "pow" and k == "i" and _check_pow(args[1]):
        raise ValueError("operator %s: integers to negative integer powers are not allowed"
                         % sym)
    if not inplace:
        if cat == "div":
            return _true_divide(args[0], args[1], dtype)
        return _run(name, sym, args)
    # In place: the result must have self's shape and dtype, as NumPy's out=.
    if cat == "div" and k != "f":
        raise TypeError("operator %s: cannot cast the float64 result of / to %s with casting "
                        "rule 'same_kind' (use x = x / y)" % (sym, dtype))
    if shape is not None and shape != self.shape:
        raise ValueError("operator %s: non-broadcastable output operand with shape %r doesn't "
                         "match the broadcast shape %r" % (sym, self.shape, shape))
    if cat == "matmul":
        # The product reads what it would write: compute, then copy in.
        res = _run(name, sym, args)
        try:
            if res.shape != self.shape:
                raise ValueError("operator @=: the product has shape %r, the tensor %r"
                                 % (res.shape, self.shape))
            ops.cast(res, self.dtype, out=self)
        finally:
            res.close()
        return self
    _run(name, sym, args, out=self)
    return self


def _make(stem, reflected=False, inplace=False):
    def f(self, other, mod=None):  # mod: pow's modulo (three-argument pow), unsupported
        return NotImplemented if mod is not None else _apply(self, stem, other, reflected,
                                                             inplace)
    f.__name__ = "__%s%s__" % ("i" if inplace else "r" if reflected else "", stem)
    f.__qualname__ = "Tensor." + f.__name__
    f.__doc__ = "self %s other%s (see vkflow._arraylike)." % (
        _SPECS[stem][0] + ("=" if inplace else ""), ", reflected" if reflected else "")
    return f


def _copy(t):
    """A new tensor holding t's elements: a cast to its own dtype, queued on
    the GPU like any op."""
    return ops.cast(t, t.dtype)


def _device_copy(src, shape):
    """A copy of src in a new tensor of shape (same size and memory kind),
    made on the GPU by a Sequence copy."""
    mgr = src.device
    mem = src.memory if src.memory in ("device", "host", "storage") else "device"
    dst = mgr.tensor(tuple(shape), dtype=src.dtype, memory=mem)
    if src.size:
        seq = mgr.sequence()
        try:
            seq.copy(src, dst).eval()
        finally:
            seq.close()
    return dst


def _host(t, copy=None):
    """The tensor as a NumPy array: zero-copy (a read-only view of the
    mapped memory, after the pending GPU work) when the tensor is mapped and
    not bool, else a new array. copy=True always copies, False never (or
    ValueError)."""
    np = _numpy()
    view = t.mapped and t.dtype != "bool"
    if copy is False and not view:
        raise ValueError("Unable to avoid copy while creating an array as requested: the %s "
                         "tensor is %s" % (t.dtype, "bool (NumPy 1.x takes no kDLBool)"
                                           if t.dtype == "bool" else "not host-mapped"))
    if not view:
        return t._host_copy()
    arr = np.from_dlpack(_HostView(t))
    return arr.copy() if copy else arr


def _scalar_value(t, what):
    if t.size != 1:
        raise TypeError("only size-1 arrays can be converted to Python scalars (%s of a "
                        "tensor of shape %r)" % (what, t.shape))
    return t.__array__().reshape(-1)[0]


def _resolve_shape(old, shape):
    np = _numpy()
    try:
        shape = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError("reshape: the shape must be ints, not %r" % (shape,)) from None
    size = int(np.prod(old, dtype=np.int64))
    unknown = [i for i, d in enumerate(shape) if d == -1]
    if len(unknown) > 1:
        raise ValueError("reshape: can only specify one unknown dimension (shape %r for a "
                         "tensor of shape %r)" % (shape, old))
    if any(d < -1 for d in shape):
        raise ValueError("reshape: negative dimension in shape %r (for a tensor of shape %r)"
                         % (shape, old))
    known = int(np.prod([d for d in shape if d != -1], dtype=np.int64))
    if unknown:
        if known == 0 or size % known:
            raise ValueError("cannot reshape tensor of shape %r (size %d) into shape %r"
                             % (old, size, shape))
        shape = shape[:unknown[0]] + (size // known,) + shape[unknown[0] + 1:]
    elif known != size:
        raise ValueError("cannot reshape tensor of shape %r (size %d) into shape %r"
                         % (old, size, shape))
    return shape


class _ArrayMethods:
    """The protocol methods install() copies onto Tensor."""

    # NumPy's binary operators (ndarray + tensor) defer to the tensor's
    # reflected operator, as for torch.Tensor: the result is a vkflow Tensor.
    __array_priority__ = 1000

    def __array__(self, dtype=None, copy=None):
        """The tensor as a NumPy array (``numpy.asarray(t)``): a read-only
        zero-copy view when the tensor is host-mapped and not bool, else a
        copy; ``copy=True`` always copies, ``copy=False`` raises ValueError
        when a copy is needed. Waits for the tensor's pending GPU work."""
        arr = _host(self, copy)
        if dtype is not None and arr.dtype != _numpy().dtype(dtype):
            if copy is False:
                raise ValueError("Unable to avoid copy: dtype %s -> %s" % (arr.dtype, dtype))
            arr = arr.astype(dtype)
        return arr

    def __array_namespace__(self, /, *, api_version=None):
        """The array API namespace, :mod:`vkflow.array_api`."""
        from . import array_api
        if api_version is not None and api_version not in array_api._VERSIONS:
            raise ValueError("vkflow implements array API versions %s, not %r"
                             % (", ".join(array_api._VERSIONS), api_version))
        return array_api

    def __bool__(self):
        if self.size != 1:
            raise ValueError(
                "The truth value of an array with more than one element is ambiguous. Use "
                "a.any() or a.all()" if self.size else "The truth value of an empty array is "
                "ambiguous. Use `array.size > 0` to check that an array is not empty.")
        return bool(_scalar_value(self, "bool()"))

    def __float__(self):
        return float(_scalar_value(self, "float()"))

    def __int__(self):
        return int(_scalar_value(self, "int()"))

    def __complex__(self):
        return complex(_scalar_value(self, "complex()"))

    def __index__(self):
        if _kind(self.dtype) != "i" or self.ndim != 0:
            raise TypeError("only integer scalar arrays can be converted to a scalar index "
                            "(the tensor is %s of shape %r)" % (self.dtype, self.shape))
        return int(_scalar_value(self, "index"))

    def item(self):
        """The single element as a Python scalar (ValueError unless size 1)."""
        if self.size != 1:
            raise ValueError("can only convert an array of size 1 to a Python scalar (shape %r)"
                             % (self.shape,))
        return self.__array__().reshape(-1)[0].item()

    def tolist(self):
        """The elements as nested Python lists (a scalar for 0-d)."""
        return self.__array__().tolist()

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object (a 0-d vkflow.Tensor)")
        return self.shape[0]

    def __iter__(self):
        """Iterates over the first axis of a host copy: NumPy scalars for a
        1-d tensor, NumPy arrays (rows) otherwise."""
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return iter(self.__array__(copy=True))

    def __repr__(self):
        """Values as NumPy prints them (abbreviated past NumPy's threshold)."""
        if self.closed:
            return "vkflow.Tensor(<closed>, shape=%r, dtype=%s)" % (self.shape, self.dtype)
        try:
            arr = self.__array__()
        except Exception:  # a tensor the host cannot read now: no values
            return "<vkflow.Tensor %s %r %s>" % (self.dtype, self.shape, self.memory)
        prefix = "vkflow.Tensor("
        extra = ["dtype=%s" % self.dtype]
        if arr.size == 0 and arr.shape != (0,):
            extra.insert(0, "shape=%r" % (arr.shape,))
        if self.device is not _array._default:
            extra.append("device=%r" % (self.device,))
        body = _numpy().array2string(arr, separator=", ", prefix=prefix)
        return "%s%s, %s)" % (prefix, body, ", ".join(extra))

    def __str__(self):
        if self.closed:
            return repr(self)
        try:
            return _numpy().array2string(self.__array__())
        except Exception:
            return repr(self)

    def __neg__(self):
        if self.dtype == "bool":
            raise TypeError("The boolean negative, the `-` operator, is not supported for bool "
                            "tensors, use the `~` operator or logical_not instead.")
        return _run("neg", "-", (self,))

    def __pos__(self):
        """A copy (NumPy's +x)."""
        return _copy(self)

    def __abs__(self):
        return _copy(self) if self.dtype == "bool" else _run("abs", "abs", (self,))

    def __invert__(self):
        k = _kind(self.dtype)
        if k == "b":
            return _run("logical_not", "~", (self,))
        if k != "i":
            raise TypeError("operator ~ is not supported for %s tensors (integer or bool "
                            "dtypes only)" % self.dtype)
        return _run("bitwise_invert", "~", (self,))

    @property
    def T(self):
        """The transpose of a tensor of at most 2 dimensions (a new tensor;
        ValueError for more, as the array API says: use mT or permute_dims)."""
        if self.ndim > 2:
            raise ValueError("x.T needs at most 2 dimensions, the tensor has shape %r: use "
                             "x.mT or vkflow.ops.permute_dims" % (self.shape,))
        return ops.permute_dims(self, tuple(reversed(range(self.ndim))))

    @property
    def mT(self):
        """The last two axes swapped (a new tensor; ValueError under 2-d)."""
        n = self.ndim
        if n < 2:
            raise ValueError("x.mT needs at least 2 dimensions, the tensor has shape %r"
                             % (self.shape,))
        return ops.permute_dims(self, tuple(range(n - 2)) + (n - 1, n - 2))

    def reshape(self, *shape, copy=None):
        """A new tensor of ``shape`` (ints or one tuple; one -1 is inferred)
        with the same elements in row-major order, copied on the GPU (the
        library has no views: ``copy=False`` is a ValueError unless the shape
        is unchanged, then the tensor itself)."""
        if len(shape) == 1 and not isinstance(shape[0], numbers.Integral):
            shape = tuple(shape[0])
        new = _resolve_shape(self.shape, shape)
        if copy is False:
            if new == self.shape:
                return self
            raise ValueError("reshape: copy=False, but vkflow has no views: reshaping %r to %r "
                             "copies" % (self.shape, new))
        return _device_copy(self, new)

    def astype(self, dtype, /, *, copy=True):
        """The tensor as ``dtype`` (vkflow.ops.astype): a new tensor, or
        the tensor itself with copy=False when it already has that dtype."""
        try:
            name = _dtype_name(dtype)
        except ValueError as e:  # NumPy: "data type not understood" is a TypeError
            raise TypeError("astype: %s" % e) from None
        return ops.astype(self, name, copy=copy)


def _reduction(name):
    """The method name (NumPy's signature, which numpy.sum(t) and the like
    call: they return vkflow tensors); dtype casts first, out is a Tensor."""
    def f(self, axis=None, dtype=None, out=None, keepdims=False):
        x = self if dtype is None else self.astype(dtype)
        return getattr(ops, name)(x, axis=axis, keepdims=keepdims, out=out)
    if name in ("max", "min", "argmax"):
        def f(self, axis=None, out=None, keepdims=False):  # noqa: F811
            return getattr(ops, name)(self, axis=axis, keepdims=keepdims, out=out)
    f.__name__, f.__qualname__ = name, "Tensor." + name
    f.__doc__ = "vkflow.ops.%s along axis (None: all)." % name
    return f


def install(cls):
    """Adds the operators, the reductions (sum mean max min prod argmax)
    and the methods of _ArrayMethods to cls."""
    for name in ("sum", "mean", "max", "min", "prod", "argmax"):
        setattr(cls, name, _reduction(name))
    for key, value in vars(_ArrayMethods).items():
        if key not in ("__module__", "__dict__", "__weakref__", "__doc__", "__hash__"):
            setattr(cls, key, value)
    for stem, (_, _, cat) in _SPECS.items():
        setattr(cls, "__%s__" % stem, _make(stem))
        if cat != "compare":
            setattr(cls, "__r%s__" % stem, _make(stem, reflected=True))
            setattr(cls, "__i%s__" % stem, _make(stem, inplace=True))
