"""The soft rasterizer from PyTorch (docs/RENDERING.md): ``soft_render`` and
``SoftRenderer``, re-exported by :mod:`vkflow.torch`."""

import atexit
import collections
import json
import math
import numbers
import os
import threading
from ctypes import byref, c_uint64

import torch

from . import _grad, _lib
from ._errors import _check
from ._manager import Manager
from ._tensor import Tensor

__all__ = ["soft_render", "SoftRenderer"]

_DTYPES = {torch.float32: "float32", torch.float64: "float64"}

_mgr = None
_mgr_lock = threading.Lock()


def render_device():
    """The Manager renders run on when none is given: the default device
    (``VKFLOW_DEVICE``) opened with two logical compute queues, so that
    the rasterizer and the blender each have one; made on first use,
    closed at exit."""
    global _mgr
    with _mgr_lock:
        if _mgr is None or _mgr.closed:
            _mgr = Manager(validation=os.environ.get("VKFLOW_VALIDATION") == "1", queues=2)
            atexit.register(_close)
        return _mgr


def _close():
    global _mgr
    with _mgr_lock:
        m, _mgr = _mgr, None
    if m is not None:
        m.close()


def _check_size(size):
    try:
        h, w = size
    except (TypeError, ValueError):
        raise ValueError("soft_render: size is %r: want (H, W)" % (size,)) from None
    for v in (h, w):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise TypeError("soft_render: size is %r: want two ints (H, W)" % (size,))
    if h < 1 or w < 1:
        raise ValueError("soft_render: size is %r: want H and W at least 1 (an empty image)" % (size,))
    return int(h), int(w)


def _check_options(sigma, batch):
    if isinstance(sigma, bool) or not isinstance(sigma, numbers.Real):
        raise TypeError("soft_render: sigma is %r: want a number of pixels > 0" % (sigma,))
    if not (sigma > 0) or math.isinf(sigma):
        raise ValueError("soft_render: sigma is %r: want a finite width > 0, in pixels" % (sigma,))
    if isinstance(batch, bool) or not isinstance(batch, numbers.Integral):
        raise TypeError("soft_render: batch is %r: want an int >= 1" % (batch,))
    if batch < 1:
        raise ValueError("soft_render: batch is %r: want at least 1" % (batch,))
    return float(sigma), int(batch)


def _check_inputs(tri, rgba):
    for name, x in (("tri", tri), ("rgba", rgba)):
        if not isinstance(x, torch.Tensor):
            raise TypeError("soft_render: %s is a %s: want a torch.Tensor" % (name, type(x).__name__))
        if x.dtype not in _DTYPES:
            raise TypeError("soft_render: %s is %s: want torch.float32 or torch.float64" % (name, x.dtype))
    if tri.dtype != rgba.dtype:
        raise TypeError("soft_render: tri is %s and rgba %s: want one dtype" % (tri.dtype, rgba.dtype))
    if tri.dim() != 3 or tuple(tri.shape[1:]) != (3, 2):
        raise ValueError("soft_render: tri has shape %s: want [N, 3, 2] (vertex x, y in pixels)"
                         % list(tri.shape))
    if tuple(rgba.shape) != (tri.shape[0], 4):
        raise ValueError("soft_render: rgba has shape %s: want [%d, 4] (straight colour and opacity)"
                         % (list(rgba.shape), tri.shape[0]))


