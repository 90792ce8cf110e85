"""External memory and shared timelines as opaque file descriptors
(docs/INTEROP.md): a tensor's memory exported for another Manager, another
process or CUDA to import without a copy.

Private module: the API is :meth:`Tensor.export_memory`,
:meth:`Manager.import_memory`, ``Manager.timeline(exportable=True)``,
:meth:`Timeline.export_fd`, :meth:`Manager.import_timeline`, and
:class:`MemoryHandle`, :func:`send_handle` and :func:`recv_handle`, all
exported by the vkflow package.

fd ownership: every export returns a new fd that the caller owns (close it
with ``os.close``, or hand it to an import); every import consumes its fd,
on success and on failure. A value that cannot be an fd is refused before
anything is called and nothing is closed: TypeError for what is not an int
(bool included), ValueError for a negative one or one beyond int32 (an fd
is a C int; ctypes would keep its low 32 bits and name another fd).
"""

import collections
import operator
import os
import socket
import struct

from ctypes import byref, c_int32, c_int64, c_uint64

from . import _lib
from ._dtypes import _dtype_name
from ._errors import _check

__all__ = ["MemoryHandle", "send_handle", "recv_handle"]


class MemoryHandle(collections.namedtuple(
        "MemoryHandle", "fd size offset bytes memory_type dedicated device_uuid driver_uuid")):
    """An exported tensor's memory (``vkflow_memory_handle``): ``fd`` (an
    opaque fd, owned by whoever holds the handle), ``size`` (the allocation's
    bytes), ``offset`` (where the tensor starts in it), ``bytes`` (the
    tensor's bytes), ``memory_type`` (the exporter's memory type index),
    ``dedicated`` (bool) and ``device_uuid``, ``driver_uuid`` (16 bytes each,
    the exporting device's; an import needs both to match its own).

    A plain value: copying it does not duplicate the fd. ``_replace`` makes
    a changed copy (same fd)."""

    __slots__ = ()


# The wire form: Go's interop.MarshalBinary (magic "vkflowH1", then the
# fields little-endian; flags bit 0 is dedicated), so Python, Go and C
# (vkflow_memory_handle_encode / _decode) processes can send handles to each
# other. It is not the C struct vkflow_memory_handle. The fd travels as
# SCM_RIGHTS.
_MAGIC = b"vkflowH1"
_WIRE = struct.Struct("<8sQQQII16s16s")
_DEDICATED = 1


_FD_MAX = 2**31 - 1


def _check_fd(fd, what):
    """Returns fd as an int in 0..2**31-1, else raises (TypeError for a
    bool or a non-integer, ValueError for a value out of range) without
    touching any fd."""
    if isinstance(fd, bool):
        raise TypeError("%s: fd must be an int, not bool" % what)
    try:
        fd = operator.index(fd)
    except TypeError:
        raise TypeError("%s: fd must be an int, not %s" % (what, type(fd).__name__)) from None
    if not 0 <= fd <= _FD_MAX:
        raise ValueError("%s: %d is not a file descriptor (an fd is 0 to %d)" % (what, fd, _FD_MAX))
    return fd


def _from_c(c):
    return MemoryHandle(fd=c.fd, size=c.size, offset=c.offset, bytes=c.bytes,
                        memory_type=c.memory_type, dedicated=bool(c.dedicated),
                        device_uuid=bytes(c.device_uuid), driver_uuid=bytes(c.driver_uuid))


def _to_c(h):
    if not isinstance(h, MemoryHandle):
        raise TypeError("expected a vkflow.MemoryHandle, not %s" % type(h).__name__)
    if len(h.device_uuid) != 16 or len(h.driver_uuid) != 16:
        raise ValueError("MemoryHandle: device_uuid and driver_uuid must be 16 bytes")
    c = _lib.MemoryHandleC(size=h.size, offset=h.offset, bytes=h.bytes,
                           fd=_check_fd(h.fd, "import_memory"),
                           memory_type=h.memory_type, dedicated=1 if h.dedicated else 0)
    c.device_uuid[:] = bytes(h.device_uuid)
    c.driver_uuid[:] = bytes(h.driver_uuid)
    return c


def export_memory(tensor):
    c = _lib.MemoryHandleC()
    _check(_lib.lib().tensor_export_memory(tensor._h(), byref(c)))
    return _from_c(c)


def _close_quietly(fd):
    try:
        os.close(fd)
    except (OSError, TypeError):
        pass


