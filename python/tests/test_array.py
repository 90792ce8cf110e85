"""Array-API style entry points: the default device, from_dlpack(x,
device=None, copy=None), asarray, Tensor.device and Tensor.to_device, and
which exchange paths copy (TestCopyPaths).

The default device is opened with the validation layer (VKFLOW_VALIDATION=1,
set below before it opens); the tests check the validation message count as
the other test files do.
"""

import os
import subprocess
import sys
import textwrap
import threading
import unittest

os.environ.setdefault("VKFLOW_VALIDATION", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

import vkflow  # noqa: E402
from test_dlpack import VkflowTest, aligned_bytes, report  # noqa: E402


def ptr(arr):
    return arr.__array_interface__["data"][0]


def host(t):
    """A NumPy copy of t (bool through read(): NumPy 1.24 takes no kDLBool)."""
    return t.read() if t.dtype == "bool" else np.array(np.from_dlpack(t))


class TestDefaultDevice(VkflowTest):

    def test_lazy_shared_thread_safe(self):
        got = []
        threads = [threading.Thread(target=lambda: got.append(vkflow.default_device()))
                   for _ in range(8)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        self.assertEqual(len(got), 8)
        self.assertTrue(all(m is got[0] for m in got))
        self.assertIsInstance(got[0], vkflow.Manager)
        self.assertIs(vkflow.default_device(), got[0])

    def test_from_dlpack_device_argument(self):
        arr = np.arange(6, dtype=np.float32)
        t = vkflow.from_dlpack(arr)
        self.assertIs(t.device, vkflow.default_device())
        t2 = vkflow.from_dlpack(arr, self.mgr)              # positional: the device
        self.assertIs(t2.device, self.mgr)
        t3 = vkflow.from_dlpack(arr, device=self.mgr, copy=True)
        self.assertTrue(t3.imported_copy)
        t4 = self.mgr.from_dlpack(arr[::2], copy=None)
        self.assertTrue(t4.imported_copy)
        with self.assertRaises(BufferError):
            self.mgr.from_dlpack(arr[::2], copy=False)
        with self.assertRaises(TypeError):
            vkflow.from_dlpack(arr, device="cpu")
        for t in (t, t2, t3, t4):
            np.testing.assert_array_equal(np.from_dlpack(t), arr[:t.shape[0] * 2:2]
                                          if t is t4 else arr)

    def test_closed_default_reopens(self):
        """A subprocess: closing the default device opens a new one on next
        use, and the one in use at exit is closed by the atexit hook."""
        code = textwrap.dedent("""
            import atexit, vkflow
            seen = []
            atexit.register(lambda: print("closed at exit:", seen[-1].closed))
            a = vkflow.default_device()
            a.close()
            b = vkflow.default_device()
            seen.append(b)
            print("new:", b is not a, a.closed, b.closed)
            t = vkflow.asarray([1.0, 2.0])
            print("on default:", t.device is b)
        """)
        out = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, timeout=120, check=True)
        text = out.stdout.decode()
        self.assertIn("new: True True False", text)
        self.assertIn("on default: True", text)
        self.assertIn("closed at exit: True", text)


class TestAsarray(VkflowTest):

    def test_python_data(self):
        cases = [
            (1.5, "float32", ()),
            (3, "int64", ()),
            (True, "bool", ()),
            ([1, 2, 3], "int64", (3,)),
            ([[1.0, 2.0], [3.0, 4.5]], "float32", (2, 2)),
            (((1, 2), (3, 4)), "int64", (2, 2)),
        ]
        for obj, dtype, shape in cases:
            with self.subTest(obj=obj):
                t = vkflow.asarray(obj, device=self.mgr)
                self.assertEqual((t.dtype, t.shape), (dtype, shape))
                self.assertTrue(t.imported_copy)
                np.testing.assert_array_equal(host(t), np.asarray(obj, dtype=dtype))
                with self.assertRaises(ValueError):
                    vkflow.asarray(obj, device=self.mgr, copy=False)

    def test_dtype_converts(self):
        t = vkflow.asarray([1.7, -2.2, 3.9], dtype="int32", device=self.mgr)
        self.assertEqual(t.dtype, "int32")
        np.testing.assert_array_equal(np.from_dlpack(t), [1, -2, 3])
        u = vkflow.asarray(t, dtype=np.float16)
        self.assertIs(u.device, self.mgr)
        self.assertEqual(u.dtype, "float16")
        np.testing.assert_array_equal(np.from_dlpack(u), np.array([1, -2, 3], np.float16))
        arr = aligned_bytes(64).view(np.float32)
        arr[:] = np.arange(16)
        v = vkflow.asarray(arr, dtype="float64", device=self.mgr)
        self.assertTrue(v.imported_copy)
        np.testing.assert_array_equal(np.from_dlpack(v), np.arange(16.0))
        for obj in (arr, t, torch.zeros(3)):
            with self.subTest(obj=type(obj).__name__):
                with self.assertRaises(ValueError) as cm:
                    vkflow.asarray(obj, dtype="int8", device=self.mgr, copy=False)
                self.assertIsInstance(cm.exception, BufferError)
        with self.assertRaises(ValueError):
            vkflow.asarray([1], dtype="float128", device=self.mgr)

    def test_tensor_identity_and_copies(self):
        t = vkflow.asarray(np.arange(4, dtype=np.int32), device=self.mgr)
        self.assertIs(vkflow.asarray(t), t)
        self.assertIs(vkflow.asarray(t, copy=False), t)
        self.assertIs(vkflow.asarray(t, dtype="int32", device=self.mgr), t)
        c = vkflow.asarray(t, copy=True)
        self.assertIsNot(c, t)
        self.assertIs(c.device, self.mgr)
        torch.from_dlpack(c)[0] = 42                            # c is its own memory
        self.assertEqual(int(np.from_dlpack(t)[0]), 0)
        other = vkflow.Manager(validation=True)
        try:
            with self.assertRaises(vkflow.CopyError):
                vkflow.asarray(t, device=other, copy=False)
            o = vkflow.asarray(t, device=other)
            self.assertIs(o.device, other)
            np.testing.assert_array_equal(np.from_dlpack(o), [0, 1, 2, 3])
        finally:
            other.close()

    def test_producers_numpy_cannot_export(self):
        """Read-only and bool NumPy arrays (NumPy 1.24 refuses them through
        DLPack) and NumPy scalars are copied; copy=False raises."""
        ro = np.arange(5, dtype=np.float32)
        ro.flags.writeable = False
        for obj, dtype in ((ro, "float32"), (np.array([True, False, True]), "bool"),
                           (np.float64(2.5), "float64"),
                           (np.broadcast_to(np.float32(3), (2, 3)), "float32")):
            with self.subTest(obj=obj):
                t = vkflow.asarray(obj, device=self.mgr)
                self.assertEqual(t.dtype, dtype)
                self.assertTrue(t.imported_copy)
                np.testing.assert_array_equal(host(t), obj)
                with self.assertRaises(ValueError):
                    vkflow.asarray(obj, device=self.mgr, copy=False)

    def test_buffer_protocol_aliased(self):
        arr = aligned_bytes(256).view(np.int32)
        t = vkflow.asarray(memoryview(arr), device=self.mgr, copy=False)
        self.assertFalse(t.imported_copy)
        arr[7] = 77
        self.assertEqual(int(np.from_dlpack(t)[7]), 77)

    def test_torch_and_default_device(self):
        tt = torch.arange(10, dtype=torch.float64) / 4
        t = vkflow.asarray(tt)
        self.assertIs(t.device, vkflow.default_device())
        self.assertEqual(t.dtype, "float64")
        np.testing.assert_array_equal(np.from_dlpack(t), tt.numpy())
        with self.assertRaises(ValueError):
            vkflow.asarray([1], copy="no")


class TestToDevice(VkflowTest):

    def test_same_and_other(self):
        t = vkflow.asarray(np.arange(12, dtype=np.float32).reshape(3, 4), device=self.mgr)
        self.assertIs(t.device, self.mgr)
        self.assertIs(t.to_device(self.mgr), t)
        other = vkflow.Manager(validation=True)
        try:
            o = t.to_device(other)
            self.assertIs(o.device, other)
            self.assertEqual((o.shape, o.dtype), ((3, 4), "float32"))
            np.testing.assert_array_equal(np.from_dlpack(o), np.from_dlpack(t))
            back = o.to_device(self.mgr)
            self.assertIsNot(back, t)
            np.testing.assert_array_equal(np.from_dlpack(back), np.from_dlpack(t))
        finally:
            other.close()
        with self.assertRaises(ValueError):
            t.to_device(self.mgr, stream=3)
        with self.assertRaises(TypeError):
            t.to_device("cpu")
        t.close()
        with self.assertRaises(vkflow.ClosedError):
            t.to_device(self.mgr)

    def test_storage_tensor_to_other(self):
        """A GPU-only (storage) tensor goes through a host copy."""
        st = self.storage_tensor(np.arange(7, dtype=np.int32))
        other = vkflow.Manager(validation=True)
        try:
            o = st.to_device(other)
            np.testing.assert_array_equal(np.from_dlpack(o), np.arange(7))
        finally:
            other.close()

    def test_attributes(self):
        t = vkflow.asarray(np.zeros((2, 1, 3), np.int16), device=self.mgr)
        self.assertEqual((t.shape, t.ndim, t.size, t.dtype), ((2, 1, 3), 3, 6, "int16"))
        z = vkflow.asarray(5.0, device=self.mgr)
        self.assertEqual((z.shape, z.ndim, z.size), ((), 0, 1))

    def test_empty(self):
        for obj in (np.zeros((2, 0, 3), np.int16), []):
            with self.subTest(obj=obj):
                try:
                    t = vkflow.asarray(obj, device=self.mgr)
                except ValueError as e:
                    self.assertRegex(str(e), "empty|zero-length|<= 0")
                    self.skipTest("tensor: vkflow tensors cannot have a zero-length "
                                  "dimension yet (%s)" % e)
                self.assertEqual(t.size, 0)
                self.assertEqual(host(t).shape, np.shape(obj))


class TestCopyPaths(VkflowTest):
    """Which exchange paths share memory and which copy, shown with
    imported_copy and data pointers."""

    def test_paths(self):
        paths = []

        # NumPy, aligned and compact -> vkflow: zero-copy.
        arr = aligned_bytes(1024 * 4).view(np.float32)
        arr[:] = np.arange(1024)
        t = vkflow.from_dlpack(arr, self.mgr)
        self.assertFalse(t.imported_copy)
        arr[5] = -1.0                                     # write through NumPy ...
        self.assertEqual(float(t.read()[5]), -1.0)        # ... read through vkflow
        paths.append(("numpy aligned -> vkflow", t.imported_copy))

        # vkflow -> NumPy: zero-copy on mapped memory (the same pages).
        self.assertTrue(t.mapped)
        view = np.from_dlpack(t)
        self.assertEqual(ptr(view), ptr(arr))
        paths.append(("vkflow mapped -> numpy", ptr(view) != ptr(arr)))

        # GPU writes show in the producer's array.
        src = self.mgr.tensor(np.full(1024, 2.0, np.float32))
        seq = self.mgr.sequence()
        seq.copy(src, t).eval()
        seq.close()
        self.assertEqual(float(arr[5]), 2.0)

        # vkflow -> PyTorch: zero-copy.
        tt = torch.from_dlpack(t)
        self.assertEqual(tt.data_ptr(), ptr(arr))
        paths.append(("vkflow mapped -> torch", tt.data_ptr() != ptr(arr)))

        # Strided and unaligned NumPy -> vkflow: copies; copy=False refuses.
        strided = arr[::2]
        s = vkflow.from_dlpack(strided, self.mgr)
        self.assertTrue(s.imported_copy)
        self.assertNotEqual(ptr(np.from_dlpack(s)), ptr(strided))
        paths.append(("numpy strided -> vkflow", s.imported_copy))
        unaligned = aligned_bytes(64 * 4, offset=4).view(np.float32)
        u = vkflow.from_dlpack(unaligned, self.mgr)
        self.assertTrue(u.imported_copy)
        paths.append(("numpy unaligned -> vkflow", u.imported_copy))
        for a in (arr[::2], aligned_bytes(64 * 4, offset=4).view(np.float32)):
            with self.assertRaises(BufferError):
                vkflow.from_dlpack(a, self.mgr, copy=False)
            with self.assertRaises(ValueError):
                vkflow.asarray(a, device=self.mgr, copy=False)

        # PyTorch CPU -> vkflow: zero-copy where its address is aligned.
        tsrc = torch.arange(4096, dtype=torch.float32)
        v = vkflow.from_dlpack(tsrc, self.mgr)
        align = self.mgr.host_import_alignment
        aligned = align > 0 and tsrc.data_ptr() % align == 0
        self.assertEqual(v.imported_copy, not aligned)
        if aligned:
            self.assertEqual(ptr(np.from_dlpack(v)), tsrc.data_ptr())
            tsrc[3] = 99.0
            self.assertEqual(float(v.read()[3]), 99.0)
        paths.append(("torch cpu -> vkflow", v.imported_copy))

        # Storage (GPU-only) memory -> NumPy: a host copy on request.
        st = self.storage_tensor(np.arange(8, dtype=np.float32))
        self.assertEqual(st.__dlpack_device__()[0], vkflow.DLDeviceType.VULKAN)
        host = st._host_copy()
        np.testing.assert_array_equal(host, np.arange(8))
        paths.append(("vkflow storage -> numpy (dl_device=CPU)", True))

        report("; ".join("%s: %s" % (name, "copy" if c else "zero-copy") for name, c in paths))


if __name__ == "__main__":
    unittest.main()
