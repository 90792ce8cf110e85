"""Tensors: :class:`Tensor`, a typed N-d array in one Vulkan buffer, with
host reads and writes and DLPack export.

The class here holds what the library gives a tensor. Other modules add the
array behaviour when the package is imported (vkflow/__init__.py calls their
``install``): ``to_device`` (:mod:`vkflow._array`), the Python operators
(:mod:`vkflow._operators`), the NumPy protocol and array methods
(:mod:`vkflow._protocols`), and indexing, views and ``copy``
(:mod:`vkflow._views`).
"""

import ctypes
import sys
import threading

from ctypes import byref, c_int32, c_int64, c_void_p

from . import _dlpack, _interop, _lib
from ._dlpack import DLDeviceType, _CudaView, _HostView, _new_capsule
from ._dtypes import _DTYPE_SIZES, _MEMORY_NAMES, _dtype, _numpy
from ._errors import _check
from ._handle import _Handle, _ns
from ._timeline import _timeline_point


def _tensor_handle(t, what):
    if not isinstance(t, Tensor):
        raise TypeError("%s must be a vkflow.Tensor, not %s" % (what, type(t).__name__))
    return t._h()


class _InfoBuffers:
    """vkflow_tensor_info's out-parameters, reused by one thread."""

    def __init__(self):
        self.fn = _lib.lib().tensor_info
        self.dtype = ctypes.create_string_buffer(32)
        self.ndim, self.memory, self.mapped, self.read_only = c_int32(), c_int32(), c_int32(), \
            c_int32()
        self.shape = (c_int64 * _lib.MAX_NDIM)()
        self.ndim_p, self.memory_p = byref(self.ndim), byref(self.memory)
        self.mapped_p, self.read_only_p = byref(self.mapped), byref(self.read_only)


_info_buffers = threading.local()
_dtype_names = {}  # dtype names as the library spells them (bytes) -> str


