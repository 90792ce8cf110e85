"""Timelines: :class:`Timeline`, a timeline semaphore, and the
``(Timeline, value)`` points that submits wait on and signal.
"""

from ctypes import byref, c_uint64

from . import _interop, _lib
from ._errors import _check
from ._handle import _Handle, _ns


def _timeline_point(point, what):
    try:
        tl, value = point
    except (TypeError, ValueError):
        raise TypeError("%s must be a (Timeline, value) pair, not %r" % (what, point)) from None
    if not isinstance(tl, Timeline):
        raise TypeError("%s must be a (Timeline, value) pair, not %r" % (what, point))
    return tl._h(), int(value)


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
