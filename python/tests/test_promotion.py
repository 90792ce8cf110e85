"""Type promotion (the array API standard's table) in the element-wise ops:
operands of two dtypes compute in the promoted dtype through the operators,
vkflow.ops and vkflow.array_api, against NumPy on inputs converted to that
dtype; pairs the table lacks (integers with floats, bool with numbers,
uint64 with signed integers) are TypeErrors naming both dtypes."""

import os
import unittest

os.environ.setdefault("VKFLOW_VALIDATION", "1")

import numpy as np  # noqa: E402

import vkflow  # noqa: E402
import vkflow.array_api as xp  # noqa: E402
import vkflow.ops as vo  # noqa: E402
from test_dlpack import VkflowTest  # noqa: E402
from test_mathops import host  # noqa: E402

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64"]

# The standard's table, written out for the pairs that differ (symmetric).
TABLE = {
    ("int8", "int16"): "int16", ("int8", "int32"): "int32", ("int8", "int64"): "int64",
    ("int16", "int32"): "int32", ("int16", "int64"): "int64", ("int32", "int64"): "int64",
    ("uint8", "uint16"): "uint16", ("uint8", "uint32"): "uint32", ("uint8", "uint64"): "uint64",
    ("uint16", "uint32"): "uint32", ("uint16", "uint64"): "uint64",
    ("uint32", "uint64"): "uint64",
    ("int8", "uint8"): "int16", ("int8", "uint16"): "int32", ("int8", "uint32"): "int64",
    ("int16", "uint8"): "int16", ("int16", "uint16"): "int32", ("int16", "uint32"): "int64",
    ("int32", "uint8"): "int32", ("int32", "uint16"): "int32", ("int32", "uint32"): "int64",
    ("int64", "uint8"): "int64", ("int64", "uint16"): "int64", ("int64", "uint32"): "int64",
    ("float16", "float32"): "float32", ("float16", "float64"): "float64",
    ("float32", "float64"): "float64",
}


def promoted(a, b):
    if a == b:
        return a
    return TABLE.get((a, b)) or TABLE.get((b, a))


def values(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype.startswith("float"):
        return rng.integers(-64, 65, size=shape).astype(dtype) / 4
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)


class TestPromotion(VkflowTest):
    def vk(self, a):
        return vkflow.asarray(a, device=self.mgr)

    def check(self, got, want, msg):
        got = host(got)
        self.assertEqual(got.dtype, want.dtype, msg)
        np.testing.assert_array_equal(got, want, err_msg=msg)

    def test_every_pair(self):
        """+ and == (operators), maximum and bitwise_and (vkflow.ops) and
        multiply (array_api) over every pair of dtypes."""
        for i, da in enumerate(DTYPES):
            for j, db in enumerate(DTYPES):
                a, b = values(da, (2, 3), i), values(db, (3,), 100 + j)
                ta, tb = self.vk(a), self.vk(b)
                p = promoted(da, db)
                ops = {"+": lambda x, y: x + y, "==": lambda x, y: x == y,
                       "maximum": vo.maximum, "bitwise_and": vo.bitwise_and,
                       "multiply": xp.multiply}
                for name, f in ops.items():
                    msg = "%s(%s, %s)" % (name, da, db)
                    with self.subTest(msg):
                        if p is None:
                            with self.assertRaisesRegex(TypeError, "%s.*%s" % (da, db)):
                                f(ta, tb)
                            continue
                        if (name in ("maximum", "multiply") and p == "bool") or \
                                (name == "bitwise_and" and p.startswith("float")):
                            # vkflow.ops: a ValueError, as before promotion.
                            with self.assertRaises((TypeError, ValueError)):
                                f(ta, tb)
                            continue
                        pa, pb = a.astype(p), b.astype(p)
                        want = {"+": lambda: pa | pb if p == "bool" else pa + pb,
                                "==": lambda: pa == pb,
                                "maximum": lambda: np.maximum(pa, pb),
                                "bitwise_and": lambda: pa & pb,
                                "multiply": lambda: pa & pb if p == "bool" else pa * pb}[name]()
                        with np.errstate(over="ignore"):
                            self.check(f(ta, tb), want, msg)

    def test_operators(self):
        i8, u8 = self.vk(np.int8([-3, 100])), self.vk(np.uint8([200, 7]))
        self.check(i8 - u8, np.int16([-203, 93]), "int8 - uint8")
        self.check(u8 // i8, np.int16([-67, 0]), "uint8 // int8")
        self.check(i8 < u8, np.array([True, False]), "int8 < uint8")
        self.check(u8 / i8, np.float64([200, 7]) / np.float64([-3, 100]), "uint8 / int8")
        f16, f32 = self.vk(np.float16([0.5, 3])), self.vk(np.float32([1e-8, 2]))
        self.check(f16 * f32, np.float32([0.5e-8, 6]), "float16 * float32")
        self.check(f32 ** f16, np.float32([1e-8, 2]) ** np.float32([0.5, 3]), "float32 ** float16")
        # A NumPy array of another dtype promotes too.
        self.check(f32 + np.float64([1, 2]), np.float64([1 + np.float32(1e-8), 4]), "f32 + f64 array")
        # In place: only into the promoted dtype.
        i32 = self.vk(np.int32([1, 2]))
        i32 += i8
        self.check(i32, np.int32([-2, 102]), "int32 += int8")
        with self.assertRaisesRegex(TypeError, "int16 result cannot be stored in place"):
            i8 += u8
        with self.assertRaisesRegex(TypeError, "no promotion"):
            i32 += f32
        with self.assertRaisesRegex(TypeError, "uint64.*int64"):
            self.vk(np.uint64([1])) + self.vk(np.int64([1]))
        with self.assertRaisesRegex(TypeError, "bool.*int8"):
            self.vk(np.bool_([True, False])) & i8
        # matmul promotes too (the standard's rule for every binary op).
        self.check(self.vk(np.float32([[1.5]])) @ self.vk(np.float64([[2]])), np.float64([[3]]),
                   "float32 @ float64")
        with self.assertRaisesRegex(TypeError, "no promotion"):
            self.vk(np.float32([[1]])) @ self.vk(np.int32([[1]]))
        # Python scalars keep their rule: they take the tensor's dtype.
        self.check(i8 + 1, np.int8([-2, 101]), "int8 + 1")
        with self.assertRaises(OverflowError):
            i8 + 1000
        with self.assertRaises(TypeError):
            i8 + 1.5

    def test_functions(self):
        i16, u32 = self.vk(np.int16([-1, 5])), self.vk(np.uint32([4000000000, 3]))
        self.check(vo.add(i16, u32), np.int64([3999999999, 8]), "ops.add")
        self.check(xp.remainder(u32, i16), np.int64([0, 3]), "array_api.remainder")
        self.check(xp.where(self.vk(np.bool_([True, False])), i16, u32), np.int64([-1, 3]),
                   "array_api.where")
        f64, f16 = self.vk(np.float64([1, -2])), self.vk(np.float16([2, 2]))
        self.check(xp.atan2(f16, f64), np.arctan2(np.float64([2, 2]), np.float64([1, -2])),
                   "array_api.atan2")
        for f in (vo.add, xp.add, xp.equal, xp.atan2):
            with self.subTest(f.__name__):
                with self.assertRaisesRegex(TypeError, "int16 and float64.*no promotion"):
                    f(i16, f64)
        with self.assertRaises(ValueError):   # vkflow.ops's invalid arguments stay ValueErrors
            vo.add(i16, f64)


if __name__ == "__main__":
    unittest.main()
