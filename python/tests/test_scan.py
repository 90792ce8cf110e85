"""cumulative_sum, cumulative_prod, nonzero, take, tril, triu and meshgrid
(vkflow.array_api, Go ops underneath) against NumPy: every dtype, negative
axes, lengths crossing the scan's blocks of 2048, empty arrays, the errors
the standard names, and a guard that the scans run without host reads."""

import os
import unittest

os.environ.setdefault("VKFLOW_VALIDATION", "1")

import numpy as np  # noqa: E402

import vkflow.array_api as xp  # noqa: E402
from test_arraylike import ArrayTest  # noqa: E402
from test_numpy_protocols import no_host_reads  # noqa: E402

DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64")


def data(shape, dtype, rng, prod=False):
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if prod:
        if dtype.startswith("float"):
            return (rng.choice([-1, 1], shape) * (1 + 0.01 * rng.standard_normal(shape))
                    ).astype(dtype)
        return rng.integers(0, 3, shape).astype(dtype)
    if dtype.startswith("float"):
        return rng.standard_normal(shape).astype(dtype)
    return rng.integers(0, 50, shape).astype(dtype)


def np_scan(f, a, axis, dtype, include_initial):
    """NumPy's cumsum/cumprod with the standard's default dtype and
    include_initial."""
    if dtype is None:
        k = a.dtype.kind
        dtype = a.dtype if k == "f" else (np.uint64 if k == "u" else np.int64)
    r = f(a.astype(dtype), axis=axis, dtype=dtype)
    if include_initial:
        shape = list(a.shape)
        shape[axis] = 1
        init = np.zeros if f is np.cumsum else np.ones
        r = np.concatenate([init(shape, dtype=dtype), r], axis=axis)
    return r


class TestScan(ArrayTest):

    def test_cumulative(self):
        rng = np.random.default_rng(1)
        for name, f in (("cumulative_sum", np.cumsum), ("cumulative_prod", np.cumprod)):
            for dtype in DTYPES:
                for shape, axis in (((7,), 0), ((5000,), -1), ((3, 2100), 1), ((4, 3), 0),
                                    ((2, 0), 1), ((0,), 0)):
                    for inc in (False, True):
                        a = data(shape, dtype, rng, prod=name == "cumulative_prod")
                        with self.subTest(name=name, dtype=dtype, shape=shape, inc=inc):
                            got = getattr(xp, name)(self.vk(a), axis=axis, include_initial=inc)
                            ax = axis % len(shape)
                            if not dtype.startswith("float"):
                                self.check(got, np_scan(f, a, ax, None, inc))
                                continue
                            self.close(got, a, f, ax, inc)

    def close(self, got, a, f, ax, inc):
        """A float scan against float64 NumPy: within 64 eps of the running
        sum of |x| (the tree's association), or of the product of |x| times
        the count (each product rounds); float16 accumulates in float32."""
        want = np_scan(f, a.astype(np.float64), ax, None, inc)
        mag = np_scan(f, np.abs(a.astype(np.float64)), ax, None, inc)
        if f is np.cumprod:
            count = np.cumsum(np.ones_like(mag), axis=ax)
            mag = mag * count
        eps = np.finfo(a.dtype).eps
        acc = np.finfo(np.float32).eps if a.dtype == np.float16 else eps
        self.assertEqual((got.dtype, got.shape), (a.dtype.name, want.shape))
        g = np.asarray(got).astype(np.float64)
        bound = 64 * acc * mag + eps * np.abs(want)
        bad = np.abs(g - want) > bound
        self.assertFalse(bad.any(), "%d elements off, first at %s: %r vs %r"
                         % (bad.sum(), np.argwhere(bad)[:1], g[bad][:3], want[bad][:3]))

    def test_cumulative_dtype(self):
        rng = np.random.default_rng(2)
        a = data((300,), "int16", rng)
        for dtype in ("int8", "float64", "uint32"):
            self.check(xp.cumulative_sum(self.vk(a), dtype=getattr(xp, dtype)),
                       np_scan(np.cumsum, a, 0, dtype, False))
        # 1-d: axis may be None
        self.check(xp.cumulative_prod(self.vk(a[:5] % 3)), np.cumprod(a[:5] % 3, dtype=np.int64))

    def test_errors(self):
        t = self.vk(np.ones((2, 3), np.float32))
        for what, exc, call in (
                ("2-d without axis", ValueError, lambda: xp.cumulative_sum(t)),
                ("0-d", ValueError, lambda: xp.cumulative_prod(self.vk(np.float32(1)))),
                ("axis", IndexError, lambda: xp.cumulative_sum(t, axis=2)),
                ("nonzero 0-d", ValueError, lambda: xp.nonzero(self.vk(np.int32(1)))),
                ("take 2-d without axis", ValueError, lambda: xp.take(t, self.vk([0]))),
                ("tril 1-d", ValueError, lambda: xp.tril(self.vk([1, 2]))),
                ("meshgrid indexing", ValueError, lambda: xp.meshgrid(t[0], indexing="yx")),
                ("meshgrid 2-d", ValueError, lambda: xp.meshgrid(t))):
            with self.subTest(what):
                self.assertRaises(exc, call)

    def test_on_device(self):
        """The scans, take and the triangles read nothing back; nonzero reads
        only its count (not through the tensors' host paths)."""
        t = self.vk(np.arange(12, dtype=np.float32).reshape(3, 4))
        with no_host_reads():
            xp.cumulative_sum(t, axis=1)
            xp.cumulative_prod(t, axis=0, include_initial=True)
            xp.take(t, self.vk([2, 0]), axis=1)
            xp.tril(t)
            xp.nonzero(t)
            xp.meshgrid(t[0], t[1])


