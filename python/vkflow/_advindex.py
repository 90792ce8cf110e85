"""Advanced indexing: integer arrays and boolean masks in keys, on the GPU.

``x[key]`` and ``x[key] = value`` follow NumPy's rules when the key holds
an array (a vkflow Tensor, a NumPy array or a list) or a bool:

- an integer array indexes one axis; several broadcast together, and
  integers beside them count as 0-d integer arrays. The broadcast shape
  takes the place of the indexed axes when they are adjacent, else it
  comes first (NumPy's rule). Slices, ``...`` and ``None`` mix freely.
- a boolean mask indexes as many axes as it has dimensions, as the
  integer arrays of its nonzero elements (``ops.nonzero``: flags, a scan
  and a scatter on the GPU; the count is read back to size the result); a
  0-d mask (``True``, ``False``) adds an axis of length 1 or 0.
- integer indices count from the end when negative. Arrays from the host
  (NumPy, lists) and integers are checked (IndexError when out of
  range); a device tensor's indices cannot be without a host round trip:
  out of range they are clamped on reads and dropped on writes (the Go
  ops ``gather`` and ``scatter``).

A get is one ``gather`` dispatch over the indexed tensor (a view is
gathered into a contiguous copy first); a set is one ``scatter`` into it
(through a copy written back when the key also slices, or the indexed
axes are apart). Where indices repeat in a set, one of the writes wins.
Keys without arrays stay views (``vkflow._views``).
"""

import builtins
import operator

from . import _views, ops
from ._array import asarray
from ._dtypes import _numpy
from ._tensor import Tensor

_INT_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


def _is_bool(k):
    return isinstance(k, (bool, _numpy().bool_))


def _is_array(k):
    return isinstance(k, (Tensor, list, _numpy().ndarray))


def is_advanced(key):
    """Whether key (an index or a tuple of them) holds an array or a bool."""
    if not isinstance(key, tuple):
        key = (key,)
    return builtins.any(_is_array(k) or _is_bool(k) for k in key)


def _as_index_tensor(k, device):
    """An array entry as (tensor, host values or None)."""
    if isinstance(k, Tensor):
        if k.dtype != "bool" and k.dtype not in _INT_DTYPES:
            raise IndexError("arrays used as indices must be of integer or boolean type, not %s"
                             % k.dtype)
        return k, None
    np = _numpy()
    a = np.asarray(k)
    if a.dtype != np.bool_ and a.dtype.kind not in "iu":
        if a.size:
            raise IndexError("arrays used as indices must be of integer or boolean type, not %s"
                             % a.dtype)
        a = a.astype(np.int64)
    return asarray(a, device=device, copy=True), a


def _entries(x, key):
    """key as a list of (kind, value, host) with the ellipsis expanded:
    kind "basic" (a slice or None), "int" (a Python integer), "array" (an
    integer tensor) or "mask" (a bool tensor)."""
    out = []
    for k in key:
        if k is None or k is Ellipsis or isinstance(k, slice):
            out.append(("basic", k, None))
        elif _is_bool(k):
            out.append(("mask", asarray(bool(k), device=x.device), _numpy().asarray(bool(k))))
        elif _is_array(k):
            t, host = _as_index_tensor(k, x.device)
            out.append(("mask" if t.dtype == "bool" else "array", t, host))
        else:
            try:
                out.append(("int", operator.index(k), None))
            except TypeError:
                raise IndexError("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis "
                                 "(`None`) and integer or boolean arrays are valid indices, not "
                                 "%s" % type(k).__name__) from None
    used = builtins.sum(0 if kind == "basic" and v is None or v is Ellipsis
                        else (v.ndim if kind == "mask" else 1) for kind, v, _ in out)
    nell = builtins.sum(1 for kind, v, _ in out if v is Ellipsis)
    if nell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if used > x.ndim:
        raise IndexError("too many indices for tensor: tensor is %d-dimensional, but %d were "
                         "indexed" % (x.ndim, used))
    fill = [("basic", slice(None), None)] * (x.ndim - used)
    if nell:
        i = next(i for i, (_, v, _) in enumerate(out) if v is Ellipsis)
        return out[:i] + fill + out[i + 1:]
    return out + fill


