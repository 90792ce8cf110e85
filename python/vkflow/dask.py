"""vkflow tensors as Dask chunks on dask.distributed (``import vkflow.dask``).

Importing this module (``import vkflow`` alone does not import Dask)
registers, in the importing process:

* ``distributed.protocol.dask_serialize`` / ``dask_deserialize`` for
  :class:`vkflow.Tensor` (a :class:`vkflow.TensorView` sends its contiguous
  copy): a header with the dtype name and shape, and the bytes as one frame.
  A host-mapped tensor's frame is a memoryview of its mapping, taken after
  its pending GPU writes (no copy); other tensors are staged through host
  memory. The receiver makes a device tensor on its own process's
  :func:`vkflow.default_device`.
* ``dask.sizeof`` for tensors (their ``nbytes``), so worker memory
  accounting sees them.
* the Tensor as a Dask chunk type (``dask.array.chunk_types``), and
  ``concatenate``/``tensordot`` lookups for it, so graphs that mix NumPy and
  vkflow chunks concatenate and contract on the device (NumPy chunks are
  uploaded to the tensor's Manager).

Both ends of a transfer need the registrations: the client imports this
module, and workers do through :class:`DevicePlugin` (registering it
imports the module on every worker, present and future) or the preload
``dask worker --preload vkflow.dask``.

Devices: each worker process uses one Manager, ``vkflow.default_device()``,
opened on the device named by ``VKFLOW_DEVICE`` (an index or a name
substring). ``DevicePlugin(devices=[0, 1])`` gives the workers of a host
those devices round robin; the preload does the same with the devices listed
in ``VKFLOW_DASK_DEVICES`` (comma separated). See docs/PYTHON.md, "Dask
distributed".
"""

import logging
import os
import re

import dask.array  # noqa: F401  (dask.array.chunk_types and dispatch below)
from dask.array.chunk_types import register_chunk_type
from dask.array.dispatch import concatenate_lookup, tensordot_lookup
from dask.sizeof import sizeof
from distributed import WorkerPlugin
from distributed.protocol import dask_deserialize, dask_serialize

from . import _array
from ._array import asarray, default_device
from ._dtypes import _dtype_name, _numpy
from ._functions import concatenate as _np_concatenate
from ._tensor import Tensor
from ._views import TensorView
from .linalg import tensordot as _tensordot

__all__ = ["DevicePlugin", "serialize_tensor", "deserialize_tensor", "device_for",
           "dask_setup"]

logger = logging.getLogger("vkflow.dask")

DEVICES_ENV = "VKFLOW_DASK_DEVICES"


# --- serialization ---------------------------------------------------------

def serialize_tensor(t):
    """(header, frames) for a tensor: header {"dtype", "shape"}; one frame
    with the row-major bytes, a memoryview of the mapping for a host-mapped
    tensor (after its pending GPU writes), a staged host copy otherwise."""
    if isinstance(t, TensorView):
        t = t.contiguous()
    arr = _numpy().asarray(t)  # waits for pending writes; zero-copy when mapped
    header = {"dtype": _dtype_name(t.dtype), "shape": [int(d) for d in t.shape]}
    flat = arr.reshape(-1)
    frame = memoryview(flat.view("uint8")) if flat.size else memoryview(b"")
    return header, [frame]


def deserialize_tensor(header, frames):
    """The tensor (header, frames) describe, made on this process's
    :func:`vkflow.default_device`."""
    np = _numpy()
    data = frames[0] if len(frames) == 1 else b"".join(bytes(f) for f in frames)
    shape = tuple(int(d) for d in header["shape"])
    arr = np.frombuffer(data, dtype=np.dtype(header["dtype"]))
    if arr.size != int(np.prod(shape, dtype=np.int64)):
        raise ValueError("vkflow.dask: a %s frame of %d bytes does not hold shape %s"
                         % (header["dtype"], len(memoryview(data).cast("B")), shape))
    return default_device().tensor(arr.reshape(shape), dtype=header["dtype"])


dask_serialize.register(Tensor)(serialize_tensor)
dask_deserialize.register(Tensor)(deserialize_tensor)


