"""vkflow's exceptions, and the library's negative return codes turned into
them.

The library's codes become ``ValueError`` (invalid argument; for operands whose
dtypes have no promotion an exception that is a ``TypeError`` too, as NumPy
raises),
:class:`ClosedError` (use after close), :class:`UnsupportedError`
(``BufferError`` where a DLPack call asks for it), :class:`PendingError`,
:class:`FailedError`, :class:`BusyError`, ``TimeoutError`` and
``RuntimeError`` (Vulkan or other failures), carrying the library's message.
"""

from . import _lib

__all__ = ["ClosedError", "UnsupportedError", "PendingError", "FailedError", "BusyError"]


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


class _PromotionError(TypeError, ValueError):
    """Operands whose dtypes have no promotion (an integer with a float):
    a TypeError, as NumPy's and the array API's, and a ValueError, as every
    other invalid argument of vkflow.ops."""


class BusyError(RuntimeError):
    """A bound was reached (held submits); nothing was done: retry once
    work drains."""


def _raise(rc, buffer_error=False):
    text = _lib.lib().error_text() or "vkflow error %d" % rc
    if rc == _lib.ERR_INVALID:
        if "which have no promotion" in text:  # mixed dtypes the lattice lacks
            raise _PromotionError(text)
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
