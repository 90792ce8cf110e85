"""unique_all / unique_counts / unique_inverse / unique_values (issue 23):
the Go op library's dynamic ops, against NumPy's unique (whose NaNs merge
where the standard's stay distinct: compared on the non-NaN values)."""

import unittest

import numpy as np

from vkflow import array_api as xp


class TestUnique(unittest.TestCase):
    def test_against_numpy(self):
        rng = np.random.default_rng(11)
        for dtype in ("int8", "int32", "uint16", "int64", "float16", "float32", "float64", "bool"):
            for shape in ((0,), (1,), (17,), (40, 60), (3, 1, 5)):
                with self.subTest(dtype=dtype, shape=shape):
                    a = rng.integers(0, 9, size=shape).astype(dtype)
                    x = xp.asarray(a)
                    v, i, inv, c = xp.unique_all(x)
                    wv, wi, winv, wc = np.unique(a, return_index=True, return_inverse=True,
                                                 return_counts=True)
                    np.testing.assert_array_equal(np.asarray(v), wv)
                    np.testing.assert_array_equal(np.asarray(i), wi)
                    np.testing.assert_array_equal(np.asarray(inv), winv.reshape(shape))
                    np.testing.assert_array_equal(np.asarray(c), wc)
                    self.assertEqual(i.dtype, xp.int64)
                    self.assertEqual(inv.shape, shape)
                    np.testing.assert_array_equal(np.asarray(xp.unique_values(x)), wv)
                    cv, cc = xp.unique_counts(x)
                    np.testing.assert_array_equal(np.asarray(cc), wc)
                    iv, ii = xp.unique_inverse(x)
                    np.testing.assert_array_equal(np.asarray(ii), winv.reshape(shape))

    def test_nans_distinct_zeros_one(self):
        a = np.array([np.nan, 0.0, -0.0, 2.0, np.nan, 2.0], dtype=np.float32)
        r = xp.unique_all(xp.asarray(a))
        v = np.asarray(r.values)
        self.assertEqual(v.shape, (4,))
        np.testing.assert_array_equal(v[:2], [0.0, 2.0])
        self.assertTrue(np.isnan(v[2:]).all())
        np.testing.assert_array_equal(np.asarray(r.counts), [2, 2, 1, 1])
        np.testing.assert_array_equal(np.asarray(r.inverse_indices), [2, 0, 0, 1, 3, 1])

    def test_errors(self):
        with self.assertRaises(TypeError):
            xp.unique_values(np.arange(3))


if __name__ == "__main__":
    unittest.main()
