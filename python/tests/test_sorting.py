"""sort, argsort and searchsorted (vkflow.array_api, vkflow._sorting)
against NumPy's stable sort and searchsorted: every real dtype, ties, the
float specials (NaN last both ways, -0 equal to +0), axes, 0-d and empty
arrays, descending stability, sorters, and the errors."""

import os
import unittest

os.environ.setdefault("VKFLOW_VALIDATION", "1")

import numpy as np  # noqa: E402

import vkflow  # noqa: E402
import vkflow.array_api as xp  # noqa: E402
from test_arraylike import ArrayTest, host  # noqa: E402

DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64")
SPECIALS = (np.nan, -0.0, 0.0, np.inf, -np.inf)


def data(rng, dtype, shape, ties):
    """Random values of dtype: few distinct ones (ties) or the full range; a
    fifth of float elements are NaN, signed zeros or infinities."""
    n = int(np.prod(shape))
    if dtype == "bool":
        return rng.integers(0, 2, n).astype(bool).reshape(shape)
    if dtype.startswith("float"):
        v = rng.integers(-3, 4, n).astype(np.float64) if ties else rng.standard_normal(n) * 100
        special = rng.integers(0, 5, n) == 0
        v[special] = rng.choice(SPECIALS, special.sum())
        return v.astype(dtype).reshape(shape)
    info = np.iinfo(dtype)
    if ties:
        return rng.integers(0, 5, n).astype(dtype).reshape(shape)
    return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True).reshape(shape)


def stable_argsort(x, axis, descending):
    """NumPy's stable argsort, descending too (equal elements in input order,
    NaN last): a stable argsort of ranks, reversed for the numbers."""
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    u, inv = np.unique(x, return_inverse=True)  # equal values (-0, +0; NaNs) share a rank
    inv = inv.reshape(x.shape)
    finite = int(np.count_nonzero(~np.isnan(u))) if u.dtype.kind == "f" else len(u)
    key = np.where(inv < finite, finite - 1 - inv, inv)
    return np.argsort(key, axis=axis, kind="stable")


def bits(a):
    a = np.ascontiguousarray(a)
    return a.view("u%d" % a.itemsize) if a.dtype.kind == "f" else a


class TestSort(ArrayTest):

    def run_case(self, x, axis, descending):
        msg = "%s %s axis %d descending %s" % (x.dtype, x.shape, axis, descending)
        want = stable_argsort(x, axis if x.ndim else None, descending).reshape(x.shape)
        t = self.vk(x)
        got = xp.argsort(t, axis=axis, descending=descending)
        self.assertEqual(got.dtype, "int64", msg)
        np.testing.assert_array_equal(host(got), want, err_msg=msg)
        got = xp.sort(t, axis=axis, descending=descending, stable=False)
        self.assertEqual(got.dtype, x.dtype.name, msg)
        vals = x if x.ndim == 0 else np.take_along_axis(x, want, axis=axis)
        np.testing.assert_array_equal(bits(host(got)), bits(vals), err_msg=msg)

    def test_dtypes(self):
        """Every real dtype, full range and many ties, both orders."""
        rng = np.random.default_rng(3)
        for dtype in DTYPES:
            for ties in (False, True):
                for descending in (False, True):
                    self.run_case(data(rng, dtype, (3, 257), ties), -1, descending)
                    self.run_case(data(rng, dtype, (2100,), ties), 0, descending)

    def test_axes_and_shapes(self):
        """Any axis (negative too), 0-d, empty, rows of one, long rows."""
        rng = np.random.default_rng(4)
        cases = [((), -1), ((), 0), ((0,), 0), ((1,), 0), ((3, 0), 1), ((0, 4), 1), ((4, 1), 1),
                 ((4, 5, 6), 0), ((4, 5, 6), 1), ((4, 5, 6), -1), ((4, 5, 6), -3),
                 ((5000, 3), 0), ((300, 7), 1)]
        for shape, axis in cases:
            for dtype in ("float32", "int64", "uint16"):
                self.run_case(data(rng, dtype, shape, True), axis, False)
                self.run_case(data(rng, dtype, shape, True), axis, True)

    def test_specials(self):
        """NaN last ascending and descending, -0 == +0 kept in input order,
        infinities at the ends."""
        x = np.array([np.nan, 0.0, -np.inf, -0.0, 1.0, np.nan, np.inf, 0.0, -1.0], "float32")
        t = self.vk(x)
        np.testing.assert_array_equal(host(xp.argsort(t)), [2, 8, 1, 3, 7, 4, 6, 0, 5])
        np.testing.assert_array_equal(host(xp.argsort(t, descending=True)),
                                      [6, 4, 1, 3, 7, 8, 2, 0, 5])
        got = host(xp.sort(t))
        np.testing.assert_array_equal(np.signbit(got), [1, 1, 0, 1, 0, 0, 0, 0, 0])

    def test_views_and_namespace(self):
        """A strided view sorts as its values; vkflow.ops has the ops too."""
        x = np.arange(24, dtype="int32")[::-1].reshape(4, 6)
        t = self.vk(x)
        v = t[:, ::2]
        np.testing.assert_array_equal(host(xp.sort(v)), np.sort(x[:, ::2]))
        np.testing.assert_array_equal(host(vkflow.ops.argsort(t, axis=0)),
                                      np.argsort(x, axis=0, kind="stable"))
        self.assertIn("sort", vkflow.ops.names())

    def test_errors(self):
        t = self.vk(np.zeros((2, 3), "float32"))
        with self.assertRaises(IndexError):
            xp.sort(t, axis=2)
        with self.assertRaises(ValueError):
            xp.argsort(t, axis=-3)
        with self.assertRaises(TypeError):
            xp.sort(np.zeros(3))