class SoftRenderer:
    """A compiled soft render of ``n`` triangles into an image of ``size``
    (H, W): the forward graph (layers of ``batch`` triangles rasterized on
    one logical queue, blended over the image on another) and its backward
    graph (ops.Tape.Grad), both on ``device`` (None: :func:`render_device`,
    two queues). Calling it on ``(tri, rgba)`` renders as
    :func:`soft_render`, differentiably. The differentiable render keeps
    every layer (its backward reads them); Go's render.Record is the
    forward-only render with a ring of layers.

    ``saved_bytes``: the forward values the backward graph reads.
    ``device_bytes``: all device memory the renderer holds (inputs, layers,
    images, cotangent, gradients, the backward graph's buffers, scratch).
    """

    def __init__(self, n, size, *, dtype=torch.float32, sigma=1.0, batch=8, device=None):
        h, w = _check_size(size)
        sigma, batch = _check_options(sigma, batch)
        if dtype not in _DTYPES:
            raise TypeError("SoftRenderer: dtype is %s: want torch.float32 or torch.float64" % (dtype,))
        if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
            raise ValueError("SoftRenderer: n is %r: want a number of triangles >= 0" % (n,))
        mgr = device if device is not None else render_device()
        self.n, self.size, self.dtype, self.sigma, self.batch = int(n), (h, w), dtype, sigma, batch
        self._mgr = mgr
        name = _DTYPES[dtype]
        self._tri = mgr.tensor((self.n, 3, 2), dtype=name)
        self._rgba = mgr.tensor((self.n, 4), dtype=name)
        self._graph = mgr.graph()
        self._tape = _grad.GraphTape(self._graph)
        queues = (0, 1) if mgr.queue_count >= 2 else (0, 0)
        opts = {"height": h, "width": w, "sigma": sigma, "batch": batch,
                "raster_queue": queues[0], "blend_queue": queues[1]}
        out = c_uint64()
        _check(_lib.lib().soft_render(self._tape._h(), self._tri._h(), self._rgba._h(),
                                      json.dumps(opts).encode(), byref(out)))
        self._img = Tensor._wrap(mgr, out.value)
        self._tape._keep.append(self._img)
        self._graph.input(self._tri, self._rgba)
        self._fwd = self._graph.compile()
        self._dy = mgr.tensor((h, w, 4), dtype=name)
        bw, grads, self.saved_bytes = self._tape.grad([self._img], [self._dy], [self._tri, self._rgba])
        self._gtri, self._grgba = grads
        self._bwd = bw.compile() if len(bw) else None  # no triangles: nothing to differentiate
        nb = c_uint64()
        _check(_lib.lib().tape_device_bytes(self._tape._h(), byref(nb)))
        self.device_bytes = nb.value + sum(t.nbytes for t in (self._tri, self._rgba, self._dy))
        self._gen = 0
        self._lock = threading.Lock()

    def __call__(self, tri, rgba):
        _check_inputs(tri, rgba)
        if tri.dtype != self.dtype or tri.shape[0] != self.n:
            raise ValueError("SoftRenderer: built for %d triangles of %s, called with %d of %s"
                             % (self.n, self.dtype, tri.shape[0], tri.dtype))
        if torch.is_grad_enabled() and (tri.requires_grad or rgba.requires_grad):
            return _RenderFn.apply(self, tri, rgba)
        with self._lock:
            return self._forward(tri, rgba).to(tri.device)

    def _forward(self, tri, rgba):
        self._tri.write(tri.detach().cpu().contiguous().numpy())
        self._rgba.write(rgba.detach().cpu().contiguous().numpy())
        self._fwd.run()
        self._gen += 1
        return torch.from_numpy(self._img.read())

    def _backward(self, gen, tri, rgba, g):
        with self._lock:
            if gen != self._gen:
                self._forward(tri, rgba)  # the forward values this backward reads
            self._dy.write(g.detach().cpu().contiguous().numpy())
            if self._bwd is not None:
                self._bwd.run()
            return torch.from_numpy(self._gtri.read()), torch.from_numpy(self._grgba.read())


class _RenderFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, r, tri, rgba):
        with r._lock:
            img = r._forward(tri, rgba)
            ctx.r, ctx.gen = r, r._gen
        ctx.save_for_backward(tri, rgba)
        return img.to(tri.device)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, g):
        tri, rgba = ctx.saved_tensors
        gtri, grgba = ctx.r._backward(ctx.gen, tri, rgba, g)
        want = ctx.needs_input_grad
        return (None, gtri.to(tri.device) if want[1] else None,
                grgba.to(rgba.device) if want[2] else None)


_cache = collections.OrderedDict()
_cache_lock = threading.Lock()
_CACHE_SIZE = 8


def soft_render(tri, rgba, size, *, sigma=1.0, batch=8):
    """Renders triangles ``tri`` [N, 3, 2] (vertex x, y in pixels; pixel
    (i, j) has its centre at (j + 1/2, i + 1/2)) with colours ``rgba``
    [N, 4] (straight colour and opacity) into a premultiplied RGBA image
    [H, W, 4] (``size`` = (H, W)), a ``torch.Tensor`` of the inputs' dtype
    (float32 or float64) on their device, differentiable in ``tri`` and
    ``rgba``.

    Each pixel is covered by sigmoid(d / sigma) of each triangle, d its
    signed distance to the triangle's edges (positive inside), times the
    triangle's opacity; the triangles are composited with "over" in index
    order onto a transparent image (docs/RENDERING.md). ``batch`` triangles
    make a layer, rasterized on one Vulkan queue while the layers before it
    are blended on another; the backward also runs on both queues, and its
    gradients are the same bits at every run.

    The compiled renderer (:class:`SoftRenderer`) is cached per (N, size,
    dtype, sigma, batch): the first call of a shape builds it. Bad shapes,
    dtypes, sizes or options raise ValueError or TypeError naming the
    problem, before anything is read."""
    _check_inputs(tri, rgba)
    h, w = _check_size(size)
    sigma, batch = _check_options(sigma, batch)
    key = (int(tri.shape[0]), h, w, tri.dtype, sigma, batch)
    with _cache_lock:
        r = _cache.get(key)
        if r is not None and r._mgr.closed:
            r = None
        if r is None:
            r = SoftRenderer(key[0], (h, w), dtype=tri.dtype, sigma=sigma, batch=batch)
            _cache[key] = r
            while len(_cache) > _CACHE_SIZE:
                _cache.popitem(last=False)
        _cache.move_to_end(key)
    return r(tri, rgba)
