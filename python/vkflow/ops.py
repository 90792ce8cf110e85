"""vkflow's operators (Go package ops) from Python, and the kernel registry.

Every function takes vkflow Tensors, any DLPack producer (NumPy arrays,
PyTorch CPU tensors) or Python scalars, and returns vkflow Tensors, which
``numpy.from_dlpack`` and ``torch.from_dlpack`` read (zero-copy when the
tensor is mapped). The op runs on the device of the first vkflow Tensor among
the inputs, else on ``device`` where the function takes one, else on
:func:`vkflow.default_device`; other inputs are converted with
:func:`vkflow.asarray` on that device (aliased where their memory allows).
A Python scalar takes the dtype of the first array input (a float scalar with
an integer array, or a number with a bool array, is a TypeError). Inputs of
different dtypes are an error: cast first (:func:`astype`); there is no
silent promotion. Calls wait for the result.

Ops: ``add sub mul div pow minimum maximum`` (and the array-API names
``subtract multiply divide``), the comparisons ``equal not_equal less
less_equal greater greater_equal`` (bool results), ``where``, the unary ``abs
neg exp log sqrt tanh sigmoid relu`` (``negative``), ``clip``, ``cast`` and
``astype``, the reductions ``sum mean max min prod argmax`` (``axis``,
``keepdims``), ``matmul``, ``softmax`` (``axis``), ``transpose`` and
``permute_dims``. :func:`names` lists the ops the library has.

Registry: :func:`register` adds a GLSL (compiled now; an error carries the
compiler's message and line) or SPIR-V kernel by name, :func:`call` runs any
op by name with keyword attributes, :func:`unregister` removes a kernel.
"""

import base64
import builtins
import ctypes
import json
import numbers
import re

from ctypes import c_uint64

from . import _lib
from . import Manager, Tensor, _check, _dtype_name, asarray, default_device

__all__ = [
    "names", "register", "unregister", "call", "CompileError",
    "add", "sub", "subtract", "mul", "multiply", "div", "divide", "pow", "minimum", "maximum",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "where",
    "abs", "neg", "negative", "exp", "log", "sqrt", "tanh", "sigmoid", "relu", "clip",
    "cast", "astype", "sum", "mean", "max", "min", "prod", "argmax", "matmul", "softmax",
    "transpose", "permute_dims",
]

_INTEGER = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"}


# --- registry -------------------------------------------------------------------

def names():
    """The names of every op, built-in and registered, sorted."""
    L = _lib.lib()
    n = L.op_names(None, 0)
    buf = ctypes.create_string_buffer(n + 1)
    L.op_names(buf, n + 1)
    text = buf.value.decode("utf-8")
    return text.split("\n") if text else []


class CompileError(ValueError):
    """GLSL that did not compile: the compiler's message; ``line`` is the
    1-based line of the first error (None when the message has none)."""

    def __init__(self, message):
        super().__init__(message)
        m = re.search(r":(\d+): error:", message)
        self.line = int(m.group(1)) if m else None


def register(name, glsl=None, spirv=None, inputs=1):
    """Registers a compute kernel called ``name``: GLSL source (a str,
    compiled now: a compile error is a :class:`CompileError`, a ValueError
    with the compiler's message and line) or a SPIR-V module (bytes-like).
    Its storage buffers are set 0, bindings 0..n-1: the first ``inputs`` are
    inputs, the rest outputs, which :func:`call` must be given (``out=``).
    A taken name is a ValueError."""
    if (glsl is None) == (spirv is None):
        raise ValueError("register: give glsl or spirv, not both or neither")
    L = _lib.lib()
    if glsl is not None:
        try:
            _check(L.op_register_glsl(str(name).encode(), str(glsl).encode(), int(inputs)))
        except ValueError as e:
            if "glsl:" in str(e) and " error" in str(e):
                raise CompileError(str(e)) from None
            raise
    else:
        code = bytes(spirv)
        _check(L.op_register_spirv(str(name).encode(), code, len(code), int(inputs)))


def unregister(name):
    """Removes a kernel added by :func:`register` (not a built-in op)."""
    _check(_lib.lib().op_unregister(str(name).encode()))


# --- calls ----------------------------------------------------------------------

def _is_scalar(x):
    return isinstance(x, (bool, numbers.Number)) and not hasattr(x, "__dlpack__") and \
        not hasattr(x, "__array_interface__")


