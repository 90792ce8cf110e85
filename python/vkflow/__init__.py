"""vkflow for Python: Managers, tensors, sequences, timelines and graphs over
libvkflow.so, with DLPack exchange in both directions.

Pure Python over ctypes; NumPy is imported only by the calls that make or read
arrays (``Manager.tensor`` from data, ``Tensor.read``, ``Tensor.write``).
The library is found as described in ``vkflow._lib`` (``VKFLOW_LIB``, then
``libvkflow.so`` beside this package, then ``build/libvkflow.so``).

Example::

    import numpy as np, vkflow
    with vkflow.Manager() as mgr:
        a = mgr.tensor(np.arange(4, dtype=np.float32))
        b = mgr.tensor([2, 2, 2, 2])                    # float32 by default
        out = mgr.tensor((4,), dtype="float32")         # a tuple of ints is a shape
        mgr.sequence().kernel("multiply", a, b, out).eval()
        print(np.from_dlpack(out))                      # zero-copy when out.mapped

DLPack, export (``Tensor.__dlpack__``, array API standard 2023.12):

* ``max_version=None`` gives a legacy ``DLManagedTensor`` in a capsule named
  ``"dltensor"`` (what NumPy 1.x and PyTorch 1.x/2.x before 2.9 ask for);
  ``max_version=(1, minor)`` gives a ``DLManagedTensorVersioned`` in
  ``"dltensor_versioned"``.
* The natural device (``__dlpack_device__``) is ``(kDLCPU, 0)`` when the
  tensor is mapped (host access is zero-copy), else ``(kDLVulkan, index)``.
  ``dl_device=(1, 0)`` asks for host memory (a copy for unmapped tensors);
  a device that cannot be served raises ``BufferError``, and so does
  ``copy=False`` when a copy would be needed.

Synchronization rules (the full contract is in docs/DLPACK.md):

* A kDLCPU export waits (up to ``DLPACK_TIMEOUT`` seconds) for the tensor's
  pending GPU work before ``__dlpack__`` returns, so the consumer can read at
  once. ``stream`` must be None (or -1) for such an export. An array taken
  *before* GPU work was submitted aliases the same memory but is not
  synchronized: evaluate, wait on a timeline, or export again before reading.
* A kDLVulkan export carries a ready point (``vkflow_vulkan_buffer`` in
  dlpack/vkflow_vulkan.h): the consumer's first submit that touches the buffer
  waits for ``ready_semaphore`` to reach ``ready_value``. A vkflow consumer may
  pass ``stream=(timeline, value)``: the producer then makes that timeline
  reach ``value`` once the tensor is ready. ``stream=-1`` asks for nothing.
* Memory exported through DLPack stays valid until the consumer calls the
  deleter, even after the tensor and its Manager are closed.

DLPack, import (``from_dlpack(x, device=None, copy=None)``): ``x`` is an object with
``__dlpack__`` or a raw capsule. The capsule is marked consumed before the
library takes it over; the result's ``imported_copy`` tells whether the data
was copied (False: the tensor aliases the producer's memory). Compact host
memory is imported zero-copy where the device can import it: the pages around
the data are imported, so the data's address must be a multiple of the
device's host import alignment (the buffer alignment, 64 bytes on lavapipe);
strided or unaligned data is copied, or refused with ``copy=False``.

Array API style: ``from_dlpack`` and ``asarray(obj, dtype=None, device=None,
copy=None)`` take a ``device`` (a Manager); None is :func:`default_device`, a
process-wide Manager opened on first use and closed at exit. ``asarray`` takes
vkflow tensors, DLPack producers (aliased where the device can import their
memory), Python scalars and (nested) lists. ``Tensor.device`` is its Manager;
``Tensor.to_device(mgr)`` returns the tensor itself on its own Manager, else a
copy made through host memory.

Operators: :mod:`vkflow.ops` (``vkflow.ops.add``, ``sum``, ``matmul``, ...)
takes vkflow tensors, DLPack producers and scalars and returns vkflow
tensors; ``vkflow.ops.register`` adds GLSL or SPIR-V kernels by name.

Graphs (``Manager.graph``, see :class:`Graph`): record dispatches, copies,
fills, uploads and downloads; ``compile`` infers the dependencies from what
each node reads and writes and returns an :class:`Exec` that replays on one or
more queues. Upload and download nodes use NumPy arrays as host buffers, read
and written by every run.

Interop (docs/INTEROP.md): ``memory="exportable"`` tensors export their memory
as an opaque fd (``Tensor.export_memory()`` gives a :class:`MemoryHandle`; the
caller owns its fd) that ``Manager.import_memory(handle, dtype, shape)``
imports without a copy, in this process or another one (:func:`send_handle`
and :func:`recv_handle` move a handle over a Unix socket); an import always
consumes the fd. ``Manager.timeline(exportable=True)``, ``Timeline.export_fd``
and ``Manager.import_timeline`` share timelines where the device can
(UnsupportedError on lavapipe).

Errors: the library's negative codes become ``ValueError`` (invalid argument),
``ClosedError`` (use after close), ``UnsupportedError`` (``BufferError`` from
``__dlpack__`` and ``from_dlpack``), ``PendingError`` (a run is still in
flight), ``TimeoutError`` and ``RuntimeError`` (Vulkan or other failures),
carrying the library's message.
"""

