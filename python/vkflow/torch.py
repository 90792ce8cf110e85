"""PyTorch autograd through vkflow's ops: ``vkflow.torch.call(name, *inputs,
**attrs)`` and ``vkflow.torch.ops.<name>(...)`` take and return
``torch.Tensor``s, run the op on vkflow's default device, and are
differentiable through the registry's VJPs (the same rules as Go, C and
:mod:`vkflow.autograd`; docs/GRADIENTS.md).

* Each call is one ``torch.autograd.Function``. Inputs that do not require
  grad get none (the VJP computes only the gradients asked for);
  ``torch.no_grad()`` (or no input requiring grad) builds no graph; bool
  and integer outputs are marked non-differentiable. Backward is
  ``once_differentiable``: no gradients of gradients.
* An op without a VJP raises ValueError naming why when backward reaches
  it (never a silent zero).
* Data moves by DLPack. CPU tensors are imported without a copy where the
  device can import their memory (contiguous, 64-byte aligned: lavapipe and
  integrated GPUs), and results come back without a copy where vkflow's
  memory is mapped. Copies: a non-contiguous input is made contiguous;
  an unaligned input, a CUDA input and an unmapped result go through host
  memory, and bool tensors through uint8 (PyTorch's DLPack before 1.0 has
  no bool). On an NVIDIA device with CUDA, results of CUDA inputs are handed
  back as CUDA tensors through :meth:`vkflow.Tensor.cuda_view` (see
  docs/INTEROP.md for when that copies).
* The saved tensors are PyTorch's (the inputs and outputs), so PyTorch's
  version counter catches an in-place change before backward.

``soft_render(tri, rgba, size, sigma=, batch=)`` is the differentiable soft
rasterizer (docs/RENDERING.md) on two Vulkan queues, and
``GraphFunction`` any vkflow graph as one autograd function.
"""

import inspect

import torch

from . import _grad
from . import ops as _vops
from ._array import asarray, default_device
from ._render import SoftRenderer, render_device, soft_render
from ._tensor import Tensor

__all__ = ["call", "ops", "GraphFunction", "soft_render", "SoftRenderer", "render_device"]


def _dtype_attr(v):
    if isinstance(v, torch.dtype):
        return str(v).split(".")[-1]
    return v


def _attrs(attrs):
    return {k: _dtype_attr(v) for k, v in attrs.items()}


def _to_vk(x, mgr):
    """A torch tensor as a vkflow Tensor (aliased where allowed); other
    values (Python scalars) as they are."""
    if not isinstance(x, torch.Tensor):
        return x
    t = x.detach()
    if t.device.type != "cpu":
        t = t.cpu()
    if not t.is_contiguous():
        t = t.contiguous()
    if t.is_conj():
        t = t.resolve_conj()
    if t.dtype == torch.bool:
        # DLPack before 1.0 has no bool: as uint8, cast on the device (a copy).
        return _vops.cast(asarray(t.to(torch.uint8), device=mgr), "bool")
    return asarray(t, device=mgr)


def _to_torch(t, device):
    """A vkflow Tensor as a torch tensor on device: zero-copy when mapped."""
    if t.dtype == "bool":
        # DLPack before 1.0 has no bool: through uint8 (a copy).
        return _to_torch(_vops.cast(t, "uint8"), device).to(torch.bool)
    if device is not None and device.type == "cuda":
        try:
            return torch.from_dlpack(t.cuda_view())
        except Exception:  # no CUDA interop on this device: through the host
            pass
    if t.mapped:
        r = torch.from_dlpack(t)
    else:
        r = torch.utils.dlpack.from_dlpack(t.__dlpack__(dl_device=(1, 0)))
    return r if device is None or device.type == "cpu" else r.to(device)


def _device_of(inputs):
    for x in inputs:
        if isinstance(x, torch.Tensor):
            return x.device
    return torch.device("cpu")


def _forward(name, attrs, nout, inputs, outputs=None):
    mgr = default_device()
    dev = _device_of(inputs)
    vin = [_to_vk(x, mgr) for x in inputs]
    if outputs is not None:
        # A registered kernel's outputs, which the caller describes.
        out = tuple(mgr.tensor(tuple(shape), dtype=_dtype_attr(dt)) for shape, dt in outputs)
    else:
        out = (None,) * nout if nout > 1 else None
    res = _vops.call(name, *vin, out=out, **attrs)
    res = res if isinstance(res, tuple) else (res,)
    return tuple(_to_torch(r, dev) for r in res)


