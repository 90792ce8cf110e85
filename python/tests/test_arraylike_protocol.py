"""vkflow.Tensor's NumPy protocol against NumPy: ``__array__`` (zero-copy
for mapped tensors, copies otherwise), the scalar conversions, ``item``,
``tolist``, ``len``, iteration, ``repr``/``str``, ``T``, ``mT``,
``reshape`` and ``astype``.
"""

import operator
import os
import unittest

os.environ.setdefault("VKFLOW_VALIDATION", "1")

import numpy as np  # noqa: E402

import vkflow  # noqa: E402
from test_arraylike import ArrayTest  # noqa: E402
from test_ops import host  # noqa: E402


def address(arr):
    return arr.__array_interface__["data"][0]


class TestArrayProtocol(ArrayTest):

    def test_asarray_shape_dtype(self):
        for dtype in ("float32", "int32", "uint8", "int64", "float16", "float64", "bool"):
            for shape in ((2, 3), (5,), (), (0, 4)):
                with self.subTest(dtype=dtype, shape=shape):
                    want = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
                    want = (want % 3).astype(dtype)
                    got = np.asarray(self.vk(want))
                    self.assertIsInstance(got, np.ndarray)
                    self.assertEqual(got.dtype, want.dtype)
                    self.assertEqual(got.shape, shape)
                    np.testing.assert_array_equal(got, want)
                    np.testing.assert_array_equal(np.array(self.vk(want)), want)

    def test_zero_copy_when_mapped(self):
        t = self.mgr.tensor(np.arange(6, dtype=np.float32), memory="host")
        self.assertTrue(t.mapped)
        a, b = np.asarray(t), np.asarray(t)
        self.assertEqual(address(a), address(b), "two views of one mapping")
        self.assertFalse(a.flags.writeable, "a zero-copy view is read-only")
        t += 1.0                                                # seen through the view
        np.testing.assert_array_equal(np.asarray(t), np.arange(6) + 1)
        np.testing.assert_array_equal(a, np.arange(6) + 1)
        c = t.__array__(copy=True)
        self.assertNotEqual(address(c), address(a))
        self.assertTrue(c.flags.writeable)
        c[0] = 100                                              # a copy: the tensor keeps 1
        self.assertEqual(float(host(t)[0]), 1.0)
        self.assertIs(type(t.__array__(copy=False)), np.ndarray)
        del a, b, c

    def test_copies_when_not_mapped(self):
        s = self.mgr.tensor((4,), dtype="float32", memory="storage")
        self.assertFalse(s.mapped)
        np.testing.assert_array_equal(np.asarray(s), np.zeros(4, np.float32))
        with self.assertRaisesRegex(ValueError, "copy"):
            s.__array__(copy=False)
        b = self.vk(np.array([True, False]))
        with self.assertRaisesRegex(ValueError, "copy"):
            b.__array__(copy=False)
        np.testing.assert_array_equal(np.asarray(b), [True, False])

    def test_dtype_argument(self):
        t = self.vk(np.float32([1.5, 2.5]))
        got = np.asarray(t, dtype=np.float64)
        self.assertEqual(got.dtype, np.float64)
        np.testing.assert_array_equal(got, [1.5, 2.5])
        self.assertEqual(t.__array__(np.int32).tolist(), [1, 2])
        with self.assertRaises(ValueError):
            t.__array__(np.float64, copy=False)

    def test_numpy_functions_take_tensors(self):
        a = np.float32([[1, 2], [3, 4]])
        t = self.vk(a)
        np.testing.assert_array_equal(np.concatenate([t, t]), np.concatenate([a, a]))
        e = np.exp(t)  # on the GPU (test_numpy_protocols.py has the protocols' tables)
        self.assertIsInstance(e, vkflow.Tensor)
        np.testing.assert_allclose(np.asarray(e), np.exp(a), rtol=1e-6)
        self.assertTrue(np.array_equal(t, a))