import ctypes
import enum
import numbers
import sys
import threading
import weakref

from ctypes import byref, c_int32, c_int64, c_uint64, c_void_p

from . import _lib

__all__ = [
    "Manager", "Tensor", "Sequence", "Timeline", "from_dlpack", "validation_messages", "dlpack_live",
    "DLDeviceType", "ClosedError", "UnsupportedError", "PendingError", "FailedError", "BusyError",
    "DLPACK_TIMEOUT",
    "library_path", "Algorithm", "Graph", "Node", "Exec", "Run", "asarray", "default_device",
    "CopyError", "MemoryHandle", "send_handle", "recv_handle", "synchronize",
]

#: Seconds a DLPack export or import may wait for pending GPU work.
DLPACK_TIMEOUT = 60.0

library_path = _lib.library_path


class ClosedError(RuntimeError):
    """The object, or the Manager that created it, was closed."""


class UnsupportedError(RuntimeError):
    """The device, or the requested operation, cannot be served."""


class PendingError(RuntimeError):
    """The object is in use by a run still in flight."""


class FailedError(RuntimeError):
    """Work this depends on failed: the producer of a timeline point it
    waits on failed (its submit, or the timeline was closed first). The
    message names the root cause; failures are sticky on their timeline
    (see the Go package timeline, Failures)."""


class BusyError(RuntimeError):
    """A bound was reached (held submits); nothing was done: retry once
    work drains."""


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


_MEMORY = {"device": _lib.MEMORY_DEVICE, "host": _lib.MEMORY_HOST,
           "storage": _lib.MEMORY_STORAGE, "exportable": _lib.MEMORY_EXPORTABLE}
_MEMORY_NAMES = {v: k for k, v in _MEMORY.items()}

_DTYPE_SIZES = {
    "float16": 2, "float32": 4, "float64": 8,
    "int8": 1, "int16": 2, "int32": 4, "int64": 8,
    "uint8": 1, "uint16": 2, "uint32": 4, "uint64": 8,
    "bool": 1,
}

_consume_lock = threading.Lock()


def _raise(rc, buffer_error=False):
    text = _lib.lib().error_text() or "vkflow error %d" % rc
    if rc == _lib.ERR_INVALID:
        raise ValueError(text)
    if rc == _lib.ERR_CLOSED:
        raise ClosedError(text)
    if rc == _lib.ERR_UNSUPPORTED:
        raise (BufferError if buffer_error else UnsupportedError)(text)
    if rc == _lib.ERR_TIMEOUT:
        raise TimeoutError(text)
    if rc == _lib.ERR_PENDING:
        raise PendingError(text)
    if rc == _lib.ERR_FAILED:
        raise FailedError(text)
    if rc == _lib.ERR_BUSY:
        raise BusyError(text)
    raise RuntimeError(text)


def _check(rc, buffer_error=False):
    if rc < 0:
        _raise(rc, buffer_error)
    return rc


def _ns(timeout):
    """Seconds (None: no deadline) to the library's nanoseconds (-1: none)."""
    if timeout is None:
        return -1
    if timeout < 0:
        raise ValueError("timeout must be None or >= 0 seconds, not %r" % (timeout,))
    return int(timeout * 1e9)


def _numpy():
    import numpy
    return numpy


