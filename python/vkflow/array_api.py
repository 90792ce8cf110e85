"""The array API namespace of vkflow tensors (``t.__array_namespace__()``).

It holds the array API names vkflow implements, and only those (a missing
name is an AttributeError, so ``hasattr(xp, "cos")`` tells):

* the dtype objects (vkflow.DType: ``x.dtype is xp.float32``, hashable,
  equal to their names, ``xp.float32 == "float32"``) ``bool int8 int16 int32
  int64 uint8 uint16 uint32 uint64 float16 float32 float64``, ``newaxis``, and the data type
  functions ``isdtype can_cast result_type finfo iinfo`` and
  ``__array_namespace_info__`` (vkflow._dtype_functions: the standard's
  promotion table, Python numbers in finfo/iinfo);
* ``asarray``, ``from_dlpack`` and the creation functions (``zeros ones
  empty full arange linspace eye`` and the ``*_like`` ones, default dtypes
  float32 and int64);
* the functions of :mod:`vkflow.ops` under their array API names (element-
  wise, comparisons, reductions, ``matmul``, ``permute_dims``, ``where``,
  ``clip``), looked up in vkflow.ops when asked for: ops added to
  vkflow.ops later (``floor_divide``, ``bitwise_and``, ``logical_not``, ...)
  appear here with them;
* ``sum``/``prod`` with ``dtype=`` (the standard's default accumulation
  dtypes) and ``astype`` with ``device=``;
* ``divide`` is true division as the ``/`` operator (integer tensors become
  float64), ``positive``, ``reshape``, ``matrix_transpose``;
* the manipulation functions ``concat stack unstack squeeze expand_dims
  flip moveaxis broadcast_to broadcast_arrays roll tile repeat`` and
  ``argmin var std cumulative_sum`` (vkflow._manipulation: on the device,
  from the Go op library's ops; ``concat``/``stack`` promote dtypes);
* ``sort argsort searchsorted`` (vkflow._sorting: a stable radix sort on the
  device, ascending or descending, NaNs last; searchsorted in the same order).
* 2024.12's ``diff count_nonzero take_along_axis`` (vkflow._api2024) and
  2025.12's ``isin broadcast_shapes`` (vkflow._api2025), ``expand_dims``
  with a tuple of axes, and the set functions of complex arrays;
* the ``fft`` extension: ``xp.fft`` is :mod:`vkflow.fft`; the ``linalg``
  extension, ``xp.linalg``, is :mod:`vkflow.linalg` (2025.12's ``eig`` and
  ``eigvals`` included).

Versions: the module is the standard's newest version, 2025.12
(``__array_api_version__``), unless the environment variable
``VKFLOW_ARRAY_API_VERSION`` names another when vkflow is imported (2021.12
to 2025.12: what array-api-strict's ARRAY_API_STRICT_API_VERSION does).
``x.__array_namespace__(api_version=v)`` returns the namespace at version v
without a restart. Versions differ where the standard changed a result's
type: from 2025.12, ``meshgrid``, ``broadcast_arrays`` and
``__array_namespace_info__().devices()`` return tuples, before it lists.
Every version's namespace has every function (names a later version added
are extra there, which the standard allows).

Element-wise functions promote mixed dtypes by the standard's table (within
a kind: bool, integers, floats; the Go op library's ops.ResultType, which
``result_type`` reports); pairs it leaves undefined are a TypeError, and
Python scalars take the array's dtype.
"""

import math
import os
import sys
import types

from . import ops
from ._array import asarray, from_dlpack  # noqa: F401
from ._creation import (arange, empty, empty_like, eye, full, full_like, linspace,  # noqa: F401
                        ones, ones_like, zeros, zeros_like)
from ._dtype_functions import Info, can_cast, finfo, iinfo, isdtype, result_type  # noqa: F401
from ._dtypes import _dtype, _dtype_name
from ._tensor import Tensor

# The newest version vkflow implements, the one it claims (tools/arrayapi.sh
# reads this line): the conformance suite passes at it (docs/ARRAY_API.md).
_NEWEST = "2025.12"
_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12", "2025.12")


def _chosen_version():
    """_NEWEST, or the version VKFLOW_ARRAY_API_VERSION names (a ValueError
    for one vkflow does not implement)."""
    v = os.environ.get("VKFLOW_ARRAY_API_VERSION") or _NEWEST
    if v not in _VERSIONS:
        raise ValueError("VKFLOW_ARRAY_API_VERSION=%r: vkflow implements array API versions %s"
                         % (v, ", ".join(_VERSIONS)))
    return v


__array_api_version__ = _chosen_version()

e, pi, inf, nan = math.e, math.pi, math.inf, math.nan
newaxis = None

# Array API names taken from vkflow.ops at lookup time (module __getattr__):
# present exactly when vkflow.ops has them.
_FROM_OPS = {
    "add", "subtract", "multiply", "pow", "minimum", "maximum",
    "floor_divide", "remainder",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "abs", "negative", "exp", "log", "sqrt", "tanh",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_invert", "bitwise_left_shift",
    "bitwise_right_shift", "logical_and", "logical_or", "logical_xor", "logical_not",
    "mean", "max", "min", "argmax", "permute_dims",
    "where", "clip",
    "isnan", "isinf", "isfinite", "signbit", "sign", "floor", "ceil", "trunc", "round",
    "expm1", "log1p", "log2", "log10", "sinh", "cosh", "asinh", "acosh", "atanh",
    "hypot", "copysign", "logaddexp", "nextafter", "all", "any",
    "sin", "cos", "tan", "asin", "acos", "atan", "atan2",
    "square", "real", "imag", "conj",
}

_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float16", "float32", "float64",
           "complex64", "complex128")