def import_memory(manager, handle, dtype, shape):
    """Manager.import_memory: the new tensor's library handle."""
    if isinstance(handle, MemoryHandle):
        _check_fd(handle.fd, "import_memory")  # not an fd: nothing to consume
    try:
        c = _to_c(handle)
        name = _dtype_name(dtype)
        shape = (shape,) if not isinstance(shape, (tuple, list)) else shape
        shape = tuple(int(d) for d in shape)
        mh = manager._h()
    except BaseException:
        # The import consumes the fd whatever happens.
        if isinstance(handle, MemoryHandle):
            _close_quietly(handle.fd)
        raise
    dims = (c_int64 * len(shape))(*shape) if shape else None
    h = c_uint64()
    _check(_lib.lib().tensor_import_memory(mh, byref(c), name.encode(), len(shape), dims,
                                           byref(h)))
    return h.value


def new_exportable_timeline(manager, initial):
    """Manager.timeline(exportable=True): the new timeline's library handle."""
    h = c_uint64()
    _check(_lib.lib().timeline_new_exportable(manager._h(), int(initial), byref(h)))
    return h.value


def export_timeline(timeline):
    fd = c_int32()
    _check(_lib.lib().timeline_export_fd(timeline._h(), byref(fd)))
    return fd.value


def import_timeline(manager, fd):
    """Manager.import_timeline: the new timeline's library handle."""
    fd = _check_fd(fd, "import_timeline")  # not an fd: nothing to consume
    try:
        mh = manager._h()
    except BaseException:
        _close_quietly(fd)
        raise
    h = c_uint64()
    _check(_lib.lib().timeline_import_fd(mh, fd, byref(h)))
    return h.value


def send_handle(sock, handle):
    """Sends ``handle``'s fields and its fd (SCM_RIGHTS) in one message over
    a Unix socket, in the wire form of Go's ``interop.SendHandle``. The
    sender's fd stays open (close it once sent); the receiver gets a new fd
    for the same memory. An fd that is not an int in 0..2**31-1 raises
    (TypeError, ValueError) before anything is sent."""
    if not isinstance(handle, MemoryHandle):
        raise TypeError("send_handle: expected a vkflow.MemoryHandle, not %s"
                        % type(handle).__name__)
    fd = _check_fd(handle.fd, "send_handle")
    data = _WIRE.pack(_MAGIC, handle.size, handle.offset, handle.bytes, handle.memory_type,
                      _DEDICATED if handle.dedicated else 0, bytes(handle.device_uuid),
                      bytes(handle.driver_uuid))
    n = socket.send_fds(sock, [data], [fd])
    if n != len(data):
        raise OSError("send_handle: short write (%d of %d bytes)" % (n, len(data)))


def recv_handle(sock):
    """Receives a handle that :func:`send_handle` (or Go's
    ``interop.SendHandle``) sent. The returned handle's fd is new in this
    process and owned by the caller (import it, or close it). A message that
    is not a handle, or carries no fd or more than one, raises ValueError
    after closing every fd received with it; EOFError when the peer closed."""
    data, fds, flags, _ = socket.recv_fds(sock, _WIRE.size, 4)
    try:
        if sock.type == socket.SOCK_STREAM:
            while 0 < len(data) < _WIRE.size:
                more = sock.recv(_WIRE.size - len(data))
                if not more:
                    break
                data += more
        if not data:
            raise EOFError("recv_handle: the peer closed the socket")
        if flags & (socket.MSG_TRUNC | socket.MSG_CTRUNC):
            raise ValueError("recv_handle: the message is longer than a handle, or carries "
                             "more fds than one")
        if len(fds) != 1:
            raise ValueError("recv_handle: the message carries %d fds, not 1" % len(fds))
        if len(data) != _WIRE.size or data[:len(_MAGIC)] != _MAGIC:
            raise ValueError("recv_handle: not a vkflow memory handle (%d bytes)" % len(data))
        _, size, offset, nbytes, mtype, hflags, dev, drv = _WIRE.unpack(data)
        if hflags & ~_DEDICATED:
            raise ValueError("recv_handle: memory handle with unknown flags %#x" % hflags)
    except BaseException:
        for fd in fds:
            _close_quietly(fd)
        raise
    return MemoryHandle(fd=fds[0], size=size, offset=offset, bytes=nbytes, memory_type=mtype,
                        dedicated=bool(hflags & _DEDICATED), device_uuid=dev, driver_uuid=drv)
