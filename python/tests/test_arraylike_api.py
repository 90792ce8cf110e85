"""The array API namespace (``Tensor.__array_namespace__``, vkflow.array_api)
and the creation functions (vkflow.zeros ... vkflow.full_like) against
NumPy: values, shapes, default dtypes, devices and errors.
"""

import os
import unittest

os.environ.setdefault("VKFLOW_VALIDATION", "1")

import numpy as np  # noqa: E402

import vkflow  # noqa: E402
import vkflow.array_api as xp  # noqa: E402
import vkflow.ops as vo  # noqa: E402
from test_arraylike import ArrayTest  # noqa: E402


class TestNamespace(ArrayTest):

    def test_namespace_of_a_tensor(self):
        t = self.vk(np.float32([1, 4, 9]))
        self.assertIs(t.__array_namespace__(), xp)
        self.assertIs(t.__array_namespace__(api_version="2025.12"), xp)
        for v in ("2023.12", "2024.12"):  # namespaces of their own (test_linalg_eig.Versions)
            self.assertEqual(t.__array_namespace__(api_version=v).__array_api_version__, v)
        with self.assertRaisesRegex(ValueError, "2099.12"):
            t.__array_namespace__(api_version="2099.12")
        self.assertEqual(xp.__array_api_version__, "2025.12")

    def test_dtypes_compare_with_tensor_dtypes(self):
        for name in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                     "uint64", "float32", "float64"):
            with self.subTest(dtype=name):
                self.assertEqual(getattr(xp, name), name)
        self.assertEqual(self.vk(np.int32([1])).dtype, xp.int32)
        self.assertEqual(xp.finfo(xp.float32).eps, np.finfo(np.float32).eps)
        self.assertEqual(xp.iinfo(xp.int8).min, -128)

    def test_functions(self):
        x = np.float32([[1, 4], [9, 16]])
        t = self.vk(x)
        self.check(xp.sqrt(t), np.sqrt(x), "approx")
        self.check(xp.add(t, 1.0), x + 1)
        self.check(xp.subtract(t, t), x - x)
        self.check(xp.multiply(2.0, t), 2 * x)
        self.check(xp.divide(t, 2.0), x / 2)
        self.check(xp.divide(self.vk(np.int32([1, 3])), 2), np.int32([1, 3]) / 2, "approx")
        self.check(xp.negative(t), -x)
        self.check(xp.positive(t), x)
        self.check(xp.less(t, 5.0), x < 5)
        self.check(xp.sum(t, axis=0), x.sum(axis=0))
        self.check(xp.max(t), x.max())
        self.check(xp.matmul(t, t), x @ x)
        self.check(xp.permute_dims(t, (1, 0)), x.T)
        self.check(xp.matrix_transpose(t), x.T)
        self.check(xp.reshape(t, (4,)), x.reshape(4))
        self.check(xp.astype(t, xp.int32), x.astype(np.int32))
        self.check(xp.where(xp.greater(t, 5.0), t, 0.0), np.where(x > 5, x, 0))
        self.check(xp.asarray([1, 2], device=self.mgr), np.int64([1, 2]))
        self.check(xp.from_dlpack(x, device=self.mgr), x)
        self.assertEqual((xp.pi, xp.e), (np.pi, np.e))

    def test_missing_names_are_attribute_errors(self):
        for name in ("no_such_function", "from_numpy", "asnumpy"):
            with self.subTest(name=name):
                self.assertFalse(hasattr(xp, name))
                with self.assertRaises(AttributeError):
                    getattr(xp, name)

    def test_late_ops_follow_vkflow_ops(self):
        """floor_divide, bitwise_* and logical_* are there exactly when
        vkflow.ops has them."""
        for name in ("floor_divide", "remainder", "bitwise_and", "bitwise_invert",
                     "logical_not", "logical_xor"):
            with self.subTest(name=name):
                self.assertEqual(hasattr(xp, name), hasattr(vo, name))
                if hasattr(vo, name):
                    self.assertIs(getattr(xp, name), getattr(vo, name))
                    self.assertIn(name, dir(xp))


