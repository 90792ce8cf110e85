"""Array-API style entry points: the default device, ``from_dlpack`` and
``asarray``.

Use them as ``vkflow.from_dlpack`` and so on. ``Tensor.to_device`` is here
too (added to :class:`vkflow.Tensor` by :func:`install`).

The default device is one process-wide :class:`Manager`, opened on first use
(by ``default_device()``, or by ``from_dlpack``/``asarray`` without a device)
under a lock, and closed at interpreter exit. ``VKFLOW_DEVICE`` (an index or
a name substring, read from ``os.environ`` when it opens) picks its device as
for any Manager; ``VKFLOW_VALIDATION=1`` opens it with the
validation layer. Closing it is allowed: the next use opens a new one.
"""

import atexit
import numbers
import os
import threading

from . import _dlpack
from ._dtypes import _dtype_name, _numpy
from ._manager import Manager
from ._tensor import Tensor

_default_lock = threading.Lock()
_default = None
_atexit_registered = False


class CopyError(ValueError, BufferError):
    """``copy=False`` was given but the request needs a copy. It is both a
    ValueError (what the array API's ``asarray`` raises) and a BufferError
    (what its ``from_dlpack`` raises)."""


def default_device():
    """Returns the process-wide default :class:`Manager`, opening it on first
    use. Thread-safe; closed at interpreter exit."""
    global _default, _atexit_registered
    mgr = _default
    if mgr is not None and not mgr.closed:
        return mgr
    with _default_lock:
        if _default is None or _default.closed:
            _default = Manager(validation=os.environ.get("VKFLOW_VALIDATION") == "1")
            if not _atexit_registered:
                atexit.register(_close_default)
                _atexit_registered = True
        return _default


def _close_default():
    global _default
    with _default_lock:
        mgr, _default = _default, None
    if mgr is not None:
        mgr.close()


def _device(device, what):
    if device is None:
        return default_device()
    if isinstance(device, Manager):
        device._h()
        return device
    raise TypeError("%s: device must be None or a vkflow.Manager, not %s"
                    % (what, type(device).__name__))


def from_dlpack(x, device=None, copy=None):
    """Imports ``x`` through DLPack and returns a Tensor on ``device`` (a
    :class:`Manager`; None: :func:`default_device`). ``from_dlpack(x, mgr)``
    passes the Manager positionally.

    ``x`` is an object with ``__dlpack__`` (asked for a versioned capsule,
    ``max_version=(1, 3)``, and without arguments if it does not take one) or
    a capsule. The capsule is consumed: importing it again raises ValueError.
    ``tensor.imported_copy`` is False when the tensor aliases the producer's
    memory (writes by GPU work show in the producer's array) and True when
    the data was copied. Raises BufferError when the library cannot import
    the tensor (its device, dtype or layout). ``copy``: None copies only
    when needed, True always copies host memory, False raises BufferError
    when a copy would be needed (strided data, an address that is not a
    multiple of the device's host import alignment, 64 bytes on lavapipe, or
    memory that overlaps a live zero-copy import of the same Manager other
    than from its start: see docs/DLPACK.md, "Host imports that alias").
    Importing the same array again, or a slice starting where it starts,
    gives a view of the first import's buffer.
    """
    _dlpack._import_copy_mode(copy)  # a bad copy is refused before the device is looked at
    return Tensor._from_dlpack(_device(device, "from_dlpack"), x, copy)


def _scalar_dtype(obj):
    """vkflow's default dtype for Python data: bool, int64 for ints, float32
    for floats (vkflow's default floating-point dtype), complex64 for
    complex numbers (its pair)."""
    if isinstance(obj, bool):
        return "bool"
    if isinstance(obj, numbers.Integral):
        return "int64"
    if isinstance(obj, numbers.Real):
        return "float32"
    if isinstance(obj, numbers.Complex):
        return "complex64"
    return None


def _host_array(obj, dtype):
    """obj as a NumPy array (copied only if NumPy needs to): Python data gets
    vkflow's defaults (float32 for floats) unless dtype is given."""
    np = _numpy()
    if dtype is not None:
        return np.asarray(obj, dtype=dtype)
    if isinstance(obj, (np.ndarray, np.generic)):
        return np.asarray(obj)
    if hasattr(obj, "__dlpack__"):
        return np.from_dlpack(obj)
    default = _scalar_dtype(obj)
    arr = np.asarray(obj, dtype=default)
    if default is None and isinstance(obj, (list, tuple)) and arr.dtype == np.float64:
        arr = arr.astype(np.float32)
    elif default is None and isinstance(obj, (list, tuple)) and arr.dtype == np.complex128:
        arr = arr.astype(np.complex64)  # the default complex dtype, as float32 for floats
    return arr