def _dtype_name(dtype):
    if isinstance(dtype, str):
        name = dtype
    else:
        name = _numpy().dtype(dtype).name
    if name not in _DTYPE_SIZES:
        raise ValueError("vkflow has no dtype %r (supported: %s)"
                         % (name, ", ".join(sorted(_DTYPE_SIZES))))
    return name


def _memory_kind(memory):
    if isinstance(memory, str):
        try:
            return _MEMORY[memory.lower()]
        except KeyError:
            raise ValueError("memory must be one of %s, not %r"
                             % (", ".join(_MEMORY), memory)) from None
    if memory in _MEMORY_NAMES:
        return int(memory)
    raise ValueError("unknown memory kind %r" % (memory,))


def _is_shape(x):
    def is_int(v):
        return isinstance(v, numbers.Integral) and not isinstance(v, bool)
    return is_int(x) or (isinstance(x, tuple) and all(is_int(d) for d in x))


def _tensor_handle(t, what):
    if not isinstance(t, Tensor):
        raise TypeError("%s must be a vkflow.Tensor, not %s" % (what, type(t).__name__))
    return t._h()


def _timeline_point(point, what):
    try:
        tl, value = point
    except (TypeError, ValueError):
        raise TypeError("%s must be a (Timeline, value) pair, not %r" % (what, point)) from None
    if not isinstance(tl, Timeline):
        raise TypeError("%s must be a (Timeline, value) pair, not %r" % (what, point))
    return tl._h(), int(value)


def validation_messages():
    """Returns (count, last_text): the validation-layer warnings and errors
    seen by every Manager opened with validation=True since the library was
    loaded, and the text of the last one ("" when none)."""
    L = _lib.lib()
    buf = ctypes.create_string_buffer(4096)
    n = L.validation_messages(buf, len(buf))
    return int(n), buf.value.decode("utf-8", "replace")


def dlpack_live():
    """Returns how many DLPack exports still wait for their deleter (a
    capsule nobody consumed, or an array a consumer still holds)."""
    return int(_lib.lib().dlpack_live())


class _Handle:
    """Common handle bookkeeping: _handle is 0 once closed from Python.
    ``_closer`` names the library function that closes the handle."""

    _handle = 0
    _kind = "object"
    _closer = None

    def close(self):
        """Releases the object (work already submitted still completes).
        Idempotent."""
        h, self._handle = self._handle, 0
        if h:
            _check(getattr(_lib.lib(), self._closer)(h))

    def _detach(self):
        """Marks the object closed when its Manager closes, and frees its
        library handle (the library's close of an object whose Manager is
        closed only drops the handle; its result is of no interest)."""
        h, self._handle = self._handle, 0
        if h:
            getattr(_lib.lib(), self._closer)(h)

    def _h(self):
        h = self._handle
        if not h:
            raise ClosedError("vkflow: %s is closed" % self._kind)
        return h

    @property
    def closed(self):
        """True once close() was called (on it or on its Manager)."""
        return not self._handle

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self, _finalizing=sys.is_finalizing):
        # Nothing at interpreter shutdown: the library may be half torn down.
        if _finalizing() or not self._handle:
            return
        try:
            self.close()
        except Exception:
            pass


