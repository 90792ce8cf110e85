"""NumPy's dispatch protocols on vkflow tensors, against NumPy:
``__array_ufunc__`` (NEP 13: ``np.exp(t)``, ``np.add(a, t, out=o)``,
``np.add.reduce``) and ``__array_function__`` (NEP 18: ``np.concatenate``,
``np.where``, ``np.sum``, ``np.transpose``, ...).

What vkflow can do runs on the device and returns vkflow tensors; the rest
falls back to NumPy on host copies and returns what NumPy returns. Tables
below cover both, with 0-d and empty tensors, ``out=``, scalars, dtypes and
NotImplemented; ``NoHostReads`` proves the device paths never read a
tensor on the host (storage tensors, which the host cannot map, included).
"""

import contextlib
import os
import unittest
from unittest import mock

os.environ.setdefault("VKFLOW_VALIDATION", "1")

import numpy as np  # noqa: E402

import vkflow  # noqa: E402
import vkflow.ops as vo  # noqa: E402
from vkflow._ufuncs import _OPS_NAMES  # noqa: E402
from test_arraylike import ArrayTest, values  # noqa: E402
from test_ops import host  # noqa: E402

AXIS_ERROR = getattr(getattr(np, "exceptions", np), "AxisError")


class HostReadError(AssertionError):
    pass


@contextlib.contextmanager
def no_host_reads():
    """Every way a tensor reaches host memory raises HostReadError."""
    def refuse(*args, **kwargs):
        raise HostReadError("a host read of a vkflow tensor")
    with contextlib.ExitStack() as stack:
        for cls in (vkflow.Tensor, vkflow.TensorView):
            for name in ("__array__", "read", "__dlpack__"):
                if name in vars(cls):
                    stack.enter_context(mock.patch.object(cls, name, refuse))
        stack.enter_context(mock.patch.object(vkflow.Tensor, "_host_copy", refuse))
        yield