class TestCreation(ArrayTest):

    def test_zeros_ones_empty_full(self):
        for name, ref in (("zeros", np.zeros), ("ones", np.ones), ("empty", np.zeros)):
            f = getattr(vkflow, name)
            self.assertIs(f, getattr(xp, name))
            for shape in ((2, 3), 4, (), (0, 2)):
                with self.subTest(f=name, shape=shape):
                    self.check(f(shape, device=self.mgr), ref(shape, np.float32))
                    self.check(f(shape, dtype="int32", device=self.mgr), ref(shape, np.int32))
                    self.check(f(shape, dtype=np.bool_, device=self.mgr), ref(shape, bool))
        self.check(vkflow.full((2, 2), 1.5, device=self.mgr), np.full((2, 2), 1.5, np.float32))
        self.check(vkflow.full(3, 7, device=self.mgr), np.full(3, 7, np.int64))
        self.check(vkflow.full(3, True, device=self.mgr), np.full(3, True))
        self.check(vkflow.full(3, 7, dtype="float64", device=self.mgr), np.full(3, 7.0))
        self.check(vkflow.full(2, np.int8(-3), device=self.mgr), np.full(2, -3, np.int8))

    def test_arange_linspace_eye(self):
        cases = [((5,), {}, np.arange(5)), ((2, 9, 3), {}, np.arange(2, 9, 3)),
                 ((5, 0, -2), {}, np.arange(5, 0, -2)), ((0, 1, 0.25), {},
                                                          np.arange(0, 1, 0.25, np.float32)),
                 ((3,), {"dtype": "uint8"}, np.arange(3, dtype=np.uint8)),
                 ((0.5,), {}, np.arange(0.5, dtype=np.float32)), ((4, 2), {}, np.arange(4, 2))]
        for args, kw, want in cases:
            with self.subTest(args=args, kw=kw):
                self.check(vkflow.arange(*args, device=self.mgr, **kw), want)
        self.check(vkflow.linspace(0, 1, 5, device=self.mgr),
                   np.linspace(0, 1, 5, dtype=np.float32))
        self.check(vkflow.linspace(-1, 1, 4, endpoint=False, dtype="float64", device=self.mgr),
                   np.linspace(-1, 1, 4, endpoint=False))
        self.check(vkflow.linspace(0, 1, 0, device=self.mgr), np.zeros(0, np.float32))
        self.check(vkflow.eye(3, device=self.mgr), np.eye(3, dtype=np.float32))
        self.check(vkflow.eye(2, 4, k=1, dtype="int32", device=self.mgr),
                   np.eye(2, 4, k=1, dtype=np.int32))

    def test_like(self):
        t = self.vk(np.arange(6, dtype=np.int32).reshape(2, 3))
        for name, ref in (("zeros_like", np.zeros_like), ("ones_like", np.ones_like),
                          ("empty_like", np.zeros_like)):
            with self.subTest(f=name):
                got = getattr(vkflow, name)(t)
                self.assertIs(got.device, self.mgr)
                self.check(got, ref(np.zeros((2, 3), np.int32)))
                self.check(getattr(xp, name)(t, dtype="float32"), ref(np.zeros((2, 3), np.float32)))
        self.check(vkflow.full_like(t, 4), np.full((2, 3), 4, np.int32))
        self.check(vkflow.full_like(t, 0.5, dtype="float32"), np.full((2, 3), 0.5, np.float32))
        self.assertIs(vkflow.zeros_like(np.zeros(2, np.uint16)).device, vkflow.default_device())
        self.assertEqual(vkflow.zeros_like(np.zeros(2, np.uint16)).dtype, "uint16")

    def test_default_device_and_dtypes(self):
        d = vkflow.default_device()
        for t in (vkflow.zeros(2), vkflow.ones(2), vkflow.empty(2), vkflow.eye(2),
                  vkflow.linspace(0, 1, 2), vkflow.full(2, 0.5), vkflow.arange(0.0, 2.0)):
            self.assertIs(t.device, d)
            self.assertEqual(t.dtype, "float32")
        self.assertEqual(vkflow.arange(3).dtype, "int64")
        self.assertEqual(vkflow.asarray(1.5).dtype, vkflow.zeros(1).dtype)

    def test_errors(self):
        m = self.mgr
        with self.assertRaisesRegex(ValueError, "negative"):
            vkflow.zeros((2, -1), device=m)
        with self.assertRaises(TypeError):
            vkflow.zeros((2.5,), device=m)
        with self.assertRaisesRegex(TypeError, "float128"):
            vkflow.ones(2, dtype="float128", device=m)
        with self.assertRaisesRegex(TypeError, "int32"):
            vkflow.full(2, 1.5, dtype="int32", device=m)
        with self.assertRaises(TypeError):
            vkflow.full(2, "x", device=m)
        with self.assertRaisesRegex(ValueError, "step"):
            vkflow.arange(0, 5, 0, device=m)
        with self.assertRaisesRegex(ValueError, "num"):
            vkflow.linspace(0, 1, -1, device=m)
        with self.assertRaises(TypeError):
            vkflow.zeros(2, device="cpu")
        with self.assertRaises(TypeError):
            vkflow.zeros_like([1, 2])


if __name__ == "__main__":
    unittest.main()
