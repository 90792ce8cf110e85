"""The array API's trigonometric functions (vkflow.ops, vkflow.array_api
and NumPy's ufuncs on tensors) against NumPy: within a few ULPs over
moderate and huge arguments, and the standard's special cases (signed
zeros, infinities, atan2's quadrants) bit for bit."""

import os
import unittest

os.environ.setdefault("VKFLOW_VALIDATION", "1")

import numpy as np  # noqa: E402

import vkflow  # noqa: E402
import vkflow.array_api as xp  # noqa: E402
import vkflow.ops as vo  # noqa: E402
from test_dlpack import VkflowTest  # noqa: E402
from test_mathops import host  # noqa: E402

NZ = -0.0
INF = np.inf


class TestTrig(VkflowTest):
    def arr(self, values, dtype):
        return vkflow.asarray(np.asarray(values, dtype=dtype), device=self.mgr)

    def assertBits(self, got, want, msg):
        got, want = np.asarray(got), np.asarray(want)
        self.assertEqual(got.dtype, want.dtype, msg)
        nan = np.isnan(got) & np.isnan(want)
        same = (got.view(np.uint8).reshape(got.shape + (-1,)) ==
                want.view(np.uint8).reshape(want.shape + (-1,))).all(axis=-1)
        self.assertTrue(np.all(same | nan), "%s: got %r, want %r" % (msg, got, want))

    def test_accuracy(self):
        rng = np.random.default_rng(5)
        fns = {"sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
               "atan": np.arctan}
        for dt, rtol, big in (("float32", 4 * 2.0 ** -23, 3e38), ("float64", 4 * 2.0 ** -52, 1e300)):
            for name, f in fns.items():
                if name in ("asin", "acos"):
                    x = rng.uniform(-1, 1, 3001).astype(dt)
                else:
                    x = np.concatenate([rng.uniform(-10, 10, 1000), rng.uniform(-1e5, 1e5, 1000),
                                        np.exp(rng.uniform(0, np.log(big), 1001))]).astype(dt)
                got = host(getattr(xp, name)(self.arr(x, dt)))
                want = f(x)
                np.testing.assert_allclose(got, want, rtol=rtol, atol=4 * np.finfo(dt).eps * 1e-3,
                                           err_msg=name + " " + dt)
            a, b = rng.uniform(-5, 5, (2, 1, 7)).astype(dt), rng.uniform(-5, 5, (3, 1)).astype(dt)
            got = host(xp.atan2(self.arr(a, dt), self.arr(b, dt)))
            np.testing.assert_allclose(got, np.arctan2(a, b), rtol=rtol, err_msg="atan2 " + dt)
            self.assertEqual(got.shape, (2, 3, 7))

    def test_special_cases(self):
        for dt in ("float16", "float32", "float64"):
            x = np.asarray([np.nan, 0.0, NZ, INF, -INF], dtype=dt)
            edges = np.asarray([1.0, -1.0, 2.0, -2.0], dtype=dt)  # asin and acos: domain edges
            with np.errstate(all="ignore"):
                for name, f in (("sin", np.sin), ("cos", np.cos), ("tan", np.tan), ("asin", np.arcsin),
                                ("acos", np.arccos), ("atan", np.arctan)):
                    v = np.concatenate([x, edges]) if name in ("asin", "acos") else x
                    self.assertBits(host(getattr(vo, name)(self.arr(v, dt))), f(v), "%s %s" % (name, dt))
            ys = [np.nan, 0.0, NZ, 1.0, -1.0, INF, -INF]
            y, xx = np.meshgrid(np.asarray(ys, dt), np.asarray(ys, dt))
            got = host(xp.atan2(self.arr(y, dt), self.arr(xx, dt)))
            # The table's entries: a NaN, a zero or an infinity in y or x (NumPy's float32
            # atan2(1, 1) is an ULP below pi/4, ours is pi/4 rounded).
            table = ~((y != 0) & np.isfinite(y) & (xx != 0) & np.isfinite(xx))
            self.assertBits(got[table], np.arctan2(y, xx)[table], "atan2 %s" % dt)

    def test_ufuncs(self):
        x = np.asarray([0.5, -0.25, 3.0], "float32")
        t = self.arr(x, "float32")
        for uf in (np.sin, np.cos, np.tan, np.arctan, np.arcsin, np.arccos):
            r = uf(t)
            self.assertIsInstance(r, vkflow.Tensor, uf.__name__)
            with np.errstate(invalid="ignore"):
                np.testing.assert_allclose(host(r), uf(x), rtol=1e-6, err_msg=uf.__name__)
        r = np.arctan2(t, t)
        self.assertIsInstance(r, vkflow.Tensor)
        np.testing.assert_allclose(host(r), np.arctan2(x, x), rtol=1e-6)
        with self.assertRaises(Exception):
            xp.sin(self.arr([1, 2], "int32"))


if __name__ == "__main__":
    unittest.main()