def _scalar_as(x, dtype):
    if isinstance(x, bool):
        return x
    if dtype == "bool":
        raise TypeError("a Python number %r with a bool array: cast the array first" % (x,))
    if dtype in _INTEGER and not isinstance(x, numbers.Integral):
        raise TypeError("a Python float %r with a %s array: cast the array first" % (x, dtype))
    return x


def _device_of(inputs, device):
    """The Manager an op on inputs runs on: the first vkflow Tensor's, else
    device, else the default device."""
    mgr = next((x.device for x in inputs if isinstance(x, Tensor)), None)
    if mgr is not None and device is not None and device is not mgr:
        raise ValueError("device %r differs from the inputs' device %r" % (device, mgr))
    mgr = mgr or device or default_device()
    if not isinstance(mgr, Manager):
        raise TypeError("device must be None or a vkflow.Manager, not %s" % type(mgr).__name__)
    return mgr


def _convert(inputs, mgr):
    """inputs as Tensors on mgr; scalars take the first array's dtype."""
    out = [None] * len(inputs)
    dtype = None
    for i, x in enumerate(inputs):
        if _is_scalar(x):
            continue
        if isinstance(x, Tensor) and x.device is not mgr:
            raise ValueError("input %d is on another device (%r, not %r): use to_device"
                             % (i, x.device, mgr))
        out[i] = asarray(x, device=mgr)
        if dtype is None:
            dtype = out[i].dtype
    for i, x in enumerate(inputs):
        if out[i] is None:
            out[i] = asarray(x if dtype is None else _scalar_as(x, dtype), dtype=dtype,
                             device=mgr)
    return out


def _attrs_json(attrs):
    """Keyword attributes to the library's JSON attributes."""
    js = {}
    for key, v in attrs.items():
        if v is None:
            continue
        if key in ("axis", "axes"):
            js["axes"] = [int(a) for a in v] if isinstance(v, (tuple, list)) else [int(v)]
        elif key == "keepdims":
            js["keepdims"] = bool(v)
        elif key == "perm":
            js["perm"] = [int(a) for a in v]
        elif key == "dtype":
            js["dtype"] = _dtype_name(v)
        elif key in ("min", "max"):
            js[key] = float(v)
        elif key == "push":
            from ._graph import _push_bytes
            js["push"] = base64.b64encode(_push_bytes(v)).decode("ascii")
        elif key == "groups":
            g = (tuple(int(x) for x in v) + (1, 1))[:3]
            js["groups"] = list(g)
        else:
            js[key] = v
    return json.dumps(js).encode() if js else None


def call(name, *inputs, out=None, device=None, **attrs):
    """Runs the op called ``name`` on ``inputs`` and waits.

    ``out``: None (the op allocates its one output), a Tensor, or a
    tuple/list of Tensors and Nones (None: allocated). Attributes:
    ``axis``/``axes`` (int or tuple), ``keepdims``, ``perm``, ``dtype``,
    ``min``, ``max``, ``push`` (a registered kernel's push constants: bytes,
    NumPy values, Python floats as float32 and ints as int32, or a tuple of
    them) and ``groups`` (its workgroups). Returns the output Tensor, or a
    tuple of them when ``out`` is a tuple or list.
    """
    mgr = _device_of(inputs, device)
    ins = _convert(inputs, mgr)
    many = isinstance(out, (tuple, list))
    outs = list(out) if many else [out]
    for i, t in enumerate(outs):
        if t is not None and not isinstance(t, Tensor):
            raise TypeError("out[%d] must be a vkflow.Tensor or None, not %s"
                            % (i, type(t).__name__))
        if t is not None and t.device is not mgr:
            raise ValueError("out[%d] is on another device than the inputs" % i)
    in_h = (c_uint64 * builtins.max(len(ins), 1))(*[t._h() for t in ins])
    out_h = (c_uint64 * builtins.max(len(outs), 1))(*[0 if t is None else t._h() for t in outs])
    _check(_lib.lib().op_call(mgr._h(), str(name).encode(), in_h, len(ins), out_h, len(outs),
                              _attrs_json(attrs)))
    res = []
    for i, t in enumerate(outs):
        res.append(t if t is not None else Tensor._wrap(mgr, out_h[i]))
    return tuple(res) if many else res[0]


def _one(name):
    """The first of name's candidates the library has (for ops whose Go name
    may differ), else name itself."""
    if isinstance(name, str):
        return name
    have = set(names())
    return next((n for n in name if n in have), name[0])


# --- element-wise -----------------------------------------------------------------

