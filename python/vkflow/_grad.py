"""Gradients of single ops, by name: the registry's VJPs (Go package ops,
docs/GRADIENTS.md), shared with Go and C. :mod:`vkflow.autograd` and
:mod:`vkflow.torch` build on :func:`vjp`."""

import builtins
import ctypes
import json
from ctypes import byref, c_int32, c_size_t, c_uint64

from . import _dispatch, _lib
from ._dispatch import _attrs_json, _convert, _device_of
from ._errors import _check
from ._graph import Graph
from ._handle import _Handle
from ._tensor import Tensor

__all__ = ["vjp", "gradient_info", "register_vjp", "schema", "GraphTape"]

_KINDS = {0: "none", 1: "vjp", 2: "pending", 3: "zero"}


def gradient_info(name):
    """The op's gradient entry: a dict with ``kind`` (``"vjp"``; ``"zero"``
    for a VJP of zeros almost everywhere, as floor's; ``"none"`` for an op
    with no derivative, as the comparisons; ``"pending"`` for a
    differentiable op whose VJP is not written yet) and ``reason``."""
    kind = c_int32()
    n = c_size_t()
    key = str(name).encode()
    L = _lib.lib()
    _check(L.op_gradient(key, ctypes.byref(kind), None, 0, ctypes.byref(n)))
    buf = ctypes.create_string_buffer(n.value + 1)
    _check(L.op_gradient(key, ctypes.byref(kind), buf, n.value + 1, None))
    return {"kind": _KINDS.get(kind.value, "none"), "reason": buf.value.decode("utf-8")}


def schema(name):
    """The op's schema (docs/OPS_REGISTRY.md): a dict with ``name``,
    ``inputs``, ``outputs``, ``attrs`` (a list of dicts: ``name``, ``type``,
    ``default``, ``doc``), ``gradient`` and ``reason``. An op refuses (with
    ValueError) an attribute its schema does not list."""
    n = c_size_t()
    key = str(name).encode()
    L = _lib.lib()
    _check(L.op_schema(key, None, 0, ctypes.byref(n)))
    buf = ctypes.create_string_buffer(n.value + 1)
    _check(L.op_schema(key, buf, n.value + 1, None))
    return json.loads(buf.value.decode("utf-8"))


def register_vjp(name, vjp_kernel):
    """Gives the registered kernel ``name`` the registered kernel
    ``vjp_kernel`` as its VJP: ``vjp_kernel``'s inputs are ``name``'s
    inputs, then its outputs, then the cotangents; its outputs (allocated as
    zeros) are the inputs' gradients. It runs with the forward call's
    attributes (push constants, groups)."""
    _check(_lib.lib().op_register_vjp(str(name).encode(), str(vjp_kernel).encode()))


def vjp(name, inputs, cotangents, outputs=None, wants=None, device=None, **attrs):
    """Queues the vector-Jacobian product of the op ``name`` and returns the
    inputs' gradients: a tuple with one vkflow Tensor per input, or None for
    an input that gets none (an integer or bool input, or one whose
    ``wants`` entry is false).

    ``inputs`` are the forward call's inputs, ``attrs`` its attributes (as
    :func:`vkflow.ops.call` takes them), ``cotangents`` one per output (None:
    zeros), ``outputs`` the forward outputs when the caller has them (None:
    recomputed where the rule needs them). Gradients follow PyTorch's and
    JAX's conventions: broadcast inputs get the cotangent summed back to
    their shape, complex inputs the conjugate Wirtinger gradient. The
    rule's ops are queued on the device's default stream; nothing waits.
    An op without a VJP raises ValueError naming why, and queues nothing.
    """
    inputs = list(inputs)
    cots = list(cotangents) if isinstance(cotangents, (tuple, list)) else [cotangents]
    outs = [] if outputs is None else (list(outputs) if isinstance(outputs, (tuple, list))
                                       else [outputs])
    mgr = _device_of(inputs + [c for c in cots if c is not None], device)
    ins = _convert(inputs, mgr)
    cts = [None if c is None else _convert([c], mgr)[0] for c in cots]
    ots = [None if o is None else _convert([o], mgr)[0] for o in outs]
    for t in ins + cts + ots:
        if t is not None and not isinstance(t, Tensor):
            raise TypeError("vjp: a view reached the library: make it contiguous first")
    n = len(ins)
    u64 = c_uint64 * builtins.max(n, 1)
    in_h = u64(*[t._h() for t in ins])
    out_h = (c_uint64 * builtins.max(len(ots), 1))(*[0 if t is None else t._h() for t in ots])
    cot_h = (c_uint64 * builtins.max(len(cts), 1))(*[0 if t is None else t._h() for t in cts])
    want_a = None
    if wants is not None:
        if len(wants) != n:
            raise ValueError("vjp: %d wants for %d inputs" % (len(wants), n))
        want_a = (c_int32 * builtins.max(n, 1))(*[1 if w else 0 for w in wants])
    grads = u64()
    _check(_lib.lib().op_vjp(mgr._h(), str(name).encode(), in_h, n, out_h, len(ots), cot_h,
                             len(cts), _attrs_json(attrs), want_a, grads))
    return tuple(Tensor._wrap(mgr, grads[i]) if grads[i] else None for i in range(n))


