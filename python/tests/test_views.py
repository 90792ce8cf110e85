"""Indexing and views against NumPy: integers, slices with steps, ``...``,
``None``, negative indices; views of views, writes through views, negative
steps, empty slices, 0-d results; __setitem__ from scalars, arrays, tensors
and overlapping views; reshape, T and mT; iteration; ops on views and into
views; the errors NumPy raises.
"""

import os
import unittest

os.environ.setdefault("VKFLOW_VALIDATION", "1")

import numpy as np  # noqa: E402

import vkflow  # noqa: E402
import vkflow.ops as vo  # noqa: E402
from test_dlpack import VkflowTest, aligned_bytes  # noqa: E402

KEYS = [
    0, -1, 2, (1, 2), (-1, -3), (slice(None), 2), slice(1, 3), slice(None, None, -1),
    (slice(None, None, -1), slice(1, 5, 2)), (Ellipsis, 3), (None, 1), (slice(1, 3), None),
    Ellipsis, (2, Ellipsis, None), (slice(4, 1, -2), slice(None, None, 3)), slice(3, 3),
    (slice(None), slice(5, 0)), (0, Ellipsis, 0), (None, Ellipsis, None), (1, slice(-2, None)),
    (slice(-100, 100),), (np.int64(1), np.int32(-2)),
]


