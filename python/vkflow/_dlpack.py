"""DLPack plumbing (docs/DLPACK.md): device types, capsules in both
directions, the import of a producer's tensor into a Manager, and the small
views that export a tensor to one device (host memory for NumPy, CUDA).

:meth:`vkflow.Tensor.__dlpack__` and :func:`vkflow.from_dlpack` are the API;
this module holds what they share. ``DLPACK_TIMEOUT`` is read at call time:
``vkflow.DLPACK_TIMEOUT`` reads and sets it (see :class:`_Package`).
"""

import ctypes
import enum
import importlib
import threading
import types

from ctypes import byref, c_int32, c_uint64, c_void_p

from . import _lib
from ._errors import _check
from ._handle import _ns

__all__ = ["DLDeviceType", "DLPACK_TIMEOUT", "dlpack_live"]

#: Seconds a DLPack export or import may wait for pending GPU work.
DLPACK_TIMEOUT = 60.0


class DLDeviceType(enum.IntEnum):
    """DLPack device types (the ones in dlpack.h 1.x that vkflow may meet)."""
    CPU = 1
    CUDA = 2
    CUDA_HOST = 3
    OPENCL = 4
    VULKAN = 7
    METAL = 8
    VPI = 9
    ROCM = 10
    ROCM_HOST = 11
    EXT_DEV = 12
    CUDA_MANAGED = 13
    ONE_API = 14
    WEBGPU = 15
    HEXAGON = 16


class _Package(types.ModuleType):
    """The type of the vkflow package module (set by vkflow/__init__.py):
    ``vkflow.DLPACK_TIMEOUT`` reads and sets this module's DLPACK_TIMEOUT,
    which every export and import reads when it is called."""

    @property
    def DLPACK_TIMEOUT(self):
        return _timeout()

    @DLPACK_TIMEOUT.setter
    def DLPACK_TIMEOUT(self, seconds):
        global DLPACK_TIMEOUT
        DLPACK_TIMEOUT = seconds

    def __dir__(self):
        return sorted(set(super().__dir__()) | {"DLPACK_TIMEOUT"})

    def __reduce__(self):
        # By reference, as cloudpickle pickles plain modules: a function
        # pickled by value (one of a script's __main__, sent to Dask
        # workers) may use ``vkflow`` as a global.
        return importlib.import_module, (self.__name__,)


def _timeout():
    """DLPACK_TIMEOUT now (users and tests change it)."""
    return DLPACK_TIMEOUT


def dlpack_live():
    """Returns how many DLPack exports still wait for their deleter (a
    capsule nobody consumed, or an array a consumer still holds)."""
    return int(_lib.lib().dlpack_live())


_consume_lock = threading.Lock()

# Offsets of the deleter in DLManagedTensor (legacy) and
# DLManagedTensorVersioned, on 64-bit platforms.
_DELETER_OFFSET = {False: 56, True: 16}
_DELETER = ctypes.CFUNCTYPE(None, c_void_p)


def _call_deleter(ptr, versioned):
    fn = c_void_p.from_address(ptr + _DELETER_OFFSET[versioned]).value
    if fn:
        _DELETER(fn)(ptr)


def _new_capsule(ptr, versioned):
    """Wraps a managed tensor in a capsule whose destructor calls the deleter
    if nobody consumed it. On failure the deleter runs here."""
    L = _lib.lib()
    name = L.capsule_names[_lib.CAPSULE_VERSIONED if versioned else _lib.CAPSULE_LEGACY]
    try:
        return L.PyCapsule_New(ptr, name, L.capsule_destructor_addr)
    except BaseException:
        _call_deleter(ptr, versioned)
        raise


def _consume(capsule):
    """Marks a DLPack capsule used; returns (pointer, versioned)."""
    L = _lib.lib()
    with _consume_lock:
        if L.PyCapsule_IsValid(capsule, b"dltensor_versioned"):
            versioned, name = True, b"dltensor_versioned"
        elif L.PyCapsule_IsValid(capsule, b"dltensor"):
            versioned, name = False, b"dltensor"
        elif (L.PyCapsule_IsValid(capsule, b"used_dltensor")
              or L.PyCapsule_IsValid(capsule, b"used_dltensor_versioned")):
            raise ValueError("from_dlpack: the DLPack capsule was already consumed")
        elif type(capsule).__name__ == "PyCapsule":
            raise ValueError("from_dlpack: not a DLPack capsule (unknown capsule name)")
        else:
            raise TypeError("from_dlpack: expected an object with __dlpack__ or a DLPack "
                            "capsule, not %s" % type(capsule).__name__)
        ptr = L.PyCapsule_GetPointer(capsule, name)
        if not ptr:
            raise ValueError("from_dlpack: the DLPack capsule holds NULL")
        used = L.capsule_names[_lib.CAPSULE_USED_VERSIONED if versioned
                               else _lib.CAPSULE_USED_LEGACY]
        if L.PyCapsule_SetName(capsule, used) != 0:
            raise RuntimeError("from_dlpack: PyCapsule_SetName failed")
    return ptr, versioned


_COPY_MODES = {None: _lib.COPY_IF_NEEDED, True: _lib.COPY_ALWAYS, False: _lib.COPY_NEVER}


def _import_copy_mode(copy):
    """from_dlpack's ``copy`` (None, True or False) as the library's mode."""
    copy_mode = _COPY_MODES.get(copy) if isinstance(copy, (bool, type(None))) else None
    if copy_mode is None:
        raise ValueError("from_dlpack: copy must be None, True or False")
    return copy_mode


def _import(manager_handle, x, copy_mode):
    """Imports x (an object with ``__dlpack__``, or a capsule) into the
    Manager manager_handle: (the new tensor's handle, whether the data was
    copied). See :func:`vkflow.from_dlpack`."""
    if hasattr(x, "__dlpack__"):
        try:
            capsule = x.__dlpack__(max_version=(1, 3))
        except TypeError:
            capsule = x.__dlpack__()
    else:
        capsule = x
    ptr, versioned = _consume(capsule)
    # From here the library owns the managed tensor: it calls the deleter
    # even when the import fails.
    out, copied = c_uint64(), c_int32()
    _check(_lib.lib().dlpack_import_copy(manager_handle, ptr, 1 if versioned else 0, copy_mode,
                                         _ns(_timeout()), byref(out), byref(copied)),
           buffer_error=True)
    return out.value, bool(copied.value)


class _CudaView:
    """Exports a tensor as kDLCUDA (Tensor.cuda_view)."""

    def __init__(self, tensor, device_id):
        self._tensor = tensor
        self._device_id = device_id

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        if dl_device is not None and tuple(dl_device) != (DLDeviceType.CUDA, self._device_id):
            raise BufferError("this view exports to (kDLCUDA, %d), not %r"
                              % (self._device_id, tuple(dl_device)))
        return self._tensor.__dlpack__(stream=stream, max_version=max_version,
                                       dl_device=(DLDeviceType.CUDA, self._device_id), copy=copy)

    def __dlpack_device__(self):
        return DLDeviceType.CUDA, self._device_id


class _HostView:
    """Exports a tensor to host memory (kDLCPU) for NumPy."""

    def __init__(self, tensor):
        self._tensor = tensor

    def __dlpack__(self, stream=None):
        return self._tensor.__dlpack__(dl_device=(DLDeviceType.CPU, 0))

    def __dlpack_device__(self):
        return DLDeviceType.CPU, 0
