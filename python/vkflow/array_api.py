"""The array API namespace of vkflow tensors (``t.__array_namespace__()``).

It holds the array API names vkflow implements, and only those (a missing
name is an AttributeError, so ``hasattr(xp, "cos")`` tells):

* dtypes as vkflow names them, strings: ``xp.float32 == "float32"`` and
  ``x.dtype == xp.float32``; ``bool int8 int16 int32 int64 uint8 uint16
  uint32 uint64 float16 float32 float64``, and ``finfo``/``iinfo``
  (NumPy's);
* ``asarray``, ``from_dlpack`` and the creation functions (``zeros ones
  empty full arange linspace eye`` and the ``*_like`` ones, default dtypes
  float32 and int64);
* the functions of :mod:`vkflow.ops` under their array API names (element-
  wise, comparisons, reductions, ``matmul``, ``permute_dims``, ``astype``,
  ``where``, ``clip``), looked up in vkflow.ops when asked for: ops added to
  vkflow.ops later (``floor_divide``, ``bitwise_and``, ``logical_not``, ...)
  appear here with them;
* ``divide`` is true division as the ``/`` operator (integer tensors become
  float64), ``positive``, ``reshape``, ``matrix_transpose``;
* the manipulation functions ``concat stack unstack squeeze expand_dims
  flip moveaxis broadcast_to broadcast_arrays roll tile repeat`` and
  ``argmin var std cumulative_sum`` (vkflow._manipulation: on the device,
  from the Go op library's ops; ``concat``/``stack`` promote dtypes).

Element-wise functions follow vkflow's dtype rules: operands must have one
dtype (no promotion) and Python scalars take it.
"""

import math

from . import ops
from ._array import asarray, from_dlpack  # noqa: F401
from ._creation import (arange, empty, empty_like, eye, full, full_like, linspace,  # noqa: F401
                        ones, ones_like, zeros, zeros_like)
from ._tensor import Tensor

__array_api_version__ = "2023.12"
_VERSIONS = ("2021.12", "2022.12", "2023.12")

e, pi, inf, nan = math.e, math.pi, math.inf, math.nan

# Array API names taken from vkflow.ops at lookup time (module __getattr__):
# present exactly when vkflow.ops has them.
_FROM_OPS = {
    "add", "subtract", "multiply", "pow", "minimum", "maximum",
    "floor_divide", "remainder",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "abs", "negative", "exp", "log", "sqrt", "tanh",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_invert", "bitwise_left_shift",
    "bitwise_right_shift", "logical_and", "logical_or", "logical_xor", "logical_not",
    "sum", "mean", "max", "min", "prod", "argmax", "matmul", "permute_dims", "astype",
    "where", "clip",
    "isnan", "isinf", "isfinite", "signbit", "sign", "floor", "ceil", "trunc", "round",
    "reciprocal", "expm1", "log1p", "log2", "log10", "sinh", "cosh", "asinh", "acosh", "atanh",
    "hypot", "copysign", "logaddexp", "nextafter", "all", "any",
    "sin", "cos", "tan", "asin", "acos", "atan", "atan2",
}

_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float16", "float32", "float64")
globals().update({name: name for name in _DTYPES})


def __getattr__(name):
    if name in _FROM_OPS and hasattr(ops, name):
        return getattr(ops, name)
    raise AttributeError("vkflow.array_api has no %r (vkflow does not implement it)" % name)


def __dir__():
    return sorted(set(globals()) | {n for n in _FROM_OPS if hasattr(ops, n)})


def divide(x1, x2, /):
    """x1 / x2, true division as the ``/`` operator: integer and bool
    tensors are divided as float64 (float32 where the device lacks it)."""
    if not isinstance(x1, Tensor) and not isinstance(x2, Tensor):
        x1 = asarray(x1)
    r = x1.__truediv__(x2) if isinstance(x1, Tensor) else x2.__rtruediv__(x1)
    if r is NotImplemented:
        raise TypeError("divide: unsupported operands %s and %s"
                        % (type(x1).__name__, type(x2).__name__))
    return r


def positive(x, /):
    """A copy of x (+x)."""
    return +x


def reshape(x, /, shape, *, copy=None):
    """x with a new shape (Tensor.reshape: a copy made on the GPU)."""
    return x.reshape(shape, copy=copy)


def matrix_transpose(x, /):
    """The last two axes swapped (x.mT)."""
    return x.mT


def finfo(type, /):
    """NumPy's finfo of a float dtype (bits, eps, max, min, smallest_normal)."""
    import numpy
    return numpy.finfo(type)


def iinfo(type, /):
    """NumPy's iinfo of an integer dtype (bits, max, min)."""
    import numpy
    return numpy.iinfo(type)


# --- manipulation functions and statistics (vkflow._manipulation) ------------------------
from ._manipulation import (argmin, broadcast_arrays, broadcast_to, concat,  # noqa: E402,F401
                            cumulative_sum, expand_dims, flip, moveaxis, repeat, roll, squeeze,
                            stack, std, tile, unstack, var)
