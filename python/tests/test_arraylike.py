"""vkflow.Tensor as an array, against NumPy: every Python operator (plain,
reflected, in place) on float32, int32 and bool, broadcasting, Python and
NumPy scalars on both sides, 0-d and empty operands, and the errors NumPy
users expect (TypeError for dtypes, ValueError for shapes, OverflowError for
out-of-range Python ints). Tolerances are test_ops' (TOL).

The protocol (``__array__``, conversions, len, iteration, repr, T, mT,
reshape) is in test_arraylike_protocol.py, the array API namespace and the
creation functions in test_arraylike_api.py, and a long randomized program
in test_arraylike_random.py.
"""

import operator
import os
import unittest

os.environ.setdefault("VKFLOW_VALIDATION", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

import vkflow  # noqa: E402
import vkflow.ops as vo  # noqa: E402
from test_dlpack import VkflowTest  # noqa: E402
from test_ops import TOL, host  # noqa: E402

# The integer-division, bitwise and logical ops that the operators // % & |
# ^ << >> ~ call (and bool + * & | ^ ~).
LATE_OPS = ("floor_divide", "remainder", "bitwise_and", "bitwise_or", "bitwise_xor",
            "bitwise_invert", "bitwise_left_shift", "bitwise_right_shift", "logical_and",
            "logical_or", "logical_xor", "logical_not")


def needs_ops(*names):
    missing = [n for n in names if not hasattr(vo, n)]
    return unittest.skipUnless(not missing, "vkflow.ops lacks %s" % ", ".join(missing))


ARITH = [operator.add, operator.sub, operator.mul, operator.truediv, operator.pow]
COMPARE = [operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne]
INPLACE = {operator.add: operator.iadd, operator.sub: operator.isub,
           operator.mul: operator.imul, operator.truediv: operator.itruediv,
           operator.pow: operator.ipow, operator.floordiv: operator.ifloordiv,
           operator.mod: operator.imod, operator.and_: operator.iand,
           operator.or_: operator.ior, operator.xor: operator.ixor,
           operator.lshift: operator.ilshift, operator.rshift: operator.irshift}
rng = np.random.default_rng(23)


def values(shape, dtype, nonzero=False, positive=False):
    """Dyadic floats (exact in float32), small ints, or bools; an ndarray
    (0-d too)."""
    if dtype == "bool":
        return np.asarray(rng.integers(0, 2, size=shape).astype(bool))
    if dtype == "float32":
        x = np.asarray(rng.integers(-32, 33, size=shape) / 8, dtype=np.float32)
    else:
        x = np.asarray(rng.integers(-9, 10, size=shape), dtype=dtype)
    if positive:
        x = np.asarray(np.abs(x) + x.dtype.type(1))
    if nonzero:
        x[x == 0] = 3
    return x


class ArrayTest(VkflowTest):

    def vk(self, x):
        return vkflow.asarray(np.asarray(x), device=self.mgr, copy=True)

    def check(self, got, want, kind="exact", dtype=None):
        """got (a vkflow Tensor) equals NumPy's want: dtype, shape, values."""
        self.assertIsInstance(got, vkflow.Tensor)
        want = np.asarray(want)
        if dtype is not None:
            want = want.astype(dtype)
        self.assertEqual(got.dtype, want.dtype.name)
        self.assertEqual(got.shape, want.shape)
        g = host(got)
        if got.dtype in TOL:
            rtol, atol = TOL[got.dtype][kind]
            np.testing.assert_allclose(g, want, rtol=rtol, atol=atol, equal_nan=True)
        else:
            np.testing.assert_array_equal(g, want)


class TestBinary(ArrayTest):

    SHAPES = [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((2, 3, 4), (4,)), ((), (5,)), ((), ()),
              ((0, 3), (3,))]

    def test_arithmetic_broadcast(self):
        """+ - * / ** on float32 and int32 tensors, both orders, broadcast,
        0-d and empty; NumPy arrays on either side give vkflow tensors."""
        for dtype in ("float32", "int32"):
            for op in ARITH:
                for sa, sb in self.SHAPES:
                    with self.subTest(dtype=dtype, op=op.__name__, a=sa, b=sb):
                        pw = op is operator.pow
                        a = values(sa, dtype, positive=pw)
                        b = values(sb, dtype, nonzero=op is operator.truediv, positive=pw)
                        if pw:
                            b = np.asarray(b % b.dtype.type(3))
                        kind = "approx" if op in (operator.truediv, operator.pow) else "exact"
                        self.check(op(self.vk(a), self.vk(b)), op(a, b), kind)
                        self.check(op(self.vk(a), b), op(a, b), kind)    # NumPy on the right
                        self.check(op(a, self.vk(b)), op(a, b), kind)    # and on the left

    def test_python_scalars_both_sides(self):
        a = values((4, 5), "float32", nonzero=True)
        i = values((4, 5), "int32", nonzero=True)
        for op in ARITH:
            with self.subTest(op=op.__name__):
                kind = "approx" if op in (operator.truediv, operator.pow) else "exact"
                s = 2.5 if op is not operator.pow else 2.0
                self.check(op(self.vk(a), s), op(a, np.float32(s)), kind)
                self.check(op(s, self.vk(np.abs(a))), op(np.float32(s), np.abs(a)), kind)
                if op is not operator.truediv:
                    self.check(op(self.vk(i), 2), op(i, np.int32(2)))
                    self.check(op(2, self.vk(np.abs(i))), op(np.int32(2), np.abs(i)))
        # NumPy scalars of the tensor's dtype, on either side.
        self.check(self.vk(a) * np.float32(3), a * np.float32(3))
        self.check(np.float32(3) - self.vk(a), np.float32(3) - a)
        self.check(np.int32(7) + self.vk(i), np.int32(7) + i)
        # A bool scalar takes the tensor's dtype; a list is Python data too.
        self.check(self.vk(i) + True, i + 1)
        self.check(self.vk(a) + [1, 2, 3, 4, 5], a + np.float32([1, 2, 3, 4, 5]))
        self.check([[1], [2], [3], [4]] * self.vk(i), np.int32([[1], [2], [3], [4]]) * i)

    def test_true_division_of_integers(self):
        """int / int is float64, as NumPy's true_divide; scalars either side."""
        i = values((3, 4), "int32")
        j = values((4,), "int32", nonzero=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            self.check(self.vk(i) / self.vk(j), i / j, "approx")
            self.check(self.vk(i) / 2, i / 2, "approx")
            self.check(self.vk(i) / 2.5, i / 2.5, "approx")
            self.check(7 / self.vk(j), 7 / j, "approx")
            self.check(self.vk(i) / 0, i / 0, "approx")        # inf and nan, as NumPy
            b = values((3,), "bool")
            self.check(self.vk(b) / True, b / True, "approx")
        self.assertEqual(vkflow.ops.div(self.vk(j.astype(np.float32)), 2.0).dtype, "float32")

    def test_comparisons(self):
        for dtype in ("float32", "int32", "bool"):
            for op in COMPARE:
                for sa, sb in self.SHAPES:
                    with self.subTest(dtype=dtype, op=op.__name__, a=sa, b=sb):
                        a, b = values(sa, dtype), values(sb, dtype)
                        self.check(op(self.vk(a), self.vk(b)), op(a, b))
                        self.check(op(a, self.vk(b)), op(a, b))
            with self.subTest(dtype=dtype, scalar=True):
                a = values((7,), dtype)
                s = {"float32": 0.25, "int32": 1, "bool": True}[dtype]
                self.check(self.vk(a) < s, a < s)
                self.check(s < self.vk(a), s < a)           # Python calls a.__gt__(s)
                self.check(self.vk(a) == s, a == s)
                self.check(s != self.vk(a), s != a)

    def test_eq_with_a_non_array(self):
        t = self.vk(values((3,), "float32"))
        self.assertIs(t == None, False)  # noqa: E711 (Python falls back to identity)
        self.assertIs(t != "text", True)
        self.assertIs(t.__eq__(object()), NotImplemented)
        self.assertEqual(hash(t), hash(t))                  # tensors stay hashable
        self.assertIn(t, {t})

    def test_matmul(self):
        a, b = values((3, 4), "float32"), values((4, 5), "float32")
        self.check(self.vk(a) @ self.vk(b), a @ b)
        self.check(a @ self.vk(b), a @ b)
        self.check(self.vk(a) @ b, a @ b)
        self.check(self.vk(a) @ [1, 2, 3, 4], a @ np.float32([1, 2, 3, 4]))
        with self.assertRaises(TypeError):
            self.vk(a) @ 2.0                                    # no scalars, as Python's @
        with self.assertRaises(TypeError):
            self.vk(a) @ self.vk(b.astype(np.int32))
        with self.assertRaises(ValueError):
            self.vk(a) @ self.vk(a)                             # (3,4) @ (3,4)

    @needs_ops("floor_divide", "remainder")
    def test_floor_divide_remainder(self):
        """// and % as NumPy's (floor; the remainder takes the divisor's sign)."""
        for dtype in ("int32", "float32"):
            for op in (operator.floordiv, operator.mod):
                with self.subTest(dtype=dtype, op=op.__name__):
                    a = values((4, 5), dtype)
                    b = values((5,), dtype, nonzero=True)
                    self.check(op(self.vk(a), self.vk(b)), op(a, b))
                    self.check(op(self.vk(a), 3), op(a, a.dtype.type(3)))
                    self.check(op(-7, self.vk(b)), op(a.dtype.type(-7), b))

    @needs_ops("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_invert",
               "bitwise_left_shift", "bitwise_right_shift")
    def test_bitwise_int(self):
        a, b = values((4, 5), "int32") * 7, values((5,), "int32")
        for op in (operator.and_, operator.or_, operator.xor):
            with self.subTest(op=op.__name__):
                self.check(op(self.vk(a), self.vk(b)), op(a, b))
                self.check(op(self.vk(a), 6), op(a, np.int32(6)))
                self.check(op(12, self.vk(a)), op(np.int32(12), a))
        s = np.abs(b) % 5
        for op in (operator.lshift, operator.rshift):
            with self.subTest(op=op.__name__):
                self.check(op(self.vk(a), self.vk(s)), op(a, s))
                self.check(op(self.vk(a), 2), op(a, np.int32(2)))
                self.check(op(1, self.vk(s)), op(np.int32(1), s))
        self.check(~self.vk(a), ~a)

    @needs_ops("logical_and", "logical_or", "logical_xor", "logical_not")
    def test_bool_logic(self):
        """bool + * & | ^ ~ as NumPy's (logical); - ** // % << >> refused."""
        a, b = values((3, 4), "bool"), values((4,), "bool")
        for op in (operator.add, operator.mul, operator.and_, operator.or_, operator.xor):
            with self.subTest(op=op.__name__):
                self.check(op(self.vk(a), self.vk(b)), op(a, b))
                self.check(op(self.vk(a), True), op(a, True))
                self.check(op(False, self.vk(a)), op(False, a))
        self.check(~self.vk(a), ~a)
        for op in (operator.sub, operator.pow, operator.floordiv, operator.mod, operator.lshift):
            with self.subTest(op=op.__name__), self.assertRaises(TypeError):
                op(self.vk(a), self.vk(b))

    def test_pytorch_operand(self):
        a = values((3, 4), "float32")
        tt = torch.from_numpy(values((4,), "float32"))
        self.check(self.vk(a) + tt, a + tt.numpy())
        self.check(self.vk(a) + tt.double(), a + tt.double().numpy())   # promoted
        with self.assertRaisesRegex(TypeError, "int32"):
            self.vk(a) + tt.int()


class TestUnary(ArrayTest):

    def test_neg_pos_abs(self):
        for dtype in ("float32", "int32"):
            for shape in ((3, 4), (), (0,)):
                with self.subTest(dtype=dtype, shape=shape):
                    a = values(shape, dtype)
                    t = self.vk(a)
                    self.check(-t, -a)
                    self.check(abs(t), np.abs(a))
                    p = +t
                    self.assertIsNot(p, t)                      # +t is a copy
                    self.check(p, a)
        b = values((5,), "bool")
        self.check(abs(self.vk(b)), b)
        with self.assertRaisesRegex(TypeError, "~"):
            -self.vk(b)
        with self.assertRaisesRegex(TypeError, "float32"):
            ~self.vk(values((3,), "float32"))


class TestInPlace(ArrayTest):

    def test_inplace_writes_into_self(self):
        cases = [(op, "float32") for op in (operator.add, operator.sub, operator.mul,
                                            operator.truediv, operator.pow)]
        cases += [(op, "int32") for op in (operator.add, operator.sub, operator.mul,
                                           operator.pow)]
        cases += [(op, "int32") for op in (operator.floordiv, operator.mod, operator.and_,
                                           operator.or_, operator.xor, operator.lshift,
                                           operator.rshift) if hasattr(vo, "floor_divide")]
        for op, dtype in cases:
            for other_shape in ((3, 4), (4,), (1, 4), ()):
                with self.subTest(op=op.__name__, dtype=dtype, other=other_shape):
                    a = values((3, 4), dtype, positive=op is operator.pow)
                    b = values(other_shape, dtype, nonzero=True, positive=op is operator.pow)
                    if op in (operator.pow, operator.lshift, operator.rshift):
                        b = np.asarray(b % b.dtype.type(3))
                    t = self.vk(a)
                    handle = t.handle
                    r = INPLACE[op](t, self.vk(b))
                    self.assertIs(r, t)
                    self.assertEqual(t.handle, handle)
                    want = op(a, b)
                    self.check(t, want, "approx" if op in (operator.truediv, operator.pow)
                               else "exact")
                    t2 = self.vk(a)
                    self.check(INPLACE[op](t2, b), want, "approx")   # a NumPy operand
        t = self.vk(np.float32([1, 2, 3]))
        t += 1.5
        t -= [1, 1, 1]
        t *= np.float32(2)
        self.check(t, np.float32([3, 5, 7]))
        m = self.vk(np.eye(3, dtype=np.float32) * 2)
        same = m
        m @= self.vk(np.arange(9, dtype=np.float32).reshape(3, 3))
        self.assertIs(m, same)
        self.check(m, np.arange(9, dtype=np.float32).reshape(3, 3) * 2)

    def test_inplace_errors(self):
        t = self.vk(np.zeros((3, 1), np.float32))
        with self.assertRaisesRegex(ValueError, r"\(3, 1\).*\(3, 4\)"):
            t += np.zeros((3, 4), np.float32)                   # NumPy: non-broadcastable output
        i = self.vk(np.arange(3, dtype=np.int32))
        with self.assertRaisesRegex(TypeError, "same_kind"):
            i /= 2                                              # float64 result into int32
        with self.assertRaisesRegex(TypeError, "float"):
            i += 1.5
        with self.assertRaisesRegex(TypeError, "float32"):
            i += np.ones(3, np.float32)
        with self.assertRaisesRegex(ValueError, "shape"):
            m = self.vk(np.ones((2, 3), np.float32))
            m @= self.vk(np.ones((3, 4), np.float32))
        np.testing.assert_array_equal(host(i), [0, 1, 2])     # untouched by the failures
        with self.assertRaises(TypeError):
            i += "x"


class TestErrors(ArrayTest):

    def test_dtype_mismatch_is_a_type_error_naming_both(self):
        a = self.vk(np.zeros(3, np.float32))
        # Integers with floats have no promotion (float32 with float64 has).
        cases = [(a, self.vk(np.zeros(3, np.int32)), "int32"),
                 (a, np.zeros(3, np.int64), "int64"),
                 (a, np.int64(1), "int64")]
        for x, y, other in cases:
            for op in ARITH + COMPARE:
                with self.subTest(op=op.__name__, other=other):
                    with self.assertRaises(TypeError) as cm:
                        op(x, y)
                    self.assertIn("float32", str(cm.exception))
                    self.assertIn(other, str(cm.exception))

    def test_python_scalar_rules(self):
        i = self.vk(np.arange(3, dtype=np.int32))
        b = self.vk(np.array([True, False]))
        for f in (lambda: i * 2.5, lambda: 2.5 - i, lambda: i < 0.5, lambda: i ** 0.5,
                  lambda: b + 1, lambda: 1 == b, lambda: i + [1.5, 2, 3]):
            with self.assertRaises(TypeError) as cm:
                f()
            self.assertRegex(str(cm.exception), "int32|bool")
        with self.assertRaisesRegex(OverflowError, "300.*int8"):
            self.vk(np.zeros(3, np.int8)) + 300
        with self.assertRaisesRegex(OverflowError, "uint8"):
            self.vk(np.zeros(3, np.uint8)) - (-1)
        with self.assertRaisesRegex(ValueError, "negative integer powers"):
            i ** -1
        with self.assertRaisesRegex(ValueError, "negative integer powers"):
            2 ** self.vk(np.array([1, -1], np.int32))
        for bad in ("x", None, object(), 1j):
            with self.subTest(other=bad), self.assertRaises(TypeError):
                i + bad

    def test_shape_errors(self):
        a = self.vk(np.zeros((2, 3), np.float32))
        for op in ARITH + COMPARE:
            with self.subTest(op=op.__name__):
                with self.assertRaisesRegex(ValueError, r"\(2, 3\) \(4,\)"):
                    op(a, np.zeros(4, np.float32))

    def test_other_device(self):
        other = vkflow.Manager(validation=True)
        try:
            x = vkflow.asarray(np.ones(3, np.float32), device=other)
            with self.assertRaises(ValueError):
                self.vk(np.ones(3, np.float32)) + x
        finally:
            other.close()

    def test_closed(self):
        t = self.vk(np.ones(3, np.float32))
        t.close()
        with self.assertRaises(vkflow.ClosedError):
            t + 1.0


if __name__ == "__main__":
    unittest.main()