class Deferring:
    """An array-like with both protocols that handles everything itself."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return ("deferring", ufunc.__name__)

    def __array_function__(self, func, types, args, kwargs):
        return ("deferring", func.__name__)


class OptOut:
    __array_ufunc__ = None


# (ufunc, dtype, value options): binary ufuncs over tensors, NumPy arrays
# and scalars on either side. "approx" marks results compared with TOL.
BINARY = [
    (np.add, "float32", {}), (np.subtract, "float32", {}), (np.multiply, "float32", {}),
    (np.divide, "float32", {"nonzero": True, "kind": "approx"}),
    (np.floor_divide, "float32", {"nonzero": True}), (np.remainder, "float32", {"nonzero": True}),
    (np.power, "float32", {"positive": True, "kind": "approx"}),
    (np.maximum, "float32", {}), (np.minimum, "float32", {}),
    (np.less, "float32", {}), (np.less_equal, "float32", {}), (np.greater, "float32", {}),
    (np.greater_equal, "float32", {}), (np.equal, "float32", {}), (np.not_equal, "float32", {}),
    (np.add, "int32", {}), (np.subtract, "int32", {}), (np.multiply, "int32", {}),
    (np.floor_divide, "int32", {"nonzero": True}), (np.remainder, "int32", {"nonzero": True}),
    (np.divide, "int32", {"nonzero": True, "kind": "approx"}),
    (np.bitwise_and, "int32", {}), (np.bitwise_or, "int32", {}), (np.bitwise_xor, "int32", {}),
    (np.left_shift, "int32", {"positive": True}), (np.right_shift, "int32", {"positive": True}),
    (np.maximum, "int32", {}), (np.less, "int32", {}),
    (np.logical_and, "bool", {}), (np.logical_or, "bool", {}), (np.logical_xor, "bool", {}),
    (np.add, "bool", {}), (np.multiply, "bool", {}), (np.equal, "bool", {}),
]
UNARY = [
    (np.negative, "float32", {}), (np.positive, "float32", {}), (np.absolute, "float32", {}),
    (np.exp, "float32", {"kind": "approx"}), (np.log, "float32", {"positive": True,
                                                                   "kind": "approx"}),
    (np.sqrt, "float32", {"positive": True, "kind": "approx"}),
    (np.tanh, "float32", {"kind": "approx"}),
    (np.negative, "int32", {}), (np.absolute, "int32", {}), (np.invert, "int32", {}),
    (np.invert, "bool", {}), (np.logical_not, "bool", {}),
]
SHAPES = [((3, 4), (4,)), ((), ()), ((0, 3), (3,)), ((2, 1), (1, 5))]


def operand(shape, dtype, opts):
    x = values(shape, dtype, nonzero=opts.get("nonzero", False),
               positive=opts.get("positive", False))
    if opts.get("positive") and dtype == "int32":
        x = np.asarray(x % x.dtype.type(5))
    return x


class TestUfuncsOnDevice(ArrayTest):

    def test_binary_table(self):
        """np.<ufunc>(a, b) for tensors, NumPy arrays and Python scalars on
        either side: a vkflow Tensor holding NumPy's values."""
        for ufunc, dtype, opts in BINARY:
            kind = opts.get("kind", "exact")
            for sa, sb in SHAPES:
                with self.subTest(ufunc=ufunc.__name__, dtype=dtype, a=sa, b=sb):
                    a, b = operand(sa, dtype, opts), operand(sb, dtype, opts)
                    with np.errstate(all="ignore"):
                        want = ufunc(a, b)
                    self.check(ufunc(self.vk(a), self.vk(b)), want, kind)
                    self.check(ufunc(self.vk(a), b), want, kind)      # NumPy on the right
                    self.check(ufunc(a, self.vk(b)), want, kind)      # and on the left
            with self.subTest(ufunc=ufunc.__name__, dtype=dtype, scalar=True):
                a = operand((2, 3), dtype, opts)
                s = {"float32": 2.0, "int32": 2, "bool": True}[dtype]
                with np.errstate(all="ignore"):
                    self.check(ufunc(self.vk(a), s), ufunc(a, s), kind)
                    self.check(ufunc(s, self.vk(a)), ufunc(s, a), kind)

    def test_unary_table(self):
        for ufunc, dtype, opts in UNARY:
            for shape in ((3, 4), (), (0, 2)):
                with self.subTest(ufunc=ufunc.__name__, dtype=dtype, shape=shape):
                    a = operand(shape, dtype, opts)
                    self.check(ufunc(self.vk(a)), ufunc(a), opts.get("kind", "exact"))

    def test_matmul(self):
        a, b = values((3, 4), "float32"), values((4, 2), "float32")
        self.check(np.matmul(self.vk(a), self.vk(b)), a @ b)
        self.check(np.matmul(a, self.vk(b)), a @ b)
        self.check(a @ self.vk(b), a @ b)

    def test_numpy_operators_on_the_left(self):
        """ndarray OP tensor goes through __array_ufunc__: a vkflow Tensor,
        as before (when __array_priority__ did it)."""
        a, b = values((2, 3), "float32", nonzero=True), values((3,), "float32", nonzero=True)
        self.check(a + self.vk(b), a + b)
        self.check(a / self.vk(b), a / b, "approx")
        self.check(a < self.vk(b), a < b)
        self.check(np.float32(2) * self.vk(b), np.float32(2) * b)
        # In place into the ndarray: NumPy's own out, on the host.
        c = a.copy()
        c += self.vk(b)
        self.assertIs(type(c), np.ndarray)
        np.testing.assert_array_equal(c, a + b)

    def test_out(self):
        a, b = values((2, 3), "float32"), values((3,), "float32")
        t = self.vk(a)
        o = self.mgr.tensor((2, 3), dtype="float32")
        self.assertIs(np.add(t, b, out=o), o)
        self.check(o, a + b)
        self.assertIs(np.multiply(t, 2.0, out=(o,)), o)
        self.check(o, a * 2)
        handle, u = t.handle, self.vk(b)
        submits = vo.cache_stats(self.mgr)["submits"]
        self.assertIs(np.add(t, u, out=t), t)                   # in place: one op
        self.assertIs(np.exp(t, out=t), t)                      # straight into out: one op
        self.assertEqual(vo.cache_stats(self.mgr)["submits"] - submits, 2)
        self.assertEqual(t.handle, handle)
        self.check(t, np.exp(a + b), "approx")
        o64 = self.mgr.tensor((2, 3), dtype="float64")           # float32 -> float64: safe
        np.subtract(b, self.vk(a), out=o64)
        self.check(o64, (b - a).astype(np.float64))
        wide = self.mgr.tensor((4, 3), dtype="float32")          # the result broadcast into out
        np.add(self.vk(b), 1.0, out=wide)
        self.check(wide, np.broadcast_to(b + 1, (4, 3)))
        w = self.vk(np.zeros((3, 5), np.float32))               # out is a view
        np.negative(self.vk(a), out=w[1:, ::2])
        want = np.zeros((3, 5), np.float32)
        want[1:, ::2] = -a
        self.check(w, want)
        # NumPy's errors: a lossy output cast, an output of another shape.
        i = self.vk(values((3,), "int32", nonzero=True))
        with self.assertRaisesRegex(TypeError, "same_kind"):
            np.divide(i, i, out=i)
        with self.assertRaisesRegex(TypeError, "same_kind"):
            np.add(self.vk(b), self.vk(b), out=self.mgr.tensor((3,), dtype="int32"))
        with self.assertRaisesRegex(ValueError, "broadcast"):
            np.add(self.vk(a), 1.0, out=self.mgr.tensor((3,), dtype="float32"))

    def test_dtype_keyword(self):
        i = values((2, 3), "int32", positive=True)
        self.check(np.add(self.vk(i), self.vk(i), dtype="float32"),
                   np.add(i, i, dtype="float32"))
        self.check(np.sqrt(self.vk(i), dtype=np.float32), np.sqrt(i, dtype=np.float32),
                   "approx")
        with self.assertRaisesRegex(TypeError, "same_kind"):
            np.add(self.vk(np.float32([1.5])), 1.0, dtype="int32")

    def test_reduce(self):
        a = values((3, 4), "float32")
        for ufunc in (np.add, np.multiply, np.maximum, np.minimum):
            for kw in ({}, {"axis": 1}, {"axis": None}, {"axis": 0, "keepdims": True}):
                with self.subTest(ufunc=ufunc.__name__, **kw):
                    self.check(ufunc.reduce(self.vk(a), **kw), ufunc.reduce(a, **kw), "approx")
        o = self.mgr.tensor((4,), dtype="float32")
        self.assertIs(np.add.reduce(self.vk(a), out=o), o)
        self.check(o, a.sum(axis=0))

    def test_python_lists_take_the_tensors_dtype(self):
        a = values((2, 3), "float32")
        self.check(np.maximum(self.vk(a), [0, 1, 2]), np.maximum(a, np.float32([0, 1, 2])))
        self.check(np.add([0, 1, 2], self.vk(a)), np.add(np.float32([0, 1, 2]), a))
        with self.assertRaisesRegex(TypeError, "float"):
            np.maximum(self.vk(np.int32([1, 2])), [0.5, 1.5])

    def test_no_promotion(self):
        """vkflow's dtype rules hold: dtypes without a promotion (integers
        with floats) and dtypes an op lacks are TypeErrors, as for the
        operators."""
        f = self.vk(np.float32([1, 2]))
        with self.assertRaisesRegex(TypeError, "dtype"):
            np.add(f, np.int64([1, 2]))
        self.assertEqual(np.add(f, np.float64([1, 2])).dtype, "float64")   # promoted
        with self.assertRaisesRegex(TypeError, "dtype"):
            np.maximum(f, self.vk(np.int32([1, 2])))
        with self.assertRaisesRegex(TypeError, "int32"):
            np.exp(self.vk(np.int32([1, 2])))


