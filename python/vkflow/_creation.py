"""Array API creation functions: ``zeros ones empty full arange linspace eye``
and ``zeros_like ones_like empty_like full_like``, exported by the vkflow
package and by :mod:`vkflow.array_api`.

Each takes ``dtype=None`` and ``device=None`` keywords: ``device`` is a
:class:`vkflow.Manager` (None: :func:`vkflow.default_device`, or the input's
device for the ``*_like`` functions). Default dtypes are vkflow's, as
:func:`vkflow.asarray` uses for Python data: float32 for floating point
(``zeros ones empty eye linspace``, and ``full`` and ``arange`` given a
float), complex64 for ``full`` given a complex (and ``linspace`` given a
complex start or stop), int64 for integers (``full`` and ``arange`` given
ints), bool for ``full`` given a bool. Every creation function takes
``complex64`` and ``complex128``. ``zeros`` and ``empty`` are zero-filled
tensors made by the library (no host data; ``empty`` is zeros too); the
others are built with NumPy on the host and uploaded (one copy).
"""

import numbers
import operator

from ._array import _device, _producer_dtype, _upload
from ._dtypes import _dtype_name, _numpy
from ._tensor import Tensor

__all__ = ["zeros", "ones", "empty", "full", "arange", "linspace", "eye",
           "zeros_like", "ones_like", "empty_like", "full_like"]


def _dtype(dtype, default, what):
    """A dtype name; an unknown dtype is a TypeError, as NumPy's."""
    if dtype is None:
        return default
    try:
        return _dtype_name(dtype)
    except (ValueError, TypeError) as e:
        raise TypeError("%s: %s" % (what, e)) from None


def _shape(shape, what):
    if isinstance(shape, numbers.Integral) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        shape = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError("%s: shape must be an int or a tuple of ints, not %r"
                        % (what, shape)) from None
    if any(d < 0 for d in shape):
        raise ValueError("%s: negative dimensions are not allowed (shape %r)" % (what, shape))
    return shape


def _python_dtype(value):
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, numbers.Integral):
        return "int64"
    if isinstance(value, numbers.Real):
        return "float32"
    if isinstance(value, numbers.Complex):
        return "complex64"
    return None


def _fill_dtype(value, dtype, what):
    """full's dtype: dtype, else from the fill value (bool, int64, float32;
    a NumPy scalar keeps its dtype). A float into an integer or bool dtype,
    or a number into bool, is a TypeError (vkflow's scalar rule)."""
    np = _numpy()
    if isinstance(value, np.generic):
        kind, default = value.dtype.kind, value.dtype.name
    else:
        default = _python_dtype(value)
        if default is None:
            raise TypeError("%s: fill_value must be a bool, int, float or complex, not %s"
                            % (what, type(value).__name__))
        kind = np.dtype(default).kind
    name = _dtype(dtype, default, what)
    tk = np.dtype(name).kind
    if (tk == "b" and kind != "b") or (tk in "iu" and kind in "fc") or (tk == "f" and kind == "c"):
        raise TypeError("%s: fill value %r does not take dtype %s (give a matching value or "
                        "dtype)" % (what, value, name))
    return name


def zeros(shape, *, dtype=None, device=None):
    """A tensor of zeros (default dtype float32), filled by the library."""
    mgr = _device(device, "zeros")
    return mgr.tensor(_shape(shape, "zeros"), dtype=_dtype(dtype, "float32", "zeros"))


def empty(shape, *, dtype=None, device=None):
    """An uninitialized tensor (default dtype float32): zeros, in fact."""
    mgr = _device(device, "empty")
    return mgr.tensor(_shape(shape, "empty"), dtype=_dtype(dtype, "float32", "empty"))


def full(shape, fill_value, *, dtype=None, device=None):
    """A tensor filled with ``fill_value``; dtype None takes it from the
    value (bool, int64, float32 or complex64). Built on the host and
    uploaded."""
    name = _fill_dtype(fill_value, dtype, "full")
    shape = _shape(shape, "full")
    mgr = _device(device, "full")
    return _upload(_numpy().full(shape, fill_value, dtype=name), mgr)


