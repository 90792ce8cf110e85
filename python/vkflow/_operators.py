"""The Python operators of :class:`vkflow.Tensor`: ``+ - * / // % ** @ & | ^
<< >>``, their reflected and in-place forms, the comparisons, and the unary
``- + abs ~``; added to Tensor by :func:`install` (vkflow/__init__.py calls
it), which leaves Tensor hashable, by identity: Managers keep their tensors
in weak sets.

Operators call :mod:`vkflow.ops` (looked up by name at call time) and follow
its rules: operands of two dtypes compute in their promoted dtype, as the
array API standard's table says (within a kind only; a pair it lacks, such
as an integer with a float, is a TypeError naming both; ``@`` and the
in-place forms promote only to the left operand's dtype), a Python scalar takes the tensor's dtype (a float with
an integer or bool tensor, or a number with a bool tensor, is a TypeError; an
int out of the dtype's range an OverflowError, as NumPy 2 says). Exceptions:
``/`` of integer or bool tensors casts them to float64 first (float32 where
the device lacks float64), as NumPy's true_divide; bool ``+ * & | ^ ~`` are
the logical operations. docs/PYTHON.md has the full rules.
"""

import re

from . import _array, ops
from ._dtypes import _COMPLEX, _FLOAT, _kind, _numpy, _promote
from ._errors import UnsupportedError
from ._tensor import Tensor

__all__ = ["install"]

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
_DTYPE_ERROR = re.compile(r"dtype \w+ is not supported|which have no promotion")


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
    if isinstance(x, (bool, int, float, complex)):
        return x, None, (), True
    if isinstance(x, (list, tuple)):
        arr = np.asarray(x)
        return (arr, None, arr.shape, True) if arr.dtype.kind in "biufc" else None
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
        "b" if isinstance(value, bool) else "i" if isinstance(value, int) else
        "c" if isinstance(value, complex) else "f")
    tk = _kind(dtype)
    if (tk == "b" and kind != "b") or (tk == "i" and kind in "fc") or (tk == "f" and kind == "c"):
        what = "Python data" if arr is not None else "a Python %s" % type(value).__name__
        raise TypeError("operator %s: %s and %s: %s does not take the tensor's dtype %s "
                        "(vkflow does not promote; cast the tensor first, e.g. x.astype(%r))"
                        % (sym, _describe(pair[0]), _describe(pair[1]), what, dtype,
                           "int32" if tk == "b" and kind == "i" else
                           "complex64" if kind == "c" else "float32"))
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
    if isinstance(x, (bool, int, float, complex)) and not hasattr(x, "dtype"):
        return x
    return _numpy().asarray(x, dtype=dtype)


def _true_divide(a, b, dtype, out=None):
    """a / b: integer and bool operands as float64 (float32 where the device
    lacks float64)."""
    if dtype in _FLOAT or dtype in _COMPLEX:
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
        if not (cat == "div" and _kind(dtype) not in "fc"):  # / casts integer tensors to float
            value = _python_data(value, dtype, sym, pair)
    elif odt is not None and odt != dtype:
        promoted = _promote(dtype, odt)
        if promoted is None:
            raise TypeError("operator %s: %s and %s: the dtypes have no promotion (the array API "
                            "standard promotes within a kind only; cast one with astype)"
                            % (sym, _describe(pair[0]), _describe(pair[1])))
        if cat == "matmul" or (inplace and promoted != self.dtype):
            raise TypeError("operator %s: %s and %s: %s (cast one with astype)"
                            % (sym, _describe(pair[0]), _describe(pair[1]),
                               "matmul does not promote" if cat == "matmul" else
                               "the %s result cannot be stored in place" % promoted))
        dtype = promoted
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
    if cat == "div" and k not in "fc":
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
    f.__doc__ = "self %s other%s (see vkflow._operators)." % (
        _SPECS[stem][0] + ("=" if inplace else ""), ", reflected" if reflected else "")
    return f


def _copy(t):
    """A new tensor holding t's elements: a cast to its own dtype, queued on
    the GPU like any op."""
    return ops.cast(t, t.dtype)


class _UnaryOperators:
    """The unary operators install() copies onto Tensor."""

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


def install(cls):
    """Adds the binary operators (with their reflected and in-place forms),
    the comparisons and the unary operators to cls."""
    for key in ("__neg__", "__pos__", "__abs__", "__invert__"):
        setattr(cls, key, vars(_UnaryOperators)[key])
    for stem, (_, _, cat) in _SPECS.items():
        setattr(cls, "__%s__" % stem, _make(stem))
        if cat != "compare":
            setattr(cls, "__r%s__" % stem, _make(stem, reflected=True))
            setattr(cls, "__i%s__" % stem, _make(stem, inplace=True))