def _differentiable(t):
    return t.is_floating_point() or t.is_complex()


class _OpFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, name, attrs, nout, outputs, *inputs):
        outs = _forward(name, attrs, nout, inputs, outputs)
        ctx.name, ctx.attrs, ctx.nin = name, attrs, len(inputs)
        ctx.scalars = [None if isinstance(x, torch.Tensor) else x for x in inputs]
        ctx.save_for_backward(*[x if isinstance(x, torch.Tensor) else None for x in inputs], *outs)
        nd = [o for o in outs if not _differentiable(o)]
        if nd:
            ctx.mark_non_differentiable(*nd)
        return outs if nout > 1 else outs[0]

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, *gouts):
        saved = ctx.saved_tensors
        ins = [s if s is not None else ctx.scalars[i] for i, s in enumerate(saved[:ctx.nin])]
        outs = saved[ctx.nin:]
        wants = list(ctx.needs_input_grad[4:])
        mgr = default_device()
        vin = [_to_vk(x, mgr) for x in ins]
        vout = [_to_vk(o, mgr) for o in outs]
        vcot = [None if g is None or not _differentiable(o) else _to_vk(g, mgr)
                for g, o in zip(gouts, outs)]
        grads = _grad.vjp(ctx.name, vin, vcot, outputs=vout, wants=wants, device=mgr,
                          **ctx.attrs)
        res = []
        for x, g, w in zip(ins, grads, wants):
            res.append(_to_torch(g, x.device) if (w and g is not None) else None)
        return (None, None, None, None, *res)


def _nout(name):
    return _vops._OUTPUTS.get(name, 1)


def call(name, *inputs, outputs=None, **attrs):
    """Runs the vkflow op ``name`` on ``inputs`` (torch tensors and Python
    scalars) with keyword attributes as :func:`vkflow.ops.call` takes them,
    and returns a torch tensor (a tuple for ops with several outputs),
    differentiable through the op's VJP. ``outputs`` describes a registered
    kernel's outputs, which it cannot allocate itself: a list of ``(shape,
    dtype)``."""
    attrs = _attrs(attrs)
    nout = _nout(name) if outputs is None else len(outputs)
    if outputs is not None:
        outputs = tuple((tuple(int(d) for d in shape), _dtype_attr(dt)) for shape, dt in outputs)
    needs = torch.is_grad_enabled() and any(
        isinstance(x, torch.Tensor) and x.requires_grad for x in inputs)
    if not needs:
        outs = _forward(name, attrs, nout, inputs, outputs)
        return outs if nout > 1 else outs[0]
    return _OpFunction.apply(name, attrs, nout, outputs, *inputs)


# --- vkflow.torch.ops: vkflow.ops's functions, on torch tensors ---------------------

# vkflow.ops functions whose op has another name.
_ALIASES = {"subtract": "sub", "multiply": "mul", "divide": "div", "negative": "neg",
            "astype": "cast", "permute_dims": "transpose"}
# Parameters that are no op attributes.
_DROP = {"out", "copy", "stable", "sorter", "device"}


def _mirror(fname):
    """The function of vkflow.torch.ops that mirrors vkflow.ops.fname: the
    same signature; positional-only parameters are the op's inputs (but a
    dtype), the others its attributes."""
    vf = getattr(_vops, fname)
    op = _ALIASES.get(fname, fname)
    try:
        sig = inspect.signature(vf)
    except (TypeError, ValueError):
        sig = None
    if sig is None or any(p.kind == p.VAR_POSITIONAL for p in sig.parameters.values()):
        def f(*inputs, **attrs):
            return call(op, *inputs, **attrs)
    else:
        sig = sig.replace(parameters=[p for p in sig.parameters.values() if p.name not in _DROP])

        def f(*args, **kwargs):
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            inputs, attrs = [], {}
            for pname, v in bound.arguments.items():
                p = sig.parameters[pname]
                if p.kind == p.POSITIONAL_ONLY and pname != "dtype":
                    inputs.append(v)
                elif pname == "axes" and op == "transpose":
                    attrs["perm"] = v
                elif v is not None:
                    attrs[pname] = v
            return call(op, *inputs, **attrs)
        f.__signature__ = sig
    f.__name__ = f.__qualname__ = fname
    f.__doc__ = "vkflow.ops.%s on torch tensors, differentiable (see vkflow.torch)." % fname
    return f