class TestConversions(ArrayTest):

    def test_scalars(self):
        f = self.vk(np.float32(2.75))
        i = self.vk(np.array([-7], np.int32))
        self.assertEqual(float(f), 2.75)
        self.assertEqual(int(f), 2)
        self.assertEqual(complex(f), 2.75 + 0j)
        self.assertEqual(int(i), -7)
        self.assertEqual(float(i), -7.0)
        self.assertEqual(operator.index(self.vk(np.int64(5))), 5)
        self.assertEqual([10, 11, 12][self.vk(np.int32(1))], 11)
        self.assertIs(bool(self.vk(np.array([0.0], np.float32))), False)
        self.assertIs(bool(self.vk(np.array(True))), True)
        for f in (float, int, complex):
            with self.subTest(f=f.__name__), self.assertRaisesRegex(TypeError, "size-1"):
                f(self.vk(np.zeros(2, np.float32)))

    def test_index_needs_integer_0d(self):
        for x in (np.array([3], np.int32), np.float32(3), np.array(True)):
            with self.subTest(x=repr(x)), self.assertRaisesRegex(TypeError, "integer scalar"):
                operator.index(self.vk(x))

    def test_bool_is_ambiguous(self):
        with self.assertRaisesRegex(ValueError, "more than one element is ambiguous"):
            bool(self.vk(np.zeros(2, np.float32)))
        with self.assertRaisesRegex(ValueError, "more than one element is ambiguous"):
            if self.vk(np.ones(3, np.float32)) > 0:
                pass
        with self.assertRaisesRegex(ValueError, "empty"):
            bool(self.vk(np.zeros(0, np.float32)))

    def test_item_tolist(self):
        a = np.float32([[1.5, 2], [3, 4]])
        t = self.vk(a)
        self.assertEqual(t.tolist(), a.tolist())
        self.assertEqual(self.vk(np.int32(4)).tolist(), 4)
        v = self.vk(np.array([9], np.int64)).item()
        self.assertEqual((v, type(v)), (9, int))
        v = self.vk(np.float32(0.5)).item()
        self.assertEqual((v, type(v)), (0.5, float))
        self.assertIs(self.vk(np.array(False)).item(), False)
        with self.assertRaisesRegex(ValueError, "size 1"):
            t.item()

    def test_len_iter(self):
        a = np.arange(12, dtype=np.int32).reshape(3, 4)
        t = self.vk(a)
        self.assertEqual(len(t), 3)
        rows = list(t)
        self.assertEqual(len(rows), 3)
        for got, want in zip(rows, a):
            np.testing.assert_array_equal(got, want)
        self.assertEqual([int(v) for v in self.vk(a[0])], [0, 1, 2, 3])
        self.assertEqual(list(self.vk(np.zeros((0, 2), np.float32))), [])
        self.assertIn(5, self.vk(a[1]))
        with self.assertRaisesRegex(TypeError, "unsized"):
            len(self.vk(np.float32(1)))
        with self.assertRaisesRegex(TypeError, "0-d"):
            list(self.vk(np.float32(1)))


class TestRepr(ArrayTest):

    def test_repr_values(self):
        prefix = "vkflow.Tensor("
        cases = [np.float32([1, 2, 3]), np.arange(6, dtype=np.int32).reshape(2, 3),
                 np.array([True, False]), np.float32(1.5), np.zeros((0, 3), np.float32),
                 np.zeros(0, np.int64)]
        for a in cases:
            with self.subTest(a=repr(a)):
                r = repr(self.vk(a))
                body = np.array2string(a, separator=", ", prefix=prefix)
                self.assertTrue(r.startswith(prefix + body + ", "), r)
                self.assertIn("dtype=%s" % a.dtype.name, r)
                self.assertIn("device=%r" % (self.mgr,), r)
                self.assertEqual(str(self.vk(a)), np.array2string(a))
        self.assertIn("shape=(0, 3)", repr(self.vk(cases[4])))
        d = vkflow.asarray([1.0, 2.0])                           # the default device: not named
        self.assertEqual(repr(d), "vkflow.Tensor([1., 2.], dtype=float32)")

    def test_repr_large_is_abbreviated(self):
        r = repr(self.vk(np.arange(100_000, dtype=np.float32)))
        self.assertIn("...", r)
        self.assertLess(len(r), 400)

    def test_repr_closed_and_storage(self):
        t = self.vk(np.float32([1, 2]))
        t.close()
        self.assertEqual(repr(t), "vkflow.Tensor(<closed>, shape=(2,), dtype=float32)")
        self.assertEqual(str(t), repr(t))
        s = self.mgr.tensor((2,), dtype="int32", memory="storage")
        self.assertTrue(repr(s).startswith("vkflow.Tensor([0, 0], dtype=int32"), repr(s))
        self.mgr.close()
        self.assertIn("<closed>", repr(s))


