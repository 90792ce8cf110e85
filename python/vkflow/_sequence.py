"""Sequences: :class:`Sequence`, operations recorded for one logical queue
and submitted together.
"""

from . import _lib
from ._errors import _check
from ._handle import _Handle, _ns
from ._tensor import _tensor_handle
from ._timeline import _timeline_point


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