class Manager(_Handle):
    """One Vulkan device and everything created from it.

    ``device`` is a device index (-1: the default device; the VKFLOW_DEVICE
    environment variable is honoured). ``validation=True`` enables the Khronos
    validation layer with synchronization validation; its messages are counted
    by :func:`validation_messages`. ``queues`` asks for that many logical
    compute queues and ``transfer=True`` for a logical transfer queue after
    them (logical queues map onto the device's physical ones).

    Closing the Manager closes every tensor, algorithm, sequence, timeline,
    graph, graph Exec and Run created from it: they report ``closed`` and
    raise ClosedError when used. Memory exported through DLPack stays valid
    until its deleter runs.
    """

    _kind = "Manager"

    def __init__(self, device=-1, validation=False, queues=None, transfer=False):
        # Every handle made from this Manager, closed with it.
        self._children = weakref.WeakSet()
        self._children_lock = threading.Lock()
        L = _lib.lib()
        h = c_uint64()
        flags = _lib.VALIDATION if validation else 0
        if queues is None and not transfer:
            _check(L.manager_new(int(device), flags, byref(h)))
        else:
            compute = 1 if queues is None else int(queues)
            _check(L.manager_new_queues(int(device), flags, compute, 1 if transfer else 0,
                                        byref(h)))
        self._handle = h.value

    @property
    def handle(self):
        """The C API handle (vkflow_manager)."""
        return self._h()

    def close(self):
        """Waits for submitted work and closes everything. Idempotent."""
        h, self._handle = self._handle, 0
        if not h:
            return
        rc = _lib.lib().manager_close(h)
        with self._children_lock:
            children = list(self._children)
            self._children.clear()
        for child in children:
            child._detach()
        _check(rc)

    @property
    def queue_count(self):
        """The number of logical queues (compute queues first, then transfer)."""
        n = c_int32()
        _check(_lib.lib().manager_queue_count(self._h(), byref(n)))
        return n.value

    def kernel(self, name, a, b, out):
        """Returns a built-in float32 kernel bound to its tensors, an
        :class:`Algorithm` for graph dispatches: "multiply" (out = a*b),
        "add" (out = a+b), "multiply_scalar" (multiply, one element per
        invocation) or "saxpy" (out = scalar*a + out, b None; the scalar is
        its push constant, a float32)."""
        bh = 0 if b is None else _tensor_handle(b, "b")
        h = c_uint64()
        _check(_lib.lib().kernel_new(self._h(), str(name).encode(), _tensor_handle(a, "a"), bh,
                                     _tensor_handle(out, "out"), byref(h)))
        return self._adopt(Algorithm(self, h.value, [a, b, out]))

    def algorithm(self, spirv, tensors, workgroups=None):
        """Returns an :class:`Algorithm` from SPIR-V bytes bound to
        ``tensors`` (set 0, bindings 0..n-1). ``workgroups`` is an (x, y, z)
        tuple; None derives it from the first tensor's length."""
        code = bytes(spirv)
        hs = [_tensor_handle(t, "tensors[%d]" % i) for i, t in enumerate(tensors)]
        arr = (c_uint64 * len(hs))(*hs) if hs else None
        x, y, z = (0, 0, 0) if workgroups is None else (tuple(int(v) for v in workgroups)
                                                         + (1, 1))[:3]
        h = c_uint64()
        _check(_lib.lib().algorithm_new(self._h(), code, len(code), len(hs), arr, x, y, z,
                                        byref(h)))
        return self._adopt(Algorithm(self, h.value, list(tensors)))

    def graph(self):
        """Returns an empty :class:`Graph` for this Manager."""
        return self._adopt(Graph(self))

    def mem_stats(self):
        """Returns (allocations, blocks): live buffers and VkDeviceMemory blocks."""
        a, b = c_int64(), c_int64()
        _check(_lib.lib().manager_mem_stats(self._h(), byref(a), byref(b)))
        return a.value, b.value

    def tensor(self, data_or_shape, dtype=None, memory="device"):
        """Creates a tensor.

        ``data_or_shape`` is either a shape (an int or a tuple of ints), giving
        a zero-filled tensor of ``dtype`` (default float32), or data: a NumPy
        array or anything ``numpy.asarray`` accepts (a list, for example),
        which is copied in. Data keeps a NumPy array's dtype unless ``dtype``
        is given; other data defaults to float32.

        ``memory`` is "device" (device-local, mapped where the device allows),
        "host" (host-visible, coherent), "storage" (GPU only) or "exportable"
        (device memory of its own that :meth:`Tensor.export_memory` can export;
        the tensor's ``memory`` reads "device").
        """
        L = _lib.lib()
        mem = _memory_kind(memory)
        keep = None
        if _is_shape(data_or_shape):
            shape = (data_or_shape,) if not isinstance(data_or_shape, tuple) else data_or_shape
            shape = tuple(int(d) for d in shape)
            name = _dtype_name(dtype if dtype is not None else "float32")
            ptr, nbytes = None, 0
        else:
            np = _numpy()
            if dtype is None and not isinstance(data_or_shape, np.ndarray):
                dtype = "float32"
            # asarray keeps 0-d arrays 0-d (ascontiguousarray makes them 1-d).
            arr = np.asarray(data_or_shape, order="C",
                             dtype=None if dtype is None else _dtype_name(dtype))
            name = _dtype_name(arr.dtype)
            shape = arr.shape
            keep = arr
            ptr, nbytes = arr.ctypes.data, arr.nbytes
        dims = (c_int64 * len(shape))(*shape) if shape else None
        h = c_uint64()
        _check(L.tensor_new(self._h(), name.encode(), len(shape), dims, ptr, nbytes, mem,
                            byref(h)))
        del keep
        return Tensor._wrap(self, h.value)

    def sequence(self, queue=0):
        """Creates a Sequence recording for logical queue ``queue``."""
        h = c_uint64()
        _check(_lib.lib().sequence_new(self._h(), int(queue), byref(h)))
        return self._adopt(Sequence(self, h.value))

    def timeline(self, initial=0, exportable=False):
        """Creates a Timeline (a timeline semaphore) starting at ``initial``.
        ``exportable=True`` makes one that :meth:`Timeline.export_fd` can
        share (UnsupportedError where the device lacks
        VK_KHR_external_semaphore_fd, as lavapipe does)."""
        if exportable:
            return _interop.new_exportable_timeline(self, initial)
        h = c_uint64()
        _check(_lib.lib().timeline_new(self._h(), int(initial), byref(h)))
        return self._adopt(Timeline(self, h.value))

    def import_memory(self, handle, dtype, shape):
        """Imports exported memory (a :class:`MemoryHandle`, from
        :meth:`Tensor.export_memory` here or in another process) as a tensor
        of ``dtype`` and ``shape`` on this Manager, without a copy. Consumes
        ``handle.fd`` whatever happens, unless it cannot be an fd: a bool or
        non-integer (TypeError) or a value outside 0..2**31-1 (ValueError)
        is refused first and nothing is closed. ValueError when the handle is of
        another device (UUIDs) or too small for dtype and shape. Nothing
        orders the two sides' reads and writes: use a timeline or a host relay."""
        return _interop.import_memory(self, handle, dtype, shape)

    def cuda_device(self):
        """The CUDA ordinal of this device, matched by UUID (libcuda.so.1 is
        opened at run time). Raises UnsupportedError, saying why, without
        libcuda or a CUDA device with this device's UUID."""
        ordinal = c_int32()
        _check(_lib.lib().cuda_device(self._h(), byref(ordinal)))
        return ordinal.value

    def import_timeline(self, fd):
        """Imports an exported timeline's fd (:meth:`Timeline.export_fd`) as
        a new shared Timeline of this Manager; consumes ``fd`` whatever happens,
        unless it cannot be an fd (TypeError, or ValueError outside
        0..2**31-1, refused first with nothing closed). UnsupportedError
        where the device cannot share timelines."""
        return _interop.import_timeline(self, fd)

    def from_dlpack(self, x, copy=None):
        """Same as ``vkflow.from_dlpack(x, self, copy=copy)``."""
        return from_dlpack(x, self, copy=copy)

    def _adopt(self, child):
        """Registers child, a handle made from this Manager, to be closed
        with it; a child made while the Manager was closing is closed now."""
        with self._children_lock:
            if self._handle:
                self._children.add(child)
                return child
        child._detach()
        return child

    def __repr__(self):
        return "<vkflow.Manager %s>" % ("closed" if self.closed else "handle=%d" % self._handle)


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

    def _load_info(self):
        # One set of out-parameters per thread: this runs for every tensor an
        # eager op returns.
        b = _info_buffers.__dict__.get("b")
        if b is None:
            b = _info_buffers.b = _InfoBuffers()
        _check(b.fn(self._handle, b.dtype, 32, b.ndim_p, b.shape, b.memory_p, b.mapped_p,
                    b.read_only_p))
        self.dtype = b.dtype.value.decode()
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

    def _copy_to(self, manager):
        """A new tensor on manager holding a copy of this one, through a
        host export (which waits for pending GPU work) and a copying import."""
        cap = self.__dlpack__(max_version=(1, 3), dl_device=(DLDeviceType.CPU, 0))
        return from_dlpack(cap, manager, copy=True)

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
        np = _numpy()
        out = np.empty(self.shape, dtype=self.dtype)
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
        """(device_type, device_id) of a default export: (kDLCPU, 0) when host
        access is zero-copy, else (kDLVulkan, device index)."""
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
                               consumer_value, _ns(DLPACK_TIMEOUT), byref(out),
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
                                             _ns(DLPACK_TIMEOUT), byref(out), byref(versioned)),
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


