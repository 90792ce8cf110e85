"""The array API's data type functions and inspection namespace:
``isdtype``, ``can_cast``, ``result_type``, ``finfo``, ``iinfo`` and
``__array_namespace_info__`` (standard 2024.12).

``result_type`` is the standard's type promotion lattice as a pure function
(it is not what vkflow's binary ops do): bool only with bool; signed with
signed and unsigned with unsigned widen to the larger; an unsigned and a
signed integer give the smallest signed integer holding both (uint64 with any
signed integer is an error); floats widen (float16 < float32 < float64,
float16 being vkflow's addition); complex with complex or a float gives the
complex dtype whose parts hold both (complex64 with float64 is complex128);
integers and floats (or complex) do not mix. Python scalars (as the 2024.12
revision allows) take the dtype of the rest: ``bool`` with bool, ``int`` with
numbers, ``float`` with floats and complex, ``complex`` with complex.
"""

from ._array import default_device
from ._dtypes import _COMPLEX, _FLOAT, _INT, _dtype, _dtype_name, _numpy, _promote

_SIGNED = ("int8", "int16", "int32", "int64")
_UNSIGNED = ("uint8", "uint16", "uint32", "uint64")
_FLOATS = ("float16", "float32", "float64")
_COMPLEXES = ("complex64", "complex128")
_ALL = ("bool",) + _SIGNED + _UNSIGNED + _FLOATS + _COMPLEXES
_DTYPE_NAMES = frozenset(_ALL)
_STANDARD = tuple(n for n in _ALL if n != "float16")

_KINDS = {
    "bool": frozenset({"bool"}),
    "signed integer": frozenset(_SIGNED),
    "unsigned integer": frozenset(_UNSIGNED),
    "integral": frozenset(_INT),
    "real floating": frozenset(_FLOAT),
    "complex floating": frozenset(_COMPLEX),
    "numeric": frozenset(_INT | _FLOAT | _COMPLEX),
}


def _as_dtype(x, what):
    """The vkflow dtype name of a dtype or of an array (its ``dtype``)."""
    dt = getattr(x, "dtype", x)
    if isinstance(dt, (bool, int, float, complex)) or dt is None:
        raise TypeError("%s: %r is not a dtype or an array" % (what, x))
    try:
        return _dtype_name(dt)
    except (TypeError, ValueError) as e:
        raise TypeError("%s: %s" % (what, e)) from None


def isdtype(dtype, kind):
    """Whether dtype is of kind: a dtype, a kind name (``"bool"``, ``"signed
    integer"``, ``"unsigned integer"``, ``"integral"``, ``"real floating"``,
    ``"complex floating"``, ``"numeric"``) or a tuple of them (any)."""
    name = _as_dtype(dtype, "isdtype")
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str) and k in _KINDS:
            if name in _KINDS[k]:
                return True
        elif isinstance(k, str) and k not in _DTYPE_NAMES:
            raise ValueError("isdtype: unknown kind %r (kinds: %s)" % (k, ", ".join(_KINDS)))
        elif _as_dtype(k, "isdtype") == name:
            return True
    return False


def result_type(*arrays_and_dtypes):
    """The dtype of an operation on these arrays, dtypes and Python scalars
    under the standard's type promotion rules; TypeError where they do not
    promote (integers with floats, uint64 with a signed integer, bool with
    numbers) or where no array or dtype is given."""
    dtypes, scalars = [], []
    for x in arrays_and_dtypes:
        if isinstance(x, (bool, int, float, complex)):
            scalars.append(x)
        else:
            dtypes.append(_as_dtype(x, "result_type"))
    if not dtypes:
        raise TypeError("result_type: needs at least one array or dtype")
    out = dtypes[0]
    for d in dtypes[1:]:
        r = _promote(out, d)
        if r is None:
            raise TypeError("result_type: %s and %s do not promote (array API type promotion)"
                            % (out, d))
        out = r
    for s in scalars:
        ok = (out == "bool" if isinstance(s, bool)
              else out in _INT or out in _FLOAT or out in _COMPLEX if isinstance(s, int)
              else out in _FLOAT or out in _COMPLEX if isinstance(s, float)
              else out in _COMPLEX if isinstance(s, complex) else False)
        if not ok:
            raise TypeError("result_type: a Python %s does not combine with %s"
                            % (type(s).__name__, out))
    return _dtype(out)


