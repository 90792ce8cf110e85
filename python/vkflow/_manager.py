"""Managers: :class:`Manager`, one Vulkan device and everything created
from it (tensors, sequences, timelines, algorithms, graphs), and the
validation layer's message count.
"""

import ctypes
import numbers
import os
import threading
import weakref

from ctypes import byref, c_int32, c_int64, c_uint64

from . import _interop, _lib
from ._dtypes import _dtype_name, _memory_kind, _numpy
from ._errors import _check
from ._graph import Algorithm, Graph
from ._handle import _Handle
from ._sequence import Sequence
from ._tensor import Tensor, _tensor_handle
from ._timeline import Timeline

__all__ = ["Manager", "validation_messages"]


def _is_shape(x):
    def is_int(v):
        return isinstance(v, numbers.Integral) and not isinstance(v, bool)
    return is_int(x) or (isinstance(x, tuple) and all(is_int(d) for d in x))


def validation_messages():
    """Returns (count, last_text): the validation-layer warnings and errors
    seen by every Manager opened with validation=True since the library was
    loaded, and the text of the last one ("" when none)."""
    L = _lib.lib()
    buf = ctypes.create_string_buffer(4096)
    n = L.validation_messages(buf, len(buf))
    return int(n), buf.value.decode("utf-8", "replace")


_device_env_lock = threading.Lock()
# The variables a Manager reads when it opens, and the values last given to
# the library (none yet: _UNSYNCED).
_SYNCED_ENV = ("VKFLOW_DEVICE", "VKFLOW_WAIT_SPIN")
_UNSYNCED = object()
_device_env_synced = {}


def _sync_device_env(L):
    """Gives the library os.environ's VKFLOW_DEVICE and VKFLOW_WAIT_SPIN: Go
    reads its own copy of the environment, taken when libvkflow.so was
    loaded, so a change made since (by vkflow.dask.DevicePlugin, or by the
    program) would go unseen."""
    with _device_env_lock:
        for name in _SYNCED_ENV:
            value = os.environ.get(name)
            if value != _device_env_synced.get(name, _UNSYNCED):
                _check(L.set_env(name.encode(), value.encode() if value is not None else None))
                _device_env_synced[name] = value


class Manager(_Handle):
    """One Vulkan device and everything created from it.

    ``device`` is a device index (-1: the default device). The VKFLOW_DEVICE
    environment variable (a device index or a case-insensitive substring of
    its name) overrides it; its value in ``os.environ`` when the Manager
    opens counts, even when set after libvkflow.so was loaded. ``validation=True`` enables the Khronos
    validation layer with synchronization validation; its messages are counted
    by :func:`validation_messages`. ``queues`` asks for that many logical
    compute queues and ``transfer=True`` for a logical transfer queue after
    them (logical queues map onto the device's physical ones). ``trace`` is a
    file the Manager writes a Chrome trace of its work to when it closes
    (Perfetto and chrome://tracing open it; docs/PERFORMANCE.md); the
    VKFLOW_TRACE environment variable does the same for every Manager.

    Closing the Manager closes every tensor, algorithm, sequence, timeline,
    graph, graph Exec and Run created from it: they report ``closed`` and
    raise ClosedError when used. Memory exported through DLPack stays valid
    until its deleter runs.
    """

    _kind = "Manager"

    def __init__(self, device=-1, validation=False, queues=None, transfer=False, trace=None):
        # Every handle made from this Manager, closed with it.
        self._children = weakref.WeakSet()
        self._children_lock = threading.Lock()
        L = _lib.lib()
        _sync_device_env(L)
        h = c_uint64()
        flags = _lib.VALIDATION if validation else 0
        if trace is not None:
            compute = 1 if queues is None else int(queues)
            _check(L.manager_new_traced(int(device), flags, compute, 1 if transfer else 0,
                                        os.fsencode(trace), byref(h)))
        elif queues is None and not transfer:
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

    def wait_stats(self):
        """The host's waits on the GPU that reached the driver, a dict:
        ``polled`` ended while polling the timeline (VKFLOW_WAIT_SPIN,
        default 200 µs: no sleep, no wake-up), ``blocked`` went on to sleep
        in vkWaitSemaphores. See docs/PYTHON.md, "Waiting"."""
        polled, blocked = c_uint64(), c_uint64()
        _check(_lib.lib().wait_stats(self._h(), byref(polled), byref(blocked)))
        return {"polled": polled.value, "blocked": blocked.value}

    @property
    def host_import_alignment(self):
        """The alignment (bytes) an array's address needs for
        :func:`from_dlpack` to wrap host memory without a copy
        (VK_EXT_external_memory_host); 0 when the device cannot import host
        memory, so that host arrays are always copied."""
        a = c_uint64()
        _check(_lib.lib().host_import_alignment(self._h(), byref(a)))
        return a.value

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
            return self._adopt(Timeline(self, _interop.new_exportable_timeline(self, initial)))
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
        return Tensor._wrap(self, _interop.import_memory(self, handle, dtype, shape))

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
        return self._adopt(Timeline(self, _interop.import_timeline(self, fd)))

    def from_dlpack(self, x, copy=None):
        """Same as ``vkflow.from_dlpack(x, self, copy=copy)``."""
        return Tensor._from_dlpack(self, x, copy)

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
