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

Layout: this file only imports and re-exports; each concern has a module of
its own, and the modules import only modules below them (docs/PYTHON.md,
"Package layout").
"""

import sys

from . import _dlpack
from ._lib import library_path
from ._errors import BusyError, ClosedError, FailedError, PendingError, UnsupportedError
from ._dlpack import DLDeviceType, dlpack_live
from ._timeline import Timeline
from ._dtypes import DType
from ._tensor import Tensor
from ._sequence import Sequence
from ._graph import Algorithm, Exec, Graph, Node, Run
from ._manager import Manager, validation_messages
from ._interop import MemoryHandle, recv_handle, send_handle
from ._array import CopyError, asarray, default_device, from_dlpack
from ._creation import (arange, empty, empty_like, eye, full, full_like, linspace, ones,
                        ones_like, zeros, zeros_like)
from ._views import TensorView
from . import ops
from .ops import synchronize
from . import array_api
from . import _advindex, _array, _functions, _methods, _operators, _protocols, _ufuncs, _views

__all__ = [
    "Manager", "Tensor", "DType", "Sequence", "Timeline", "from_dlpack", "validation_messages",
    "dlpack_live",
    "DLDeviceType", "ClosedError", "UnsupportedError", "PendingError", "FailedError", "BusyError",
    "DLPACK_TIMEOUT",
    "library_path", "Algorithm", "Graph", "Node", "Exec", "Run", "asarray", "default_device",
    "CopyError", "MemoryHandle", "send_handle", "recv_handle", "synchronize",
    "zeros", "ones", "empty", "full", "arange", "linspace", "eye",
    "zeros_like", "ones_like", "empty_like", "full_like",
    "TensorView",
]

# vkflow.DLPACK_TIMEOUT (seconds a DLPack export or import may wait for
# pending GPU work) is read and set in vkflow._dlpack, where the calls read it.
sys.modules[__name__].__class__ = _dlpack._Package

# Tensor's array behaviour comes from the modules above it: to_device
# (_array), the operators (_operators), the NumPy protocol and array methods
# (_protocols), then indexing and views (_views), whose reshape, T, mT and
# iteration replace the copying ones of _protocols, then NumPy's ufunc
# (_ufuncs) and function (_functions) dispatch protocols, then NumPy's
# ndarray methods from the array API functions (_methods).
_array.install(Tensor)
_operators.install(Tensor)
_protocols.install(Tensor)
_views.install(Tensor)
_advindex.install(Tensor)  # integer-array and mask keys on top of _views' basic ones
_ufuncs.install(Tensor)
_functions.install(Tensor)
_methods.install(Tensor)
