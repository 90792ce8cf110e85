"""dtype objects (issue 23): one vkflow.DType per dtype, comparable, hashable,
not a string (so the array API's kind names stay distinct), and accepted
wherever a dtype is (creation, astype, NumPy)."""

import pickle
import unittest

import numpy as np

import vkflow
from vkflow import array_api as xp

NAMES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
         "float16", "float32", "float64")


class TestDTypeObjects(unittest.TestCase):
    def test_identity_and_equality(self):
        for name in NAMES:
            with self.subTest(name):
                d = getattr(xp, name)
                self.assertIsInstance(d, vkflow.DType)
                self.assertNotIsInstance(d, str)
                self.assertEqual(d, name)
                self.assertEqual(d.name, name)
                self.assertEqual(hash(d), hash(name))
                self.assertEqual(np.dtype(d), np.dtype(name))
                self.assertEqual(d.itemsize, np.dtype(name).itemsize)
                self.assertEqual(d.kind, np.dtype(name).kind)
                self.assertEqual(repr(d), "vkflow." + name)
                self.assertIs(pickle.loads(pickle.dumps(d)), d)
        self.assertEqual(xp.float32, np.float32)
        self.assertEqual(xp.float32, np.dtype("float32"))
        self.assertNotEqual(xp.float32, np.float64)
        self.assertNotEqual(xp.float64, None)
        self.assertNotEqual(xp.float32, xp.float64)
        self.assertNotEqual(xp.int8, "uint8")
        self.assertEqual(len({xp.float32, xp.float32, xp.int32}), 2)
        self.assertEqual({xp.int8: 1}["int8"], 1)

    def test_tensors_carry_them(self):
        for name in ("float32", "int64", "bool", "uint8"):
            with self.subTest(name):
                t = xp.zeros((2,), dtype=getattr(xp, name))
                self.assertIs(t.dtype, getattr(xp, name))
                self.assertIs(xp.astype(t, xp.float64).dtype, xp.float64)
                self.assertEqual(np.asarray(t).dtype, np.dtype(name))
        self.assertIs(xp.asarray(np.arange(3, dtype=np.int16)).dtype, xp.int16)
        # Every path that makes a tensor: the one-call eager op, an op with
        # attributes, a dynamic op, a view.
        a = xp.asarray(np.arange(6, dtype=np.float32))
        for name, t in (("add", vkflow.ops.add(a, a)), ("sum", xp.sum(a, axis=0)),
                        ("nonzero", xp.nonzero(a)[0]), ("view", a[1:4]),
                        ("matmul", a @ a), ("sort", xp.sort(a))):
            with self.subTest(name):
                self.assertIsInstance(t.dtype, vkflow.DType)

    def test_functions_return_them(self):
        self.assertIs(xp.result_type(xp.int8, xp.uint8), xp.int16)
        self.assertIs(xp.finfo(xp.float32).dtype, xp.float32)
        self.assertIs(xp.iinfo("int16").dtype, xp.int16)
        info = xp.__array_namespace_info__()
        self.assertIs(info.default_dtypes()["real floating"], xp.float32)
        self.assertIs(info.dtypes()["uint8"], xp.uint8)

    def test_kinds_stay_distinct(self):
        # "bool" is a kind name and a dtype name: a DType is never taken for
        # a kind, and a kind is never taken for a DType.
        self.assertTrue(xp.isdtype(xp.bool, xp.bool))
        self.assertTrue(xp.isdtype(xp.bool, "bool"))
        self.assertFalse(xp.isdtype(xp.uint8, xp.int8))
        self.assertTrue(xp.isdtype(xp.uint8, "unsigned integer"))
        self.assertTrue(xp.isdtype(xp.uint8, ("real floating", xp.uint8)))
        with self.assertRaises(ValueError):
            xp.isdtype(xp.uint8, "uint")


if __name__ == "__main__":
    unittest.main()