class TestNonzeroTake(ArrayTest):

    def test_nonzero(self):
        rng = np.random.default_rng(3)
        for dtype in DTYPES:
            for shape in ((1,), (9,), (5000,), (3, 700, 2), (2, 0, 3)):
                a = data(shape, dtype, rng) * (rng.random(shape) < 0.4).astype(dtype)
                if dtype.startswith("float") and a.size:
                    a.flat[0], a.flat[-1] = np.nan, -0.0
                with self.subTest(dtype=dtype, shape=shape):
                    got = xp.nonzero(self.vk(a))
                    want = np.nonzero(a)
                    self.assertEqual(len(got), len(want))
                    for g, w in zip(got, want):
                        self.check(g, w.astype(np.int64))

    def test_take(self):
        rng = np.random.default_rng(4)
        for dtype in DTYPES:
            a = data((4, 5, 6), dtype, rng)
            for axis in (0, 1, -1):
                n = a.shape[axis]
                idx = rng.integers(-n, n, (2, 3))
                with self.subTest(dtype=dtype, axis=axis):
                    self.check(xp.take(self.vk(a), self.vk(idx), axis=axis),
                               np.take(a, idx, axis=axis))
        self.check(xp.take(self.vk(np.arange(5)), self.vk([4, -5])), np.array([4, 0]))

    def test_tril_triu(self):
        rng = np.random.default_rng(5)
        for dtype in DTYPES:
            for shape in ((4, 4), (2, 3, 5), (5, 2), (0, 3)):
                a = data(shape, dtype, rng)
                for k in (0, 1, -1, 7, -7):
                    with self.subTest(dtype=dtype, shape=shape, k=k):
                        self.check(xp.tril(self.vk(a), k=k), np.tril(a, k=k))
                        self.check(xp.triu(self.vk(a), k=k), np.triu(a, k=k))

    def test_meshgrid(self):
        a, b, c = np.arange(3.0), np.arange(4.0) * 10, np.arange(2.0) - 5
        for indexing in ("xy", "ij"):
            for arrays in ((a,), (a, b), (a, b, c), (a[:0], b)):
                with self.subTest(indexing=indexing, n=len(arrays)):
                    got = xp.meshgrid(*[self.vk(x) for x in arrays], indexing=indexing)
                    want = np.meshgrid(*arrays, indexing=indexing)
                    self.assertEqual(len(got), len(want))
                    for g, w in zip(got, want):
                        self.check(g, w)
        self.assertEqual(xp.meshgrid(), ())  # a tuple from 2025.12


if __name__ == "__main__":
    unittest.main()