# Ufuncs that vkflow.ops may gain (another change adds math ops): the
# device when vkflow.ops has the name, else NumPy on the host.
MAYBE = [np.sin, np.cos, np.floor, np.isnan, np.arctan2, np.hypot, np.fmod, np.sign]


class TestUfuncFallback(ArrayTest):

    def test_ufuncs_vkflow_lacks(self):
        a, b = values((2, 3), "float32", nonzero=True), values((3,), "float32", nonzero=True)
        for ufunc in MAYBE:
            with self.subTest(ufunc=ufunc.__name__):
                args = (a, b)[:ufunc.nin]
                got = ufunc(*[self.vk(x) for x in args])
                want = ufunc(*args)
                if hasattr(vo, _OPS_NAMES.get(ufunc.__name__, ufunc.__name__)):
                    self.check(got, want, "approx")
                else:
                    self.assertIs(type(got), np.ndarray)
                    np.testing.assert_allclose(got, want, rtol=1e-6)

    def test_methods_and_keywords_vkflow_lacks(self):
        a = values((2, 3), "float32", nonzero=True)
        t = self.vk(a)
        cases = [
            (lambda x: np.add.accumulate(x, axis=1), np.ndarray),
            (lambda x: np.multiply.outer(x, x), np.ndarray),
            (lambda x: np.add.reduceat(x.reshape(-1), [0, 2]), np.ndarray),
            (lambda x: np.add.reduce(x, initial=1.0), np.ndarray),
            (lambda x: np.add(x, 1.0, where=np.asarray(a) > 0, out=np.zeros_like(a)),
             np.ndarray),
            (lambda x: np.divmod(x, 2.0), tuple),
            (lambda x: np.modf(x), tuple),
        ]
        for i, (f, kind) in enumerate(cases):
            with self.subTest(case=i):
                got = f(t)
                self.assertIs(type(got), kind)
                want = f(a)
                if kind is tuple:
                    for g, w in zip(got, want):
                        self.assertIs(type(g), np.ndarray)
                        np.testing.assert_array_equal(g, w)
                else:
                    np.testing.assert_array_equal(got, want)

    def test_fallback_into_tensor_out(self):
        a = values((2, 3), "float32")
        o = self.mgr.tensor((2, 3), dtype="float32")
        self.assertIs(np.add.accumulate(self.vk(a), axis=1, out=o), o)
        self.check(o, np.add.accumulate(a, axis=1))

    def test_at_writes_the_tensor(self):
        t = self.vk(np.zeros(4, np.float32))
        np.add.at(t, [0, 0, 2], 1.0)
        self.check(t, np.float32([2, 0, 1, 0]))

    def test_not_implemented(self):
        t = self.vk(np.float32([1, 2]))
        self.assertIs(t.__array_ufunc__(np.add, "__call__", t, Deferring()), NotImplemented)
        self.assertEqual(np.add(t, Deferring()), ("deferring", "add"))
        self.assertEqual(np.exp(Deferring()), ("deferring", "exp"))
        with self.assertRaises(TypeError):
            np.add(t, OptOut())