class _Ops:
    """``vkflow.torch.ops.<name>``: every function of :mod:`vkflow.ops`, with
    its signature, on torch tensors."""

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        if name in _vops.__all__ or name in _vops.names():
            if name in ("names", "register", "unregister", "call", "cache_stats", "synchronize",
                        "CompileError", "vjp", "gradient_info", "register_vjp", "strided_copy"):
                raise AttributeError("vkflow.torch.ops has no %r: use vkflow.ops.%s" % (name, name))
            f = _mirror(name)
            setattr(self, name, f)
            return f
        raise AttributeError("vkflow.torch.ops has no attribute %r" % name)

    def __dir__(self):
        return sorted(set(_vops.__all__) | set(_vops.names()))


ops = _Ops()


# --- a vkflow graph as one autograd function ------------------------------------------

class GraphFunction:
    """``fn``, a function of vkflow tensors written with :mod:`vkflow.ops` or
    :mod:`vkflow.array_api`, recorded once into a forward graph (its ops are
    traced on placeholders shaped like ``example_inputs``, torch tensors)
    and differentiated into a backward graph (``vkflow.ops.Tape.Grad``);
    calling the GraphFunction on torch tensors of those shapes and dtypes
    replays the forward graph, and ``backward`` replays the backward graph:
    one ``torch.autograd.Function`` whatever the number of ops.
    ``queues`` are the logical queues both graphs may use (None: all).

    Data: inputs are written into the graph's input tensors and outputs read
    out (copies: a graph's buffers are fixed), gradients likewise. The
    backward graph reads the last forward's values: a backward whose forward
    is no longer the last one replays that forward first (from its saved
    inputs), then the backward graph.
    ``saved_bytes`` is the size of the forward values the backward reads.
    """

    def __init__(self, fn, *example_inputs, queues=None):
        mgr = default_device()
        self._mgr = mgr
        self._ins = [mgr.tensor(tuple(x.shape), dtype=_dtype_attr(x.dtype)) for x in example_inputs]
        self._graph = mgr.graph()
        self._tape = _grad.GraphTape(self._graph)
        with self._tape:
            out = fn(*self._ins)
        self._many = isinstance(out, tuple)
        self._outs = list(out) if self._many else [out]
        self._graph.input(*self._ins)
        self._fwd = self._graph.compile(queues)
        self._cots = [mgr.tensor(tuple(o.shape), dtype=o.dtype) for o in self._outs]
        bw, self._grads, self.saved_bytes = self._tape.grad(self._outs, self._cots, self._ins)
        self._bwd = bw.compile(queues) if len(bw) else None
        self._gen = 0

    def __call__(self, *inputs):
        if len(inputs) != len(self._ins):
            raise TypeError("GraphFunction: %d inputs, the graph was traced with %d"
                            % (len(inputs), len(self._ins)))
        for x, t in zip(inputs, self._ins):
            if tuple(x.shape) != tuple(t.shape) or _dtype_attr(x.dtype) != str(t.dtype):
                raise ValueError("GraphFunction: an input of %s %r, the graph takes %s %r"
                                 % (x.dtype, tuple(x.shape), t.dtype, tuple(t.shape)))
        out = _GraphFn.apply(self, *inputs)
        return out if self._many else out[0]

    def _forward(self, inputs):
        for x, t in zip(inputs, self._ins):
            t.write(x.detach().cpu().contiguous().numpy())
        self._fwd.run()
        self._gen += 1
        return tuple(torch.from_numpy(o.read()) for o in self._outs)

    def _backward(self, gen, inputs, gouts):
        if gen != self._gen:
            self._forward(inputs)  # the forward values this backward needs
        for g, c in zip(gouts, self._cots):
            c.write(g.detach().cpu().contiguous().numpy() if g is not None else
                    torch.zeros(tuple(c.shape), dtype=getattr(torch, str(c.dtype))).numpy())
        if self._bwd is not None:
            self._bwd.run()
        return [torch.from_numpy(g.read()) for g in self._grads]


class _GraphFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, gf, *inputs):
        outs = gf._forward(inputs)
        ctx.gf, ctx.gen = gf, gf._gen
        ctx.devices = [x.device for x in inputs]
        ctx.save_for_backward(*inputs)
        return tuple(o.to(inputs[0].device) for o in outs)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, *gouts):
        grads = ctx.gf._backward(ctx.gen, ctx.saved_tensors, gouts)
        return (None, *[g.to(d) if w else None
                        for g, d, w in zip(grads, ctx.devices, ctx.needs_input_grad[1:])])
