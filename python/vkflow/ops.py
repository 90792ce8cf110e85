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
logical_or logical_xor logical_not`` (bool only), the classifications ``isnan
isinf isfinite signbit`` (bool results), ``sign``, the roundings ``floor ceil
trunc round``, the float functions ``reciprocal expm1 log1p log2 log10 sinh
cosh asinh acosh atanh hypot copysign logaddexp nextafter``, the trigonometric ``sin cos tan asin
acos atan atan2``, ``square``, the complex ``real imag conj``, the comparisons ``equal not_equal less
less_equal greater greater_equal`` (bool results), ``where``, the unary ``abs
neg exp log sqrt tanh sigmoid relu`` (``negative``), ``clip``, ``cast`` and
``astype``, the reductions ``sum mean max min prod all any argmax`` (``axis``,
``keepdims``), ``matmul``, ``softmax`` (``axis``), ``transpose`` and
``permute_dims``, the stable ``sort`` and ``argsort`` (``axis``,
``descending``) and ``searchsorted`` (``side``, ``sorter``). :func:`names` lists the ops the library has.

Every other op of the library (the manipulation, scan, indexing, set and linalg ops) is a
function of this module too, ``f(*inputs, out=None, **attrs)``, the same as :func:`call` with its
name (a tuple for ops with several outputs).

