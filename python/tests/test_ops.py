"""vkflow.ops against NumPy: every built-in op on odd sizes, broadcast
shapes, 0-d and empty arrays, NaN/Inf, per-dtype tolerances; matmul; a
PyTorch CPU input; kernels registered from Python (GLSL and SPIR-V).

Tolerances (TOL below): integers and bools bit-exact; float32 a few ULPs
(rtol 4 * 2**-23) for +, -, *, min/max, comparisons, casts and layout, and
rtol 2e-6 (about 16 ULPs) with atol 1e-6 for division, transcendental
functions and softmax (GLSL allows exp/log several ULPs); float16 computes
in float32 and rounds once, so rtol 2e-3 (2 ULPs of float16); float64
rtol 1e-12. Reductions and matmul add atol relative to the sum of
magnitudes (the order of summation differs from NumPy's).

An op the library does not have (vkflow.ops.names()) is skipped with a
reason naming it.
"""

import os
import unittest

os.environ.setdefault("VKFLOW_VALIDATION", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

import vkflow  # noqa: E402
import vkflow.ops as vo  # noqa: E402
from test_dlpack import VkflowTest  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
F32_ULP = 2.0 ** -23

# rtol, atol per dtype: "exact" ops and "approx" ones (division,
# transcendental functions, softmax).
TOL = {
    "float16": {"exact": (2e-3, 0.0), "approx": (2e-3, 1e-3)},
    "float32": {"exact": (4 * F32_ULP, 0.0), "approx": (2e-6, 1e-6)},
    "float64": {"exact": (1e-12, 0.0), "approx": (1e-12, 1e-12)},
}

ODD_SIZES = [1, 3, 1023, 4097]
BROADCAST = [((3, 1, 5), (4, 1)), ((2, 3, 4), (4,)), ((1,), (7,)), ((), (5,)), ((), ()),
             ((6, 1), (1, 6))]
rng = np.random.default_rng(11)


def host(t):
    """A NumPy copy of a vkflow tensor (bool through read(): NumPy 1.24 takes
    no kDLBool)."""
    return t.read() if t.dtype == "bool" else np.array(np.from_dlpack(t))


def data(shape, dtype, low=-4.0, high=4.0, nonzero=False):
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.integers(0, 2, size=shape).astype(bool)
    if dt.kind in "iu":
        lo = 0 if dt.kind == "u" else int(low)
        x = rng.integers(lo, int(high) + 1, size=shape).astype(dt)
        if nonzero:
            x[x == 0] = 1
        return x
    x = rng.uniform(low, high, size=shape).astype(dt)
    if nonzero:
        x[np.abs(x) < 0.25] = 0.5
    return x


class OpsTest(VkflowTest):

    def need(self, *names):
        have = set(vo.names())
        missing = [n for n in names if n not in have]
        if missing:
            self.skipTest("op %s is not in this library (vkflow.ops.names())"
                          % ", ".join(missing))

    def on_mgr(self, x):
        return vkflow.asarray(x, device=self.mgr)

    def assertClose(self, got, want, dtype, kind="exact", atol=0.0):
        got = host(got) if isinstance(got, vkflow.Tensor) else np.asarray(got)
        want = np.asarray(want)
        self.assertEqual(got.shape, want.shape)
        if dtype not in TOL:
            np.testing.assert_array_equal(got, want)
            return
        rtol, a = TOL[dtype][kind]
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol,
                                   atol=max(a, atol), equal_nan=True)


BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "pow": np.power,
    "minimum": np.minimum, "maximum": np.maximum,
}
COMPARE = {
    "equal": np.equal, "not_equal": np.not_equal, "less": np.less, "less_equal": np.less_equal,
    "greater": np.greater, "greater_equal": np.greater_equal,
}
UNARY = {
    "abs": (np.abs, "exact"), "neg": (np.negative, "exact"), "exp": (np.exp, "approx"),
    "log": (np.log, "approx"), "sqrt": (np.sqrt, "approx"), "tanh": (np.tanh, "approx"),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), "approx"),
    "relu": (lambda x: np.maximum(x, 0).astype(x.dtype), "exact"),
}