def _unpickle(arr):
    """Rebuilds a pickled Tensor (``Tensor.__reduce__``): a device tensor on
    :func:`default_device` holding ``arr``'s dtype, shape and values."""
    return default_device().tensor(arr, dtype=_dtype_name(arr.dtype))


def _upload(arr, mgr):
    """A new tensor on mgr holding a copy of the NumPy array arr."""
    t = mgr.tensor(arr, dtype=_dtype_name(arr.dtype))
    t.imported_copy = True
    return t


def asarray(obj, dtype=None, device=None, copy=None):
    """Returns ``obj`` as a vkflow Tensor (array API ``asarray``).

    ``obj``: a vkflow Tensor, any DLPack producer (NumPy arrays, PyTorch CPU
    tensors), a Python scalar, a (nested) list or tuple, or anything NumPy
    converts. Python floats become float32, complex numbers complex64, ints
    int64, bools bool, unless ``dtype`` says otherwise; DLPack producers keep
    their dtype.

    ``device``: a :class:`Manager`; None keeps a Tensor's own device and uses
    :func:`default_device` for anything else. ``dtype`` converts (a copy).
    ``copy``: None copies only when needed (a DLPack producer's memory is
    aliased when it can be: see :func:`from_dlpack`); True always copies;
    False never copies and raises :class:`CopyError` (a ValueError and a
    BufferError) when a copy is needed: a dtype change, another device,
    Python data and NumPy scalars, or memory the device cannot import.
    """
    if not isinstance(copy, (bool, type(None))):
        raise ValueError("asarray: copy must be None, True or False, not %r" % (copy,))
    want = None if dtype is None else _dtype_name(dtype)

    if isinstance(obj, Tensor):
        mgr = obj.device if device is None else _device(device, "asarray")
        same = mgr is obj.device and (want is None or want == obj.dtype)
        if same and not copy:
            return obj
        if copy is False:
            raise CopyError("asarray: copy=False but %s needs a copy"
                            % ("another device" if mgr is not obj.device else
                               "dtype %s -> %s" % (obj.dtype, want)))
        if want is None or want == obj.dtype:
            return obj._copy_to(mgr)
        host = obj._host_copy()
        return _upload(host.astype(want), mgr)

    mgr = _device(device, "asarray")
    np = _numpy()
    value = isinstance(obj, np.generic)  # a NumPy scalar: copied as Python data is
    if not value and not hasattr(obj, "__dlpack__") and (
            hasattr(obj, "__array_interface__") or isinstance(obj, memoryview)):
        obj = np.asarray(obj)  # a view of obj's memory, which DLPack can pass on
    if not value and hasattr(obj, "__dlpack__"):
        if want is None or want == _producer_dtype(obj):
            try:
                return from_dlpack(obj, mgr, copy=copy)
            except BufferError as e:
                if copy is False:
                    raise CopyError("asarray: copy=False but importing %s needs a copy: %s"
                                    % (type(obj).__name__, e)) from e
                # NumPy refuses read-only and bool arrays through DLPack;
                # the copy below takes them.
        elif copy is False:
            raise CopyError("asarray: copy=False but dtype %s -> %s needs a copy"
                            % (_producer_dtype(obj), want))
    elif copy is False:
        raise CopyError("asarray: copy=False but %s is not in device-importable memory"
                        % type(obj).__name__)
    return _upload(_host_array(obj, want), mgr)


def _producer_dtype(obj):
    """The dtype name of a NumPy array or PyTorch tensor, without importing
    torch; None when unknown."""
    dt = getattr(obj, "dtype", None)
    if dt is None:
        return None
    name = getattr(dt, "name", None) or str(dt)
    name = name.rsplit(".", 1)[-1]  # torch.float32 -> float32
    return {"half": "float16", "float": "float32", "double": "float64",
            "int": "int32", "long": "int64", "short": "int16"}.get(name, name)


# --- Tensor.to_device -------------------------------------------------------------------

def to_device(self, device, /, *, stream=None):
    """Returns the tensor on ``device`` (a :class:`Manager`): itself when
    it is already there, else a copy made through host memory (after the
    tensor's pending GPU work). ``stream`` must be None (or -1)."""
    if stream is not None and not (isinstance(stream, int) and stream == -1):
        raise ValueError("to_device: stream must be None or -1, not %r" % (stream,))
    if not isinstance(device, Manager):
        raise TypeError("to_device: device must be a vkflow.Manager, not %s"
                        % type(device).__name__)
    if device is self._manager:
        self._h()
        return self
    return self._copy_to(device)


to_device.__qualname__ = "Tensor.to_device"


def install(cls):
    """Adds ``to_device`` to the Tensor class (a Manager is a device here:
    the Tensor module sits below the Manager's)."""
    cls.to_device = to_device
