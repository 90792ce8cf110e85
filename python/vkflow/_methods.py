"""NumPy's ndarray methods on vkflow tensors, from the array API functions:
``all any argmin clip cumsum cumprod squeeze transpose swapaxes ravel
flatten std var dot round repeat fill`` and, where vkflow.array_api has the
function, ``sort argsort nonzero take searchsorted diagonal trace conj real
imag``, plus the ``itemsize`` property.

They exist so that code written for NumPy arrays (Dask's chunk functions,
scikit-learn's helpers) runs on tensors and keeps its results on the
device: each method is the array API function of the same meaning, with
NumPy's signature (``ddof`` for std/var, ``axis=None`` flattening for
cumsum/cumprod, ``squeeze()`` of every size-1 axis, in-place ``sort``).
A method whose function vkflow.array_api lacks is not installed, so
``hasattr(t, name)`` tells.
"""

import operator

from . import array_api


def _flat(x):
    return x.reshape((x.size,)) if x.ndim != 1 else x


def all_(self, axis=None, out=None, keepdims=False):
    """NumPy's ndarray.all: array_api.all."""
    return _out(array_api.all(self, axis=axis, keepdims=keepdims), out)


def any_(self, axis=None, out=None, keepdims=False):
    """NumPy's ndarray.any: array_api.any."""
    return _out(array_api.any(self, axis=axis, keepdims=keepdims), out)


def argmin(self, axis=None, out=None, keepdims=False):
    """NumPy's ndarray.argmin: array_api.argmin."""
    return _out(array_api.argmin(self, axis=axis, keepdims=keepdims), out)


def clip(self, min=None, max=None, out=None):
    """NumPy's ndarray.clip: array_api.clip."""
    return _out(array_api.clip(self, min, max), out)


def _cumulative(fn):
    def f(self, axis=None, dtype=None, out=None):
        x = _flat(self) if axis is None else self
        return _out(fn(x, axis=0 if axis is None else axis, dtype=dtype), out)
    return f


def squeeze(self, axis=None):
    """NumPy's ndarray.squeeze: every size-1 axis when axis is None."""
    if axis is None:
        axis = tuple(i for i, d in enumerate(self.shape) if d == 1)
    return array_api.squeeze(self, axis)


def transpose(self, *axes):
    """NumPy's ndarray.transpose: reversed axes, or the order given (as
    separate ints or one tuple)."""
    if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
        axes = axes[0]
    if not axes:
        axes = tuple(reversed(range(self.ndim)))
    return array_api.permute_dims(self, tuple(axes))


def swapaxes(self, axis1, axis2):
    """NumPy's ndarray.swapaxes."""
    perm = list(range(self.ndim))
    a, b = operator.index(axis1) % max(self.ndim, 1), operator.index(axis2) % max(self.ndim, 1)
    perm[a], perm[b] = perm[b], perm[a]
    return array_api.permute_dims(self, tuple(perm))


def ravel(self, order="C"):
    """NumPy's ndarray.ravel (C order): a 1-d view where possible."""
    if order not in ("C", "A", "K"):
        raise NotImplementedError("ravel: vkflow tensors are C-ordered (order=%r)" % (order,))
    return self.reshape((self.size,))


def flatten(self, order="C"):
    """NumPy's ndarray.flatten (C order): a 1-d copy."""
    if order not in ("C", "A", "K"):
        raise NotImplementedError("flatten: vkflow tensors are C-ordered (order=%r)" % (order,))
    return self.reshape((self.size,)).copy()


