"""complex64 and complex128 end to end: conversion from and to NumPy and
Python, DLPack with NumPy and PyTorch, the operators and vkflow.ops against
NumPy (special values included), promotion, creation functions and the
array API's dtype functions."""

import os
import unittest

os.environ.setdefault("VKFLOW_VALIDATION", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

import vkflow  # noqa: E402
import vkflow.array_api as xp  # noqa: E402
import vkflow.ops as vo  # noqa: E402
from test_dlpack import VkflowTest  # noqa: E402
from test_mathops import host  # noqa: E402

CX = ["complex64", "complex128"]
INF, NAN = float("inf"), float("nan")
# Parts that exercise the special cases (complex64's products stay in range).
PARTS = [0.0, -0.0, 1.0, -2.5, INF, -INF, NAN, 1e18, -1e-18]


def specials(dtype):
    v = np.array([complex(a, b) for a in PARTS for b in PARTS], dtype=np.complex128)
    return v.astype(dtype)


def randoms(dtype, n=200, seed=0):
    r = np.random.default_rng(seed)
    return (r.uniform(-10, 10, n) + 1j * r.uniform(-10, 10, n)).astype(dtype)


class TestComplex(VkflowTest):
    def arr(self, values, dtype=None):
        return vkflow.asarray(np.asarray(values, dtype=dtype), device=self.mgr)

    def assertClose(self, got, want, rtol, msg):
        got = host(got)
        self.assertEqual(got.dtype, want.dtype, msg)
        # Errors relative to the element's magnitude (NaN where NumPy has
        # NaN, infinities equal; rtol 0: equal).
        scale = np.maximum(np.abs(want), np.finfo(want.real.dtype).tiny)
        for part in ("real", "imag"):
            g, w = getattr(got, part), getattr(want, part)
            same = (np.isnan(g) & np.isnan(w)) | (g == w)
            with np.errstate(invalid="ignore"):
                near = np.abs(g - w) <= rtol * np.where(np.isfinite(scale), scale, 0)
            bad = ~(same | near)
            self.assertFalse(bad.any(), "%s (%s): got %r, want %r" % (msg, part, g[bad][:5],
                                                                     w[bad][:5]))

    def test_numpy_round_trip_and_python(self):
        for dt in CX:
            a = randoms(dt)
            t = self.arr(a)
            self.assertEqual(t.dtype, dt)
            np.testing.assert_array_equal(np.asarray(t), a)
            np.testing.assert_array_equal(np.from_dlpack(t), a)
        t = vkflow.asarray([1 + 2j, 3, -0.5j], device=self.mgr)
        self.assertEqual(t.dtype, "complex64")  # the default, as float32 for floats
        self.assertEqual(t.tolist(), [1 + 2j, 3 + 0j, -0.5j])
        self.assertEqual(vkflow.asarray(2j, device=self.mgr).dtype, "complex64")
        z = vkflow.asarray(np.complex128(1.5 - 2j), device=self.mgr)
        self.assertEqual(complex(z), 1.5 - 2j)
        self.assertEqual(z.item(), 1.5 - 2j)
        self.assertIn("1.5-2.j", repr(z))

    def test_torch_dlpack(self):
        for dt, tdt in (("complex64", torch.complex64), ("complex128", torch.complex128)):
            a = torch.tensor([1 + 2j, -3.5 + 0.25j, 0j], dtype=tdt)
            t = vkflow.from_dlpack(a, device=self.mgr)
            self.assertEqual(t.dtype, dt)
            np.testing.assert_array_equal(np.asarray(t), a.numpy())
            back = torch.from_dlpack(vo.mul(t, t))
            self.assertEqual(back.dtype, tdt)
            np.testing.assert_allclose(back.numpy(), (a * a).numpy(), rtol=1e-6)

    def test_arithmetic_against_numpy(self):
        for dt in CX:
            tol = 8 * np.finfo("float32" if dt == "complex64" else "float64").eps
            a = np.concatenate([randoms(dt, seed=1), np.repeat(specials(dt), len(PARTS) ** 2)])
            b = np.concatenate([randoms(dt, seed=2), np.tile(specials(dt), len(PARTS) ** 2)])
            ta, tb = self.arr(a), self.arr(b)
            with np.errstate(all="ignore"):
                cases = [("+", ta + tb, a + b), ("-", ta - tb, a - b),
                         ("*", ta * tb, a * b)]
            for what, got, want in cases:
                self.assertClose(got, want, tol, "%s %s" % (what, dt))
            # Division: NumPy's and vkflow's Smith algorithms differ in the
            # recovery of infinities; compare where both parts are finite.
            with np.errstate(all="ignore"):
                want = a / b
            got = host(ta / tb)
            fin = np.isfinite(want) & np.isfinite(a) & np.isfinite(b) & (b != 0)
            self.assertClose(got[fin], want[fin], tol, "/ %s" % dt)
            x = self.arr(randoms(dt, seed=3))
            xs = randoms(dt, seed=3)
            self.assertClose(-x, -xs, 0, "neg")
            self.assertClose(xp.conj(x), np.conj(xs), 0, "conj")
            self.assertClose(xp.square(x), xs * xs, tol, "square")
            self.assertClose(xp.real(x), xs.real, 0, "real")
            self.assertClose(xp.imag(x), xs.imag, 0, "imag")
            self.assertClose(xp.abs(x), np.abs(xs), tol, "abs")
            self.assertClose(abs(x), np.abs(xs), tol, "abs()")
            self.assertClose(xp.sign(x), xs / np.abs(xs), tol, "sign")
            s = specials(dt)
            ts = self.arr(s)
            for name, f in (("isnan", np.isnan), ("isinf", np.isinf), ("isfinite", np.isfinite)):
                np.testing.assert_array_equal(host(getattr(xp, name)(ts)), f(s), name)
            np.testing.assert_array_equal(host(ts == ts), s == s)
            np.testing.assert_array_equal(host(ts != ts), s != s)
            # Signed zeros: -(0+0j) and conj(0+0j) flip the sign bits.
            z = self.arr(np.array([0j, complex(-0.0, 0.0)], dtype=dt))
            np.testing.assert_array_equal(np.signbit(host(-z).imag), [True, True])
            np.testing.assert_array_equal(np.signbit(host(xp.conj(z)).imag), [True, True])
            np.testing.assert_array_equal(np.signbit(host(-z).real), [True, False])
            # No overflow where |z| is in range (a naive sqrt(re² + im²) has).
            big = np.array([1e38 + 1e38j, 3e-39 + 4e-39j], dtype=dt)
            self.assertClose(xp.abs(self.arr(big)), np.abs(big), tol, "abs in range")

    def test_promotion_and_scalars(self):
        f32 = self.arr([1.0, -2.0], "float32")
        f64 = self.arr([1.0, -2.0], "float64")
        c64 = self.arr([1 + 1j, 2 - 1j], "complex64")
        c128 = self.arr([1 + 1j, 2 - 1j], "complex128")
        self.assertEqual((f32 + c64).dtype, "complex64")
        self.assertEqual((f64 + c64).dtype, "complex128")
        self.assertEqual((c64 * c128).dtype, "complex128")
        self.assertEqual(xp.result_type("float16", "complex64"), "complex64")
        self.assertEqual(xp.result_type("complex64", 1j), "complex64")
        self.assertEqual(xp.result_type("complex128", 1.0), "complex128")
        for bad in (("int32", "complex64"), ("bool", "complex128")):
            with self.assertRaises(TypeError):
                xp.result_type(*bad)
        with self.assertRaises(TypeError):
            self.arr([1, 2], "int32") + c64
        with self.assertRaises(TypeError):
            f32 + 1j  # a Python complex does not take a real dtype
        np.testing.assert_array_equal(host(c64 + 1j), np.array([1 + 2j, 2 + 0j], np.complex64))
        np.testing.assert_array_equal(host(c64 * 2), np.array([2 + 2j, 4 - 2j], np.complex64))
        np.testing.assert_array_equal(host(c64 / 2), np.array([0.5 + 0.5j, 1 - 0.5j], np.complex64))
        np.testing.assert_array_equal(host(2 / c64), 2 / np.array([1 + 1j, 2 - 1j], np.complex64))
        with self.assertRaises(TypeError):
            c64 < c64
        with self.assertRaises(ValueError):
            vo.astype(c64, "float32")  # complex to real: take real or abs first
        np.testing.assert_array_equal(host(vo.astype(f32, "complex128")),
                                      np.array([1, -2], np.complex128))
        np.testing.assert_array_equal(host(vo.astype(c64, "bool")), [True, True])

    def test_reductions_and_matmul(self):
        for dt in CX:
            tol = 1e-5 if dt == "complex64" else 1e-12
            x = randoms(dt, 60, seed=4).reshape(6, 10) / 10
            t = self.arr(x)
            np.testing.assert_allclose(host(xp.sum(t, axis=1)), x.sum(axis=1), rtol=tol)
            np.testing.assert_allclose(host(xp.prod(t, axis=0)), x.prod(axis=0), rtol=tol)
            np.testing.assert_allclose(host(xp.mean(t)), x.mean(), rtol=tol)
            self.assertEqual(xp.sum(t).dtype, dt)
            y = randoms(dt, 40, seed=5).reshape(10, 4)
            np.testing.assert_allclose(host(t @ self.arr(y)), x @ y, rtol=tol * 10)
            b = self.arr(np.array([[0j, 1j], [0j, 0j]], dtype=dt))
            np.testing.assert_array_equal(host(xp.any(b, axis=1)), [True, False])
            np.testing.assert_array_equal(host(xp.all(b, axis=1)), [False, False])
            with self.assertRaises(ValueError):
                xp.max(t)

    def test_transcendental_wiring(self):
        # The complex math library (ops/internal/opcore/complexmath_glsl.go) through the
        # element-wise ops, on moderate values, against NumPy: the wiring,
        # not the library's accuracy (its own tests hold that).
        for dt in CX:
            rtol = 1e-4 if dt == "complex64" else 1e-10
            x = (randoms(dt, 64, seed=7) / 4).astype(dt)
            t = self.arr(x)
            for name in ("exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "sin", "cos",
                         "tan", "sinh", "cosh", "tanh", "asin", "acos", "atan", "asinh", "acosh",
                         "atanh"):
                npf = {"asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
                       "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh}.get(
                           name, getattr(np, name, None))
                got = host(getattr(xp, name)(t))
                self.assertEqual(got.dtype, np.dtype(dt), name)
                np.testing.assert_allclose(got, npf(x), rtol=rtol, atol=rtol, err_msg=name)
            np.testing.assert_allclose(host(t ** self.arr(x)), x ** x, rtol=rtol * 10,
                                       err_msg="pow")

    def test_creation_and_dtype_functions(self):
        for dt in CX:
            for t in (xp.zeros((2, 3), dtype=dt, device=self.mgr),
                      xp.ones((2, 3), dtype=dt, device=self.mgr),
                      xp.empty((2, 3), dtype=dt, device=self.mgr),
                      xp.eye(2, 3, dtype=dt, device=self.mgr)):
                self.assertEqual(t.dtype, dt)
            np.testing.assert_array_equal(host(xp.ones(3, dtype=dt, device=self.mgr)), np.ones(3, dt))
            np.testing.assert_array_equal(host(xp.full(2, 1 - 2j, dtype=dt, device=self.mgr)),
                                          np.full(2, 1 - 2j, dt))
            np.testing.assert_allclose(
                host(xp.linspace(0, 1 + 2j, 5, dtype=dt, device=self.mgr)),
                np.linspace(0, 1 + 2j, 5).astype(dt), rtol=1e-6)
            f = xp.finfo(dt)
            part = "float32" if dt == "complex64" else "float64"
            self.assertEqual(f.dtype, np.dtype(part))
            self.assertEqual(f.eps, float(np.finfo(part).eps))
            self.assertTrue(xp.isdtype(dt, "complex floating"))
            self.assertTrue(xp.isdtype(dt, "numeric"))
            self.assertFalse(xp.isdtype(dt, "real floating"))
            self.assertEqual(getattr(xp, dt), dt)
        self.assertEqual(xp.full(2, 1j, device=self.mgr).dtype, "complex64")
        with self.assertRaises(TypeError):
            xp.full(2, 1j, dtype="float32", device=self.mgr)
        info = xp.__array_namespace_info__()
        self.assertEqual(info.default_dtypes()["complex floating"], "complex64")
        self.assertEqual(set(info.dtypes(kind="complex floating")), set(CX))
        self.assertTrue(set(CX) <= set(info.dtypes(kind="numeric")))


if __name__ == "__main__":
    unittest.main()