Registry: :func:`register` adds a GLSL (compiled now; an error carries the
compiler's message and line) or SPIR-V kernel by name, :func:`call` runs any
op by name with keyword attributes, :func:`unregister` removes a kernel.
"""

import math as _math

from . import _views
# The registry, synchronize and cache_stats are vkflow.ops names too.
from ._dispatch import (CompileError, cache_stats, names, register, synchronize,  # noqa: F401
                        unregister)
from ._dispatch import (_convert, _device_of, _foreign, _one, _outs, _run_plain, _strided_attrs,
                        _submit)
from ._dtypes import _dtype_name
from ._grad import gradient_info, register_vjp, schema, vjp  # noqa: F401
from ._tensor import Tensor
from ._views import TensorView

__all__ = [
    "names", "register", "unregister", "call", "cache_stats", "synchronize", "CompileError",
    "add", "sub", "subtract", "mul", "multiply", "div", "divide", "pow", "minimum", "maximum",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "where",
    "abs", "neg", "negative", "exp", "log", "sqrt", "tanh", "sigmoid", "relu", "clip",
    "floor_divide", "remainder", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_invert",
    "bitwise_left_shift", "bitwise_right_shift", "logical_and", "logical_or", "logical_xor",
    "logical_not", "isnan", "isinf", "isfinite", "signbit", "sign", "floor", "ceil", "trunc",
    "round", "reciprocal", "expm1", "log1p", "log2", "log10", "sinh", "cosh", "asinh", "acosh",
    "atanh", "hypot", "copysign", "logaddexp", "nextafter", "sin", "cos", "tan", "asin", "acos",
    "atan", "atan2", "all", "any", "square", "real", "imag", "conj",
    "cast", "astype", "sum", "mean", "max", "min", "prod", "argmax", "matmul", "softmax",
    "transpose", "permute_dims", "strided_copy",
    "sort", "argsort", "searchsorted", "vjp", "gradient_info", "register_vjp", "schema",
]


# --- calls ----------------------------------------------------------------------

def call(name, *inputs, out=None, device=None, **attrs):
    """Queues the op called ``name`` on ``inputs`` and returns its outputs.

    The op runs on the device's default stream, in call order, CUDA-stream
    style: the call returns once the op is submitted, and the host waits only
    where data must reach it (reading a tensor, converting it to NumPy or to
    a Python number, a CPU DLPack export, or :func:`vkflow.synchronize`).
    Prepared ops are cached with their recorded command buffers, so a repeated
    call costs a submit (and a rebind when its buffers are new to the op).
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


def _call2(name, x1, x2, out):
    """call(name, x1, x2, out=out), with the common eager case (two
    Tensors of one device, a new output) first: one library call."""
    if out is None and type(x1) is Tensor and type(x2) is Tensor:
        mgr = x1._manager
        if x2._manager is mgr:
            return _run_plain(name, mgr, (x1, x2))
    return call(name, x1, x2, out=out)


def _call1(name, x, out):
    """call(name, x, out=out), with a Tensor and a new output first."""
    if out is None and type(x) is Tensor:
        return _run_plain(name, x._manager, (x,))
    return call(name, x, out=out)


def _run(name, mgr, ins, foreign, out, attrs):
    """Queues the op name on mgr over the Tensors ins (waits when foreign)."""
    many = isinstance(out, (tuple, list))
    outs = _outs(out, mgr)
    # Views: inputs are gathered into contiguous tensors first; outputs are
    # computed into new tensors, then scattered into the views' memory.
    ins = [t.contiguous() if isinstance(t, TensorView) else t for t in ins]
    views = {i: t for i, t in enumerate(outs) if isinstance(t, TensorView)}
    for i in views:
        outs[i] = None
    res = _submit(name, mgr, ins, foreign, outs, attrs)
    for i, v in views.items():
        if tuple(res[i].shape) != tuple(v.shape) or res[i].dtype != v.dtype:
            raise ValueError("%s: out[%d] is a %s view of shape %r; the result is %s %r"
                             % (name, i, v.dtype, v.shape, res[i].dtype, res[i].shape))
        _views.assign(v, res[i])
        res[i] = v
    return tuple(res) if many else res[0]


# --- element-wise -----------------------------------------------------------------

def add(x1, x2, /, *, out=None):
    """x1 + x2, broadcast."""
    return _call2("add", x1, x2, out)


def sub(x1, x2, /, *, out=None):
    """x1 - x2, broadcast."""
    return _call2("sub", x1, x2, out)


def mul(x1, x2, /, *, out=None):
    """x1 * x2, broadcast."""
    return _call2("mul", x1, x2, out)


def div(x1, x2, /, *, out=None):
    """x1 / x2, broadcast (integers: as the library defines integer division)."""
    return _call2("div", x1, x2, out)


def pow(x1, x2, /, *, out=None):
    """x1 ** x2, broadcast."""
    return _call2("pow", x1, x2, out)


def minimum(x1, x2, /, *, out=None):
    """Element-wise minimum, broadcast."""
    return _call2("minimum", x1, x2, out)


def maximum(x1, x2, /, *, out=None):
    """Element-wise maximum, broadcast."""
    return _call2("maximum", x1, x2, out)


subtract, multiply, divide = sub, mul, div


def floor_divide(x1, x2, /, *, out=None):
    """x1 // x2, broadcast, as NumPy's floor_divide (rounds toward -inf;
    integers: x // 0 is 0)."""
    return _call2("floor_divide", x1, x2, out)


def remainder(x1, x2, /, *, out=None):
    """x1 % x2, broadcast, with the sign of x2, as NumPy's remainder
    (integers: x % 0 is 0; floats: x % 0 is nan)."""
    return _call2("remainder", x1, x2, out)


def bitwise_and(x1, x2, /, *, out=None):
    """x1 & x2, broadcast (integers and bool)."""
    return _call2("bitwise_and", x1, x2, out)


def bitwise_or(x1, x2, /, *, out=None):
    """x1 | x2, broadcast (integers and bool)."""
    return _call2("bitwise_or", x1, x2, out)


def bitwise_xor(x1, x2, /, *, out=None):
    """x1 ^ x2, broadcast (integers and bool)."""
    return _call2("bitwise_xor", x1, x2, out)


def bitwise_left_shift(x1, x2, /, *, out=None):
    """x1 << x2, broadcast (integers); a count at or past the width, or
    negative, gives 0, as NumPy's left_shift."""
    return _call2("bitwise_left_shift", x1, x2, out)


def bitwise_right_shift(x1, x2, /, *, out=None):
    """x1 >> x2, broadcast (integers; arithmetic for signed); a count at or
    past the width, or negative, gives 0, or -1 for a negative x1, as
    NumPy's right_shift."""
    return _call2("bitwise_right_shift", x1, x2, out)


def logical_and(x1, x2, /, *, out=None):
    """x1 and x2, broadcast (bool only: cast first)."""
    return _call2("logical_and", x1, x2, out)


def logical_or(x1, x2, /, *, out=None):
    """x1 or x2, broadcast (bool only: cast first)."""
    return _call2("logical_or", x1, x2, out)


def logical_xor(x1, x2, /, *, out=None):
    """x1 xor x2, broadcast (bool only: cast first)."""
    return _call2("logical_xor", x1, x2, out)


def _binary(name, doc):
    def f(x1, x2, /, *, out=None):
        return _call2(name, x1, x2, out)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return f


def _comparison(name):
    def f(x1, x2, /, *, out=None):
        return _call2(name, x1, x2, out)
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
        return _call1(name, x, out)
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
isnan = _unary("isnan", "x is NaN, element-wise, as bool (integers: False).")
isinf = _unary("isinf", "x is +inf or -inf, element-wise, as bool (integers: False).")
isfinite = _unary("isfinite", "x is neither NaN nor infinite, element-wise, as bool.")
signbit = _unary("signbit", "x's sign bit is set (-0.0 included), element-wise, as bool.")
sign = _unary("sign", "-1, 0 or 1 by x's sign (NaN stays NaN), element-wise.")
floor = _unary("floor", "x rounded toward -inf, element-wise (integers unchanged).")
ceil = _unary("ceil", "x rounded toward +inf, element-wise (integers unchanged).")
trunc = _unary("trunc", "x rounded toward 0, element-wise (integers unchanged).")
round = _unary("round", "x rounded to the nearest integer, ties to even (integers unchanged).")
reciprocal = _unary("reciprocal", "1 / x, element-wise (floats).")
expm1 = _unary("expm1", "e**x - 1, element-wise, accurate near 0 (floats).")
log1p = _unary("log1p", "log(1 + x), element-wise, accurate near 0 (floats).")
log2 = _unary("log2", "Base-2 logarithm, element-wise (floats).")
log10 = _unary("log10", "Base-10 logarithm, element-wise (floats).")
sinh = _unary("sinh", "Hyperbolic sine, element-wise (floats).")
cosh = _unary("cosh", "Hyperbolic cosine, element-wise (floats).")
asinh = _unary("asinh", "Inverse hyperbolic sine, element-wise (floats).")
acosh = _unary("acosh", "Inverse hyperbolic cosine, element-wise (floats).")
atanh = _unary("atanh", "Inverse hyperbolic tangent, element-wise (floats).")
hypot = _binary("hypot", "sqrt(x1**2 + x2**2), broadcast, without overflow (floats).")
copysign = _binary("copysign", "|x1| with the sign bit of x2, broadcast (floats).")
logaddexp = _binary("logaddexp", "log(exp(x1) + exp(x2)), broadcast, without overflow (floats).")
nextafter = _binary("nextafter", "The next float after x1 toward x2, broadcast (floats).")
sin = _unary("sin", "Sine (radians), element-wise (floats).")
cos = _unary("cos", "Cosine (radians), element-wise (floats).")
tan = _unary("tan", "Tangent (radians), element-wise (floats).")
asin = _unary("asin", "Inverse sine, in [-pi/2, pi/2], element-wise (floats).")
acos = _unary("acos", "Inverse cosine, in [0, pi], element-wise (floats).")
atan = _unary("atan", "Inverse tangent, in [-pi/2, pi/2], element-wise (floats).")
atan2 = _binary("atan2", "The angle of the point (x2, x1) in [-pi, pi], broadcast (floats).")
square = _unary("square", "x * x, element-wise (complex too).")
real = _unary("real", "The real part, element-wise (complex64: float32; real dtypes: x).")
imag = _unary("imag", "The imaginary part, element-wise (complex64: float32; real dtypes: 0).")
conj = _unary("conj", "The complex conjugate, element-wise (real dtypes: x).")


def clip(x, /, min=None, max=None, *, out=None):
    """x clamped to [min, max] (None: unbounded). Bounds that are arrays
    (tensors, or host arrays of any size, empty ones included) broadcast
    against x, as maximum then minimum on the device; Python numbers are
    the op's attributes; infinite or NaN ones (which the attributes' JSON
    cannot carry) drop out where they bound nothing (min=-inf, max=inf) and
    go through maximum and minimum otherwise."""
    min, max = (None if _no_bound(v, sign) else v for v, sign in ((min, -1), (max, 1)))
    if _array_bound(min) or _array_bound(max) or not (_finite(min) and _finite(max)):
        r = x
        if min is not None:
            r = maximum(r, min, out=out if max is None else None)
        if max is not None:
            r = minimum(r, max, out=out)
        return r
    return call("clip", x, out=out, min=min, max=max)


def _no_bound(v, sign):
    """Whether clip bound v is the infinity of sign (bounds nothing)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v == sign * _math.inf


def _finite(v):
    """Whether clip bound v is None, an array or a finite number."""
    return not isinstance(v, float) or _math.isfinite(v)


def _array_bound(v):
    """Whether a clip bound is an array rather than a number."""
    return isinstance(v, Tensor) or (hasattr(v, "shape") and hasattr(v, "dtype"))


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
all = _reduction("all", "Whether every element is true (nonzero, NaN too; empty: True)")
any = _reduction("any", "Whether some element is true (nonzero, NaN too; empty: False)")


def argmax(x, /, *, axis=None, keepdims=False, out=None):
    """Index of the maximum along axis (None: of the flattened array)."""
    return call("argmax", x, out=out, axis=axis, keepdims=keepdims)


def matmul(x1, x2, /, *, out=None):
    """Matrix product (batched over leading dimensions)."""
    return _call2("matmul", x1, x2, out)


def softmax(x, /, *, axis=-1, out=None):
    """exp(x) / sum(exp(x)) along axis."""
    return call("softmax", x, out=out, axis=axis)


def sort(x, /, *, axis=-1, descending=False, stable=True, out=None):
    """x sorted along axis, stably (equal elements keep their order, also
    descending; ``stable`` is accepted and the sort is always stable); floats:
    -0 equals +0, NaN last in both orders."""
    return call("sort", x, out=out, axis=axis, descending=bool(descending))


def argsort(x, /, *, axis=-1, descending=False, stable=True, out=None):
    """The int64 indices that sort x along axis (stable, as :func:`sort`)."""
    return call("argsort", x, out=out, axis=axis, descending=bool(descending))


def searchsorted(x1, x2, /, *, side="left", sorter=None, out=None):
    """int64 indices where x2's elements go in the sorted 1-d x1 (read
    through ``sorter``, indices that sort x1, when given), in sort's order."""
    ins = (x1, x2) if sorter is None else (x1, x2, sorter)
    return call("searchsorted", *ins, out=out, side=side)


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
    attrs = _strided_attrs(shape, src_offset, src_strides, dst_offset, dst_strides)
    return call("strided_copy", x, out=out, **attrs)


# --- every other op of the library -------------------------------------------------

# Ops with several outputs: the function returns a tuple of them.
_OUTPUTS = {"qr": 2, "slogdet": 2, "eigh": 2, "eig": 2, "svd": 3, "unique_all": 4, "unique_counts": 2,
            "unique_inverse": 2}


def _op_function(name):
    n = _OUTPUTS.get(name, 1)

    def f(*inputs, out=None, **attrs):
        return call(name, *inputs, out=(None,) * n if out is None and n > 1 else out, **attrs)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = ("The library's op %r: call(%r, *inputs, out=out, **attrs) (see call; the op's "
                 "attributes are its Go Attrs fields, docs/OPERATORS.md)." % (name, name))
    return f


def __getattr__(name):
    """Each op of the library without a function above (the manipulation,
    scan, indexing, set and linalg ops: see names()) is a function of this
    module: ``vkflow.ops.concat(a, b, axis=0)`` is ``call("concat", a, b,
    axis=0)``; ops with several outputs return a tuple."""
    if not name.startswith("_") and name in names():
        return _op_function(name)
    raise AttributeError("module 'vkflow.ops' has no attribute %r" % name)


def __dir__():
    return sorted(set(globals()) | set(names()))
