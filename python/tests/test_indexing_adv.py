"""Advanced indexing of vkflow tensors against NumPy: integer arrays
(vkflow tensors, NumPy arrays, lists), several of them broadcast, mixed
with integers, slices, ``...`` and ``None``, adjacent and apart; boolean
masks over all or the leading axes, 0-d masks; gets and sets (scalars,
0-d and broadcast arrays), through views; every dtype; the errors NumPy
raises."""

import os
import unittest

os.environ.setdefault("VKFLOW_VALIDATION", "1")

import numpy as np  # noqa: E402

import vkflow  # noqa: E402
from test_arraylike import ArrayTest  # noqa: E402

DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64")

I = np.array([1, 0, -1])  # noqa: E741
J = np.array([[1], [3]])
M3 = np.arange(24).reshape(2, 3, 4) % 3 == 1

# keys on an array of shape (2, 3, 4); "t:" marks arrays passed as vkflow tensors
KEYS = [
    ("1 array", lambda t: (t(I),)),
    ("list", lambda t: ([1, 0, 1],)),
    ("array on axis 1", lambda t: (slice(None), t(I))),
    ("two broadcast", lambda t: (slice(None), t(I), t(J))),
    ("array and int adjacent", lambda t: (1, t(I))),
    ("apart: int, slice, array", lambda t: (0, slice(None), t(np.array([3, 1])))),
    ("apart: arrays", lambda t: (t(np.array([1, 0])), slice(1, 3), t(np.array([3, 2])))),
    ("ellipsis", lambda t: (Ellipsis, t(np.array([0, 3, 3])))),
    ("None", lambda t: (None, t(I), slice(None, None, -1))),
    ("array then None", lambda t: (t(np.array([1])), None)),
    ("2-d index", lambda t: (t(np.array([[0, 1], [1, 1]])), 2)),
    ("empty index", lambda t: (t(np.array([], dtype=np.int64)),)),
    ("mask all", lambda t: (t(M3),)),
    ("mask leading", lambda t: (t(M3[:, :, 0]),)),
    ("mask after slice", lambda t: (slice(None), t(M3[0, :, :]))),
    ("mask and array", lambda t: (t(M3[:, 1, 0]), slice(None), t(np.array([2, 2])))),
    ("mask none set", lambda t: (t(np.zeros((2, 3), bool)),)),
    ("True", lambda t: (True,)),
    ("False", lambda t: (False, 0)),
    ("0-d mask array", lambda t: (t(np.array(True)), Ellipsis, 1)),
]


class TestGetitem(ArrayTest):

    def test_keys(self):
        a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
        x = self.vk(a)
        for name, key in KEYS:
            for how, t in (("numpy", lambda v: v), ("tensor", self.vk)):
                with self.subTest(key=name, index=how):
                    self.check(x[key(t)], a[key(lambda v: v)])

    def test_dtypes(self):
        rng = np.random.default_rng(1)
        for dtype in DTYPES:
            a = rng.integers(0, 100, (3, 5)).astype(dtype)
            x = self.vk(a)
            m = rng.random((3, 5)) < 0.5
            with self.subTest(dtype=dtype):
                self.check(x[self.vk(m)], a[m])
                self.check(x[self.vk(np.array([2, 0])), 1:], a[[2, 0], 1:])
                for idt in ("int8", "uint16", "int32", "uint64"):
                    self.check(x[:, self.vk(np.array([4, 1], dtype=idt))], a[:, [4, 1]])

    def test_large_mask(self):
        """A mask of 5000 elements crosses the compaction's scan blocks."""
        rng = np.random.default_rng(2)
        a = rng.standard_normal(5000).astype(np.float32)
        self.check(self.vk(a)[self.vk(a > 0.3)], a[a > 0.3])

    def test_view_source(self):
        a = np.arange(30, dtype=np.int32).reshape(5, 6)
        v = self.vk(a)[1:, ::2]
        self.check(v[[0, 3], 1], a[1:, ::2][[0, 3], 1])
        self.check(v[v > 15], a[1:, ::2][a[1:, ::2] > 15])

    def test_errors(self):
        x = self.vk(np.zeros((2, 3), np.float32))
        for name, key in (
                ("out of range", ([0, 2],)),
                ("negative out of range", (slice(None), np.array([-4]))),
                ("mask shape", (np.ones((3,), bool),)),
                ("mask too many dims", (np.ones((2, 3, 1), bool),)),
                ("float array", (np.array([0.5]),)),
                ("too many", ([0], 0, 0)),
                ("two ellipses", (Ellipsis, [0], Ellipsis)),
                ("int out of range", ([0], 5)),
                ("not broadcastable", ([0, 1], [0, 1, 2]))):
            with self.subTest(name):
                self.assertRaises(IndexError, lambda: x[key])
                self.assertRaises(IndexError, x.__setitem__, key, 1)


class TestSetitem(ArrayTest):

    def test_keys(self):
        for name, key in KEYS:
            for value in (7.0, np.float32(-1), "array", "0-d tensor"):
                a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
                shape = a[key(lambda v: v)].shape
                if value == "array":
                    value = np.arange(np.prod(shape[1:], dtype=int),
                                      dtype=np.float32).reshape(shape[1:]) + 100
                    v = self.vk(value)
                elif value == "0-d tensor":
                    value = np.float32(-5)
                    v = self.vk(value)
                else:
                    v = value
                x = self.vk(a.copy())
                with self.subTest(key=name, value=value):
                    x[key(self.vk)] = v
                    a[key(lambda v: v)] = value
                    self.check(x, a)

    def test_dtypes_masks(self):
        rng = np.random.default_rng(3)
        for dtype in DTYPES:
            a = rng.integers(0, 100, (4, 6)).astype(dtype)
            m = rng.random((4, 6)) < 0.5
            x = self.vk(a)
            with self.subTest(dtype=dtype):
                x[self.vk(m)] = 1
                a[m] = 1
                self.check(x, a)
                x[[3, 0], -1] = self.vk(np.array([0, 0], dtype=dtype))
                a[[3, 0], -1] = 0
                self.check(x, a)

    def test_through_view(self):
        a = np.arange(30, dtype=np.int64).reshape(5, 6)
        x = self.vk(a)
        v = x[1:, ::2]
        v[v > 15] = -1
        v[[0], [0, 2]] = -2
        w = a[1:, ::2]
        w[w > 15] = -1
        w[[0], [0, 2]] = -2
        self.check(x, a)
        self.check(v, w)

    def test_value_cast_and_self(self):
        a = np.arange(6, dtype=np.int32)
        x = self.vk(a)
        x[[0, 1]] = self.vk(np.array([9.7, 8.2]))  # float64 tensor: cast to int32
        a[[0, 1]] = np.array([9.7, 8.2]).astype(np.int32)
        self.check(x, a)
        x[[2, 3]] = x[4:]  # the value shares x's memory
        a[[2, 3]] = a[4:].copy()
        self.check(x, a)

    def test_read_only(self):
        ro = vkflow.asarray(np.arange(3, dtype=np.float32), device=self.mgr)
        if ro.read_only:
            self.assertRaises(ValueError, ro.__setitem__, [0], 1)


if __name__ == "__main__":
    unittest.main()