class Sequence(_Handle):
    """Operations recorded for one logical queue, submitted together.

    Recording methods return the sequence, so calls chain::

        seq.kernel("multiply", a, b, out).eval()
    """

    _kind = "Sequence"
    _closer = "sequence_close"

    def __init__(self, manager, handle):
        self._manager = manager
        self._handle = handle

    def kernel(self, name, a, b, out, scalar=0.0):
        """Records a built-in float32 kernel: "multiply" (out = a*b), "add"
        (out = a+b) or "saxpy" (out = scalar*a + out; b must be None)."""
        bh = 0 if b is None else _tensor_handle(b, "b")
        _check(_lib.lib().sequence_kernel(self._h(), name.encode(), _tensor_handle(a, "a"), bh,
                                          _tensor_handle(out, "out"), float(scalar)))
        return self

    def copy(self, src, dst):
        """Records a copy of the whole tensor src into dst."""
        _check(_lib.lib().sequence_copy(self._h(), _tensor_handle(src, "src"),
                                        _tensor_handle(dst, "dst")))
        return self

    def eval(self, timeout=None):
        """Submits and waits (``timeout`` in seconds, None: no deadline)."""
        _check(_lib.lib().sequence_eval(self._h(), _ns(timeout)))
        return self

    def submit(self, wait=None, signal=None):
        """Submits without waiting. ``wait`` and ``signal`` are optional
        ``(Timeline, value)`` pairs: the GPU work starts once the wait point is
        reached and the signal point is set when it completes."""
        wt, wv = (0, 0) if wait is None else _timeline_point(wait, "wait")
        st, sv = (0, 0) if signal is None else _timeline_point(signal, "signal")
        _check(_lib.lib().sequence_submit(self._h(), wt, wv, st, sv))
        return self

    def __repr__(self):
        return "<vkflow.Sequence %s>" % ("closed" if self.closed else "handle=%d" % self._handle)