class TestLayout(ArrayTest):

    def test_T_mT(self):
        a = np.arange(6, dtype=np.float32).reshape(2, 3)
        self.check(self.vk(a).T, a.T)
        self.check(self.vk(a[0]).T, a[0])
        self.check(self.vk(np.float32(3)).T, np.float32(3))
        b = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
        self.check(self.vk(b).mT, np.swapaxes(b, -1, -2))
        self.check(self.vk(a).mT, a.T)
        with self.assertRaisesRegex(ValueError, r"\(2, 3, 4\)"):
            self.vk(b).T
        with self.assertRaisesRegex(ValueError, r"\(3,\)"):
            self.vk(a[0]).mT

    def test_reshape(self):
        a = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
        t = self.vk(a)
        for shape in [(24,), (4, 6), (2, -1), (-1, 3, 2, 1), (1, 24)]:
            with self.subTest(shape=shape):
                self.check(t.reshape(shape), a.reshape(shape))
                self.check(t.reshape(*shape), a.reshape(shape))
        self.check(self.vk(np.float32([5])).reshape(()), np.float32(5))
        self.check(self.vk(np.zeros((0, 4), np.float32)).reshape(4, 0),
                   np.zeros((4, 0), np.float32))
        for bad, exc in [((5, 5), ValueError), ((-1, -1), ValueError), ((7, -1), ValueError),
                         ((2, -3), ValueError), ((2.5, 4), TypeError)]:
            with self.subTest(bad=bad), self.assertRaises(exc) as cm:
                t.reshape(bad)
            if exc is ValueError:
                self.assertIn("(2, 3, 4)", str(cm.exception))

    def test_reshape_keeps_memory_kind(self):
        h = self.mgr.tensor(np.arange(4, dtype=np.float32), memory="host")
        self.assertEqual(h.reshape(2, 2).memory, "host")
        s = self.mgr.tensor((4,), dtype="float32", memory="storage")
        self.assertEqual(s.reshape(2, 2).memory, "storage")

    def test_copying_layout_methods(self):
        """This layer's own reshape, T, mT and iteration (GPU copies and
        host rows), which the views layer replaces where it is installed."""
        from vkflow._protocols import _ArrayMethods as M
        a = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
        t = self.vk(a)
        r = M.reshape(t, 6, -1)
        self.check(r, a.reshape(6, 4))
        r += 1                                                  # a copy: t unchanged
        np.testing.assert_array_equal(host(t), a)
        self.assertIs(M.reshape(t, (2, 3, 4), copy=False), t)
        with self.assertRaisesRegex(ValueError, "copy=False"):
            M.reshape(t, 24, copy=False)
        with self.assertRaisesRegex(ValueError, r"\(2, 3, 4\)"):
            M.reshape(t, 5, 5)
        self.check(M.reshape(self.vk(np.zeros((0, 4), np.float32)), 4, 0),
                   np.zeros((4, 0), np.float32))
        s = self.mgr.tensor((4,), dtype="float32", memory="storage")
        self.assertEqual(M.reshape(s, 2, 2).memory, "storage")
        self.check(M.T.fget(self.vk(a[0])), a[0].T)
        self.check(M.mT.fget(t), np.swapaxes(a, -1, -2))
        with self.assertRaises(ValueError):
            M.T.fget(t)
        rows = list(M.__iter__(t))
        self.assertIsInstance(rows[0], np.ndarray)
        np.testing.assert_array_equal(rows[1], a[1])

    def test_reduction_methods(self):
        a = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
        t = self.vk(a)
        for name in ("sum", "mean", "max", "min", "prod", "argmax"):
            with self.subTest(name=name):
                self.check(getattr(t, name)(), getattr(a, name)(), "approx")
                self.check(getattr(t, name)(axis=1), getattr(a, name)(axis=1), "approx")
        self.check(t.sum(axis=0, keepdims=True), a.sum(axis=0, keepdims=True))
        self.assertEqual(float(t.sum()), float(a.sum()))
        self.check(t.sum(dtype="float64"), a.sum(dtype=np.float64))
        out = self.vk(np.zeros(4, np.float32))
        self.assertIs(t.max(axis=0, out=out), out)
        self.check(out, a.max(axis=0))
        # NumPy's reductions call the methods: the results stay vkflow tensors.
        self.check(np.sum(t, axis=0), a.sum(axis=0))
        self.check(np.max(t), a.max())
        self.check(np.argmax(t, axis=1), np.argmax(a, axis=1))

    def test_astype(self):
        t = self.vk(np.float32([1.5, -2.5]))
        self.check(t.astype("int32"), np.int32([1, -2]))
        self.check(t.astype(np.float64), np.float64([1.5, -2.5]))
        self.assertIs(t.astype("float32", copy=False), t)
        self.assertIsNot(t.astype("float32"), t)
        with self.assertRaisesRegex(TypeError, "float128"):
            t.astype("float128")


if __name__ == "__main__":
    unittest.main()
