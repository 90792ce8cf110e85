"""The array API's data type functions and inspection namespace
(vkflow.array_api: isdtype, can_cast, result_type, finfo, iinfo,
__array_namespace_info__, newaxis, sum/prod with dtype=, astype with device=).

The promotion table is written from the standard (2023.12, "Type Promotion
Rules"), not from NumPy: NumPy promotes uint64 with int64 to float64 and mixes
integers with floats, the standard leaves both undefined.
"""

import itertools
import os
import unittest

os.environ.setdefault("VKFLOW_VALIDATION", "1")

import numpy as np  # noqa: E402

import vkflow  # noqa: E402
import vkflow.array_api as xp  # noqa: E402
from test_dlpack import VkflowTest  # noqa: E402

I = ("int8", "int16", "int32", "int64")
U = ("uint8", "uint16", "uint32", "uint64")
F = ("float16", "float32", "float64")  # float16 is vkflow's addition, ordered below float32
ALL = ("bool",) + I + U + F

# The standard's mixed signed/unsigned integer table: (uint, int) -> result; uint64 with
# any signed integer is undefined.
MIXED = {
    ("uint8", "int8"): "int16", ("uint8", "int16"): "int16",
    ("uint8", "int32"): "int32", ("uint8", "int64"): "int64",
    ("uint16", "int8"): "int32", ("uint16", "int16"): "int32",
    ("uint16", "int32"): "int32", ("uint16", "int64"): "int64",
    ("uint32", "int8"): "int64", ("uint32", "int16"): "int64",
    ("uint32", "int32"): "int64", ("uint32", "int64"): "int64",
}


def spec_table():
    """{(a, b): result} for every promotable ordered pair."""
    t = {("bool", "bool"): "bool"}
    for family in (I, U, F):
        for a, b in itertools.product(family, repeat=2):
            t[(a, b)] = family[max(family.index(a), family.index(b))]
    for (u, i), r in MIXED.items():
        t[(u, i)] = t[(i, u)] = r
    return t


TABLE = spec_table()


class TestResultType(unittest.TestCase):
    def test_table(self):
        """Every ordered pair of dtypes: the standard's result, or TypeError."""
        self.assertEqual(len(TABLE), 1 + 16 + 16 + 9 + 24)
        for a, b in itertools.product(ALL, repeat=2):
            with self.subTest(a=a, b=b):
                if (a, b) in TABLE:
                    self.assertEqual(xp.result_type(a, b), TABLE[(a, b)])
                else:
                    with self.assertRaises(TypeError):
                        xp.result_type(a, b)

    def test_not_numpy(self):
        """Where NumPy and the standard part ways, the standard wins."""
        for a, b in (("uint64", "int64"), ("uint64", "int8"), ("int32", "float32"),
                     ("bool", "int8"), ("uint8", "float16")):
            with self.subTest(a=a, b=b), self.assertRaises(TypeError):
                xp.result_type(a, b)

    def test_many_and_arrays(self):
        self.assertEqual(xp.result_type("int8", "uint8", "int32"), "int32")
        self.assertEqual(xp.result_type("float32"), "float32")
        self.assertEqual(xp.result_type(np.dtype("uint16"), "int8"), "int32")
        x = vkflow.asarray(np.zeros(2, "uint8"))
        self.assertEqual(xp.result_type(x, "int8"), "int16")
        with self.assertRaises(TypeError):
            xp.result_type()

    def test_python_scalars(self):
        """bool with bool, int with integers and floats, float with floats."""
        ok = [("bool", True, "bool"), ("int8", 1, "int8"), ("uint64", 7, "uint64"),
              ("float16", 1, "float16"), ("float32", 1.5, "float32")]
        for dt, s, want in ok:
            with self.subTest(dt=dt, s=s):
                self.assertEqual(xp.result_type(dt, s), want)
                self.assertEqual(xp.result_type(s, dt), want)
        for dt, s in (("bool", 1), ("int8", True), ("int8", 1.0), ("float32", True),
                      ("float32", 1j)):
            with self.subTest(dt=dt, s=s), self.assertRaises(TypeError):
                xp.result_type(dt, s)
        with self.assertRaises(TypeError):
            xp.result_type(1, 2.0)


class TestCanCastIsdtype(unittest.TestCase):
    def test_can_cast(self):
        """can_cast(a, b) exactly when promoting a with b gives b."""
        for a, b in itertools.product(ALL, repeat=2):
            with self.subTest(a=a, b=b):
                self.assertEqual(xp.can_cast(a, b), TABLE.get((a, b)) == b)
        self.assertTrue(xp.can_cast("uint8", "int16"))
        self.assertFalse(xp.can_cast("uint64", "int64"))
        self.assertFalse(xp.can_cast("int8", "float64"))
        self.assertFalse(xp.can_cast("int16", "int8"))

    def test_isdtype(self):
        kinds = {"bool": {"bool"}, "signed integer": set(I), "unsigned integer": set(U),
                 "integral": set(I + U), "real floating": set(F), "complex floating": set(),
                 "numeric": set(I + U + F)}
        for dt in ALL:
            for kind, members in kinds.items():
                with self.subTest(dt=dt, kind=kind):
                    self.assertEqual(xp.isdtype(dt, kind), dt in members)
        self.assertTrue(xp.isdtype("uint8", ("bool", "unsigned integer")))
        self.assertFalse(xp.isdtype("int8", ("bool", "unsigned integer")))
        self.assertTrue(xp.isdtype(xp.float32, xp.float32))
        self.assertFalse(xp.isdtype(xp.float32, xp.float64))
        with self.assertRaises(ValueError):
            xp.isdtype("int8", "integer")


