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
silent promotion. Calls are queued on the device's default stream and
return at once (see :func:`call`); reading a result waits for it.

Ops: ``add sub mul div pow minimum maximum floor_divide remainder`` (and the
array-API names ``subtract multiply divide``), the bitwise ``bitwise_and
bitwise_or bitwise_xor bitwise_invert bitwise_left_shift bitwise_right_shift``
(integers; and, or, xor and invert take bool too), the logical ``logical_and
logical_or logical_xor logical_not`` (bool only), the comparisons ``equal not_equal less
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
from . import _views
from ._views import TensorView
from . import Manager, Tensor, _check, _dtype_name, _ns, asarray, default_device

__all__ = [
    "names", "register", "unregister", "call", "cache_stats", "synchronize", "CompileError",
    "add", "sub", "subtract", "mul", "multiply", "div", "divide", "pow", "minimum", "maximum",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "where",
    "abs", "neg", "negative", "exp", "log", "sqrt", "tanh", "sigmoid", "relu", "clip",
    "floor_divide", "remainder", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_invert",
    "bitwise_left_shift", "bitwise_right_shift", "logical_and", "logical_or", "logical_xor",
    "logical_not",
    "cast", "astype", "sum", "mean", "max", "min", "prod", "argmax", "matmul", "softmax",
    "transpose", "permute_dims", "strided_copy",
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
    """Queues the op called ``name`` on ``inputs`` and returns its outputs.

    The op runs on the device's default stream, in call order, CUDA-stream
    style: the call returns once the op is submitted, and the host waits only
    where data must reach it (reading a tensor, converting it to NumPy or to
    a Python number, a CPU DLPack export, or :func:`vkflow.synchronize`).
    Prepared ops are cached, so a repeated call costs a bind and a submit.
    A call with an input from another framework (a NumPy array, a PyTorch
    CPU tensor: memory that framework may write again) waits for the op
    before it returns, so the op reads the values the array had at the call.

    ``out``: None (the op allocates its one output), a Tensor, or a
    tuple/list of Tensors and Nones (None: allocated). Attributes:
    ``axis``/``axes`` (int or tuple), ``keepdims``, ``perm``, ``dtype``,
    ``min``, ``max``, ``push`` (a registered kernel's push constants: bytes,
    NumPy values, Python floats as float32 and ints as int32, or a tuple of
    them) and ``groups`` (its workgroups). Returns the output Tensor, or a
    tuple of them when ``out`` is a tuple or list.
    """
    if out is None and device is None and not attrs and inputs:
        # The common eager call: vkflow tensors of one device, one output.
        mgr = getattr(inputs[0], "_manager", None)
        for x in inputs:
            if type(x) is not Tensor or x._manager is not mgr:
                break
        else:
            return _run_plain(name, mgr, inputs)
    mgr = _device_of(inputs, device)
    return _run(name, mgr, _convert(inputs, mgr), _foreign(inputs), out, attrs)


_encoded = {}


def _run_plain(name, mgr, ins):
    """_run for Tensors (not views) of mgr, no attributes, one new output."""
    key = _encoded.get(name)
    if key is None:
        key = _encoded[name] = str(name).encode()
    in_h = (c_uint64 * len(ins))(*[t._h() for t in ins])
    out_h = c_uint64(0)
    _check(_lib.lib().op_call_async(mgr._h(), key, in_h, len(ins), ctypes.byref(out_h), 1, None))
    return Tensor._wrap(mgr, out_h.value)


def _foreign(inputs):
    """Whether an input is memory of another framework (not a vkflow Tensor,
    not a Python scalar): the call then waits for the op before returning."""
    return builtins.any(not isinstance(x, Tensor) and not _is_scalar(x) for x in inputs)


def _run(name, mgr, ins, foreign, out, attrs):
    """Queues the op name on mgr over the Tensors ins (waits when foreign)."""
    many = isinstance(out, (tuple, list))
    outs = list(out) if many else [out]
    for i, t in enumerate(outs):
        if t is not None and not isinstance(t, Tensor):
            raise TypeError("out[%d] must be a vkflow.Tensor or None, not %s"
                            % (i, type(t).__name__))
        if t is not None and t.device is not mgr:
            raise ValueError("out[%d] is on another device than the inputs" % i)
    # Views: inputs are gathered into contiguous tensors first; outputs are
    # computed into new tensors, then scattered into the views' memory.
    ins = [t.contiguous() if isinstance(t, TensorView) else t for t in ins]
    views = {i: t for i, t in enumerate(outs) if isinstance(t, TensorView)}
    for i in views:
        outs[i] = None
    in_h = (c_uint64 * builtins.max(len(ins), 1))(*[t._h() for t in ins])
    out_h = (c_uint64 * builtins.max(len(outs), 1))(*[0 if t is None else t._h() for t in outs])
    L = _lib.lib()
    js = _attrs_json(attrs)
    if foreign:
        _check(L.op_call(mgr._h(), str(name).encode(), in_h, len(ins), out_h, len(outs), js))
    else:
        _check(L.op_call_async(mgr._h(), str(name).encode(), in_h, len(ins), out_h, len(outs), js))
    res = []
    for i, t in enumerate(outs):
        res.append(t if t is not None else Tensor._wrap(mgr, out_h[i]))
    for i, v in views.items():
        if tuple(res[i].shape) != tuple(v.shape) or res[i].dtype != v.dtype:
            raise ValueError("%s: out[%d] is a %s view of shape %r; the result is %s %r"
                             % (name, i, v.dtype, v.shape, res[i].dtype, res[i].shape))
        _views.assign(v, res[i])
        res[i] = v
    return tuple(res) if many else res[0]


def synchronize(device=None, timeout=None):
    """Waits until every op queued on ``device``'s default stream (None: the
    default device) has completed, up to ``timeout`` seconds (None: no
    limit; TimeoutError past it), and raises the first error of a queued op,
    if any."""
    mgr = device if device is not None else default_device()
    _check(_lib.lib().synchronize(mgr._h(), _ns(timeout)))


def cache_stats(device=None):
    """The eager op counters of ``device`` (None: the default device): a
    dict of prepared-op cache ``hits``, ``misses``, ``evictions`` and
    ``entries``, eager ``submits``, and ``host_waits`` inside eager calls
    (back-pressure on a full queue; reads are not counted)."""
    mgr = device if device is not None else default_device()
    st = (c_uint64 * 6)()
    _check(_lib.lib().op_cache_stats(mgr._h(), ctypes.addressof(st)))
    entries = ctypes.c_int64.from_buffer(st, 3 * 8).value
    return {"hits": st[0], "misses": st[1], "evictions": st[2], "entries": entries,
            "submits": st[4], "host_waits": st[5]}


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


def floor_divide(x1, x2, /, *, out=None):
    """x1 // x2, broadcast, as NumPy's floor_divide (rounds toward -inf;
    integers: x // 0 is 0)."""
    return call("floor_divide", x1, x2, out=out)


def remainder(x1, x2, /, *, out=None):
    """x1 % x2, broadcast, with the sign of x2, as NumPy's remainder
    (integers: x % 0 is 0; floats: x % 0 is nan)."""
    return call("remainder", x1, x2, out=out)


def bitwise_and(x1, x2, /, *, out=None):
    """x1 & x2, broadcast (integers and bool)."""
    return call("bitwise_and", x1, x2, out=out)


def bitwise_or(x1, x2, /, *, out=None):
    """x1 | x2, broadcast (integers and bool)."""
    return call("bitwise_or", x1, x2, out=out)


def bitwise_xor(x1, x2, /, *, out=None):
    """x1 ^ x2, broadcast (integers and bool)."""
    return call("bitwise_xor", x1, x2, out=out)


def bitwise_left_shift(x1, x2, /, *, out=None):
    """x1 << x2, broadcast (integers); a count at or past the width, or
    negative, gives 0, as NumPy's left_shift."""
    return call("bitwise_left_shift", x1, x2, out=out)


def bitwise_right_shift(x1, x2, /, *, out=None):
    """x1 >> x2, broadcast (integers; arithmetic for signed); a count at or
    past the width, or negative, gives 0, or -1 for a negative x1, as
    NumPy's right_shift."""
    return call("bitwise_right_shift", x1, x2, out=out)


def logical_and(x1, x2, /, *, out=None):
    """x1 and x2, broadcast (bool only: cast first)."""
    return call("logical_and", x1, x2, out=out)


def logical_or(x1, x2, /, *, out=None):
    """x1 or x2, broadcast (bool only: cast first)."""
    return call("logical_or", x1, x2, out=out)


def logical_xor(x1, x2, /, *, out=None):
    """x1 xor x2, broadcast (bool only: cast first)."""
    return call("logical_xor", x1, x2, out=out)


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
    return _run("where", mgr, [c, a, b], _foreign([condition, x1, x2]), out, {})


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
bitwise_invert = _unary("bitwise_invert", "~x, element-wise (integers; logical not for bool).")
logical_not = _unary("logical_not", "not x, element-wise (bool only: cast first).")


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


# --- layout ------------------------------------------------------------------------

def strided_copy(x, /, *, shape, src_offset=0, src_strides=None, out=None, dst_offset=0,
                 dst_strides=None):
    """Copies a strided view of ``x`` into ``out`` (a new contiguous tensor of
    ``shape`` when None) or into a strided view of it: element (i0, i1, ...)
    goes from ``x``'s flat element ``src_offset + sum(ik * src_strides[k])``
    to ``out``'s ``dst_offset + sum(ik * dst_strides[k])`` (strides in
    elements, None: row-major contiguous). Indexing and writes through views
    use it; ``x`` and ``out`` must not share memory."""
    attrs = {"shape": [int(d) for d in shape]}
    if src_offset:
        attrs["src_offset"] = int(src_offset)
    if src_strides is not None:
        attrs["src_strides"] = [int(s) for s in src_strides]
    if dst_offset:
        attrs["dst_offset"] = int(dst_offset)
    if dst_strides is not None:
        attrs["dst_strides"] = [int(s) for s in dst_strides]
    return call("strided_copy", x, out=out, **attrs)