def add(x1, x2, /, *, out=None):
    """x1 + x2, broadcast."""
    return call("add", x1, x2, out=out)


def sub(x1, x2, /, *, out=None):
    """x1 - x2, broadcast."""
    return call("sub", x1, x2, out=out)


def mul(x1, x2, /, *, out=None):
    """x1 * x2, broadcast."""
    return call("mul", x1, x2, out=out)


def div(x1, x2, /, *, out=None):
    """x1 / x2, broadcast (integers: as the library defines integer division)."""
    return call("div", x1, x2, out=out)


def pow(x1, x2, /, *, out=None):
    """x1 ** x2, broadcast."""
    return call("pow", x1, x2, out=out)


def minimum(x1, x2, /, *, out=None):
    """Element-wise minimum, broadcast."""
    return call("minimum", x1, x2, out=out)


def maximum(x1, x2, /, *, out=None):
    """Element-wise maximum, broadcast."""
    return call("maximum", x1, x2, out=out)


subtract, multiply, divide = sub, mul, div


def _comparison(name):
    def f(x1, x2, /, *, out=None):
        return call(name, x1, x2, out=out)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = "x1 %s x2, broadcast, as a bool tensor." % name
    return f


equal = _comparison("equal")
not_equal = _comparison("not_equal")
less = _comparison("less")
less_equal = _comparison("less_equal")
greater = _comparison("greater")
greater_equal = _comparison("greater_equal")


def where(condition, x1, x2, /, *, out=None):
    """x1 where condition (bool) is true, else x2, broadcast. Scalars among
    x1 and x2 take the other's dtype."""
    mgr = _device_of([condition, x1, x2], None)
    (c,) = _convert([condition], mgr)
    a, b = _convert([x1, x2], mgr)
    return call("where", c, a, b, out=out)


def _unary(name, doc):
    def f(x, /, *, out=None):
        return call(name, x, out=out)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return f


abs = _unary("abs", "|x|, element-wise.")
neg = _unary("neg", "-x, element-wise.")
negative = neg
exp = _unary("exp", "e**x, element-wise.")
log = _unary("log", "Natural logarithm, element-wise.")
sqrt = _unary("sqrt", "Square root, element-wise.")
tanh = _unary("tanh", "Hyperbolic tangent, element-wise.")
sigmoid = _unary("sigmoid", "1 / (1 + e**-x), element-wise.")
relu = _unary("relu", "max(x, 0), element-wise.")


def clip(x, /, min=None, max=None, *, out=None):
    """x clamped to [min, max] (None: unbounded)."""
    return call("clip", x, out=out, min=min, max=max)


def cast(x, dtype, /, *, out=None):
    """x converted to dtype (a new tensor)."""
    return call("cast", x, out=out, dtype=dtype)


def astype(x, dtype, /, *, copy=True):
    """x as dtype; with copy=False, x itself when it has that dtype."""
    if not copy and isinstance(x, Tensor) and x.dtype == _dtype_name(dtype):
        return x
    return cast(x, dtype)


# --- reductions, linear algebra, layout -------------------------------------------

def _reduction(name, doc):
    def f(x, /, *, axis=None, keepdims=False, out=None):
        return call(name, x, out=out, axis=axis, keepdims=keepdims)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc + " along axis (an int, a tuple, or None: all axes)."
    return f


sum = _reduction("sum", "Sum")
mean = _reduction("mean", "Mean")
max = _reduction("max", "Maximum")
min = _reduction("min", "Minimum")
prod = _reduction("prod", "Product")


def argmax(x, /, *, axis=None, keepdims=False, out=None):
    """Index of the maximum along axis (None: of the flattened array)."""
    return call("argmax", x, out=out, axis=axis, keepdims=keepdims)


def matmul(x1, x2, /, *, out=None):
    """Matrix product (batched over leading dimensions)."""
    return call("matmul", x1, x2, out=out)


def softmax(x, /, *, axis=-1, out=None):
    """exp(x) / sum(exp(x)) along axis."""
    return call("softmax", x, out=out, axis=axis)


_PERMUTE = ("permute_dims", "transpose", "permute")


def permute_dims(x, /, axes, *, out=None):
    """x with its axes in the order axes."""
    return call(_one(_PERMUTE), x, out=out, perm=axes)


def transpose(x, /, axes=None, *, out=None):
    """x with its axes reversed, or in the order axes."""
    return call(_one(_PERMUTE), x, out=out, perm=axes)
