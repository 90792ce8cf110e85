"""Views: indexing, reshape and transposes that share a tensor's memory.

A :class:`TensorView` is an offset and strides (in elements) over the memory
of a base :class:`vkflow.Tensor`, as a NumPy view is over its base array. It
is made by basic indexing (integers, slices with steps, ``...``, ``None``,
negative indices), by ``reshape`` and by ``T``/``mT``; views of views point
at the same base. Writes through a view (``v[...] = x``, in-place operators,
``out=v``) change the base, and reads of the base see them.

What a view costs: the GPU kernels read and write contiguous tensors, so an
op whose input is a view first gathers it into a new contiguous tensor (one
``strided_copy`` dispatch, queued like any op), and an op whose output is a
view computes into a temporary and scatters it into the base. Host reads are
zero-copy where the base is host-mapped (``numpy.asarray(view)`` is a strided
NumPy view of the mapped memory) and a gathered copy otherwise. A view has no
handle of its own: sequences, graphs, algorithms, DLPack exports without a
copy and memory exports refuse it (TypeError); ``v.copy()`` makes a tensor of
its own.
"""

import builtins
import numbers
import operator

from . import _dispatch
from ._array import asarray
from ._dtypes import _numpy
from ._errors import ClosedError
from ._tensor import Tensor


def _row_major(shape):
    strides, acc = [], 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= d
    return tuple(reversed(strides))


def _layout(t):
    """(base, offset, shape, strides) of a tensor or view."""
    if isinstance(t, TensorView):
        return t._base, t._offset, t.shape, t._strides
    return t, 0, t.shape, _row_major(t.shape)


class TensorView(Tensor):
    """A view of a :class:`vkflow.Tensor`'s memory (see the module doc).
    ``base`` is the tensor that owns the memory; closing it closes every view
    of it. ``close()`` on a view only drops the view."""

    _kind = "Tensor view"

    @classmethod
    def _make(cls, base, offset, shape, strides):
        self = object.__new__(cls)
        self._base = base
        self._offset = int(offset)
        self.shape = tuple(int(d) for d in shape)
        self._strides = tuple(int(s) for s in strides)
        self._manager = base._manager
        self.dtype, self.memory, self.mapped = base.dtype, base.memory, base.mapped
        self.read_only, self.imported_copy = base.read_only, None
        return self

    @property
    def base(self):
        """The tensor whose memory the view shares."""
        return self._base

    @property
    def _handle(self):
        return self._base._handle if self._base is not None else 0

    def close(self):
        """Drops the view; the base stays open."""
        self._base = None

    def _detach(self):
        self._base = None

    def __del__(self):
        pass

    def _h(self):
        if self._base is None:
            raise ClosedError("vkflow: the view was closed")
        raise TypeError("a vkflow.Tensor view (offset %d, strides %r over a %r tensor) has no "
                        "handle of its own: use v.copy() for a tensor of its own"
                        % (self._offset, self._strides, self._base.shape))

    def contiguous(self):
        """The view's elements as a new contiguous tensor (queued on the GPU)."""
        base = self._base
        if base is None:
            self._h()
        return _strided_copy(base, self.shape, src_offset=self._offset,
                             src_strides=self._strides)

    copy = contiguous

    def read(self):
        return self.contiguous().read()

    def write(self, data):
        assign(self, data)
        return self

    def __array__(self, dtype=None, copy=None):
        np = _numpy()
        base = self._base
        if base is None:
            self._h()
        if base.mapped and base.dtype != "bool" and copy is not True:
            flat = np.asarray(base).reshape(-1)  # zero-copy, after its pending work
            item = flat.itemsize
            arr = np.lib.stride_tricks.as_strided(
                flat[self._offset:] if flat.size else flat, shape=self.shape,
                strides=tuple(s * item for s in self._strides), writeable=False)
        else:
            if copy is False:
                raise ValueError("Unable to avoid copy: the view's base is not host-mapped")
            arr = self.contiguous().read()
        if dtype is not None and arr.dtype != np.dtype(dtype):
            if copy is False:
                raise ValueError("Unable to avoid copy: dtype %s -> %s" % (arr.dtype, dtype))
            arr = arr.astype(dtype)
        return arr

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        if copy is False:
            raise BufferError("a vkflow.Tensor view is exported through a contiguous copy "
                              "(copy=False)")
        return self.contiguous().__dlpack__(stream=stream, max_version=max_version,
                                            dl_device=dl_device, copy=None)

    def __dlpack_device__(self):
        return self.contiguous().__dlpack_device__()

    def to_device(self, device, /, *, stream=None):
        return self.contiguous().to_device(device, stream=stream)

    def export_memory(self):
        self._h()

    def cuda_view(self, device_id=None):
        return self.contiguous().cuda_view(device_id)

    def __repr__(self):
        if self._base is None:
            return "<vkflow.Tensor view (closed)>"
        return Tensor.__repr__(self)