class TestInfo(unittest.TestCase):
    def test_finfo_python_floats(self):
        for dt in F:
            with self.subTest(dt=dt):
                fi = xp.finfo(dt)
                self.assertIs(type(fi.bits), int)
                for name in ("eps", "max", "min", "smallest_normal"):
                    self.assertIs(type(getattr(fi, name)), float, name)
                self.assertEqual(fi.dtype, dt)
                self.assertNotIsInstance(fi.dtype, str)  # as the conformance suite asks
                self.assertEqual(fi.eps, float(np.finfo(dt).eps))
        self.assertEqual(xp.finfo("float32").eps, 2.0 ** -23)
        with self.assertRaises(ValueError):
            xp.finfo("int32")

    def test_iinfo_python_ints(self):
        for dt in I + U:
            with self.subTest(dt=dt):
                ii = xp.iinfo(dt)
                for name in ("bits", "max", "min"):
                    self.assertIs(type(getattr(ii, name)), int, name)
                self.assertEqual((ii.min, ii.max), (int(np.iinfo(dt).min), int(np.iinfo(dt).max)))
                self.assertEqual(ii.dtype, dt)
                self.assertNotIsInstance(ii.dtype, str)
        self.assertEqual(xp.iinfo("uint64").max, 2 ** 64 - 1)
        with self.assertRaises(ValueError):
            xp.iinfo("float32")


class TestNamespaceInfo(VkflowTest):
    def test_max_dimensions(self):
        # 8 axes that cannot merge (a broadcast across alternate axes) work.
        a, b = np.arange(16.0).reshape((2, 1) * 4), np.arange(16.0).reshape((1, 2) * 4)
        got = xp.asarray(a) + xp.asarray(b)
        self.assertEqual(got.shape, (2,) * 8)
        np.testing.assert_array_equal(np.asarray(got), a + b)
        self.assertEqual(float(np.asarray(xp.sum(got))), float((a + b).sum()))

    def test_info(self):
        info = xp.__array_namespace_info__()
        self.assertEqual(info.capabilities(),
                         {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 8})
        self.assertIs(info.default_device(), vkflow.default_device())
        self.assertIsInstance(info.devices(), tuple)  # 2025.12 (a list before)
        self.assertIn(info.default_device(), info.devices())
        d = info.default_dtypes(device=info.default_device())
        self.assertEqual((d["real floating"], d["integral"], d["indexing"]),
                         ("float32", "int64", "int64"))
        self.assertEqual(set(info.dtypes()),  # float16 is not in the standard
                         set(ALL) - {"float16"} | {"complex64", "complex128"})
        self.assertEqual(set(info.dtypes(kind="integral")), set(I + U))
        self.assertEqual(set(info.dtypes(kind=("bool", "real floating"))),
                         {"bool", "float32", "float64"})
        self.assertEqual(info.dtypes(kind="complex floating"),
                         {"complex64": "complex64", "complex128": "complex128"})
        with self.assertRaises(ValueError):
            info.dtypes(kind="float")
        for name, dt in info.dtypes().items():
            self.assertEqual(xp.empty(1, dtype=dt).dtype, name)

    def test_newaxis(self):
        self.assertIsNone(xp.newaxis)


class TestReductionDtypes(VkflowTest):
    def arr(self, values, dtype):
        return vkflow.asarray(np.asarray(values, dtype=dtype), device=self.mgr)

    def test_default_accumulators(self):
        """int8 100*3 sums to 300 in int64 (it would wrap in int8); unsigned
        in uint64; floats keep their dtype."""
        cases = [("int8", [100, 100, 100], "sum", "int64", 300),
                 ("uint8", [200, 200], "prod", "uint64", 40000),
                 ("int16", [300, 300], "prod", "int64", 90000),
                 ("uint32", [2 ** 32 - 1, 1], "sum", "uint64", 2 ** 32),
                 ("bool", [True, True, False], "sum", "int64", 2),
                 ("float32", [1.5, 2.0], "sum", "float32", 3.5),
                 ("float16", [1.5, 2.0], "prod", "float16", 3.0)]
        for dt, vals, fn, want_dt, want in cases:
            with self.subTest(dt=dt, fn=fn):
                r = getattr(xp, fn)(self.arr(vals, dt))
                self.assertEqual(r.dtype, want_dt)
                self.assertEqual(np.asarray(r).item(), want)

    def test_dtype_argument(self):
        x = self.arr([[1.25, 2.5], [3.0, 4.0]], "float32")
        r = xp.sum(x, axis=1, dtype=xp.float64, keepdims=True)
        self.assertEqual((r.dtype, r.shape), ("float64", (2, 1)))
        np.testing.assert_array_equal(np.asarray(r), [[3.75], [7.0]])
        r = xp.prod(self.arr([100, 3], "int64"), dtype="int8")  # cast first: int8(100)*int8(3)
        self.assertEqual(r.dtype, "int8")
        self.assertEqual(np.asarray(r).item(), np.int8(44))

    def test_astype_device(self):
        x = self.arr([1.5, -2.5], "float32")
        y = xp.astype(x, xp.int32, device=self.mgr)
        self.assertEqual(y.dtype, "int32")
        self.assertIs(y.device, self.mgr)
        np.testing.assert_array_equal(np.asarray(y), [1, -2])
        self.assertIs(xp.astype(x, "float32", copy=False), x)
        z = xp.astype(x, "float64", device=vkflow.default_device())
        self.assertIs(z.device, vkflow.default_device())
        np.testing.assert_array_equal(np.asarray(z), [1.5, -2.5])


if __name__ == "__main__":
    unittest.main()
