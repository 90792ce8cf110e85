"""Reverse-mode gradients of functions written with vkflow's arrays, JAX
style: :func:`grad`, :func:`value_and_grad` and :func:`vjp`.

The function runs once, eagerly, on the device, under a tape: every op that
:mod:`vkflow.ops` or :mod:`vkflow.array_api` (and the Tensor operators)
queue on a value derived from the differentiated arguments is recorded
with its inputs, outputs and attributes. The pullback then walks the tape
backwards and queues each op's VJP from the registry (:func:`vkflow.ops.vjp`,
the same rules Go and C use), summing the cotangents of values used more
than once. Everything stays on the device; nothing is read back.

Rules:

* The arguments to differentiate are float or complex vkflow Tensors (or
  anything :func:`vkflow.asarray` takes; they are converted first).
* Complex arguments get the conjugate Wirtinger gradient (as PyTorch and
  JAX's ``grad`` of a real function, conjugated as PyTorch does).
* What the tape cannot see cuts the dependency: values read to the host
  (NumPy, ``float(x)``) and written back, sequences and graphs. Writing
  into a traced value (``out=``, ``x[i] = ...``, in-place operators) is a
  ValueError at the write, not a wrong gradient.
* An op without a VJP (a comparison's output used as a value, a linalg
  op whose rule is pending) raises ValueError naming it when the pullback
  reaches it.
* Tapes nest per thread (the innermost records); gradients of gradients
  are not supported: the pullback's own ops are not recorded.
"""

from . import _dispatch, ops
from . import array_api as xp
from ._array import asarray
from ._dtypes import _dtype_name
from ._grad import vjp as _op_vjp

__all__ = ["grad", "value_and_grad", "vjp"]


class _Tape:
    def __init__(self, primals):
        self.records = []
        self.live = {id(p) for p in primals}
        self.keep = list(primals)  # ids stay unique while the tape lives

    def _record(self, name, ins, res, given, attrs):
        dep = [id(x) in self.live for x in ins]
        written = any(g is not None and id(g) in self.live for g in given)
        if not any(dep) and not written:
            return
        if written or any(g is not None for g in given):
            raise ValueError("vkflow.autograd: %s writes into a given output computed from a "
                             "differentiated value (out=, item assignment or an in-place operator):"
                             " the tape cannot differentiate writes; use the functional form"
                             % name)
        self.records.append((name, ins, res, attrs, dep))
        for r in res:
            self.live.add(id(r))

    def __enter__(self):
        _dispatch._push_tape(self)
        return self

    def __exit__(self, *exc):
        _dispatch._pop_tape(self)
        return False

    def pullback(self, outputs, cotangents, primals):
        cots = {}
        for o, c in zip(outputs, cotangents):
            if c is not None and id(o) in self.live:
                _accumulate(cots, o, c)
        for name, ins, res, attrs, dep in reversed(self.records):
            gouts = [cots.pop(id(r), None) for r in res]
            if all(g is None for g in gouts):
                continue
            grads = _op_vjp(name, ins, gouts, outputs=res, wants=dep, **attrs)
            for x, g, d in zip(ins, grads, dep):
                if d and g is not None:
                    _accumulate(cots, x, g)
        res = []
        for p in primals:
            g = cots.get(id(p))
            if g is None:
                g = xp.zeros(p.shape, dtype=p.dtype, device=p.device)
            res.append(g)
        return tuple(res)


def _accumulate(cots, x, g):
    k = id(x)
    prev = cots.get(k)
    if prev is None:
        cots[k] = g
    else:
        cots[k] = ops.add(prev, g)


def _primals(args):
    out = []
    for i, a in enumerate(args):
        t = asarray(a)
        dt = _dtype_name(t.dtype)
        if not (dt.startswith("float") or dt.startswith("complex")):
            raise TypeError("vkflow.autograd: argument %d is %s: only float and complex arrays "
                            "have gradients" % (i, t.dtype))
        out.append(t)
    return out


def vjp(f, *primals):
    """Runs ``f(*primals)`` under a tape and returns ``(out, pullback)``:
    ``pullback(cotangent)`` (one per output when ``f`` returns a tuple; an
    array of the output's shape and dtype) returns a tuple with the
    gradient of each primal, as vkflow Tensors."""
    ps = _primals(primals)
    with _Tape(ps) as tape:
        out = f(*ps)
    outs = list(out) if isinstance(out, tuple) else [out]

    def pullback(cotangent):
        cts = list(cotangent) if isinstance(out, tuple) else [cotangent]
        if len(cts) != len(outs):
            raise ValueError("pullback: %d cotangents for %d outputs" % (len(cts), len(outs)))
        cts = [None if c is None else asarray(c, device=o.device) for c, o in zip(cts, outs)]
        for c, o in zip(cts, outs):
            if c is not None and (tuple(c.shape) != tuple(o.shape) or c.dtype != o.dtype):
                raise ValueError("pullback: a cotangent of %s %r for an output of %s %r"
                                 % (c.dtype, tuple(c.shape), o.dtype, tuple(o.shape)))
        return tape.pullback(outs, cts, ps)
    return out, pullback


def _argnums(argnums, n):
    many = isinstance(argnums, (tuple, list))
    nums = list(argnums) if many else [argnums]
    for k in nums:
        if not -n <= k < n:
            raise ValueError("argnums %r out of range for %d arguments" % (k, n))
    return [k % n for k in nums], many


def value_and_grad(f, argnums=0):
    """Returns a function that computes ``(f(*args), gradient)``: ``f`` returns
    a real scalar (a 0-d or one-element float array), and the gradient is that
    of the arguments ``argnums`` (an int: one Tensor; a tuple: a tuple)."""
    def wrapped(*args):
        nums, many = _argnums(argnums, len(args))
        ps = _primals([args[k] for k in nums])
        full = list(args)
        for k, p in zip(nums, ps):
            full[k] = p
        with _Tape(ps) as tape:
            out = f(*full)
        if isinstance(out, tuple) or not hasattr(out, "shape"):
            raise TypeError("grad: the function must return one array, not %s" % type(out).__name__)
        if out.size != 1 or not _dtype_name(out.dtype).startswith("float"):
            raise TypeError("grad: the function must return a real scalar, not %s %r"
                            % (out.dtype, tuple(out.shape)))
        g = tape.pullback([out], [xp.ones(out.shape, dtype=out.dtype, device=out.device)], ps)
        return out, (tuple(g) if many else g[0])
    return wrapped


def grad(f, argnums=0):
    """Returns a function that computes the gradient of the real scalar
    function ``f`` with respect to its arguments ``argnums`` (see
    :func:`value_and_grad`)."""
    vg = value_and_grad(f, argnums)

    def wrapped(*args):
        return vg(*args)[1]
    return wrapped