# --- indexing -------------------------------------------------------------------------

def _index_error(i, axis, n):
    return IndexError("index %d is out of bounds for axis %d with size %d" % (i, axis, n))


def view_of(t, key):
    """t[key] for basic indexing keys, as a view."""
    base, off, shape, strides = _layout(t)
    if not isinstance(key, tuple):
        key = (key,)
    norm = []
    for k in key:
        if not isinstance(k, (bool, _numpy().bool_)) and (k is None or k is Ellipsis
                                                           or isinstance(k, slice)):
            norm.append(k)
            continue
        try:
            if isinstance(k, (bool, _numpy().bool_)):
                raise TypeError
            norm.append(operator.index(k))
        except TypeError:
            raise IndexError("only integers, slices (`:`), ellipsis (`...`) and numpy.newaxis "
                             "(`None`) are valid indices for a view, not %s (integer arrays "
                             "and masks: t[key] gathers, see vkflow._advindex)"
                             % type(k).__name__) from None
    key = tuple(norm)
    nell = builtins.sum(1 for k in key if k is Ellipsis)
    if nell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = builtins.sum(1 for k in key if k is not None and k is not Ellipsis)
    if used > len(shape):
        raise IndexError("too many indices for tensor: tensor is %d-dimensional, but %d were "
                         "indexed" % (len(shape), used))
    if nell == 0:
        key = key + (Ellipsis,)
    new_shape, new_strides = [], []
    axis = 0
    for k in key:
        if k is None:
            new_shape.append(1)
            new_strides.append(0)
        elif k is Ellipsis:
            rest = len(shape) - axis - (used - _used_before(key, k))
            for _ in range(rest):
                new_shape.append(shape[axis])
                new_strides.append(strides[axis])
                axis += 1
        elif isinstance(k, slice):
            n = shape[axis]
            start, stop, step = k.indices(n)
            length = len(range(start, stop, step))
            if length:
                off += start * strides[axis]
            new_shape.append(length)
            new_strides.append(strides[axis] * step)
            axis += 1
        else:
            i, n = k, shape[axis]
            if i < -n or i >= n:
                raise _index_error(i, axis, n)
            off += (i % n) * strides[axis]
            axis += 1
    return TensorView._make(base, off, new_shape, new_strides)


def _used_before(key, marker):
    """Indices that consume an axis before the ellipsis."""
    n = 0
    for k in key:
        if k is marker:
            return n
        if k is not None:
            n += 1
    return n


# --- writes through views -----------------------------------------------------------------

def assign(dst, value):
    """dst[...] = value: value (a scalar, an array, a tensor or view)
    broadcast to dst's shape and converted to its dtype, written into the
    memory dst shares with its base, on the GPU."""
    base, off, shape, strides = _layout(dst)
    if base.read_only:
        raise ValueError("assignment destination is read-only")
    if isinstance(value, Tensor):
        if value.device is not dst.device:
            raise ValueError("the value is on another device than the destination: use "
                             "to_device")
        src = value if value.dtype == dst.dtype else _cast(value, dst.dtype)
    else:
        # A copy: the write is queued, and the caller may change its array
        # as soon as the assignment returns.
        np = _numpy()
        src = asarray(np.asarray(value, dtype=dst.dtype), device=dst.device, copy=True)
    sbase, soff, sshape, sstrides = _layout(src)
    if sbase is base:  # overlapping source: copy it first, as NumPy does
        src = src.contiguous() if isinstance(src, TensorView) else _copy(src)
        sbase, soff, sshape, sstrides = _layout(src)
    if len(sshape) > len(shape):
        raise ValueError("could not broadcast input array from shape %r into shape %r"
                         % (tuple(sshape), tuple(shape)))
    lead = len(shape) - len(sshape)
    bstrides = [0] * lead
    for k, d in enumerate(sshape):
        if d == shape[lead + k]:
            bstrides.append(sstrides[k])
        elif d == 1:
            bstrides.append(0)
        else:
            raise ValueError("could not broadcast input array from shape %r into shape %r"
                             % (tuple(sshape), tuple(shape)))
    _strided_copy(sbase, shape, src_offset=soff, src_strides=bstrides, out=base,
                  dst_offset=off, dst_strides=strides)


# --- the copies views are made of (vkflow.ops's, for tensors that are no views) ----------

