"""What every object made from the library shares: :class:`_Handle` (its
library handle, ``close``, ``closed``, the context manager and the
finalizer), and timeouts in the library's unit.
"""

import sys

from . import _lib
from ._errors import ClosedError, _check


def _ns(timeout):
    """Seconds (None: no deadline) to the library's nanoseconds (-1: none)."""
    if timeout is None:
        return -1
    if timeout < 0:
        raise ValueError("timeout must be None or >= 0 seconds, not %r" % (timeout,))
    return int(timeout * 1e9)


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