def ones(shape, *, dtype=None, device=None):
    """A tensor of ones (default dtype float32). Built on the host and
    uploaded."""
    name = _dtype(dtype, "float32", "ones")
    return full(shape, True if name == "bool" else 1, dtype=name, device=device)


def arange(start, /, stop=None, step=1, *, dtype=None, device=None):
    """``[start, stop)`` in steps of ``step`` (``arange(n)`` is 0..n-1):
    int64 when every argument is an int, else float32. The values are
    computed in float64 or int64 on the host, then converted and uploaded."""
    if stop is None:
        start, stop = 0, start
    args = (start, stop, step)
    if any(_python_dtype(a) is None for a in args):
        raise TypeError("arange: start, stop and step must be numbers, not %r" % (args,))
    if step == 0:
        raise ValueError("arange: step must not be zero")
    ints = all(isinstance(a, numbers.Integral) for a in args)
    name = _dtype(dtype, "int64" if ints else "float32", "arange")
    np = _numpy()
    values = np.arange(start, stop, step, dtype=np.int64 if ints else np.float64)
    return _upload(values.astype(name), _device(device, "arange"))


def linspace(start, stop, /, num, *, dtype=None, device=None, endpoint=True):
    """``num`` evenly spaced values from start to stop (default float32;
    complex64 for a complex start or stop), computed in float64 (complex128)
    on the host, converted and uploaded."""
    num = operator.index(num)
    if num < 0:
        raise ValueError("linspace: num must be >= 0, not %d" % num)
    cx = isinstance(start, complex) or isinstance(stop, complex)
    name = _dtype(dtype, "complex64" if cx else "float32", "linspace")
    np = _numpy()
    if cx or np.dtype(name).kind == "c":
        values = np.linspace(complex(start), complex(stop), num, endpoint=bool(endpoint),
                             dtype=np.complex128)
    else:
        values = np.linspace(float(start), float(stop), num, endpoint=bool(endpoint),
                             dtype=np.float64)
    return _upload(values.astype(name), _device(device, "linspace"))


def eye(n_rows, n_cols=None, /, *, k=0, dtype=None, device=None):
    """A 2-d tensor with ones on diagonal ``k`` (default float32), built on
    the host and uploaded."""
    n_rows = operator.index(n_rows)
    n_cols = n_rows if n_cols is None else operator.index(n_cols)
    _shape((n_rows, n_cols), "eye")
    name = _dtype(dtype, "float32", "eye")
    values = _numpy().eye(n_rows, n_cols, k=operator.index(k), dtype=name)
    return _upload(values, _device(device, "eye"))


def _like(x, dtype, device, what):
    """(shape, dtype name, Manager) of x's kind: x's shape, dtype and device
    (a vkflow Tensor's; the default device for other arrays)."""
    if not isinstance(x, Tensor):
        if not hasattr(x, "shape") or not hasattr(x, "dtype"):
            raise TypeError("%s: x must be an array, not %s" % (what, type(x).__name__))
        own, mgr = _producer_dtype(x), None
    else:
        own, mgr = x.dtype, x.device
    name = _dtype(dtype if dtype is not None else own, "float32", what)
    mgr = _device(device if device is not None else mgr, what)
    return tuple(x.shape), name, mgr


def zeros_like(x, /, *, dtype=None, device=None):
    """Zeros of x's shape, dtype and device."""
    shape, name, mgr = _like(x, dtype, device, "zeros_like")
    return zeros(shape, dtype=name, device=mgr)


def empty_like(x, /, *, dtype=None, device=None):
    """An uninitialized (zero) tensor of x's shape, dtype and device."""
    shape, name, mgr = _like(x, dtype, device, "empty_like")
    return empty(shape, dtype=name, device=mgr)


def ones_like(x, /, *, dtype=None, device=None):
    """Ones of x's shape, dtype and device."""
    shape, name, mgr = _like(x, dtype, device, "ones_like")
    return ones(shape, dtype=name, device=mgr)


def full_like(x, /, fill_value, *, dtype=None, device=None):
    """``fill_value`` in x's shape, dtype and device."""
    shape, name, mgr = _like(x, dtype, device, "full_like")
    return full(shape, fill_value, dtype=name, device=mgr)