globals().update({name: _dtype(name) for name in _DTYPES})


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


def astype(x, dtype, /, *, copy=True, device=None):
    """x as dtype (a cast on the device); copy=False returns x itself when it
    has that dtype already; device: a Manager to put the result on."""
    r = ops.astype(x, dtype, copy=copy)
    if device is not None and device is not r.device:
        r = r.to_device(device)
    return r


def _accumulator(x, dtype):
    """The dtype sum and prod reduce in: dtype, else the standard's default
    (signed integers and bool: int64, unsigned: uint64, floats: their own)."""
    if dtype is not None:
        return _dtype_name(dtype)
    if x.dtype in ("uint8", "uint16", "uint32", "uint64"):
        return "uint64"
    if isdtype(x.dtype, ("bool", "signed integer")):
        return "int64"
    return x.dtype


def _reduce(op, x, axis, dtype, keepdims):
    """op (ops.sum or ops.prod) of x cast to the accumulation dtype. The device
    op accumulates integers in 64 bits (float16 in float32); a narrower dtype
    asked for is cast back after (the same values: integer sums and products
    wrap modulo 2**bits either way)."""
    acc = _accumulator(x, dtype)
    r = op(x if x.dtype == acc else ops.astype(x, acc), axis=axis, keepdims=keepdims)
    return r if r.dtype == acc else ops.astype(r, acc)


def sum(x, /, *, axis=None, dtype=None, keepdims=False):
    """Sum along axis, in dtype (x cast on the device first when it differs;
    default: integers in int64 or uint64, floats in their own dtype)."""
    return _reduce(ops.sum, x, axis, dtype, keepdims)


def prod(x, /, *, axis=None, dtype=None, keepdims=False):
    """Product along axis, in dtype (as sum)."""
    return _reduce(ops.prod, x, axis, dtype, keepdims)


# --- manipulation functions and statistics (vkflow._manipulation) ------------------------
from ._manipulation import (argmin, broadcast_to, concat,  # noqa: E402,F401
                            cumulative_sum, expand_dims, flip, moveaxis, repeat, roll, squeeze,
                            stack, std, tile, unstack, var)

# --- sorting and searchsorted (vkflow._sorting) -----------------------------------------
from ._sorting import argsort, searchsorted, sort  # noqa: E402,F401
# --- the linalg extension (vkflow.linalg) -------------------------------------------------
from . import linalg  # noqa: E402,F401
from .linalg import matmul, tensordot, vecdot  # noqa: E402,F401
# --- scans, nonzero, take, triangles and grids (vkflow._scanfuncs) ----------------------
from ._scanfuncs import cumulative_prod, nonzero, take, tril, triu  # noqa: E402,F401

# --- 2024.12's diff, count_nonzero, take_along_axis; complex reciprocal (vkflow._api2024) --
from ._api2024 import count_nonzero, diff, reciprocal, take_along_axis  # noqa: E402,F401
# --- 2025.12's isin and broadcast_shapes (vkflow._api2025) --------------------------------
from ._api2025 import broadcast_shapes, isin  # noqa: E402,F401
# --- set functions (vkflow._setfuncs) -----------------------------------------------------
from ._setfuncs import unique_all, unique_counts, unique_inverse, unique_values  # noqa: E402,F401
# --- the fft extension (vkflow.fft) -------------------------------------------------------
from . import fft  # noqa: E402,F401


# --- what differs between versions, and a namespace per version ------------------------
from . import _manipulation as _manip, _scanfuncs as _scan  # noqa: E402


def _versioned(version):
    """The functions whose results changed type between versions, for
    version: from 2025.12, meshgrid, broadcast_arrays and the inspection
    namespace's devices() return tuples; before, lists."""
    seq = tuple if version >= "2025.12" else list

    def meshgrid(*arrays, indexing="xy"):
        """Coordinate matrices from 1-d arrays (vkflow._scanfuncs.meshgrid), a
        tuple (before 2025.12: a list)."""
        return seq(_scan.meshgrid(*arrays, indexing=indexing))

    def broadcast_arrays(*arrays):
        """The arrays broadcast against one another (views), a tuple (before
        2025.12: a list)."""
        return seq(_manip.broadcast_arrays(*arrays))

    def __array_namespace_info__():
        """The inspection namespace (``capabilities devices default_device
        default_dtypes dtypes``)."""
        return Info(sequence=seq)

    return meshgrid, broadcast_arrays, __array_namespace_info__


meshgrid, broadcast_arrays, __array_namespace_info__ = _versioned(__array_api_version__)


class _Namespace(types.ModuleType):
    """vkflow.array_api at another version: the version's own meshgrid,
    broadcast_arrays and __array_namespace_info__, every other name the
    module's."""

    def __init__(self, version):
        super().__init__("vkflow.array_api", "vkflow.array_api at array API version %s" % version)
        self.__array_api_version__ = version
        self.meshgrid, self.broadcast_arrays, self.__array_namespace_info__ = _versioned(version)

    def __getattr__(self, name):
        return getattr(sys.modules[__name__], name)

    def __dir__(self):
        return dir(sys.modules[__name__])

    def __repr__(self):
        return "<namespace vkflow.array_api at %s>" % self.__array_api_version__


_NAMESPACES = {}


def _namespace(api_version):
    """The namespace of api_version (None: this module's version): this
    module at its own version, else one _Namespace per version."""
    if api_version is None or api_version == __array_api_version__:
        return sys.modules[__name__]
    if api_version not in _VERSIONS:
        raise ValueError("vkflow implements array API versions %s, not %r"
                         % (", ".join(_VERSIONS), api_version))
    ns = _NAMESPACES.get(api_version)
    if ns is None:
        ns = _NAMESPACES[api_version] = _Namespace(api_version)
    return ns