class Timeline(_Handle):
    """A timeline semaphore: a counter the GPU and the host advance."""

    _kind = "Timeline"
    _closer = "timeline_close"

    def __init__(self, manager, handle):
        self._manager = manager
        self._handle = handle

    @property
    def value(self):
        """The current counter value."""
        v = c_uint64()
        _check(_lib.lib().timeline_value(self._h(), byref(v)))
        return v.value

    def signal(self, value):
        """Sets the counter to ``value`` from the host (values must increase)."""
        _check(_lib.lib().timeline_signal(self._h(), int(value)))
        return self

    def wait(self, value, timeout=None):
        """Blocks until the counter reaches ``value``; TimeoutError after
        ``timeout`` seconds (None: no deadline)."""
        _check(_lib.lib().timeline_wait(self._h(), int(value), _ns(timeout)))
        return self

    def export_fd(self):
        """Exports a timeline made with ``exportable=True`` as a new opaque
        fd, which the caller owns. UnsupportedError where the device cannot
        share timelines (lavapipe)."""
        return _interop.export_timeline(self)

    @property
    def semaphore(self):
        """The VkSemaphore handle, for consumers on the same VkDevice."""
        s = c_uint64()
        _check(_lib.lib().timeline_semaphore(self._h(), byref(s)))
        return s.value

    def __repr__(self):
        return "<vkflow.Timeline %s>" % ("closed" if self.closed else "handle=%d" % self._handle)


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


from ._graph import Algorithm, Exec, Graph, Node, Run  # noqa: E402
from ._array import CopyError, asarray, default_device, from_dlpack  # noqa: E402
from . import ops  # noqa: E402,F401
from .ops import synchronize  # noqa: E402,F401
from . import _interop  # noqa: E402
from ._interop import MemoryHandle, recv_handle, send_handle  # noqa: E402
# Array behaviour (operators, NumPy protocol, T/mT/reshape, the array API
# namespace) and the array API creation functions: docs/PYTHON.md.
from . import _arraylike, _creation  # noqa: E402
from ._creation import *  # noqa: E402,F401,F403
__all__ += _creation.__all__
_arraylike.install(Tensor)
from . import _views  # noqa: E402
from ._views import TensorView  # noqa: E402,F401
_views.install(Tensor)
__all__ += ["TensorView"]
