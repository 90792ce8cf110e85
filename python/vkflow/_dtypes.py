"""dtypes and memory kinds: the names vkflow accepts and their sizes, and
NumPy, imported only by the calls that need it.

A dtype is a :class:`DType` object (``vkflow.float32``, the array API's
``xp.float32``): one object per dtype, comparable, hashable, equal to its
name (``vkflow.float32 == "float32"``) and accepted by NumPy
(``np.dtype(vkflow.float32)``). Where a dtype is asked for, a DType, its name
as NumPy spells it (``"float32"``, ``"int64"``, ``"bool"``) or anything
``numpy.dtype`` takes is accepted.
Memory kinds are ``"device"``, ``"host"``, ``"storage"`` and
``"exportable"`` (see :meth:`vkflow.Manager.tensor`).
"""

from . import _lib

_MEMORY = {"device": _lib.MEMORY_DEVICE, "host": _lib.MEMORY_HOST,
           "storage": _lib.MEMORY_STORAGE, "exportable": _lib.MEMORY_EXPORTABLE}
_MEMORY_NAMES = {v: k for k, v in _MEMORY.items()}

_DTYPE_SIZES = {
    "float16": 2, "float32": 4, "float64": 8,
    "int8": 1, "int16": 2, "int32": 4, "int64": 8,
    "uint8": 1, "uint16": 2, "uint32": 4, "uint64": 8,
    "bool": 1,
    "complex64": 8, "complex128": 16,
}
_FLOAT = {"float16", "float32", "float64"}
_INT = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"}
# complex64: two float32 (real, imaginary), complex128: two float64. The
# default complex dtype is complex64, as the default float is float32.
_COMPLEX = {"complex64", "complex128"}
_COMPLEX_PART = {"complex64": "float32", "complex128": "float64"}


def _numpy():
    import numpy
    return numpy


class DType:
    """A vkflow dtype: ``name`` (NumPy's spelling) and ``itemsize`` (bytes).

    There is one object per dtype (``vkflow.float32 is
    x.dtype`` for a float32 tensor x); it equals itself, its name and NumPy's
    dtype and scalar type of that name (``np.float32``, as NumPy's dtypes
    do), hashes as its name, and ``np.dtype(d)`` is the NumPy dtype of the
    same name.
    It is not a string: ``isinstance(d, str)`` is False, so the array API's
    kind names (``"bool"``, ``"integral"``, ...) stay distinct from dtypes.
    """

    __slots__ = ("name", "itemsize", "_np")
    # name and itemsize as NumPy's dtypes have them, and kind (below).

    def __init__(self, name, itemsize):
        self.name = name
        self.itemsize = itemsize
        self._np = None

    def __eq__(self, other):
        if isinstance(other, DType):
            return self.name == other.name
        if isinstance(other, str):
            return self.name == other
        np = _numpy()
        if isinstance(other, np.dtype) or (isinstance(other, type) and issubclass(other, np.generic)):
            return np.dtype(other).name == self.name
        return NotImplemented

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self):
        return hash(self.name)

    def __str__(self):
        return self.name

    def __repr__(self):
        return "vkflow." + self.name

    def __reduce__(self):
        return (_dtype, (self.name,))

    @property
    def kind(self):
        """NumPy's kind character: "b" bool, "i" signed, "u" unsigned
        integer, "f" float, "c" complex."""
        return self.name[0] if self.name[0] in "biuc" else "f"

    @property
    def dtype(self):
        """The NumPy dtype of the same name (NumPy reads this attribute)."""
        d = self._np
        if d is None:
            d = self._np = _numpy().dtype(self.name)
        return d


_DTYPES = {name: DType(name, size) for name, size in _DTYPE_SIZES.items()}


def _dtype(name):
    """The DType named name (a vkflow dtype name)."""
    return _DTYPES[name]


def _dtype_name(dtype):
    """The vkflow dtype name (a str) of a DType, a name or anything
    ``numpy.dtype`` takes; ValueError for a dtype vkflow does not have."""
    if isinstance(dtype, DType):
        return dtype.name
    if isinstance(dtype, str):
        name = dtype
    else:
        name = _numpy().dtype(dtype).name
    if name not in _DTYPE_SIZES:
        raise ValueError("vkflow has no dtype %r (supported: %s)"
                         % (name, ", ".join(sorted(_DTYPE_SIZES))))
    return name


def _memory_kind(memory):
    if isinstance(memory, str):
        try:
            return _MEMORY[memory.lower()]
        except KeyError:
            raise ValueError("memory must be one of %s, not %r"
                             % (", ".join(_MEMORY), memory)) from None
    if memory in _MEMORY_NAMES:
        return int(memory)
    raise ValueError("unknown memory kind %r" % (memory,))


def _kind(dtype):
    return "b" if dtype == "bool" else "f" if dtype in _FLOAT else "i" if dtype in _INT else \
        "c" if dtype in _COMPLEX else "?"


_SIGNED = ("int8", "int16", "int32", "int64")


def _promote(a, b):
    """The dtype the array API standard's promotion table gives dtypes a and
    b (names), or None where it has none: bool only with bool, never
    integers with floats, nor uint64 with a signed integer. The Go op
    library's ops.ResultType, which the element-wise ops apply."""
    a, b = str(a), str(b)
    if a == b:
        return a
    ka, kb = _kind(a), _kind(b)
    if "c" in (ka, kb):
        # complex with complex or a float: the complex dtype whose parts
        # hold both; with integers or bool, none.
        if not {ka, kb} <= {"c", "f"}:
            return None
        wide = "float64" in (a, b) or "complex128" in (a, b)
        return "complex128" if wide else "complex64"
    if ka != kb or ka not in "if":
        return None
    if ka == "f" or a.startswith("u") == b.startswith("u"):
        return a if _DTYPE_SIZES[a] >= _DTYPE_SIZES[b] else b
    s, u = (b, a) if a.startswith("u") else (a, b)
    for c in _SIGNED:
        if _DTYPE_SIZES[c] >= _DTYPE_SIZES[s] and _DTYPE_SIZES[c] > _DTYPE_SIZES[u]:
            return c
    return None
