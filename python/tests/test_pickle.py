"""Pickling vkflow tensors (issue 23, item 5): ``pickle`` round-trips the
dtype, shape and values onto the default device, for every dtype, 0-d and
empty shapes, views, and every pickle protocol; a closed tensor refuses.

The default device opens with the validation layer when VKFLOW_VALIDATION=1
(as make test-python sets it); a test fails if a validation message appears.
"""

import pickle
import unittest

import numpy as np

import vkflow

DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
          "float16", "float32", "float64"]


class PickleTest(unittest.TestCase):

    def setUp(self):
        self.mgr = vkflow.default_device()
        self.messages = vkflow.validation_messages()[0]

    def tearDown(self):
        count, last = vkflow.validation_messages()
        self.assertEqual(count, self.messages, "validation message(s), the last: %s" % last)

    def roundtrip(self, t, protocol=pickle.HIGHEST_PROTOCOL):
        back = pickle.loads(pickle.dumps(t, protocol=protocol))
        self.assertIsInstance(back, vkflow.Tensor)
        self.assertIs(back.device, self.mgr)
        return back

    def test_dtypes_and_shapes(self):
        rng = np.random.default_rng(7)
        for dtype in DTYPES:
            for shape in [(), (0,), (5,), (3, 4), (2, 0, 3), (2, 3, 4)]:
                with self.subTest(dtype=dtype, shape=shape):
                    want = np.asarray(rng.integers(0, 100, size=shape) % (2 if dtype == "bool" else 100)).astype(dtype)
                    t = self.mgr.tensor(want, dtype=dtype)
                    back = self.roundtrip(t)
                    self.assertEqual(back.dtype, t.dtype)
                    self.assertEqual(back.shape, t.shape)
                    np.testing.assert_array_equal(np.asarray(back), want)
                    back.close()
                    t.close()

    def test_protocols(self):
        t = self.mgr.tensor(np.arange(10, dtype=np.float32))
        for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
            with self.subTest(protocol=protocol):
                np.testing.assert_array_equal(np.asarray(self.roundtrip(t, protocol)),
                                              np.arange(10, dtype=np.float32))

    def test_view_travels_as_its_values(self):
        base = self.mgr.tensor(np.arange(12, dtype=np.int32).reshape(3, 4))
        view = base[1:, ::2]
        back = self.roundtrip(view)
        self.assertNotIsInstance(back, vkflow.TensorView)
        np.testing.assert_array_equal(np.asarray(back), np.arange(12).reshape(3, 4)[1:, ::2])

    def test_pending_work_is_in(self):
        """The values pickled are those after the GPU work queued on the
        tensor (pickling waits for it)."""
        x = self.mgr.tensor(np.ones(1 << 16, dtype=np.float32))
        y = vkflow.ops.add(x, x)
        np.testing.assert_array_equal(np.asarray(self.roundtrip(y)), np.full(1 << 16, 2, np.float32))

    def test_closed_tensor_refuses(self):
        t = self.mgr.tensor(np.ones(4, dtype=np.float32))
        t.close()
        with self.assertRaises(vkflow.ClosedError):
            pickle.dumps(t)


if __name__ == "__main__":
    unittest.main()
