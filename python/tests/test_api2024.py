"""The array API 2024.12 functions (issue 32): diff, count_nonzero,
take_along_axis and complex reciprocal, against NumPy on the device's
results; the standard's preferred floor_divide where one operand is
infinite; and clip with array bounds, empty ones included."""

import unittest

import numpy as np

import vkflow
from vkflow import array_api as xp


class TestDiff(unittest.TestCase):
    def test_against_numpy(self):
        rng = np.random.default_rng(3)
        for dtype in ("float32", "float64", "int16", "uint8", "int64", "complex64"):
            for shape in ((1,), (7,), (3, 5), (2, 3, 4)):
                a = (rng.integers(-9, 9, size=shape) + (1j if dtype == "complex64" else 0)
                     * rng.integers(-9, 9, size=shape)).astype(dtype)
                x = xp.asarray(a)
                for axis in range(-len(shape), len(shape)):
                    for n in range(0, shape[axis] + 2):
                        with self.subTest(dtype=dtype, shape=shape, axis=axis, n=n):
                            got = xp.diff(x, axis=axis, n=n)
                            want = np.diff(a, axis=axis, n=n)
                            self.assertEqual(got.dtype, x.dtype)
                            self.assertEqual(got.shape, want.shape)
                            np.testing.assert_array_equal(np.asarray(got), want)

    def test_prepend_append(self):
        a = np.arange(12, dtype=np.float64).reshape(3, 4) ** 2
        p, q = np.ones((3, 2)), np.full((3, 1), 7.0)
        got = xp.diff(xp.asarray(a), axis=1, n=2, prepend=xp.asarray(p), append=xp.asarray(q))
        np.testing.assert_array_equal(np.asarray(got), np.diff(a, axis=1, n=2, prepend=p, append=q))

    def test_refused(self):
        x = xp.asarray([1.0, 2.0])
        with self.assertRaisesRegex(ValueError, "axis 1 is out of range"):
            xp.diff(x, axis=1)
        with self.assertRaisesRegex(ValueError, "n must be >= 0"):
            xp.diff(x, n=-1)
        with self.assertRaisesRegex(ValueError, "at least one dimension"):
            xp.diff(xp.asarray(1.0))


class TestCountNonzero(unittest.TestCase):
    def test_against_numpy(self):
        rng = np.random.default_rng(5)
        for dtype in ("bool", "int8", "uint32", "float32", "float64", "complex128"):
            a = rng.integers(0, 3, size=(4, 5, 6)).astype(dtype)
            if dtype == "float64":
                a[0, 0, :2] = np.nan, -0.0
            if dtype == "complex128":
                a = a * 1j
            x = xp.asarray(a)
            for axis in (None, 0, -1, (0, 2), (1,)):
                for keepdims in (False, True):
                    with self.subTest(dtype=dtype, axis=axis, keepdims=keepdims):
                        got = xp.count_nonzero(x, axis=axis, keepdims=keepdims)
                        want = np.count_nonzero(a, axis=axis, keepdims=keepdims)
                        self.assertEqual(got.dtype, xp.int64)
                        np.testing.assert_array_equal(np.asarray(got), want)


class TestTakeAlongAxis(unittest.TestCase):
    def test_against_numpy(self):
        rng = np.random.default_rng(7)
        for dtype in ("float32", "int64", "bool", "complex64"):
            a = rng.integers(0, 50, size=(3, 4, 5)).astype(dtype)
            x = xp.asarray(a)
            for axis in (0, 1, 2, -1, -3):
                for length in (0, 1, 4, 9):
                    shape = list(a.shape)
                    shape[axis] = length
                    idx = rng.integers(-a.shape[axis], a.shape[axis], size=shape)
                    with self.subTest(dtype=dtype, axis=axis, length=length):
                        got = xp.take_along_axis(x, xp.asarray(idx), axis=axis)
                        want = np.take_along_axis(a, idx, axis=axis)
                        self.assertEqual(got.shape, want.shape)
                        np.testing.assert_array_equal(np.asarray(got), want)

    def test_sort_round_trip(self):
        a = np.random.default_rng(1).standard_normal((6, 8)).astype(np.float32)
        x = xp.asarray(a)
        i = xp.argsort(x, axis=1)
        np.testing.assert_array_equal(np.asarray(xp.take_along_axis(x, i, axis=1)),
                                      np.sort(a, axis=1))

    def test_refused(self):
        x = xp.asarray(np.zeros((2, 3), np.float32))
        with self.assertRaisesRegex(TypeError, "integer dtype"):
            xp.take_along_axis(x, xp.asarray(np.zeros((2, 3), np.float32)))
        with self.assertRaisesRegex(ValueError, "indices have 1 dimensions, x has 2"):
            xp.take_along_axis(x, xp.asarray(np.zeros(3, np.int64)))
        with self.assertRaisesRegex(ValueError, "must match but along axis"):
            xp.take_along_axis(x, xp.asarray(np.zeros((4, 3), np.int64)), axis=1)


class TestReciprocalAndFloorDivide(unittest.TestCase):
    def test_complex_reciprocal(self):
        for dtype in ("complex64", "complex128"):
            a = np.array([1 + 1j, 2 - 0.5j, -3j, 0.25], dtype)
            got = xp.reciprocal(xp.asarray(a))
            self.assertEqual(got.dtype, dtype)
            np.testing.assert_allclose(np.asarray(got), 1 / a, rtol=1e-6)
        np.testing.assert_array_equal(np.asarray(xp.reciprocal(xp.asarray([2.0, 4.0]))), [0.5, 0.25])

    def test_floor_divide_infinities(self):
        a = np.array([np.inf, -np.inf, np.inf, 1.0, -1.0, 1.0, -1.0, 0.0])
        b = np.array([2.0, 2.0, -2.0, np.inf, np.inf, -np.inf, -np.inf, np.inf])
        got = np.asarray(xp.floor_divide(xp.asarray(a), xp.asarray(b)))
        want = np.array([np.inf, -np.inf, -np.inf, 0.0, -0.0, -0.0, 0.0, 0.0])
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


class TestClipArrays(unittest.TestCase):
    def test_array_bounds(self):
        a = np.array([-2.0, 0.5, 3.0, np.nan, 1.5], np.float32)
        lo = np.array([-1.0, 1.0, -5.0, 0.0, 2.0], np.float32)
        hi = np.array([1.0, 2.0, 2.0, 1.0, 3.0], np.float32)
        x = xp.asarray(a)
        for kw in ({"min": lo, "max": hi}, {"min": lo}, {"max": hi}, {"min": 0.0, "max": hi}):
            with self.subTest(kw=list(kw)):
                got = xp.clip(x, **{k: xp.asarray(v) if isinstance(v, np.ndarray) else v
                                    for k, v in kw.items()})
                np.testing.assert_array_equal(np.asarray(got), np.clip(a, kw.get("min"), kw.get("max")))
        e = xp.asarray(np.zeros((0,), np.float32))
        self.assertEqual(xp.clip(e, e, e).shape, (0,))
        row = xp.asarray(np.array([[0.0, 1.0]], np.float32))
        np.testing.assert_array_equal(
            np.asarray(xp.clip(xp.asarray(np.array([[-1.0, 5.0], [0.5, 0.5]], np.float32)), row, 1.0)),
            [[0.0, 1.0], [0.5, 1.0]])


class TestValidation(unittest.TestCase):
    def test_no_messages(self):
        if vkflow.validation_messages()[0]:
            self.fail("validation: %s" % (vkflow.validation_messages(),))


if __name__ == "__main__":
    unittest.main()