@sizeof.register(Tensor)
def _sizeof_tensor(t):
    return int(t.nbytes)


# --- chunk type and array dispatch -----------------------------------------

register_chunk_type(Tensor)


def _on_device_of(arrays):
    """arrays with NumPy (or other) members moved to the first tensor's Manager."""
    mgr = next(a.device for a in arrays if isinstance(a, Tensor))
    return [a if isinstance(a, Tensor) else asarray(a, device=mgr) for a in arrays]


@concatenate_lookup.register(Tensor)
def _concatenate(arrays, axis=0):
    return _np_concatenate(_on_device_of(list(arrays)), axis=axis)


@tensordot_lookup.register(Tensor)
def _tensordot_chunks(a, b, axes=2):
    a, b = _on_device_of([a, b])
    return _tensordot(a, b, axes=axes)


# --- one device per worker --------------------------------------------------

def _parse_devices(devices):
    if devices is None:
        return []
    if isinstance(devices, (str, int)):
        devices = str(devices).split(",")
    out = [str(d).strip() for d in devices]
    if any(not d or "=" in d for d in out):
        raise ValueError("vkflow.dask: devices must be indices or name substrings, not %r"
                         % (devices,))
    return out


def device_for(devices, index):
    """The VKFLOW_DEVICE value (a str) for the worker at position ``index`` on
    its host: ``devices`` round robin."""
    devices = _parse_devices(devices)
    if not devices:
        raise ValueError("vkflow.dask: no devices given")
    return devices[int(index) % len(devices)]


async def _worker_index(worker):
    """The worker's position among the workers of its host: the number at
    the end of its name (LocalCluster's 0, 1, ...; ``dask worker --nworkers``'
    ``name-0``, ``name-1``), else the rank of its address among the
    scheduler's workers on the same host."""
    name = worker.name
    if isinstance(name, int) and not isinstance(name, bool):
        return name
    m = re.search(r"(?:^|-)(\d+)$", str(name))
    if m:
        return int(m.group(1))
    try:
        info = await worker.scheduler.identity()
        same = sorted(a for a, w in info.get("workers", {}).items()
                      if w.get("host") == worker.ip)
        return same.index(worker.address) if worker.address in same else len(same)
    except Exception:  # noqa: BLE001  (no scheduler yet: the first device)
        return 0


async def _assign(worker, devices):
    devices = _parse_devices(devices)
    if not devices:
        return None
    value = device_for(devices, await _worker_index(worker))
    opened = _array._default
    if opened is not None and not opened.closed and os.environ.get("VKFLOW_DEVICE") != value:
        logger.warning("vkflow.dask: worker %s already opened its Manager; VKFLOW_DEVICE=%s "
                       "takes effect when it is reopened", worker.name, value)
    os.environ["VKFLOW_DEVICE"] = value
    logger.info("vkflow.dask: worker %s uses VKFLOW_DEVICE=%s", worker.name, value)
    return value


class DevicePlugin(WorkerPlugin):
    """A ``distributed.WorkerPlugin`` that gives each worker of a host its own
    device: ``devices`` (indices or name substrings, or a comma-separated
    str) are dealt round robin by the worker's position on its host (see
    :func:`device_for`), by setting ``VKFLOW_DEVICE`` in the worker process
    before its Manager opens. Register it before running vkflow tasks::

        client.register_worker_plugin(vkflow.dask.DevicePlugin(devices=[0, 1]))

    ``devices=None`` sets no device but still imports :mod:`vkflow.dask` on
    every worker (the serializers). ``device`` is the value a worker took
    (None before setup or without devices)."""

    name = "vkflow-device"

    def __init__(self, devices=None):
        self.devices = _parse_devices(devices)
        self.device = None

    async def setup(self, worker):
        self.device = await _assign(worker, self.devices)


async def dask_setup(worker):
    """The preload hook (``dask worker --preload vkflow.dask``): imports the
    registrations and sets ``VKFLOW_DEVICE`` from ``VKFLOW_DASK_DEVICES``
    (comma separated; unset: the worker keeps its VKFLOW_DEVICE)."""
    await _assign(worker, os.environ.get(DEVICES_ENV))