class TestFunctionsOnDevice(ArrayTest):

    def check_same(self, f, args, kind="exact", view=False):
        """f(*tensors) is a vkflow Tensor holding f(*arrays)."""
        got = f(*[self.vk(a) for a in args])
        self.check(got, f(*args), kind)
        if view:
            self.assertIsInstance(got, vkflow.TensorView)
        return got

    def test_table(self):
        a = values((2, 3), "float32")
        b = values((2, 3), "float32")
        c = values((3,), "float32")
        i = values((2, 3), "int32")
        m = values((2, 3), "bool")
        e = np.zeros((0, 3), np.float32)
        table = [
            ("concatenate", lambda x, y: np.concatenate([x, y]), (a, b)),
            ("concatenate axis 1", lambda x, y: np.concatenate((x, y, x), axis=1), (a, b)),
            ("concatenate axis -1", lambda x, y: np.concatenate([x, y], axis=-1), (a, b)),
            ("concatenate None", lambda x, y: np.concatenate([x, y], axis=None), (a, c)),
            ("concatenate empty", lambda x, y: np.concatenate([x, y]), (e, a)),
            ("stack", lambda x, y: np.stack([x, y]), (a, b)),
            ("stack -1", lambda x, y: np.stack([x, y], axis=-1), (a, b)),
            ("vstack", lambda x, y: np.vstack([x, y]), (a, c)),
            ("hstack", lambda x, y: np.hstack([x, y]), (c, c)),
            ("where", lambda m_, x, y: np.where(m_, x, y), (m, a, b)),
            ("where int cond", lambda c_, x: np.where(c_, x, 0.0), (i, a)),
            ("where broadcast", lambda m_, x: np.where(m_, x, x[0]), (m, a)),
            ("sum", lambda x: np.sum(x), (a,)),
            ("sum axis", lambda x: np.sum(x, axis=1, keepdims=True), (a,)),
            ("sum int", lambda x: np.sum(x, axis=0), (i,)),
            ("sum bool", lambda x: np.sum(x), (m,)),
            ("prod", lambda x: np.prod(x, axis=0), (a,)),
            ("mean", lambda x: np.mean(x, axis=0), (a,)),
            ("mean int", lambda x: np.mean(x), (i,)),
            ("max", lambda x: np.max(x, axis=1), (a,)),
            ("amin", lambda x: np.amin(x), (a,)),
            ("argmax", lambda x: np.argmax(x, axis=1), (a,)),
            ("dot", lambda x, y: np.dot(x, y), (a, b.T.copy())),
            ("dot 1-d", lambda x, y: np.dot(x, y), (c, c)),
            ("dot matrix vector", lambda x, y: np.dot(x, y), (a, c)),
            ("clip", lambda x: np.clip(x, -1.0, 1.5), (a,)),
            ("copy", lambda x: np.copy(x), (a,)),
            ("zeros_like", lambda x: np.zeros_like(x), (a,)),
            ("ones_like", lambda x: np.ones_like(x, dtype="int32"), (a,)),
            ("full_like", lambda x: np.full_like(x, 7.5), (a,)),
        ]
        for name, f, args in table:
            with self.subTest(name):
                self.check_same(f, args, "approx")
        views = [
            ("reshape", lambda x: np.reshape(x, (3, 2)), (a,)),
            ("reshape -1", lambda x: np.reshape(x, -1), (a,)),
            ("ravel", lambda x: np.ravel(x), (a,)),
            ("transpose", lambda x: np.transpose(x), (a,)),
            ("transpose axes", lambda x: np.transpose(x, (1, 2, 0)), (values((2, 3, 4),
                                                                           "int32"),)),
            ("swapaxes", lambda x: np.swapaxes(x, 0, -1), (a,)),
            ("moveaxis", lambda x: np.moveaxis(x, 0, -1), (values((2, 3, 4), "float32"),)),
            ("squeeze", lambda x: np.squeeze(x), (values((1, 3, 1), "float32"),)),
            ("squeeze axis", lambda x: np.squeeze(x, axis=0), (values((1, 3, 1), "float32"),)),
            ("expand_dims", lambda x: np.expand_dims(x, (0, -1)), (a,)),
        ]
        for name, f, args in views:
            with self.subTest(name):
                self.check_same(f, args, view=True)

    def test_metadata_without_reads(self):
        t = self.mgr.tensor((2, 0, 3), dtype="int16", memory="storage")
        with no_host_reads():
            self.assertEqual(np.shape(t), (2, 0, 3))
            self.assertEqual(np.ndim(t), 3)
            self.assertEqual(np.size(t), 0)
            self.assertEqual(np.size(t, 2), 3)
            self.assertEqual(np.result_type(t, np.float32), np.float32)
            self.assertEqual(np.result_type(t), np.int16)

    def test_out_and_copyto(self):
        a, b = values((2, 3), "float32"), values((2, 3), "float32")
        o = self.mgr.tensor((4, 3), dtype="float32")
        self.assertIs(np.concatenate([self.vk(a), b], out=o), o)
        self.check(o, np.concatenate([a, b]))
        s = self.mgr.tensor((3,), dtype="float32")
        self.assertIs(np.sum(self.vk(a), axis=0, out=s), s)
        self.check(s, a.sum(axis=0), "approx")
        d = self.vk(np.zeros((2, 3), np.float32))
        self.assertIsNone(np.copyto(d, self.vk(b)))
        self.check(d, b)
        np.copyto(d, 1.5)
        self.check(d, np.full((2, 3), 1.5, np.float32))
        with self.assertRaisesRegex(TypeError, "same_kind"):
            np.copyto(self.vk(np.zeros(3, np.int32)), self.vk(b[0]))

    def test_errors(self):
        a = self.vk(values((2, 3), "float32"))
        with self.assertRaisesRegex(TypeError, "dtype"):
            np.concatenate([a, self.vk(values((2, 3), "int32"))])
        with self.assertRaisesRegex(ValueError, "dimension"):
            np.concatenate([a, self.vk(values((2, 4), "float32"))])
        with self.assertRaisesRegex(ValueError, "zero-dimensional"):
            np.concatenate([self.vk(np.float32(1)), self.vk(np.float32(2))])
        with self.assertRaises(AXIS_ERROR):
            np.concatenate([a, a], axis=2)
        with self.assertRaisesRegex(ValueError, "same shape"):
            np.stack([a, self.vk(values((3, 2), "float32"))])
        with self.assertRaisesRegex(ValueError, "axes"):
            np.transpose(a, (0, 0))
        with self.assertRaisesRegex(ValueError, "size not equal to one"):
            np.squeeze(a, axis=0)

    def test_fallback(self):
        """What vkflow lacks: NumPy on host copies, NumPy's results."""
        a = values((2, 3), "float32")
        t = self.vk(a)
        cases = [
            lambda x: np.sort(x, axis=1), lambda x: np.cumsum(x), lambda x: np.median(x),
            lambda x: np.argmin(x), lambda x: np.unique(x), lambda x: np.round(x, 1),
            lambda x: np.where(np.asarray(a) > 0),               # nonzero: a tuple
            lambda x: np.einsum("ij->j", x), lambda x: np.linalg.norm(x),
            lambda x: np.allclose(x, a), lambda x: np.array_equal(x, a),
            lambda x: np.isclose(x, a), lambda x: np.tile(x, 2),
            lambda x: np.sum(x, where=np.asarray(a) > 0),       # a keyword vkflow lacks
            lambda x: np.reshape(x, (3, 2), order="F"),
        ]
        for i, f in enumerate(cases):
            with self.subTest(case=i):
                got, want = f(t), f(a)
                self.assertNotIsInstance(got, vkflow.Tensor)
                self.assertEqual(type(got), type(want))
                np.testing.assert_array_equal(got, want)

    def test_fallback_arrays_are_read_only(self):
        """A NumPy function that writes its argument cannot write a host
        copy of a tensor silently."""
        for t in (self.vk(np.zeros((3, 3), np.float32)),          # mapped: a zero-copy view
                  self.mgr.tensor((3, 3), dtype="float32", memory="storage")):  # a copy
            with self.subTest(memory=t.memory):
                with self.assertRaisesRegex(ValueError, "read-only"):
                    np.fill_diagonal(t, 1.0)

    def test_not_implemented(self):
        t = self.vk(np.float32([1, 2]))
        self.assertIs(t.__array_function__(np.concatenate, (vkflow.Tensor, Deferring),
                                           ([t, Deferring()],), {}), NotImplemented)
        self.assertEqual(np.concatenate([t, Deferring()]), ("deferring", "concatenate"))

    def test_asarray_is_the_conversion(self):
        t = self.vk(np.float32([1, 2]))
        self.assertIs(type(np.asarray(t)), np.ndarray)
        self.assertIs(type(np.array(t)), np.ndarray)