class TestIndexing(VkflowTest):

    def setUp(self):
        super().setUp()
        self.a_np = np.arange(4 * 6, dtype=np.float32).reshape(4, 6)
        self.a = self.mgr.tensor(self.a_np.copy())

    def test_basic_keys(self):
        for key in KEYS:
            with self.subTest(key=key):
                v = self.a[key]
                want = self.a_np[key]
                self.assertIsInstance(v, vkflow.TensorView)
                self.assertEqual(v.shape, want.shape)
                np.testing.assert_array_equal(np.asarray(v), want)  # zero-copy (mapped)
                np.testing.assert_array_equal(v.read(), want)       # gathered on the GPU
                np.testing.assert_array_equal(np.asarray(v * 2), want * 2)

    def test_views_of_views(self):
        for k1, k2 in [(slice(None, None, -1), (slice(1, None), slice(None, None, 2))),
                       ((slice(1, 4), slice(None, None, -1)), (slice(None, None, 2), 1)),
                       (Ellipsis, (None, 0)), (1, slice(None, None, -2))]:
            with self.subTest(k1=k1, k2=k2):
                np.testing.assert_array_equal(np.asarray(self.a[k1][k2]), self.a_np[k1][k2])

    def test_zero_d(self):
        v = self.a[2, 3]
        self.assertEqual(v.shape, ())
        self.assertEqual(float(v), float(self.a_np[2, 3]))
        self.assertEqual(v.item(), self.a_np[2, 3].item())
        self.assertEqual(int(self.a[1][-1]), int(self.a_np[1, -1]))

    def test_writes_through_views(self):
        a, ref = self.a, self.a_np
        a[1:3, ::2] = 7
        ref[1:3, ::2] = 7
        a[0] = np.arange(6, dtype=np.float32) * -1
        ref[0] = np.arange(6, dtype=np.float32) * -1
        a[:, -1] = self.mgr.tensor(np.array([9, 8, 7, 6], np.float32))
        ref[:, -1] = [9, 8, 7, 6]
        a[::-1, 1] = np.array([1, 2, 3, 4], np.float32)
        ref[::-1, 1] = [1, 2, 3, 4]
        a[2] = np.array([[5]], np.float32)[0]  # broadcast (1,) -> (6,)
        ref[2] = 5
        v = a[:, 3]
        v += 100                              # in place through a view
        ref[:, 3] += 100
        vo.mul(a[3], 2, out=a[3])             # out= a view
        ref[3] *= 2
        a[...] = a[::-1]                      # overlapping source: copied first
        ref[...] = ref[::-1].copy()
        a[1:] = a[:-1]
        ref[1:] = ref[:-1].copy()
        np.testing.assert_array_equal(a.read(), ref)
        row = a[1]
        row.write(np.zeros(6, np.float32))
        ref[1] = 0
        np.testing.assert_array_equal(np.asarray(a), ref)

    def test_setitem_copies_the_value(self):
        # The write is queued behind busy work; the array changes right after
        # the assignment returns, and the tensor must get the old values.
        busy = self.mgr.tensor(np.ones(1 << 20, dtype=np.float32))
        t = self.mgr.tensor(np.zeros(4096, np.float32))
        for trial in range(4):
            for _ in range(10):
                vo.add(busy, busy, out=busy)
            arr = aligned_bytes(4096 * 4).view(np.float32)  # importable without a copy
            arr[:] = np.arange(4096, dtype=np.float32) + trial
            t[...] = arr
            arr[:] = -7
            np.testing.assert_array_equal(t.read(), np.arange(4096, dtype=np.float32) + trial)

    def test_setitem_casts_like_numpy(self):
        t = self.mgr.tensor(np.zeros(4, np.int32))
        t[1] = 2.7
        t[2:] = np.array([1.9, -1.9])
        ref = np.zeros(4, np.int32)
        ref[1] = 2.7
        ref[2:] = np.array([1.9, -1.9])
        np.testing.assert_array_equal(t.read(), ref)

    def test_reshape_T_mT(self):
        a, ref = self.a, self.a_np
        r = a.reshape(3, 8)
        self.assertIs(r.base, a)  # a view of the same memory
        np.testing.assert_array_equal(np.asarray(r), ref.reshape(3, 8))
        r[0, 0] = -5
        ref[0, 0] = -5
        np.testing.assert_array_equal(a.read(), ref)
        np.testing.assert_array_equal(np.asarray(a.reshape(-1)), ref.reshape(-1))
        np.testing.assert_array_equal(np.asarray(a.reshape((2, -1, 3))), ref.reshape(2, -1, 3))
        np.testing.assert_array_equal(np.asarray(a.T), ref.T)
        np.testing.assert_array_equal(np.asarray(a.T.reshape(-1)), ref.T.reshape(-1))  # a copy
        self.assertIsNot(a.T.reshape(-1).base, a)
        with self.assertRaises(ValueError):
            a.T.reshape(-1, copy=False)
        np.testing.assert_array_equal(np.asarray(a.mT), ref.T)
        b = self.mgr.tensor(np.arange(24, dtype=np.int32).reshape(2, 3, 4))
        np.testing.assert_array_equal(np.asarray(b.mT), np.swapaxes(b.read(), -1, -2))
        with self.assertRaises(ValueError):
            b.T
        with self.assertRaises(ValueError):
            a[0].mT
        with self.assertRaises(ValueError):
            a.reshape(5, 5)

    def test_iteration_and_len(self):
        rows = list(self.a)
        self.assertEqual(len(rows), len(self.a_np))
        for r, want in zip(rows, self.a_np):
            np.testing.assert_array_equal(np.asarray(r), want)
        self.assertEqual([float(x) for x in self.a[1]], list(self.a_np[1]))

    def test_ops_on_views(self):
        a, ref = self.a, self.a_np
        np.testing.assert_array_equal(np.asarray(a[:, ::2] + a[:, 1::2]), ref[:, ::2] + ref[:, 1::2])
        np.testing.assert_array_equal(np.asarray(vo.sum(a[::-1, 2:], axis=0)),
                                      ref[::-1, 2:].sum(axis=0))
        np.testing.assert_array_equal(np.asarray(a.T @ a), ref.T @ ref)
        cap = np.from_dlpack(a[1:3])
        np.testing.assert_array_equal(cap, ref[1:3])

    def test_errors(self):
        a = self.a
        with self.assertRaisesRegex(IndexError, "index 4 is out of bounds for axis 0 with size 4"):
            a[4]
        with self.assertRaisesRegex(IndexError, "index -7 is out of bounds for axis 1"):
            a[0, -7]
        with self.assertRaisesRegex(IndexError, "too many indices"):
            a[1, 2, 3]
        with self.assertRaisesRegex(IndexError, "single ellipsis"):
            a[..., ...]
        with self.assertRaises(IndexError):  # integer arrays and masks gather (test_indexing_adv)
            a[1.5]
        with self.assertRaises(IndexError):
            a[np.array([0.5, 1])]
        with self.assertRaisesRegex(ValueError, "could not broadcast"):
            a[0] = np.arange(5)
        with self.assertRaisesRegex(ValueError, "could not broadcast"):
            a[:, 0] = np.ones((2, 4))
        with self.assertRaises(TypeError):
            a[0].handle  # a view has no handle of its own
        with self.assertRaises(BufferError):
            a[0].__dlpack__(copy=False)
        with self.assertRaises(TypeError):
            len(a[0, 0])

    def test_view_outlives_name_of_base(self):
        v = self.mgr.tensor(np.arange(10, dtype=np.int32))[2:5]
        import gc
        gc.collect()
        np.testing.assert_array_equal(np.asarray(v), [2, 3, 4])
        b = v.base
        b.close()
        with self.assertRaises(vkflow.ClosedError):
            v.read()


if __name__ == "__main__":
    unittest.main()