def _strided_copy(x, shape, src_offset=0, src_strides=None, out=None, dst_offset=0,
                  dst_strides=None):
    """vkflow.ops.strided_copy of x, a tensor that is no view (into out, one
    too, or a new tensor)."""
    attrs = _dispatch._strided_attrs(shape, src_offset, src_strides, dst_offset, dst_strides)
    return _dispatch._call("strided_copy", x, out=out, **attrs)


def _copy(t):
    return _strided_copy(t, t.shape)


def _cast(t, dtype):
    """vkflow.ops.astype(t, dtype): a new tensor (a view is gathered first)."""
    if isinstance(t, TensorView):
        t = t.contiguous()
    return _dispatch._call("cast", t, dtype=dtype)


def _resolve_shape(old, shape):
    np = _numpy()
    try:
        shape = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError("reshape: the shape must be ints, not %r" % (shape,)) from None
    size = int(np.prod(old, dtype=np.int64))
    unknown = [i for i, d in enumerate(shape) if d == -1]
    if len(unknown) > 1:
        raise ValueError("reshape: can only specify one unknown dimension (shape %r for a "
                         "tensor of shape %r)" % (shape, old))
    if any(d < -1 for d in shape):
        raise ValueError("reshape: negative dimension in shape %r (for a tensor of shape %r)"
                         % (shape, old))
    known = int(np.prod([d for d in shape if d != -1], dtype=np.int64))
    if unknown:
        if known == 0 or size % known:
            raise ValueError("cannot reshape tensor of shape %r (size %d) into shape %r"
                             % (old, size, shape))
        shape = shape[:unknown[0]] + (size // known,) + shape[unknown[0] + 1:]
    elif known != size:
        raise ValueError("cannot reshape tensor of shape %r (size %d) into shape %r"
                         % (old, size, shape))
    return shape


# --- the Tensor methods --------------------------------------------------------------------

def _getitem(self, key):
    return view_of(self, key)


def _setitem(self, key, value):
    assign(view_of(self, key), value)


def _reshape(self, *shape, copy=None):
    """A tensor of ``shape`` (ints or one tuple; one -1 is inferred) with the
    same elements in row-major order: a view of the same memory when the
    tensor is contiguous (NumPy's rule; ``copy=True`` copies), else a copy
    (``copy=False`` then raises ValueError)."""
    if len(shape) == 1 and not isinstance(shape[0], numbers.Integral):
        shape = tuple(shape[0])
    new = _resolve_shape(self.shape, shape)
    base, off, old, strides = _layout(self)
    contiguous = tuple(s for s, d in zip(strides, old) if d != 1) == \
        tuple(s for s, d in zip(_row_major(old), old) if d != 1)
    if copy is True or not contiguous:
        if copy is False:
            raise ValueError("reshape: copy=False, but a %r view with strides %r is not "
                             "contiguous" % (old, strides))
        src = self.contiguous() if isinstance(self, TensorView) else _copy(self)
        return TensorView._make(src, 0, new, _row_major(new))
    return TensorView._make(base, off, new, _row_major(new))


def _permuted(self, axes):
    base, off, shape, strides = _layout(self)
    return TensorView._make(base, off, [shape[a] for a in axes], [strides[a] for a in axes])


def _T(self):
    """The transpose (a view) of a tensor of at most 2 dimensions;
    ValueError for more, as the array API says (use mT or permute_dims)."""
    if self.ndim > 2:
        raise ValueError("x.T needs at most 2 dimensions, the tensor has shape %r: use x.mT "
                         "or vkflow.ops.permute_dims" % (self.shape,))
    return _permuted(self, tuple(reversed(range(self.ndim))))


def _mT(self):
    """The last two axes swapped (a view; ValueError under 2-d)."""
    n = self.ndim
    if n < 2:
        raise ValueError("x.mT needs at least 2 dimensions, the tensor has shape %r"
                         % (self.shape,))
    return _permuted(self, tuple(range(n - 2)) + (n - 1, n - 2))


def _iter(self):
    """Iterates over the first axis: views of the rows (0-d views of a 1-d
    tensor's elements)."""
    if not self.shape:
        raise TypeError("iteration over a 0-d tensor")
    for i in range(self.shape[0]):
        yield view_of(self, i)


def _tensor_copy(self):
    """A new tensor holding a copy of the elements (queued on the GPU)."""
    return _copy(self)


def install(cls):
    """Adds indexing, views and copy() to the Tensor class."""
    cls.__getitem__ = _getitem
    cls.__setitem__ = _setitem
    cls.reshape = _reshape
    cls.T = property(_T)
    cls.mT = property(_mT)
    cls.__iter__ = _iter
    cls.copy = _tensor_copy
    cls.contiguous = lambda self: self