class GraphTape(_Handle):
    """Records the ops :mod:`vkflow.ops` and :mod:`vkflow.array_api` call
    inside ``with tape:`` into ``graph`` (Go: ops.Tape) instead of running
    them: each call returns its outputs at once, uncomputed, and nothing
    runs until the graph is compiled and run. :meth:`grad` then builds the
    backward graph. The tape owns the outputs and gradients (keep the tape
    while the graphs are used); closing it, or its Manager, frees them.
    Code that reads values on the host cannot be recorded; writes into given
    outputs are a ValueError."""

    _kind = "Tape"
    _closer = "tape_close"
    _graph_mode = True

    def __init__(self, graph, queue=None):
        h = c_uint64()
        _check(_lib.lib().tape_new(graph._manager._h(), graph._h(), byref(h)))
        self._handle = h.value
        self._manager = graph._manager
        self.graph = graph
        self._keep = []
        graph._manager._adopt(self)
        if queue is not None:
            self.on_queue(queue)

    def on_queue(self, queue):
        """Pins the next recorded ops (and their VJPs) to logical queue
        ``queue``; None leaves them to the compiler."""
        _check(_lib.lib().tape_queue(self._h(), -1 if queue is None else int(queue)))
        return self

    def _route(self, name, ins, outs, attrs):
        if any(o is not None for o in outs):
            raise ValueError("%s: a graph tape records new outputs only (no out=, item assignment "
                             "or in-place operators)" % name)
        n = len(ins)
        in_h = (c_uint64 * builtins.max(n, 1))(*[t._h() for t in ins])
        slots = 8
        out_h = (c_uint64 * slots)()
        _check(_lib.lib().tape_call(self._h(), str(name).encode(), in_h, n, _attrs_json(attrs),
                                    out_h, slots))
        res = [Tensor._wrap(self._manager, out_h[i]) for i in range(slots) if out_h[i]]
        self._keep += res
        while len(res) < len(outs):
            res.append(None)
        return res

    def grad(self, outputs, cotangents, wrt):
        """Builds the backward graph of ``outputs`` weighted by
        ``cotangents`` (tensors the caller writes before each backward run)
        with respect to ``wrt``; returns ``(graph, grads, saved_bytes)``:
        a :class:`Graph` to compile, the gradient tensors (owned by the
        tape), and the bytes of forward tensors the backward graph reads."""
        outs, cots, ws = list(outputs), list(cotangents), list(wrt)
        if len(outs) != len(cots):
            raise ValueError("grad: %d outputs and %d cotangents" % (len(outs), len(cots)))
        u = lambda ts: (c_uint64 * builtins.max(len(ts), 1))(*[t._h() for t in ts])  # noqa: E731
        g_h = c_uint64()
        grads = (c_uint64 * builtins.max(len(ws), 1))()
        saved = c_uint64()
        _check(_lib.lib().tape_grad(self._h(), u(outs), len(outs), u(cots), u(ws), len(ws),
                                    byref(g_h), grads, byref(saved)))
        g = Graph.__new__(Graph)
        g._manager, g._handle, g._keep = self._manager, g_h.value, list(cots) + [self]
        self._manager._adopt(g)
        res = [Tensor._wrap(self._manager, grads[i]) for i in range(len(ws))]
        self._keep += res
        return g, res, saved.value

    def __enter__(self):
        _dispatch._push_tape(self)
        return self

    def __exit__(self, *exc):
        _dispatch._pop_tape(self)
        return False
