"""The array API's classification, rounding, exp/log-family and logical
reduction functions (vkflow.ops and vkflow.array_api) against NumPy:
classifications and roundings bit for bit (signed zeros included), the
float functions within a few ULPs, all/any over axes with keepdims and
empty inputs, and the standard's special cases for signed zeros."""

import os
import unittest

os.environ.setdefault("VKFLOW_VALIDATION", "1")

import numpy as np  # noqa: E402

import vkflow  # noqa: E402
import vkflow.array_api as xp  # noqa: E402
import vkflow.ops as vo  # noqa: E402
from test_dlpack import VkflowTest  # noqa: E402

SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 1e-3, 3.0, -7.25]


def host(t):
    return np.asarray(t.numpy() if hasattr(t, "numpy") else t)


class TestMathOps(VkflowTest):
    def arr(self, values, dtype):
        return vkflow.asarray(np.asarray(values, dtype=dtype), device=self.mgr)

    def assertBits(self, got, want, msg):
        got, want = np.asarray(got), np.asarray(want)
        self.assertEqual(got.dtype, want.dtype, msg)
        self.assertEqual(got.shape, want.shape, msg)
        both_nan = np.isnan(got) & np.isnan(want) if got.dtype.kind == "f" else False
        same = (got.view(np.uint8).reshape(got.shape + (-1,)) ==
                want.view(np.uint8).reshape(want.shape + (-1,))).all(axis=-1)
        self.assertTrue(np.all(same | both_nan), "%s: got %r, want %r" % (msg, got, want))

    def test_exact_functions(self):
        for dt in ("float16", "float32", "float64"):
            x = np.asarray(SPECIAL, dtype=dt)
            t = self.arr(x, dt)
            for name, f in [("isnan", np.isnan), ("isinf", np.isinf), ("isfinite", np.isfinite),
                            ("signbit", np.signbit), ("sign", np.sign), ("floor", np.floor),
                            ("ceil", np.ceil), ("trunc", np.trunc), ("round", np.round),
                            ("reciprocal", np.reciprocal)]:
                self.assertBits(host(getattr(xp, name)(t)), f(x), "%s %s" % (name, dt))
            y = np.asarray(SPECIAL[::-1], dtype=dt)
            for name, f in [("copysign", np.copysign), ("nextafter", np.nextafter)]:
                self.assertBits(host(getattr(vo, name)(t, self.arr(y, dt))), f(x, y),
                                "%s %s" % (name, dt))
        i = np.asarray([-3, 0, 5], dtype="int32")
        self.assertEqual(host(xp.isfinite(self.arr(i, "int32"))).tolist(), [True] * 3)
        self.assertEqual(host(xp.isnan(self.arr(i, "int32"))).tolist(), [False] * 3)
        self.assertEqual(host(xp.sign(self.arr(i, "int32"))).tolist(), [-1, 0, 1])
        self.assertEqual(host(xp.floor(self.arr(i, "int32"))).tolist(), [-3, 0, 5])

    def test_float_functions(self):
        rng = np.random.default_rng(3)
        fns = {"expm1": (np.expm1, -20, 20), "log1p": (np.log1p, -0.999, 100),
               "log2": (np.log2, 1e-3, 1e3), "log10": (np.log10, 1e-3, 1e3),
               "sinh": (np.sinh, -20, 20), "cosh": (np.cosh, -20, 20),
               "asinh": (np.arcsinh, -100, 100), "acosh": (np.arccosh, 1, 100),
               "atanh": (np.arctanh, -0.999, 0.999), "tanh": (np.tanh, -10, 10)}
        for dt, rtol in (("float32", 4 * 2.0 ** -23), ("float64", 4 * 2.0 ** -52)):
            for name, (f, lo, hi) in fns.items():
                x = rng.uniform(lo, hi, 1001).astype(dt)
                got = host(getattr(xp, name)(self.arr(x, dt)))
                np.testing.assert_allclose(got, f(x), rtol=rtol, atol=0, err_msg=name + " " + dt)
            a, b = rng.uniform(-50, 50, (2, 1, 7)).astype(dt), rng.uniform(-50, 50, (3, 1)).astype(dt)
            for name, f in (("hypot", np.hypot), ("logaddexp", np.logaddexp)):
                got = host(getattr(xp, name)(self.arr(a, dt), self.arr(b, dt)))
                np.testing.assert_allclose(got, f(a, b), rtol=rtol, err_msg=name + " " + dt)
        # Signed zeros the standard fixes.
        z = self.arr([-0.0], "float32")
        for name in ("tanh", "expm1", "log1p", "sinh", "asinh", "atanh", "trunc", "round"):
            self.assertTrue(np.signbit(host(getattr(xp, name)(z))[0]), name + "(-0) is -0")

    def test_all_any(self):
        rng = np.random.default_rng(4)
        for dt in ("bool", "int8", "float32", "float64"):
            x = (rng.integers(0, 4, (3, 4, 5)) > 0).astype(dt)
            if dt.startswith("float"):
                x[0, 0, :] = np.nan  # NaN is true
            t = self.arr(x, dt)
            for axis in (None, 0, -1, (0, 2), ()):
                for keepdims in (False, True):
                    for name, f in (("all", np.all), ("any", np.any)):
                        got = host(getattr(xp, name)(t, axis=axis, keepdims=keepdims))
                        want = f(x, axis=axis, keepdims=keepdims)
                        self.assertEqual(got.dtype, np.bool_)
                        np.testing.assert_array_equal(got, want, "%s %s %r %r" % (name, dt, axis, keepdims))
        e = self.arr(np.zeros((0, 3), "float32"), "float32")
        self.assertEqual(host(xp.all(e)).item(), True)
        self.assertEqual(host(xp.any(e)).item(), False)
        self.assertEqual(host(xp.all(e, axis=0)).tolist(), [True] * 3)


if __name__ == "__main__":
    unittest.main()