class TestNoHostReads(ArrayTest):
    """The device paths read nothing on the host: storage tensors, which the
    host cannot map, with every host read made to fail."""

    def storage(self, data):
        data = np.asarray(data)
        t = self.mgr.tensor(data.shape, dtype=data.dtype.name, memory="storage")
        t[...] = data
        return t

    def test_the_guard_catches_reads(self):
        """The guard itself: a fallback, and np.asarray, do read."""
        t = self.storage(values((2, 3), "float32"))
        self.assertFalse(t.mapped)
        with no_host_reads():
            with self.assertRaises(HostReadError):
                np.asarray(t)
            with self.assertRaises(HostReadError):
                np.add.accumulate(t)
            with self.assertRaises(HostReadError):
                np.sort(t)

    def test_device_paths(self):
        a, b = values((2, 3), "float32", positive=True), values((3,), "float32", positive=True)
        m = values((2, 3), "bool")
        t, u, k = self.storage(a), self.storage(b), self.storage(m)
        o = self.storage(np.zeros((2, 3), np.float32))
        calls = [
            ("add", lambda: np.add(t, u), a + b),
            ("ndarray + tensor", lambda: b + t, b + a),
            ("exp", lambda: np.exp(t), np.exp(a)),
            ("sqrt out", lambda: np.sqrt(t, out=o), np.sqrt(a)),
            ("divide out broadcast", lambda: np.divide(u, 2.0, out=o), np.broadcast_to(b / 2,
                                                                                      (2, 3))),
            ("add.reduce", lambda: np.add.reduce(t, axis=1), a.sum(axis=1)),
            ("concatenate", lambda: np.concatenate([t, t], axis=1), np.concatenate([a, a], 1)),
            ("stack", lambda: np.stack([u, u]), np.stack([b, b])),
            ("where", lambda: np.where(k, t, u), np.where(m, a, b)),
            ("sum", lambda: np.sum(t, axis=0), a.sum(axis=0)),
            ("mean", lambda: np.mean(t), a.mean()),
            ("transpose", lambda: np.transpose(t) * 1.0, a.T),
            ("reshape", lambda: np.reshape(t, (3, 2)) + 0.0, a.reshape(3, 2)),
            ("matmul", lambda: np.matmul(t, t.T), a @ a.T),
            ("dot", lambda: np.dot(u, u), b @ b),
            ("zeros_like", lambda: np.zeros_like(t), np.zeros_like(a)),
        ]
        for name, f, want in calls:
            with self.subTest(name):
                with no_host_reads():
                    got = f()
                self.assertIsInstance(got, vkflow.Tensor)
                self.assertEqual(got.shape, np.shape(want))
                np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5)


if __name__ == "__main__":
    unittest.main()