def _plan(x, key):
    """(view, index tensors, axis): x[key] is gather(view, indices, axis)
    where view is x under the key's basic part, its indexed axes moved
    together (first when they were apart)."""
    if not isinstance(key, tuple):
        key = (key,)
    basic, adv = [], []  # adv: (axis of the view, index tensor)
    axis = 0  # axis of x consumed
    for kind, v, host in _entries(x, key):
        pos = builtins.sum(1 for b in basic if b is None or isinstance(b, slice))
        if kind == "basic":
            basic.append(v)
            axis += v is not None
        elif kind == "int":
            n = x.shape[axis]
            if v < -n or v >= n:
                raise _views._index_error(v, axis, n)
            adv.append((pos, asarray(v % n, dtype="int64", device=x.device)))
            basic.append(slice(None))
            axis += 1
        elif kind == "array":
            n = x.shape[axis]
            if host is not None and host.size and (host.min() < -n or host.max() >= n):
                bad = host[(host < -n) | (host >= n)].flat[0]
                raise _views._index_error(int(bad), axis, n)
            adv.append((pos, v))
            basic.append(slice(None))
            axis += 1
        else:  # a mask over x's axes [axis, axis + v.ndim)
            if v.ndim == 0:
                on = bool(host) if host is not None else bool(v)
                adv.append((pos, asarray([0] if on else [], dtype="int64", device=x.device)))
                basic.append(None)
                continue
            dims = x.shape[axis:axis + v.ndim]
            for d, (ks, xs) in enumerate(zip(v.shape, dims)):
                if ks != xs and ks != 0:
                    raise IndexError("boolean index did not match indexed array along axis %d; "
                                     "size of axis is %d but size of corresponding boolean "
                                     "axis is %d" % (axis + d, xs, ks))
            nz = nonzero_rows(v)
            for d in range(v.ndim):
                adv.append((pos + d, nz[d]))
                basic.append(slice(None))
            axis += v.ndim
    view = _views.view_of(x, tuple(basic))
    axes = [a for a, _ in adv]
    idx = [t for _, t in adv]
    try:
        _numpy().broadcast_shapes(*[t.shape for t in idx])
    except ValueError:
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together with "
                         "shapes %s" % " ".join(str(t.shape) for t in idx)) from None
    if axes == list(range(axes[0], axes[0] + len(axes))):
        return view, idx, axes[0], None
    perm = axes + [a for a in range(view.ndim) if a not in axes]
    return _views._permuted(view, perm), idx, 0, perm


def nonzero_rows(mask):
    """ops.nonzero of mask as its rows: int64 tensors of the nonzero
    elements' coordinates along each axis."""
    r = ops.call("nonzero", mask)
    return [_views.view_of(r, i).contiguous() for i in range(r.shape[0])]


def _is_whole(t):
    """Whether t covers its base's memory in row-major order (no copy
    needed to hand it to an op, and writes land in the base)."""
    if not isinstance(t, _views.TensorView):
        return True
    base = t.base
    return (t._offset == 0 and tuple(t.shape) == tuple(base.shape)
            and tuple(t._strides) == _views._row_major(t.shape))


def getitem(self, key):
    """self[key]: a view for basic keys, else a gather (see the module doc)."""
    if not is_advanced(key):
        return _views.view_of(self, key)
    view, idx, axis, _ = _plan(self, key)
    src = view.base if _is_whole(view) else view
    return ops.call("gather", src, *idx, axis=axis)


def setitem(self, key, value):
    """self[key] = value: a write through a view for basic keys, else a
    scatter (see the module doc)."""
    if not is_advanced(key):
        _views.assign(_views.view_of(self, key), value)
        return
    base = _views._layout(self)[0]
    if base.read_only:
        raise ValueError("assignment destination is read-only")
    view, idx, axis, _ = _plan(self, key)
    if isinstance(value, Tensor):
        if value.device is not self.device:
            raise ValueError("the value is on another device than the destination: use "
                             "to_device")
        if value.dtype != self.dtype:
            value = ops.astype(value, self.dtype)
        elif _views._layout(value)[0] is base:  # overlapping: copy first, as NumPy does
            value = value.copy()
    else:  # a copy: the caller may change its array once the assignment returns
        value = asarray(_numpy().asarray(value, dtype=self.dtype), device=self.device,
                        copy=True)
    if _is_whole(view):
        ops.call("scatter", value, *idx, out=view.base, axis=axis)
        return
    tmp = view.contiguous()
    ops.call("scatter", value, *idx, out=tmp, axis=axis)
    _views.assign(view, tmp)


def install(cls):
    """Puts advanced indexing into the Tensor class's indexing."""
    cls.__getitem__ = getitem
    cls.__setitem__ = setitem
