"""The default stream's output pool from Python: dropped outputs' memory is
reused by later ops, never while a DLPack consumer still holds it, always
reading as the new op's values; vkflow.synchronize gives it back. And the
one-call eager path (vkflow_op_call_new) describes outputs as
vkflow_tensor_info does.
"""

import os
import unittest

os.environ.setdefault("VKFLOW_VALIDATION", "1")

import numpy as np  # noqa: E402

import vkflow  # noqa: E402
import vkflow.ops as vo  # noqa: E402
from test_dlpack import VkflowTest  # noqa: E402


class EagerPoolTest(VkflowTest):

    def test_reuse_values_and_synchronize(self):
        a = self.mgr.tensor(np.full(1000, 1, np.float32))
        b = self.mgr.tensor(np.full(1000, 2, np.float32))
        vo.add(a, b).read()
        vkflow.synchronize(self.mgr)
        base = self.allocations()
        for i in range(30):
            # add and sub alternate on buffers of one size: each result is
            # its own op's, whichever buffer it got.
            c = vo.add(a, b) if i % 2 == 0 else vo.sub(a, b)
            np.testing.assert_array_equal(c.read(), 3.0 if i % 2 == 0 else -1.0)
            del c
        self.assertLessEqual(self.allocations(), base + 2, "outputs reuse dropped outputs' memory")
        vkflow.synchronize(self.mgr)
        self.assertEqual(self.allocations(), base, "synchronize empties the pool")

    def test_dlpack_export_not_reused(self):
        a = self.mgr.tensor(np.full(1000, 1, np.float32))
        b = self.mgr.tensor(np.full(1000, 2, np.float32))
        t = vo.add(a, b)
        view = np.from_dlpack(t)  # the consumer holds the export
        del t
        for _ in range(20):
            c = vo.add(a, a)
            np.testing.assert_array_equal(c.read(), 2.0)
            del c
        np.testing.assert_array_equal(view, 3.0)
        del view

    def test_description_matches_info(self):
        for dtype, shape in (("float32", (2, 3)), ("int32", ()), ("float64", (0, 4)),
                             ("uint8", (5,))):
            x = self.mgr.tensor(np.ones(shape, dtype=dtype))
            y = vo.add(x, x)
            want = (y.dtype, y.shape, y.memory, y.mapped, y.read_only)
            y._load_info()  # vkflow_tensor_info
            self.assertEqual(want, (y.dtype, y.shape, y.memory, y.mapped, y.read_only))
            self.assertEqual((dtype, shape), (y.dtype, y.shape))
            np.testing.assert_array_equal(y.read(), np.full(shape, 2, dtype=dtype))


if __name__ == "__main__":
    unittest.main()