def _moment(fn):
    def f(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        x = self if dtype is None else array_api.astype(self, dtype)
        return _out(fn(x, axis=axis, correction=ddof, keepdims=keepdims), out)
    return f


def dot(self, b, out=None):
    """NumPy's ndarray.dot for 0-d, 1-d and 2-d operands (matmul, or a
    product with a scalar)."""
    if self.ndim == 0 or getattr(b, "ndim", 0) == 0:
        return _out(self * b, out)
    return _out(array_api.matmul(self, b), out)


def round_(self, decimals=0, out=None):
    """NumPy's ndarray.round: to even; decimals scales by 10**decimals
    first (floats)."""
    if decimals == 0:
        return _out(array_api.round(self), out)
    s = 10.0 ** decimals
    return _out(array_api.round(self * s) / s, out)


def repeat(self, repeats, axis=None):
    """NumPy's ndarray.repeat: array_api.repeat."""
    return array_api.repeat(self, repeats, axis=axis)


def fill(self, value):
    """NumPy's ndarray.fill: every element becomes value (on the device)."""
    self[...] = value


def sort(self, axis=-1, kind=None, order=None):
    """NumPy's ndarray.sort: sorts in place (stably, on the device)."""
    if order is not None:
        raise NotImplementedError("sort: vkflow tensors have no fields (order=)")
    self[...] = array_api.sort(self, axis=axis)


def argsort(self, axis=-1, kind=None, order=None):
    """NumPy's ndarray.argsort: array_api.argsort (stable)."""
    if order is not None:
        raise NotImplementedError("argsort: vkflow tensors have no fields (order=)")
    return array_api.argsort(self, axis=axis)


def nonzero(self):
    """NumPy's ndarray.nonzero: array_api.nonzero."""
    return array_api.nonzero(self)


def take(self, indices, axis=None, out=None):
    """NumPy's ndarray.take: array_api.take (axis None: flattened)."""
    x = _flat(self) if axis is None else self
    return _out(array_api.take(x, indices, axis=0 if axis is None else axis), out)


def searchsorted(self, v, side="left", sorter=None):
    """NumPy's ndarray.searchsorted: array_api.searchsorted."""
    return array_api.searchsorted(self, v, side=side, sorter=sorter)


def diagonal(self, offset=0, axis1=0, axis2=1):
    """NumPy's ndarray.diagonal (of the last two axes when axis1, axis2 are
    them; others are moved there first)."""
    x = self
    if (axis1 % self.ndim, axis2 % self.ndim) != (self.ndim - 2, self.ndim - 1):
        x = array_api.moveaxis(self, (axis1, axis2), (-2, -1))
    return array_api.linalg.diagonal(x, offset=offset)


def trace(self, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """NumPy's ndarray.trace."""
    x = self
    if (axis1 % self.ndim, axis2 % self.ndim) != (self.ndim - 2, self.ndim - 1):
        x = array_api.moveaxis(self, (axis1, axis2), (-2, -1))
    return _out(array_api.linalg.trace(x, offset=offset, dtype=dtype), out)


def _out(result, out):
    if out is None:
        return result
    out[...] = result
    return out


def _itemsize(self):
    return self.dtype.itemsize


# method name -> (function, the array API names it needs)
_METHODS = {
    "all": (all_, ("all",)), "any": (any_, ("any",)), "argmin": (argmin, ("argmin",)),
    "clip": (clip, ("clip",)), "squeeze": (squeeze, ("squeeze",)),
    "transpose": (transpose, ("permute_dims",)), "swapaxes": (swapaxes, ("permute_dims",)),
    "ravel": (ravel, ()), "flatten": (flatten, ()), "dot": (dot, ("matmul",)),
    "round": (round_, ("round",)), "repeat": (repeat, ("repeat",)), "fill": (fill, ()),
    "sort": (sort, ("sort",)), "argsort": (argsort, ("argsort",)),
    "nonzero": (nonzero, ("nonzero",)), "take": (take, ("take",)),
    "searchsorted": (searchsorted, ("searchsorted",)),
    "diagonal": (diagonal, ("linalg",)), "trace": (trace, ("linalg",)),
}


def install(cls):
    """Adds the methods whose array API functions exist to cls."""
    for name, (fn, needs) in _METHODS.items():
        if all(hasattr(array_api, n) for n in needs):
            setattr(cls, name, fn)
    for name, fn_name in (("cumsum", "cumulative_sum"), ("cumprod", "cumulative_prod")):
        if hasattr(array_api, fn_name):
            setattr(cls, name, _cumulative(getattr(array_api, fn_name)))
    for name, fn_name in (("std", "std"), ("var", "var")):
        if hasattr(array_api, fn_name):
            setattr(cls, name, _moment(getattr(array_api, fn_name)))
    for name in ("conj", "real", "imag"):
        if hasattr(array_api, name):
            fn = getattr(array_api, name)
            if name == "conj":
                setattr(cls, "conj", fn)
                setattr(cls, "conjugate", fn)
            else:
                setattr(cls, name, property(fn))
    cls.itemsize = property(_itemsize)