class Tensor(_Handle):
    """A typed N-d array (row-major) in one Vulkan buffer.

    Made by :meth:`Manager.tensor` or :func:`from_dlpack`. Attributes:
    ``dtype`` (name), ``shape`` (tuple), ``memory`` ("device", "host" or
    "storage"), ``mapped`` (host access is zero-copy), ``read_only`` and
    ``imported_copy`` (None unless made by from_dlpack; then whether the data
    was copied rather than shared with the producer).
    """

    _kind = "Tensor"
    _closer = "tensor_close"

    # to_device, the operators, the NumPy protocol, indexing and views are
    # added by install() in the modules named in this module's docstring.

    def __init__(self):
        raise TypeError("create tensors with Manager.tensor or vkflow.from_dlpack")

    @classmethod
    def _wrap(cls, manager, handle, imported_copy=None):
        self = object.__new__(cls)
        self._handle = handle
        self._manager = manager
        self.imported_copy = imported_copy
        try:
            self._load_info()
        except BaseException:
            self.close()
            raise
        return manager._adopt(self)

    @classmethod
    def _from_desc(cls, manager, d):
        """A Tensor over the new handle a vkflow_tensor_desc ``d`` describes
        (vkflow_op_call_new): no vkflow_tensor_info call."""
        self = object.__new__(cls)
        self._handle = d.handle
        self._manager = manager
        self.imported_copy = None
        raw = d.dtype
        dtype = _dtype_names.get(raw)
        if dtype is None:
            dtype = _dtype_names[raw] = _dtype(raw.decode())
        self.dtype = dtype
        self.shape = tuple(d.shape[:d.ndim])
        self.memory = _MEMORY_NAMES.get(d.memory, d.memory)
        self.mapped = bool(d.mapped)
        self.read_only = bool(d.read_only)
        return manager._adopt(self)

    def _load_info(self):
        # One set of out-parameters per thread: this runs for every tensor an
        # eager op returns.
        b = _info_buffers.__dict__.get("b")
        if b is None:
            b = _info_buffers.b = _InfoBuffers()
        _check(b.fn(self._handle, b.dtype, 32, b.ndim_p, b.shape, b.memory_p, b.mapped_p,
                    b.read_only_p))
        self.dtype = _dtype(b.dtype.value.decode())
        self.shape = tuple(b.shape[:b.ndim.value])
        self.memory = _MEMORY_NAMES.get(b.memory.value, b.memory.value)
        self.mapped = bool(b.mapped.value)
        self.read_only = bool(b.read_only.value)

    @property
    def manager(self):
        return self._manager

    @property
    def device(self):
        """The :class:`Manager` the tensor lives on (array API ``device``)."""
        return self._manager

    def _copy_to(self, manager):
        """A new tensor on manager holding a copy of this one, through a
        host export (which waits for pending GPU work) and a copying import."""
        cap = self.__dlpack__(max_version=(1, 3), dl_device=(DLDeviceType.CPU, 0))
        return Tensor._from_dlpack(manager, cap, copy=True)

    @classmethod
    def _from_dlpack(cls, manager, x, copy):
        """``from_dlpack(x, manager, copy=copy)`` for a Manager."""
        copy_mode = _dlpack._import_copy_mode(copy)
        handle, copied = _dlpack._import(manager._h(), x, copy_mode)
        return cls._wrap(manager, handle, imported_copy=copied)

    def _host_copy(self):
        """A NumPy array holding a copy of the tensor, after its pending GPU
        work (unlike :meth:`read`)."""
        np = _numpy()
        if self.dtype == "bool":
            # NumPy 1.x takes no kDLBool: a versioned host export waits for
            # the pending work, then read() copies.
            self.__dlpack__(max_version=(1, 3), dl_device=(DLDeviceType.CPU, 0))
            return self.read()
        return np.array(np.from_dlpack(_HostView(self)), copy=True)

    @property
    def handle(self):
        """The C API handle (vkflow_tensor)."""
        return self._h()

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        """Number of elements."""
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def nbytes(self):
        return self.size * _DTYPE_SIZES.get(self.dtype, 0)

    def close(self):
        """Releases the tensor. Its memory is freed once no submitted work and
        no DLPack export uses it any more. Idempotent."""
        _Handle.close(self)

    def __del__(self, _finalizing=sys.is_finalizing):
        # _Handle.__del__ without its indirections: every eager op's output
        # ends here. Nothing at interpreter shutdown.
        h = self._handle
        if h and not _finalizing():
            self._handle = 0
            try:
                _lib.lib().tensor_close(h)
            except Exception:
                pass

    def export_memory(self):
        """Exports the tensor's memory (made with memory="exportable") as a
        :class:`MemoryHandle` holding a new fd, which the caller owns: close
        it (``os.close``) or hand it to :meth:`Manager.import_memory`. The
        memory lives as long as any side holds it."""
        return _interop.export_memory(self)

    def read(self):
        """Returns a new NumPy array holding a copy of the tensor, after the
        GPU work submitted on it (eager ops, sequences, graph runs) has
        completed. Submits held back on an unsignalled timeline are not
        waited for."""
        out = _numpy().empty(self.shape, dtype=self.dtype.dtype)
        _check(_lib.lib().tensor_read(self._h(), out.ctypes.data, out.nbytes))
        return out

    def write(self, data):
        """Copies ``data`` (converted to the tensor's dtype, with as many
        elements as the tensor, taken in row-major order) into the tensor."""
        np = _numpy()
        arr = np.ascontiguousarray(data, dtype=self.dtype)
        if arr.size != self.size:
            raise ValueError("write: %d elements given for a tensor of shape %r"
                             % (arr.size, self.shape))
        _check(_lib.lib().tensor_write(self._h(), arr.ctypes.data, arr.nbytes))
        return self

    def __dlpack_device__(self):
        """(device_type, device_id) of a default export: (kDLCPU, 0) for
        host-visible memory (a copy where the host reads the memory through
        one: ``mapped`` is False), else (kDLVulkan, device index)."""
        dt, di = c_int32(), c_int32()
        _check(_lib.lib().tensor_dlpack_device(self._h(), byref(dt), byref(di)))
        try:
            kind = DLDeviceType(dt.value)
        except ValueError:
            kind = dt.value
        return kind, di.value

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """Exports the tensor as a DLPack capsule (array API standard 2023.12).

        ``max_version`` None gives a legacy "dltensor" capsule, ``(1, minor)``
        a versioned one. ``dl_device`` None exports to the natural device
        (``__dlpack_device__``); ``(1, 0)`` asks for host memory. ``copy``:
        None copies only if needed, True always, False never (BufferError if
        a copy is needed). ``stream``: None or -1 for kDLCPU exports, which
        wait for pending GPU work before returning; for kDLVulkan exports a
        ``(Timeline, value)`` pair that vkflow makes reach ``value`` once the
        tensor is ready; for kDLCUDA exports (``dl_device=(2, n)``, n the
        device's CUDA ordinal: see :meth:`cuda_view`) the consumer's CUDA
        stream (None or 1: the legacy default stream, 2: per-thread, -1:
        none), which waits on the GPU for the tensor's ready point. Raises
        BufferError when the request cannot be served.
        """
        L = _lib.lib()
        h = self._h()
        if max_version is None:
            major, minor = -1, 0
        else:
            major, minor = int(max_version[0]), int(max_version[1])
            if major < 1:
                major, minor = -1, 0
        if dl_device is None:
            dev_type, dev_id = 0, 0
        else:
            dev_type, dev_id = int(dl_device[0]), int(dl_device[1])
        if copy is None:
            copy_mode = _lib.COPY_IF_NEEDED
        elif copy is True:
            copy_mode = _lib.COPY_ALWAYS
        elif copy is False:
            copy_mode = _lib.COPY_NEVER
        else:
            raise ValueError("copy must be None, True or False, not %r" % (copy,))

        if dev_type == DLDeviceType.CUDA:
            return self._dlpack_cuda(stream, major, minor, dev_id, copy_mode)
        consumer, consumer_value = 0, 0
        if stream is not None and not (isinstance(stream, int) and stream == -1):
            target = dev_type or int(self.__dlpack_device__()[0])
            if target == DLDeviceType.VULKAN:
                consumer, consumer_value = _timeline_point(stream, "stream")
            elif target == DLDeviceType.CPU:
                raise ValueError("stream must be None (or -1) for a kDLCPU export, not %r"
                                 % (stream,))
            # Other devices: the library refuses them below (BufferError).

        out, versioned = c_void_p(), c_int32()
        _check(L.dlpack_export(h, major, minor, dev_type, dev_id, copy_mode, consumer,
                               consumer_value, _ns(_dlpack._timeout()), byref(out),
                               byref(versioned)), buffer_error=True)
        if not out.value:
            raise RuntimeError("vkflow_dlpack_export returned no tensor")
        return _new_capsule(out.value, bool(versioned.value))

    def _dlpack_cuda(self, stream, major, minor, dev_id, copy_mode):
        """A kDLCUDA export: ``stream`` is the consumer's CUDA stream (DLPack:
        None or 1 the legacy default stream, 2 the per-thread default stream,
        -1 no synchronization, else a cudaStream_t), which waits on the GPU
        for the tensor's ready point. With -1 the tensor's pending writes are
        the consumer's to wait for, but a copy the export makes is complete
        when this returns."""
        if stream is None:
            stream = 1
        if not isinstance(stream, int) or isinstance(stream, bool):
            raise TypeError("stream must be an int (a CUDA stream handle) for a kDLCUDA export, "
                            "not %s" % type(stream).__name__)
        out, versioned = c_void_p(), c_int32()
        _check(_lib.lib().dlpack_export_cuda(self._h(), major, minor, dev_id, copy_mode, stream,
                                             _ns(_dlpack._timeout()), byref(out), byref(versioned)),
               buffer_error=True)
        if not out.value:
            raise RuntimeError("vkflow_dlpack_export_cuda returned no tensor")
        return _new_capsule(out.value, bool(versioned.value))

    def cuda_view(self, device_id=None):
        """A view of the tensor that says CUDA: ``torch.from_dlpack`` and
        ``cupy.from_dlpack`` on it give a CUDA tensor over this tensor's
        memory, without a copy when the tensor was made with
        ``memory="exportable"`` (else through a GPU copy), and the consumer's
        stream waits on the GPU for the work queued on the tensor.
        ``device_id`` is the CUDA ordinal (None: the one whose UUID is this
        device's, :meth:`Manager.cuda_device`). Raises UnsupportedError
        without libcuda or a matching CUDA device. See docs/INTEROP.md."""
        if device_id is None:
            device_id = self._manager.cuda_device()
        return _CudaView(self, int(device_id))

    def __repr__(self):
        state = "closed" if self.closed else self.memory
        return "<vkflow.Tensor %s %r %s>" % (self.dtype, self.shape, state)
