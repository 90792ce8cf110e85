"""The eager op path under :mod:`vkflow.ops`: the kernel registry
(``names``, ``register``, ``unregister``, :class:`CompileError`), converting
an op's inputs to tensors of one device, submitting it to the library, and
the default stream's ``synchronize`` and ``cache_stats``.

Everything here takes tensors that own their memory; :mod:`vkflow.ops` adds
views (gathered before an op, scattered into after it) on top, and
:mod:`vkflow._views` copies through views with :func:`_call`.
"""

import base64
import builtins
import ctypes
import json
import numbers
import re
import threading

from ctypes import c_uint64

from . import _lib
from ._array import asarray, default_device
from ._dtypes import _dtype_name
from ._errors import _check
from ._graph import _push_bytes
from ._handle import _ns
from ._manager import Manager
from ._tensor import Tensor

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
    if not isinstance(x, numbers.Real) and not str(dtype).startswith("complex"):
        raise TypeError("a Python complex %r with a %s array: cast the array to a complex "
                        "dtype first" % (x, dtype))
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
            js["push"] = base64.b64encode(_push_bytes(v)).decode("ascii")
        elif key == "groups":
            g = (tuple(int(x) for x in v) + (1, 1))[:3]
            js["groups"] = list(g)
        else:
            js[key] = v
    return json.dumps(js).encode() if js else None


_encoded = {}


class _PlainState:
    """The out-parameters of _run_plain, reused by one thread: the input
    handle arrays (by count) and the output's description."""

    def __init__(self):
        self.fn = _lib.lib().op_call_new
        self.desc = _lib.TensorDescC()
        self.desc_p = ctypes.byref(self.desc)
        self.arrays = {}


_plain = threading.local()


def _run_plain(name, mgr, ins):
    """_run for Tensors (not views) of mgr, no attributes, one new output:
    one library call (vkflow_op_call_new), which returns the output's
    handle with its dtype and shape."""
    tape = _graph_tape() if _TAPES else None
    if tape is not None:
        return tape._route(name, ins, [None], {})[0]
    key = _encoded.get(name)
    if key is None:
        key = _encoded[name] = str(name).encode()
    st = _plain.__dict__.get("st")
    if st is None:
        st = _plain.st = _PlainState()
    n = len(ins)
    in_h = st.arrays.get(n)
    if in_h is None:
        in_h = st.arrays[n] = (c_uint64 * builtins.max(n, 1))()
    for i, t in enumerate(ins):
        in_h[i] = t._h()
    _check(st.fn(mgr._h(), key, in_h, n, None, st.desc_p))
    res = Tensor._from_desc(mgr, st.desc)
    if _TAPES:
        _record(name, ins, [res], [None], {})
    return res


def _foreign(inputs):
    """Whether an input is memory of another framework (not a vkflow Tensor,
    not a Python scalar): the call then waits for the op before returning."""
    return builtins.any(not isinstance(x, Tensor) and not _is_scalar(x) for x in inputs)


def _outs(out, mgr):
    """An op's ``out`` (None, a Tensor, or a tuple/list of Tensors and
    Nones) as a list, checked: Tensors of mgr."""
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    for i, t in enumerate(outs):
        if t is not None and not isinstance(t, Tensor):
            raise TypeError("out[%d] must be a vkflow.Tensor or None, not %s"
                            % (i, type(t).__name__))
        if t is not None and t.device is not mgr:
            raise ValueError("out[%d] is on another device than the inputs" % i)
    return outs


def _submit(name, mgr, ins, foreign, outs, attrs):
    """Queues the op name on mgr over the Tensors ins into outs (a checked
    list from _outs; None: allocated), waiting when foreign; returns the
    list of outputs."""
    tape = _graph_tape() if _TAPES else None
    if tape is not None:
        return tape._route(name, ins, outs, attrs)
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
    if _TAPES:
        _record(name, ins, res, outs, attrs)
    return res


# --- tapes (vkflow.autograd) ----------------------------------------------------

# The active tapes of this process's threads: a call records itself on its
# thread's innermost tape. The list is empty, and the check one truth test,
# when no tape is active.
_TAPES = []
_tape_local = threading.local()


def _push_tape(tape):
    """Makes tape the thread's innermost tape (vkflow.autograd's and
    GraphTape's ``__enter__``)."""
    stack = getattr(_tape_local, "stack", None)
    if stack is None:
        stack = _tape_local.stack = []
    stack.append(tape)
    _TAPES.append(tape)


def _pop_tape(tape):
    """Undoes _push_tape (``__exit__``)."""
    _tape_local.stack.remove(tape)
    _TAPES.remove(tape)


def _graph_tape():
    """The thread's innermost tape when it records into a graph (a
    vkflow._grad.GraphTape: ops are recorded, not run), else None."""
    stack = getattr(_tape_local, "stack", None)
    if stack and getattr(stack[-1], "_graph_mode", False):
        return stack[-1]
    return None


def _record(name, ins, res, given, attrs):
    stack = getattr(_tape_local, "stack", None)
    if stack:
        stack[-1]._record(name, list(ins), list(res), list(given), dict(attrs))


def _call(name, *inputs, out=None, **attrs):
    """:func:`vkflow.ops.call` for inputs and outputs that are no views."""
    mgr = _device_of(inputs, None)
    ins = _convert(inputs, mgr)
    res = _submit(name, mgr, ins, _foreign(inputs), _outs(out, mgr), attrs)
    return res[0]


def _strided_attrs(shape, src_offset, src_strides, dst_offset, dst_strides):
    """strided_copy's attributes."""
    attrs = {"shape": [int(d) for d in shape]}
    if src_offset:
        attrs["src_offset"] = int(src_offset)
    if src_strides is not None:
        attrs["src_strides"] = [int(s) for s in src_strides]
    if dst_offset:
        attrs["dst_offset"] = int(dst_offset)
    if dst_strides is not None:
        attrs["dst_strides"] = [int(s) for s in dst_strides]
    return attrs


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