class TestSearchSorted(ArrayTest):

    def test_against_numpy(self):
        """Every real dtype, both sides, with and without sorter; NaN and
        signed zeros searched as NumPy does (NaN after +inf)."""
        rng = np.random.default_rng(5)
        for dtype in DTYPES:
            for n1 in (1, 9, 1000):
                x1 = data(rng, dtype, (n1,), True)
                x2 = np.concatenate([data(rng, dtype, (12,), True), np.resize(x1, 6)]).reshape(2, 3, 3)
                perm = np.argsort(x1, kind="stable")
                for side in ("left", "right"):
                    msg = "%s %d %s" % (dtype, n1, side)
                    want = np.searchsorted(x1[perm], x2, side=side)
                    got = xp.searchsorted(self.vk(x1[perm]), self.vk(x2), side=side)
                    self.assertEqual(got.dtype, "int64")
                    np.testing.assert_array_equal(host(got), want, err_msg=msg)
                    got = xp.searchsorted(self.vk(x1), self.vk(x2), side=side,
                                          sorter=self.vk(perm.astype("int32")))
                    np.testing.assert_array_equal(host(got), want, err_msg=msg + " sorter")

    def test_shapes_and_promotion(self):
        x1 = self.vk(np.array([1, 3, 5, 7], "int16"))
        np.testing.assert_array_equal(host(xp.searchsorted(x1, self.vk(np.int16(4)))), 2)
        got = xp.searchsorted(x1, self.vk(np.array([[5, 8]], "int32")), side="right")
        self.assertEqual(got.shape, (1, 2))
        np.testing.assert_array_equal(host(got), [[3, 4]])
        empty = self.vk(np.zeros(0, "float32"))
        np.testing.assert_array_equal(host(xp.searchsorted(empty, self.vk(
            np.ones(3, "float32")))), [0, 0, 0])
        self.assertEqual(xp.searchsorted(x1, self.vk(np.zeros((0, 2), "int16"))).shape, (0, 2))

    def test_errors(self):
        x1 = self.vk(np.array([1.0, 2.0], "float32"))
        with self.assertRaises(ValueError):
            xp.searchsorted(x1, x1, side="middle")
        with self.assertRaises(ValueError):
            xp.searchsorted(self.vk(np.zeros((2, 2), "float32")), x1)
        with self.assertRaises(TypeError):
            xp.searchsorted(x1, x1, sorter=x1)
        with self.assertRaises(ValueError):
            xp.searchsorted(x1, x1, sorter=self.vk(np.arange(3)))


if __name__ == "__main__":
    unittest.main()