def can_cast(from_, to, /):
    """Whether from_ (a dtype or an array) casts to dtype to under the type
    promotion rules: promoting from_ with to gives to."""
    a, b = _as_dtype(from_, "can_cast"), _as_dtype(to, "can_cast")
    return _promote(a, b) == b


class finfo_object:
    """Machine limits of a float dtype: ``bits`` (int), ``eps``, ``max``,
    ``min``, ``smallest_normal`` (Python floats) and ``dtype`` (the vkflow
    DType)."""

    def __init__(self, dtype):
        f = _numpy().finfo(dtype)
        self.bits = int(f.bits)
        self.eps = float(f.eps)
        self.max = float(f.max)
        self.min = float(f.min)
        self.smallest_normal = float(f.smallest_normal)
        self.dtype = _dtype(f.dtype.name)

    def __repr__(self):
        return ("finfo(bits=%d, eps=%r, max=%r, min=%r, smallest_normal=%r, dtype=%s)"
                % (self.bits, self.eps, self.max, self.min, self.smallest_normal, self.dtype))


class iinfo_object:
    """Machine limits of an integer dtype: ``bits``, ``max``, ``min``
    (Python ints) and ``dtype`` (the vkflow DType)."""

    def __init__(self, dtype):
        i = _numpy().iinfo(dtype)
        self.bits = int(i.bits)
        self.max = int(i.max)
        self.min = int(i.min)
        self.dtype = _dtype(i.dtype.name)

    def __repr__(self):
        return "iinfo(bits=%d, max=%d, min=%d, dtype=%s)" % (self.bits, self.max, self.min,
                                                            self.dtype)


def finfo(type, /):
    """The limits of a float dtype (or of an array's dtype) as Python numbers;
    for complex64 and complex128, those of their parts' float32 and float64
    (``dtype`` is then the float dtype, as the standard and NumPy have it)."""
    name = _as_dtype(type, "finfo")
    if name not in _FLOAT and name not in _COMPLEX:
        raise ValueError("finfo: %s is not a floating-point dtype" % name)
    return finfo_object(name)


def iinfo(type, /):
    """The limits of an integer dtype (or of an array's dtype) as Python ints."""
    name = _as_dtype(type, "iinfo")
    if name not in _INT:
        raise ValueError("iinfo: %s is not an integer dtype" % name)
    return iinfo_object(name)


class Info:
    """What ``__array_namespace_info__()`` returns: the namespace's
    capabilities, devices and dtypes (array API 2025.12; sequence is the type
    devices() returns: tuple, or list before 2025.12)."""

    def __init__(self, sequence=tuple):
        self._sequence = sequence

    def capabilities(self):
        """Boolean mask indexing runs on the device (vkflow._advindex),
        nonzero has a data-dependent output shape (its count is read back),
        and every op takes arrays of up to 8 dimensions (the Go op library's
        MaxRank: more work where the op can merge contiguous axes down to
        8, and fail with a ValueError otherwise)."""
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 8}

    def default_device(self):
        """vkflow.default_device(): the process-wide Manager."""
        return default_device()

    def devices(self):
        """The devices arrays can be made on: the default device (a tuple;
        before 2025.12, a list)."""
        return self._sequence([default_device()])

    def default_dtypes(self, *, device=None):
        """float32 for real floats, complex64 for complex ones (the pair of
        float32), int64 for integers and indices."""
        return {"real floating": _dtype("float32"), "complex floating": _dtype("complex64"),
                "integral": _dtype("int64"), "indexing": _dtype("int64")}

    def dtypes(self, *, device=None, kind=None):
        """{name: dtype} of the standard's dtypes vkflow has (float16, not in
        the standard, is left out), of kind (a kind name, or a tuple of them:
        any) when given."""
        if kind is None:
            return {n: _dtype(n) for n in _STANDARD}
        kinds = kind if isinstance(kind, tuple) else (kind,)
        for k in kinds:
            if k not in _KINDS:
                raise ValueError("dtypes: unknown kind %r (kinds: %s)" % (k, ", ".join(_KINDS)))
        return {n: _dtype(n) for n in _STANDARD if any(n in _KINDS[k] for k in kinds)}


def __array_namespace_info__():
    """The inspection namespace (``capabilities devices default_device
    default_dtypes dtypes``)."""
    return Info()
