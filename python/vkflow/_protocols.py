"""The NumPy protocol and array methods of :class:`vkflow.Tensor`:
``__array__`` (``numpy.asarray(t)``), ``__array_priority__``, conversions
to Python numbers (``float``, ``int``, ``bool``, ``index``, ``item``,
``tolist``), ``len``, iteration, a NumPy-style ``repr``, ``T``, ``mT``,
``reshape``, ``astype``, the reductions ``sum mean max min prod argmax``
as NumPy calls them, and ``__array_namespace__`` (:mod:`vkflow.array_api`).

Added to Tensor by :func:`install` (vkflow/__init__.py calls it): the
methods are defined on :class:`_ArrayMethods` and copied onto Tensor. This
layer's ``reshape``, ``T``, ``mT`` and iteration copy on the GPU; the views
layer (:mod:`vkflow._views`), installed after it, replaces them with views.
"""

import numbers

from . import _array, _dispatch, array_api, ops
from ._dlpack import _HostView
from ._dtypes import _dtype_name, _kind, _numpy
from ._views import _resolve_shape

__all__ = ["install"]


def _device_copy(src, shape):
    """A copy of src in a new tensor of shape (same size and memory kind),
    made on the GPU by a Sequence copy."""
    mgr = src.device
    mem = src.memory if src.memory in ("device", "host", "storage") else "device"
    dst = mgr.tensor(tuple(shape), dtype=src.dtype, memory=mem)
    if src.size:
        seq = mgr.sequence()
        try:
            seq.copy(src, dst).eval()
        finally:
            seq.close()
    return dst


def _host(t, copy=None):
    """The tensor as a NumPy array: zero-copy (a read-only view of the
    mapped memory, after the pending GPU work) when the tensor is mapped and
    not bool, else a new array. copy=True always copies, False never (or
    ValueError)."""
    np = _numpy()
    view = t.mapped and t.dtype != "bool"
    if copy is False and not view:
        raise ValueError("Unable to avoid copy while creating an array as requested: the %s "
                         "tensor is %s" % (t.dtype, "bool (NumPy 1.x takes no kDLBool)"
                                           if t.dtype == "bool" else "not host-mapped"))
    if not view:
        return t._host_copy()
    arr = np.from_dlpack(_HostView(t))
    return arr.copy() if copy else arr


def _scalar_value(t, what):
    if t.size != 1:
        raise TypeError("only size-1 arrays can be converted to Python scalars (%s of a "
                        "tensor of shape %r)" % (what, t.shape))
    return t.__array__().reshape(-1)[0]