def floor_divide_api(a, b):
    """NumPy 1.24's floor_divide but where one float operand is infinite:
    there the array API standard's preferred floor(a / b) (NumPy 2's), ±inf
    for ±inf // finite and a signed zero for finite // ±inf (NumPy 1.24:
    NaN and -1)."""
    q = np.floor_divide(a, b)
    if np.asarray(q).dtype.kind != "f":
        return q
    a, b = np.broadcast_arrays(np.asarray(a, q.dtype), np.asarray(b, q.dtype))
    q = np.array(q, copy=True)
    inf_a = np.isinf(a) & np.isfinite(b) & (b != 0)
    q[inf_a] = (a / b)[inf_a]
    inf_b = np.isinf(b) & np.isfinite(a) & (a != 0)
    q[inf_b] = np.copysign(np.zeros_like(q), a * b)[inf_b]
    return q


INTDIV = {"floor_divide": floor_divide_api, "remainder": np.remainder}
BITWISE = {"bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or,
           "bitwise_xor": np.bitwise_xor}
SHIFT = {"bitwise_left_shift": np.left_shift, "bitwise_right_shift": np.right_shift}
LOGICAL = {"logical_and": np.logical_and, "logical_or": np.logical_or,
           "logical_xor": np.logical_xor}
INTEGER = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