class _ArrayMethods:
    """The protocol methods install() copies onto Tensor."""

    # NumPy's binary operators (ndarray + tensor) defer to the tensor's
    # reflected operator, as for torch.Tensor: the result is a vkflow Tensor.
    __array_priority__ = 1000

    def __reduce__(self):
        """Pickling: the dtype, shape and values travel as a NumPy copy
        (taken after the tensor's pending GPU work); unpickling makes a
        device tensor on :func:`vkflow.default_device` (the Manager, memory
        kind and views do not travel)."""
        return (_array._unpickle, (self.__array__(copy=True),))

    def __array__(self, dtype=None, copy=None):
        """The tensor as a NumPy array (``numpy.asarray(t)``): a read-only
        zero-copy view when the tensor is host-mapped and not bool, else a
        copy; ``copy=True`` always copies, ``copy=False`` raises ValueError
        when a copy is needed. Waits for the tensor's pending GPU work."""
        arr = _host(self, copy)
        if dtype is not None and arr.dtype != _numpy().dtype(dtype):
            if copy is False:
                raise ValueError("Unable to avoid copy: dtype %s -> %s" % (arr.dtype, dtype))
            arr = arr.astype(dtype)
        return arr

    def __array_namespace__(self, /, *, api_version=None):
        """The array API namespace: :mod:`vkflow.array_api` at its version
        (the newest, 2025.12, unless VKFLOW_ARRAY_API_VERSION names another),
        or at api_version (2021.12 to 2025.12; another is a ValueError)."""
        return array_api._namespace(api_version)

    def __bool__(self):
        if self.size != 1:
            raise ValueError(
                "The truth value of an array with more than one element is ambiguous. Use "
                "a.any() or a.all()" if self.size else "The truth value of an empty array is "
                "ambiguous. Use `array.size > 0` to check that an array is not empty.")
        return bool(_scalar_value(self, "bool()"))

    def __float__(self):
        return float(_scalar_value(self, "float()"))

    def __int__(self):
        return int(_scalar_value(self, "int()"))

    def __complex__(self):
        return complex(_scalar_value(self, "complex()"))

    def __index__(self):
        if _kind(self.dtype) != "i" or self.ndim != 0:
            raise TypeError("only integer scalar arrays can be converted to a scalar index "
                            "(the tensor is %s of shape %r)" % (self.dtype, self.shape))
        return int(_scalar_value(self, "index"))

    def item(self):
        """The single element as a Python scalar (ValueError unless size 1)."""
        if self.size != 1:
            raise ValueError("can only convert an array of size 1 to a Python scalar (shape %r)"
                             % (self.shape,))
        return self.__array__().reshape(-1)[0].item()

    def tolist(self):
        """The elements as nested Python lists (a scalar for 0-d)."""
        return self.__array__().tolist()

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object (a 0-d vkflow.Tensor)")
        return self.shape[0]

    def __iter__(self):
        """Iterates over the first axis of a host copy: NumPy scalars for a
        1-d tensor, NumPy arrays (rows) otherwise."""
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return iter(self.__array__(copy=True))

    def __repr__(self):
        """Values as NumPy prints them (abbreviated past NumPy's threshold)."""
        if self.closed:
            return "vkflow.Tensor(<closed>, shape=%r, dtype=%s)" % (self.shape, self.dtype)
        try:
            arr = self.__array__()
        except Exception:  # a tensor the host cannot read now: no values
            return "<vkflow.Tensor %s %r %s>" % (self.dtype, self.shape, self.memory)
        prefix = "vkflow.Tensor("
        extra = ["dtype=%s" % self.dtype]
        if arr.size == 0 and arr.shape != (0,):
            extra.insert(0, "shape=%r" % (arr.shape,))
        if self.device is not _array._default:
            extra.append("device=%r" % (self.device,))
        body = _numpy().array2string(arr, separator=", ", prefix=prefix)
        return "%s%s, %s)" % (prefix, body, ", ".join(extra))

    def __str__(self):
        if self.closed:
            return repr(self)
        try:
            return _numpy().array2string(self.__array__())
        except Exception:
            return repr(self)

    @property
    def T(self):
        """The transpose of a tensor of at most 2 dimensions (a new tensor;
        ValueError for more, as the array API says: use mT or permute_dims)."""
        if self.ndim > 2:
            raise ValueError("x.T needs at most 2 dimensions, the tensor has shape %r: use "
                             "x.mT or vkflow.ops.permute_dims" % (self.shape,))
        return ops.permute_dims(self, tuple(reversed(range(self.ndim))))

    @property
    def mT(self):
        """The last two axes swapped (a new tensor; ValueError under 2-d)."""
        n = self.ndim
        if n < 2:
            raise ValueError("x.mT needs at least 2 dimensions, the tensor has shape %r"
                             % (self.shape,))
        return ops.permute_dims(self, tuple(range(n - 2)) + (n - 1, n - 2))

    def reshape(self, *shape, copy=None):
        """A new tensor of ``shape`` (ints or one tuple; one -1 is inferred)
        with the same elements in row-major order, copied on the GPU (the
        library has no views: ``copy=False`` is a ValueError unless the shape
        is unchanged, then the tensor itself)."""
        if len(shape) == 1 and not isinstance(shape[0], numbers.Integral):
            shape = tuple(shape[0])
        new = _resolve_shape(self.shape, shape)
        if copy is False:
            if new == self.shape:
                return self
            raise ValueError("reshape: copy=False, but vkflow has no views: reshaping %r to %r "
                             "copies" % (self.shape, new))
        if _dispatch._TAPES:
            # Under vkflow.autograd: the copy as an op, so the tape sees it.
            return _dispatch._call("strided_copy", self, shape=list(new))
        return _device_copy(self, new)

    def astype(self, dtype, /, *, copy=True):
        """The tensor as ``dtype`` (vkflow.ops.astype): a new tensor, or
        the tensor itself with copy=False when it already has that dtype."""
        try:
            name = _dtype_name(dtype)
        except ValueError as e:  # NumPy: "data type not understood" is a TypeError
            raise TypeError("astype: %s" % e) from None
        return ops.astype(self, name, copy=copy)


def _reduction(name):
    """The method name (NumPy's signature, which numpy.sum(t) and the like
    call: they return vkflow tensors); dtype casts first, out is a Tensor."""
    def f(self, axis=None, dtype=None, out=None, keepdims=False):
        x = self if dtype is None else self.astype(dtype)
        return getattr(ops, name)(x, axis=axis, keepdims=keepdims, out=out)
    if name in ("max", "min", "argmax"):
        def f(self, axis=None, out=None, keepdims=False):  # noqa: F811
            return getattr(ops, name)(self, axis=axis, keepdims=keepdims, out=out)
    f.__name__, f.__qualname__ = name, "Tensor." + name
    f.__doc__ = "vkflow.ops.%s along axis (None: all)." % name
    return f


def install(cls):
    """Adds the reductions (sum mean max min prod argmax) and the methods of
    _ArrayMethods to cls."""
    for name in ("sum", "mean", "max", "min", "prod", "argmax"):
        setattr(cls, name, _reduction(name))
    for key, value in vars(_ArrayMethods).items():
        if key not in ("__module__", "__dict__", "__weakref__", "__doc__", "__hash__"):
            setattr(cls, key, value)