class TestElementwise(OpsTest):

    def test_binary_odd_sizes_dtypes(self):
        """Every binary op on float32 at each odd size (the vec4 body and the
        tail), and on the other dtypes at 1023; div takes floats only."""
        for name, ref in BINARY.items():
            self.need(name)
            cases = [("float32", n) for n in ODD_SIZES] + [("float16", 1023)]
            if name != "pow":
                cases += [("int32", 1023), ("float64", 1023)]
            if name in ("add", "mul"):
                cases += [("uint8", 1023), ("int64", 1023), ("int8", 4097)]
            for dtype, n in cases:
                with self.subTest(op=name, dtype=dtype, n=n):
                    a = data((n,), dtype, 0.5 if name == "pow" else -4.0, 4.0)
                    b = data((n,), dtype, -2.0 if name == "pow" else -4.0, 3.0,
                             nonzero=name == "div")
                    if name == "div" and dtype not in TOL:
                        with self.assertRaisesRegex(ValueError, dtype):
                            vo.div(self.on_mgr(a), b)
                        continue
                    got = getattr(vo, name)(self.on_mgr(a), b)
                    self.assertEqual(got.dtype, dtype)
                    with np.errstate(over="ignore"):
                        want = ref(a, b)
                    kind = "approx" if name in ("div", "pow") else "exact"
                    self.assertClose(got, want, dtype, kind)

    def test_broadcast_and_scalars(self):
        self.need("add", "mul", "sub")
        for sa, sb in BROADCAST:
            with self.subTest(a=sa, b=sb):
                a, b = data(sa, "float32"), data(sb, "float32")
                got = vo.add(self.on_mgr(a), b)
                self.assertEqual(got.shape, np.broadcast_shapes(sa, sb))
                self.assertClose(got, a + b, "float32")
                self.assertClose(vo.sub(b, self.on_mgr(a)), b - a, "float32")
        a = data((3, 4), "int32")
        self.assertClose(vo.mul(self.on_mgr(a), 3), a * 3, "int32")
        self.assertClose(vo.sub(2.5, self.on_mgr(a.astype(np.float32))), 2.5 - a, "float32")
        with self.assertRaises(TypeError):
            vo.add(self.on_mgr(a), 1.5)                     # a float into int32
        with self.assertRaises(ValueError):
            vo.add(self.on_mgr(a), data((3, 5), "int32"))   # shapes do not broadcast
        with self.assertRaises(ValueError):
            vo.add(self.on_mgr(a), a.astype(np.float32))    # dtypes differ: cast first

    def test_comparisons(self):
        """Every comparison on float32; less on more dtypes and broadcast
        shapes."""
        cases = [(name, "float32", (1023,), (1023,)) for name in COMPARE]
        cases += [("less", dtype, sa, sb) for dtype in ("int32", "float16", "uint8")
                  for sa, sb in [((4097,), (4097,)), ((3, 1), (1, 4)), ((), (5,))]]
        for name, dtype, sa, sb in cases:
            self.need(name)
            with self.subTest(op=name, dtype=dtype, a=sa, b=sb):
                a, b = data(sa, dtype, -2, 2), data(sb, dtype, -2, 2)
                got = getattr(vo, name)(self.on_mgr(a), b)
                self.assertEqual(got.dtype, "bool")
                np.testing.assert_array_equal(host(got), COMPARE[name](a, b))

    def test_unary(self):
        """Every unary op on float32 (sizes 3 and 4097) and float16 (1023);
        abs, neg and relu on integers."""
        for name, (ref, kind) in UNARY.items():
            self.need(name)
            for dtype, n in (("float32", 3), ("float32", 4097), ("float16", 1023)):
                with self.subTest(op=name, dtype=dtype, n=n):
                    low = 0.01 if name in ("log", "sqrt") else -4.0
                    x = data((n,), dtype, low, 4.0)
                    got = getattr(vo, name)(self.on_mgr(x))
                    self.assertEqual(got.dtype, dtype)
                    self.assertClose(got, ref(x.astype(np.float32)).astype(dtype), dtype, kind)
        for name, dtype in (("abs", "int32"), ("neg", "int64"), ("relu", "int8")):
            self.need(name)
            with self.subTest(op=name, dtype=dtype):
                x = data((257,), dtype, -100, 100)
                np.testing.assert_array_equal(host(getattr(vo, name)(self.on_mgr(x))),
                                              UNARY[name][0](x))

    def test_nan_inf(self):
        x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 3e38], np.float32)
        y = np.array([1.0, np.inf, np.inf, -0.0, np.nan, np.nan, -np.inf, 3e38], np.float32)
        with np.errstate(all="ignore"):
            for name, ref in (("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
                              ("div", np.divide), ("minimum", np.minimum),
                              ("maximum", np.maximum)):
                if name not in vo.names():
                    continue
                with self.subTest(op=name):
                    self.assertClose(getattr(vo, name)(self.on_mgr(x), y), ref(x, y),
                                     "float32")
            for name, ref in COMPARE.items():
                if name in vo.names():
                    with self.subTest(op=name):
                        np.testing.assert_array_equal(
                            host(getattr(vo, name)(self.on_mgr(x), y)), ref(x, y))
            for name, (ref, kind) in UNARY.items():
                if name in vo.names():
                    with self.subTest(op=name):
                        self.assertClose(getattr(vo, name)(self.on_mgr(x)), ref(x), "float32",
                                         kind)
        self.need("add")

    def test_where_clip(self):
        self.need("where", "clip")
        c = data((4, 5), "bool")
        a, b = data((4, 5), "float32"), data((5,), "float32")
        self.assertClose(vo.where(c, self.on_mgr(a), b), np.where(c, a, b), "float32")
        self.assertClose(vo.where(self.on_mgr(c), 0.0, self.on_mgr(a)), np.where(c, 0, a),
                         "float32")
        ai = data((1023,), "int32", -50, 50)
        cases = [(-10, 10), (None, 5), (-3, None)]
        for lo, hi in cases:
            with self.subTest(lo=lo, hi=hi):
                self.assertClose(vo.clip(self.on_mgr(a), lo, hi), np.clip(a, lo, hi), "float32")
                self.assertClose(vo.clip(self.on_mgr(ai), lo, hi), np.clip(ai, lo, hi), "int32")

    def test_cast(self):
        self.need("cast")
        x = np.array([-2.75, -1.5, -0.25, 0.0, 0.5, 1.0, 2.5, 100.9], np.float32)
        cases = [(x, "int32"), (x, "float16"), (x, "float64"), (x, "bool"),
                 (np.arange(-5, 6, dtype=np.int32), "float32"),
                 (np.array([True, False, True]), "float32"),
                 (np.arange(300, dtype=np.int32), "uint8"),
                 (np.float32(3.5), "int64")]
        for arr, dtype in cases:
            with self.subTest(src=arr.dtype.name, dst=dtype, shape=arr.shape):
                got = vo.astype(self.on_mgr(arr), dtype)
                self.assertEqual(got.dtype, dtype)
                with np.errstate(all="ignore"):
                    want = arr.astype(dtype)
                self.assertEqual(got.shape, want.shape)
                np.testing.assert_array_equal(host(got), want)
        t = self.on_mgr(x)
        self.assertIs(vo.astype(t, "float32", copy=False), t)

    def test_empty_and_0d(self):
        """Empty arrays (a zero-length dimension) and 0-d arrays through
        element-wise ops, reductions and matmul, as NumPy gives them."""
        self.need("add")
        try:
            e = vkflow.asarray(np.zeros((0, 3), np.float32), device=self.mgr)
        except ValueError as err:
            self.skipTest("tensor: vkflow tensors cannot have a zero-length dimension yet "
                          "(%s); ops on empty arrays untestable" % err)
        ones = np.ones((3,), np.float32)
        cases = [("add", lambda: vo.add(e, ones), np.zeros((0, 3), np.float32)),
                 ("exp", lambda: vo.exp(e), np.zeros((0, 3), np.float32)),
                 ("less", lambda: vo.less(e, ones), np.zeros((0, 3), bool)),
                 ("sum", lambda: vo.sum(e, axis=0), np.zeros(3, np.float32)),
                 ("prod", lambda: vo.prod(e, axis=0), np.ones(3, np.float32)),
                 ("sum", lambda: vo.sum(e, axis=1), np.zeros(0, np.float32)),
                 ("matmul", lambda: vo.matmul(np.zeros((2, 0), np.float32), e),
                  np.zeros((2, 3), np.float32)),
                 ("exp", lambda: vo.exp(self.on_mgr(np.float32(0.5))), np.exp(np.float32(0.5))),
                 ("sum", lambda: vo.sum(self.on_mgr(np.float32(2.5))), np.float32(2.5)),
                 ("matmul", lambda: vo.matmul(self.on_mgr(np.ones((3, 1), np.float32)),
                                              np.ones((1, 3), np.float32)),
                  np.ones((3, 3), np.float32))]
        have = set(vo.names())
        for name, f, want in cases:
            if name not in have:
                continue
            with self.subTest(op=name, shape=np.shape(want)):
                got = f()
                self.assertEqual(got.shape, np.shape(want))
                self.assertClose(got, want, "float32" if want.dtype != bool else "bool")
        if "max" in have:
            with self.assertRaises(ValueError):  # NumPy: no identity for maximum
                vo.max(e, axis=0)


def same_bits(test, got, want):
    """got equals want exactly: NaN where want is NaN (any NaN), and the
    sign of each zero."""
    got, want = host(got), np.asarray(want)
    test.assertEqual(got.dtype, want.dtype)
    test.assertEqual(got.shape, want.shape)
    np.testing.assert_array_equal(got, want)
    if want.dtype.kind == "f":
        num = ~np.isnan(want)
        np.testing.assert_array_equal(np.signbit(got[num]), np.signbit(want[num]))


class TestIntegerOps(OpsTest):
    """floor_divide, remainder, bitwise, shift and logical ops against NumPy,
    bit for bit (signed zeros included)."""

    def special_pairs(self, dtype):
        dt = np.dtype(dtype)
        if dt.kind == "f":
            fi = np.finfo(dt)
            v = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1, -1, 2.5, -2.5, 7, -7, 0.1, -3,
                 float(fi.max), -float(fi.max), float(fi.smallest_subnormal), 1e-5, 6]
        else:
            ii = np.iinfo(dt)
            v = [ii.min, ii.min + 1, -7, -2, -1, 0, 1, 2, 3, 7, 100, ii.max - 1, ii.max]
            v = [x for x in v if ii.min <= x <= ii.max]
        x = np.array(v, dtype=object).astype(dt) if dt.kind != "f" else np.array(v, dt)
        return np.repeat(x, len(x)), np.tile(x, len(x))

    def test_floor_divide_remainder(self):
        """Every numeric dtype: every pair of special operands (NaN, Inf,
        signed zeros, subnormals, zero divisors, INT_MIN and -1) and random
        ones with zero divisors, odd sizes and broadcasting."""
        for name, ref in INTDIV.items():
            self.need(name)
            for dtype in ["float16", "float32", "float64"] + INTEGER:
                with self.subTest(op=name, dtype=dtype):
                    a, b = self.special_pairs(dtype)
                    with np.errstate(all="ignore"):
                        same_bits(self, getattr(vo, name)(self.on_mgr(a), b), ref(a, b))
                    for sa, sb in [((1023,), (1023,)), ((4097,), (4097,)), ((3, 1, 5), (4, 1)),
                                   ((), (5,)), ((), ())]:
                        a = data(sa, dtype, -50, 50)
                        b = data(sb, dtype, -9, 9)
                        with np.errstate(all="ignore"):
                            want = ref(a, b)
                        same_bits(self, getattr(vo, name)(self.on_mgr(a), b), want)
        a = np.arange(-10, 10, dtype=np.int32)
        same_bits(self, vo.floor_divide(self.on_mgr(a), 3), a // 3)
        same_bits(self, vo.remainder(self.on_mgr(a), -3), a % -3)
        with self.assertRaises(ValueError):
            vo.floor_divide(self.on_mgr(data((3,), "bool")), data((3,), "bool"))

    def test_bitwise(self):
        for name, ref in BITWISE.items():
            self.need(name)
            for dtype in INTEGER + ["bool"]:
                for sa, sb in [((1023,), (1023,)), ((4096,), (4096,)), ((3, 1), (1, 4)),
                               ((), (5,))]:
                    with self.subTest(op=name, dtype=dtype, a=sa, b=sb):
                        a, b = data(sa, dtype, -100, 100), data(sb, dtype, -100, 100)
                        same_bits(self, getattr(vo, name)(self.on_mgr(a), b), ref(a, b))
        self.need("bitwise_invert")
        for dtype in INTEGER + ["bool"]:
            with self.subTest(op="bitwise_invert", dtype=dtype):
                x = data((1023,), dtype, -100, 100)
                same_bits(self, vo.bitwise_invert(self.on_mgr(x)), np.invert(x))
        with self.assertRaisesRegex(ValueError, "float32"):
            vo.bitwise_and(self.on_mgr(data((3,), "float32")), data((3,), "float32"))

    def test_shifts(self):
        """Counts below, at and past the width, and negative."""
        for name, ref in SHIFT.items():
            self.need(name)
            for dtype in INTEGER:
                with self.subTest(op=name, dtype=dtype):
                    dt = np.dtype(dtype)
                    ii, w = np.iinfo(dt), dt.itemsize * 8
                    vals = [v for v in (ii.min, -8, -1, 0, 1, 5, ii.max) if ii.min <= v]
                    counts = [c for c in (0, 1, 3, w - 1, w, w + 1, 2 * w, -1, -w)
                              if ii.min <= c <= ii.max]
                    a = np.repeat(np.array(vals, dtype=object).astype(dt), len(counts))
                    b = np.tile(np.array(counts, dtype=object).astype(dt), len(vals))
                    same_bits(self, getattr(vo, name)(self.on_mgr(a), b), ref(a, b))
                    a = data((4097,), dtype, -1000, 1000)
                    b = data((4097,), dtype, -3, w + 5)
                    same_bits(self, getattr(vo, name)(self.on_mgr(a), b), ref(a, b))
                    same_bits(self, getattr(vo, name)(self.on_mgr(a[:7]), 2), ref(a[:7], dt.type(2)))
        with self.assertRaisesRegex(ValueError, "bool"):
            vo.bitwise_left_shift(self.on_mgr(data((3,), "bool")), data((3,), "bool"))

    def test_logical(self):
        t, f = np.array([True, True, False, False]), np.array([True, False, True, False])
        for name, ref in LOGICAL.items():
            self.need(name)
            with self.subTest(op=name):
                same_bits(self, getattr(vo, name)(self.on_mgr(t), f), ref(t, f))
                a, b = data((3, 1), "bool"), data((1, 4), "bool")
                same_bits(self, getattr(vo, name)(self.on_mgr(a), b), ref(a, b))
                with self.assertRaisesRegex(ValueError, "int32.*cast to bool first"):
                    getattr(vo, name)(self.on_mgr(data((3,), "int32")), data((3,), "int32"))
        self.need("logical_not")
        same_bits(self, vo.logical_not(self.on_mgr(t)), np.logical_not(t))
        with self.assertRaisesRegex(ValueError, "float32.*cast to bool first"):
            vo.logical_not(self.on_mgr(data((3,), "float32")))

    def test_empty(self):
        self.need("floor_divide", "bitwise_and", "logical_not")
        try:
            e = vkflow.asarray(np.zeros((0, 3), np.int32), device=self.mgr)
        except ValueError as err:
            self.skipTest("tensor: vkflow tensors cannot have a zero-length dimension yet (%s)"
                          % err)
        for got in (vo.floor_divide(e, np.ones(3, np.int32)), vo.bitwise_and(e, 7)):
            self.assertEqual(got.shape, (0, 3))
            self.assertEqual(got.dtype, "int32")
        got = vo.logical_not(vkflow.asarray(np.zeros((2, 0), bool), device=self.mgr))
        self.assertEqual((got.shape, got.dtype), ((2, 0), "bool"))


class TestReductions(OpsTest):

    SHAPES = [((1,), None), ((1023,), None), ((4097,), 0), ((3, 5, 7), None), ((3, 5, 7), 0),
              ((3, 5, 7), 1), ((3, 5, 7), -1), ((3, 5, 7), (0, 2)), ((), None)]

    def test_sum_mean_max_min_prod(self):
        """Each reduction on float32 over every shape and axis (keepdims on
        every other case), and on float16 and int32 (not mean) over two."""
        refs = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "prod": np.prod}
        for name, ref in refs.items():
            self.need(name)
            cases = [("float32", shape, axis, i % 2 == 1)
                     for i, (shape, axis) in enumerate(self.SHAPES)]
            for dtype in ("float16", "int32"):
                if name != "mean" or dtype != "int32":
                    cases += [(dtype, (4097,), None, False), (dtype, (3, 5, 7), (0, 2), True)]
            for dtype, shape, axis, keepdims in cases:
                with self.subTest(op=name, dtype=dtype, shape=shape, axis=axis,
                                  keepdims=keepdims):
                    lo, hi = (0.9, 1.1) if name == "prod" else (-4, 4)
                    if name == "prod" and dtype == "int32":
                        lo, hi = -1, 1
                    x = data(shape, dtype, lo, hi)
                    got = getattr(vo, name)(self.on_mgr(x), axis=axis, keepdims=keepdims)
                    exact = x if dtype == "int32" else x.astype(np.float64)
                    want = ref(exact, axis=axis, keepdims=keepdims)
                    # Summation order differs from NumPy's: atol grows with
                    # the magnitudes summed and log2 of their count.
                    n = max(1, x.size // max(1, np.size(want)))
                    scale = np.sum(np.abs(exact)) / max(1, np.size(want))
                    eps = {"float32": 4 * F32_ULP, "float16": 2e-3}.get(dtype, 0)
                    if dtype != "int32":
                        want = want.astype(got.dtype)
                    self.assertClose(got, want, dtype, atol=eps * scale * max(1, np.log2(n)))

    def test_argmax(self):
        self.need("argmax")
        for shape, axis in [((1023,), None), ((3, 5, 7), 1), ((3, 5, 7), -1), ((4097,), 0)]:
            with self.subTest(shape=shape, axis=axis):
                x = rng.permutation(int(np.prod(shape))).reshape(shape).astype(np.float32)
                got = vo.argmax(self.on_mgr(x), axis=axis)
                np.testing.assert_array_equal(host(got), np.argmax(x, axis=axis))

    def test_big_sum(self):
        """16M + 3 elements: many passes."""
        self.need("sum")
        x = np.ones(16 * 1024 * 1024 + 3, np.float32)
        # 2**24 + 3 rounds to 2**24 + 4 in float32; each partial sum is exact.
        self.assertEqual(float(host(vo.sum(self.on_mgr(x)))), float(np.float32(x.size)))
        self.need("max", "argmax")
        x[12_345_677] = 2.0
        self.assertEqual(float(host(vo.max(self.on_mgr(x)))), 2.0)
        self.assertEqual(int(host(vo.argmax(self.on_mgr(x)))), 12_345_677)


class TestLinalg(OpsTest):

    def test_matmul(self):
        self.need("matmul")
        cases = [((33, 47), (47, 29), "float32"), ((1, 1), (1, 1), "float32"),
                 ((64, 64), (64, 64), "float32"), ((4, 17, 19), (4, 19, 5), "float32"),
                 ((31, 40), (40, 9), "float16")]
        for sa, sb, dtype in cases:
            with self.subTest(a=sa, b=sb, dtype=dtype):
                a, b = data(sa, dtype, -1, 1), data(sb, dtype, -1, 1)
                got = vo.matmul(self.on_mgr(a), b)
                want = np.matmul(a.astype(np.float64), b.astype(np.float64))
                mag = np.matmul(np.abs(a.astype(np.float64)), np.abs(b.astype(np.float64)))
                rtol = {"float32": 1e-5, "float16": 1e-2}[dtype]
                got = host(got).astype(np.float64)
                self.assertEqual(got.shape, want.shape)
                self.assertTrue(np.all(np.abs(got - want) <= rtol * mag + 1e-30),
                                "max error %g" % np.max(np.abs(got - want) - rtol * mag))

    def test_matmul_exact_integers_in_float(self):
        self.need("matmul")
        a = data((33, 47), "int32", -4, 4).astype(np.float32)
        b = data((47, 29), "int32", -3, 3).astype(np.float32)
        np.testing.assert_array_equal(host(vo.matmul(self.on_mgr(a), b)), a @ b)

    def test_softmax(self):
        self.need("softmax")
        for shape, axis in [((1023,), -1), ((3, 5, 7), -1), ((3, 5, 7), 0), ((4, 4097), 1)]:
            with self.subTest(shape=shape, axis=axis):
                x = data(shape, "float32", -20, 20)
                x.flat[0] = 1000.0                          # stability: exp overflows
                e = np.exp(x - np.max(x, axis=axis, keepdims=True))
                want = e / np.sum(e, axis=axis, keepdims=True)
                self.assertClose(vo.softmax(self.on_mgr(x), axis=axis), want, "float32",
                                 "approx")

    def test_transpose_permute(self):
        have = set(vo.names())
        if not have & {"permute_dims", "transpose", "permute"}:
            self.skipTest("op permute_dims/transpose is not in this library (vkflow.ops.names())")
        for shape, perm in [((3, 5), None), ((2, 3, 4), (1, 2, 0)), ((1023, 1), None),
                            ((2, 3, 4, 5), (3, 1, 0, 2))]:
            for dtype in ("float32", "int32", "float16"):
                with self.subTest(shape=shape, perm=perm, dtype=dtype):
                    x = data(shape, dtype)
                    got = (vo.transpose(self.on_mgr(x)) if perm is None
                           else vo.permute_dims(self.on_mgr(x), perm))
                    np.testing.assert_array_equal(host(got), np.transpose(x, perm))


class TestExchange(OpsTest):

    def test_torch_input_default_device(self):
        self.need("add", "mul")
        tt = torch.arange(1023, dtype=torch.float32) / 7
        arr = data((1023,), "float32")
        got = vo.add(tt, arr)
        self.assertIs(got.device, vkflow.default_device())
        want = tt.numpy() + arr
        np.testing.assert_allclose(torch.from_dlpack(got).numpy(), want, rtol=4 * F32_ULP)
        np.testing.assert_allclose(np.from_dlpack(vo.mul(got, 2.0)), want * 2, rtol=4 * F32_ULP)

    def test_out_argument(self):
        self.need("add")
        a = self.on_mgr(data((17,), "float32"))
        out = self.mgr.tensor((17,), dtype="float32")
        got = vo.add(a, a, out=out)
        self.assertIs(got, out)
        self.assertClose(out, host(a) * 2, "float32")
        pair = vo.call("add", a, a, out=[None])
        self.assertIsInstance(pair, tuple)
        self.assertClose(pair[0], host(a) * 2, "float32")


SCALE_ADD = """#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) readonly buffer B { float b[]; };
layout(set = 0, binding = 2) writeonly buffer C { float c[]; };
layout(push_constant) uniform P { float s; } p;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < uint(c.length())) c[i] = p.s * a[i] + b[i];
}
"""

BROKEN = """#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) buffer A { float a[]; };
void main() {
    a[0] = no_such_name;
}
"""


class TestRegistry(OpsTest):

    def test_every_builtin_has_a_function(self):
        """Each op the library has is a function of vkflow.ops, and each op
        the Python functions name is in the library (a rename on either side
        fails here)."""
        have = set(vo.names())
        self.assertEqual(sorted(n for n in have if not callable(getattr(vo, n, None))), [])
        wanted = set(BINARY) | set(COMPARE) | set(UNARY) | set(INTDIV) | set(BITWISE) | \
            set(SHIFT) | set(LOGICAL) | {"bitwise_invert", "logical_not"} | {
            "where", "clip", "cast", "sum", "mean", "max", "min", "prod", "argmax", "matmul",
            "softmax"}
        self.assertEqual(sorted(wanted - have), [], "ops vkflow.ops calls but the library lacks")
        self.assertTrue(have & set(vo._PERMUTE), "no permute/transpose op")

    def test_glsl_kernel(self):
        vo.register("pytest.scale_add", glsl=SCALE_ADD, inputs=2)
        try:
            self.assertIn("pytest.scale_add", vo.names())
            with self.assertRaises(ValueError):
                vo.register("pytest.scale_add", glsl=SCALE_ADD, inputs=2)
            a, b = data((1000,), "float32"), data((1000,), "float32")
            out = self.mgr.tensor((1000,), dtype="float32")
            got = vo.call("pytest.scale_add", self.on_mgr(a), b, out=out, push=2.5)
            self.assertIs(got, out)
            self.assertClose(out, np.float32(2.5) * a + b, "float32")
            # Explicit workgroups (16 x 64 invocations cover 1000) and the
            # push constant as NumPy bytes.
            vo.call("pytest.scale_add", self.on_mgr(a), b, out=out, push=np.float32(-1.0),
                    groups=(16,))
            self.assertClose(out, b - a, "float32")
            with self.assertRaises(ValueError):                  # outputs must be given
                vo.call("pytest.scale_add", self.on_mgr(a), b)
        finally:
            vo.unregister("pytest.scale_add")
        self.assertNotIn("pytest.scale_add", vo.names())

    def test_compile_error_line(self):
        with self.assertRaises(vo.CompileError) as cm:
            vo.register("pytest.broken", glsl=BROKEN)
        self.assertIsInstance(cm.exception, ValueError)
        self.assertIn("no_such_name", str(cm.exception))
        self.assertEqual(cm.exception.line, 5)
        self.assertNotIn("pytest.broken", vo.names())
        with self.assertRaises(ValueError):
            vo.register("pytest.none")

    def test_spirv_kernel(self):
        with open(os.path.join(ROOT, "shaders", "add.spv"), "rb") as f:
            code = f.read()
        vo.register("pytest.add_spv", spirv=code, inputs=2)
        try:
            a, b = data((4097,), "float32"), data((4097,), "float32")
            out = self.mgr.tensor((4097,), dtype="float32")
            vo.call("pytest.add_spv", self.on_mgr(a), self.on_mgr(b), out=out)
            self.assertClose(out, a + b, "float32")
        finally:
            vo.unregister("pytest.add_spv")


if __name__ == "__main__":
    unittest.main()
