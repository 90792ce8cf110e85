"""DLPack tests for the vkflow Python package, against NumPy 1.24 and PyTorch
1.13 (Debian 12) as consumers and producers.

`make test-python` runs them against the package pip installed into
build/venv; `make python` and `cd python && python3 -m unittest discover -s
tests` run them in-tree.

Every test opens a Manager with the validation layer (and synchronization
validation) on; a test fails if any validation warning or error appears while
it runs, leak reports at device destruction included.
"""

import ctypes
import gc
import sys
import time
import unittest
import weakref

import numpy as np
import torch

import vkflow

KDL_CPU, KDL_OPENCL, KDL_VULKAN = 1, 4, 7
FLAG_READ_ONLY, FLAG_IS_COPIED = 1 << 0, 1 << 1
# DLDataType codes.
KDL_INT, KDL_UINT, KDL_FLOAT, KDL_BOOL = 0, 1, 2, 6


# --- the DLPack structs, to look inside a capsule without consuming it ------

class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64),
                ("dl_tensor", DLTensor)]


class VulkanBuffer(ctypes.Structure):  # dlpack/vkflow_vulkan.h
    _fields_ = [("device", ctypes.c_void_p), ("buffer", ctypes.c_uint64),
                ("memory", ctypes.c_uint64), ("memory_offset", ctypes.c_uint64),
                ("size", ctypes.c_uint64), ("ready_semaphore", ctypes.c_uint64),
                ("ready_value", ctypes.c_uint64), ("released_semaphore", ctypes.c_uint64),
                ("released_value", ctypes.c_uint64)]


assert ctypes.sizeof(DLTensor) == 48
assert ctypes.sizeof(DLManagedTensor) == 64
assert ctypes.sizeof(DLManagedTensorVersioned) == 80

_IsValid = ctypes.pythonapi.PyCapsule_IsValid
_IsValid.restype = ctypes.c_int
_IsValid.argtypes = (ctypes.py_object, ctypes.c_char_p)
_GetPointer = ctypes.pythonapi.PyCapsule_GetPointer
_GetPointer.restype = ctypes.c_void_p
_GetPointer.argtypes = (ctypes.py_object, ctypes.c_char_p)


def capsule_name(cap):
    for name in (b"dltensor", b"dltensor_versioned", b"used_dltensor",
                 b"used_dltensor_versioned"):
        if _IsValid(cap, name):
            return name.decode()
    return None


def peek(cap):
    """The managed tensor inside an unconsumed capsule (not copied: valid
    while the capsule lives). Returns (managed, dl_tensor)."""
    name = capsule_name(cap)
    if name == "dltensor":
        m = DLManagedTensor.from_address(_GetPointer(cap, b"dltensor"))
    elif name == "dltensor_versioned":
        m = DLManagedTensorVersioned.from_address(_GetPointer(cap, b"dltensor_versioned"))
    else:
        raise AssertionError("not an unconsumed DLPack capsule: %r" % (name,))
    return m, m.dl_tensor


class Capsule:
    """Hands a prepared capsule to a consumer (as a producer would)."""

    def __init__(self, cap, device=(KDL_CPU, 0)):
        self.cap = cap
        self.device = device

    def __dlpack__(self, stream=None):
        return self.cap

    def __dlpack_device__(self):
        return self.device


def aligned_bytes(nbytes, align=4096, offset=0):
    """A uint8 NumPy array of nbytes starting offset bytes past an
    align-aligned address."""
    buf = np.zeros(nbytes + align + offset, dtype=np.uint8)
    start = (-buf.ctypes.data) % align + offset
    out = buf[start:start + nbytes]
    assert (out.ctypes.data - offset) % align == 0
    return out


def wait_until(predicate, timeout=5.0):
    """Polls predicate (after a GC) until true or timeout; returns its last value."""
    deadline = time.monotonic() + timeout
    while True:
        gc.collect()
        v = predicate()
        if v or time.monotonic() > deadline:
            return v
        time.sleep(0.01)


def report(msg):
    sys.stderr.write("\n    [info] %s " % msg)


class VkflowTest(unittest.TestCase):
    """Opens a validated Manager per test; any validation message fails it."""

    def setUp(self):
        gc.collect()
        self.timeout = vkflow.DLPACK_TIMEOUT
        vkflow.DLPACK_TIMEOUT = 30.0
        self.messages = vkflow.validation_messages()[0]
        self.mgr = vkflow.Manager(validation=True)

    def tearDown(self):
        vkflow.DLPACK_TIMEOUT = self.timeout
        self.mgr.close()
        gc.collect()
        self.assertNoValidation()
        self.assertEqual(vkflow.dlpack_live(), 0, "an export's deleter never ran")

    def assertNoValidation(self):
        count, text = vkflow.validation_messages()
        self.assertEqual(count, self.messages,
                         "%d validation message(s), the last: %s" % (count - self.messages, text))

    def allocations(self, mgr=None):
        return (mgr or self.mgr).mem_stats()[0]

    def assertAllocations(self, want, mgr=None):
        got = wait_until(lambda: self.allocations(mgr) == want)
        self.assertTrue(got, "allocations %d, want %d" % (self.allocations(mgr), want))

    def host_tensor(self, data, memory="host"):
        return self.mgr.tensor(np.asarray(data), memory=memory)

    def storage_tensor(self, data):
        """A Storage tensor filled with data through a Host tensor and a copy."""
        data = np.asarray(data)
        src = self.mgr.tensor(data, memory="host")
        dst = self.mgr.tensor(data.shape, dtype=data.dtype.name, memory="storage")
        seq = self.mgr.sequence()
        seq.copy(src, dst).eval()
        seq.close()
        src.close()
        return dst

    def gpu_read(self, t):
        """Reads t through a GPU copy into a Host tensor."""
        host = self.mgr.tensor(t.shape, dtype=t.dtype, memory="host")
        seq = self.mgr.sequence()
        seq.copy(t, host).eval()
        seq.close()
        out = host.read()
        host.close()
        return out

    def memories(self):
        """Host, plus Device when the device maps it (natural export kDLCPU)."""
        kinds = ["host"]
        probe = self.mgr.tensor((4,), memory="device")
        if probe.mapped:
            kinds.append("device")
        probe.close()
        return kinds


# --- 1. NumPy and PyTorch read vkflow exports --------------------------------

class TestExportToConsumers(VkflowTest):
    DTYPES = [(np.float32, torch.float32), (np.int32, torch.int32),
              (np.float16, torch.float16), (np.uint8, torch.uint8)]

    def test_numpy_and_torch_see_values(self):
        for memory in self.memories():
            for np_dtype, torch_dtype in self.DTYPES:
                for shape in [(12,), (3, 4), (2, 3, 2)]:
                    with self.subTest(memory=memory, dtype=np_dtype.__name__, shape=shape):
                        data = (np.arange(12) * 3 % 17).astype(np_dtype).reshape(shape)
                        if np_dtype is not np.uint8:
                            data = data - np_dtype(5)
                        t = self.mgr.tensor(data, memory=memory)
                        self.assertEqual(t.dtype, np.dtype(np_dtype).name)
                        self.assertEqual(t.shape, shape)
                        self.assertEqual(t.__dlpack_device__(), (KDL_CPU, 0))

                        arr = np.from_dlpack(t)
                        self.assertEqual(arr.dtype, np_dtype)
                        self.assertEqual(arr.shape, shape)
                        self.assertEqual(arr.strides, data.strides)
                        self.assertFalse(arr.flags.writeable)
                        np.testing.assert_array_equal(arr, data)

                        tt = torch.from_dlpack(t)
                        self.assertEqual(tt.dtype, torch_dtype)
                        self.assertEqual(tuple(tt.shape), shape)
                        self.assertEqual(tt.stride(), tuple(s // data.itemsize
                                                            for s in data.strides))
                        np.testing.assert_array_equal(tt.numpy(), data)
                        # Both alias the tensor's memory.
                        self.assertEqual(tt.data_ptr(), arr.ctypes.data)
                        del arr, tt
                        t.close()

    def test_legacy_capsule_fields(self):
        data = np.arange(12, dtype=np.float32).reshape(3, 4)
        t = self.host_tensor(data)
        cap = t.__dlpack__()
        self.assertEqual(capsule_name(cap), "dltensor")
        m, dl = peek(cap)
        self.assertTrue(m.deleter)
        self.assertEqual((dl.device.device_type, dl.device.device_id), (KDL_CPU, 0))
        self.assertEqual(dl.ndim, 2)
        self.assertEqual((dl.dtype.code, dl.dtype.bits, dl.dtype.lanes), (KDL_FLOAT, 32, 1))
        self.assertEqual([dl.shape[i] for i in range(2)], [3, 4])
        self.assertTrue(dl.strides, "strides must be filled in")
        self.assertEqual([dl.strides[i] for i in range(2)], [4, 1])
        self.assertEqual(dl.byte_offset, 0)
        got = np.frombuffer(ctypes.string_at(dl.data, 48), dtype=np.float32).reshape(3, 4)
        np.testing.assert_array_equal(got, data)
        del m, dl, cap

    def test_versioned_capsule_fields(self):
        data = np.arange(6, dtype=np.int32)
        t = self.host_tensor(data)
        for max_version, want in [((1, 0), (1, 0)), ((1, 2), (1, 2)), ((1, 9), (1, 3))]:
            with self.subTest(max_version=max_version):
                cap = t.__dlpack__(max_version=max_version)
                self.assertEqual(capsule_name(cap), "dltensor_versioned")
                m, dl = peek(cap)
                self.assertEqual((m.version.major, m.version.minor), want)
                self.assertEqual(m.flags & FLAG_READ_ONLY, FLAG_READ_ONLY if t.read_only else 0)
                self.assertEqual(m.flags & FLAG_IS_COPIED, 0)
                self.assertEqual((dl.dtype.code, dl.dtype.bits, dl.dtype.lanes), (KDL_INT, 32, 1))
                self.assertEqual(dl.ndim, 1)
                self.assertEqual(dl.shape[0], 6)
                self.assertTrue(dl.strides)
                self.assertEqual(dl.strides[0], 1)
                del m, dl, cap

    def test_bool(self):
        data = np.array([True, False, True, True], dtype=bool)
        t = self.host_tensor(data)
        self.assertEqual(t.dtype, "bool")
        # kDLBool does not exist before DLPack 1.0: no legacy export.
        with self.assertRaises(BufferError):
            t.__dlpack__()
        with self.assertRaises(BufferError):
            np.from_dlpack(t)
        cap = t.__dlpack__(max_version=(1, 0))
        m, dl = peek(cap)
        self.assertEqual((dl.dtype.code, dl.dtype.bits, dl.dtype.lanes), (KDL_BOOL, 8, 1))
        self.assertEqual(ctypes.string_at(dl.data, 4), b"\x01\x00\x01\x01")
        del m, dl, cap
        np.testing.assert_array_equal(t.read(), data)


# --- 2. GPU writes are visible through zero-copy exports ---------------------

class TestZeroCopyVisibility(VkflowTest):
    N = 1 << 16
    BIG = 1 << 22  # 16 MiB per tensor: milliseconds of GPU work on lavapipe

    def operands(self, memory, n=None):
        n = n or self.N
        a = self.mgr.tensor(np.arange(n, dtype=np.float32), memory=memory)
        b = self.mgr.tensor(np.full(n, 2, dtype=np.float32), memory=memory)
        out = self.mgr.tensor((n,), dtype="float32", memory=memory)
        return a, b, out, np.arange(n, dtype=np.float32) * np.float32(2)

    def test_eval_visible_in_earlier_array(self):
        for memory in self.memories():
            with self.subTest(memory=memory):
                a, b, out, want = self.operands(memory)
                self.assertTrue(out.mapped)
                arr = np.from_dlpack(out)  # taken before the GPU writes
                self.assertFalse(arr.any())
                seq = self.mgr.sequence().kernel("multiply", a, b, out).eval()
                np.testing.assert_array_equal(arr, want)
                arr2 = np.from_dlpack(out)
                self.assertEqual(arr2.ctypes.data, arr.ctypes.data)
                cap = out.__dlpack__()
                self.assertEqual(peek(cap)[1].data, arr.ctypes.data)
                del cap, arr, arr2
                seq.close()

    def test_export_waits_for_submitted_work(self):
        """Rule 1 of docs/DLPACK.md: a CPU export waits for the GPU work
        submitted before it. The write is large, so an export that did not
        wait would hand out half-written data."""
        for memory in self.memories():
            with self.subTest(memory=memory):
                a, b, out, want = self.operands(memory, self.BIG)
                arr = np.from_dlpack(out)
                tl = self.mgr.timeline(0)
                seq = self.mgr.sequence().kernel("multiply", a, b, out)
                seq.submit(signal=(tl, 1))
                arr2 = np.from_dlpack(out)  # a CPU export waits for the pending write
                snapshot = arr2.copy()  # what a consumer reads at once
                np.testing.assert_array_equal(snapshot, want)
                self.assertEqual(arr2.ctypes.data, arr.ctypes.data)
                np.testing.assert_array_equal(arr, want)
                tl.wait(1, timeout=10)
                seq.close()
                for t in (a, b, out):
                    t.close()
                del arr, arr2

    def test_held_submit_is_not_pending(self):
        """Rule 6 of docs/DLPACK.md: a submit the scheduler holds back (it
        waits for a timeline value nobody has signalled) is not pending work,
        so a CPU export does not wait for it. Once released, its write lands
        in the memory the export aliases."""
        a, b, out, want = self.operands("host")
        gate, done = self.mgr.timeline(0), self.mgr.timeline(0)
        seq = self.mgr.sequence().kernel("multiply", a, b, out)
        seq.submit(wait=(gate, 1), signal=(done, 1))
        try:
            start = time.monotonic()
            arr = np.from_dlpack(out)
            self.assertLess(time.monotonic() - start, 5, "the export waited for a held submit")
            self.assertFalse(arr.any(), "the held write ran before its wait was signalled")
            self.assertEqual(done.value, 0)
        finally:
            gate.signal(1)  # release the held write whatever happened
        done.wait(1, timeout=10)
        np.testing.assert_array_equal(arr, want)
        seq.close()

    def test_torch_sees_gpu_writes(self):
        a, b, out, want = self.operands("host")
        tt = torch.from_dlpack(out)
        self.mgr.sequence().kernel("multiply", a, b, out).eval()
        np.testing.assert_array_equal(tt.numpy(), want)


# --- 3. NumPy and PyTorch memory imported into vkflow -------------------------

class TestImport(VkflowTest):

    def test_numpy_page_aligned_zero_copy(self):
        n = 4096  # 16 KiB of float32: whole pages
        arr = aligned_bytes(n * 4).view(np.float32)
        arr[:] = np.arange(n, dtype=np.float32)
        refs = sys.getrefcount(arr)
        t = vkflow.from_dlpack(arr, self.mgr)
        self.assertIs(t.imported_copy, False, "a page-aligned array must import zero-copy")
        self.assertEqual((t.dtype, t.shape), ("float32", (n,)))
        self.assertGreater(sys.getrefcount(arr), refs, "the producer's reference is held")

        b = self.mgr.tensor(np.full(n, 3, dtype=np.float32))
        out = self.mgr.tensor((n,), dtype="float32")
        # t as output (read-modify-write), then as input.
        seq = self.mgr.sequence().kernel("saxpy", b, None, t, scalar=2.0)
        seq.kernel("multiply", t, b, out).eval()
        want = np.arange(n, dtype=np.float32) + 6
        np.testing.assert_array_equal(arr, want)  # written in place, in NumPy's memory
        np.testing.assert_array_equal(out.read(), want * 3)
        arr[:5] = -1  # and the other way round
        np.testing.assert_array_equal(t.read()[:6], [-1, -1, -1, -1, -1, 11])
        seq.close()
        t.close()
        # Closing the tensor releases NumPy's export (its deleter runs).
        self.assertTrue(wait_until(lambda: sys.getrefcount(arr) == refs),
                        "the producer's deleter did not run")

    def test_numpy_unaligned_import(self):
        n = 1001
        arr = aligned_bytes(n * 4, offset=4).view(np.float32)
        arr[:] = np.arange(n, dtype=np.float32) * 0.5
        orig = arr.copy()
        t = vkflow.from_dlpack(arr, self.mgr)
        report("unaligned 1001-float NumPy array imported %s"
               % ("by copy" if t.imported_copy else "zero-copy"))
        self.assertIsInstance(t.imported_copy, bool)
        self.assertEqual((t.dtype, t.shape), ("float32", (n,)))
        np.testing.assert_array_equal(t.read(), orig)
        ones = self.mgr.tensor(np.ones(n, dtype=np.float32))
        self.mgr.sequence().kernel("saxpy", ones, None, t, scalar=1.0).eval()
        np.testing.assert_array_equal(t.read(), orig + 1)
        np.testing.assert_array_equal(arr, orig if t.imported_copy else orig + 1)

    def test_host_import_alignment(self):
        """Zero-copy needs an address aligned to the device's
        host_import_alignment (64 bytes on lavapipe, not 16); otherwise a
        copy, or BufferError with copy=False."""
        n = 256
        a = self.mgr.host_import_alignment
        if a == 0:
            self.skipTest("the device cannot import host memory")
        cases = [(0, True), (a, True), (4, False)] + [(o, False) for o in (a // 4, a // 2) if o % 4 == 0 and o > 4]
        for offset, zero_copy in cases:
            with self.subTest(offset=offset):
                arr = aligned_bytes(n * 4, offset=offset).view(np.float32)
                arr[:] = np.arange(n, dtype=np.float32)
                t = vkflow.from_dlpack(arr, self.mgr)
                self.assertIs(t.imported_copy, not zero_copy)
                np.testing.assert_array_equal(t.read(), arr)
                t.close()
                if zero_copy:
                    t = vkflow.from_dlpack(arr, self.mgr, copy=False)
                    self.assertIs(t.imported_copy, False)
                    t.close()
                    t = vkflow.from_dlpack(arr, self.mgr, copy=True)
                    self.assertIs(t.imported_copy, True)
                    t.close()
                else:
                    with self.assertRaises(BufferError):
                        vkflow.from_dlpack(arr, self.mgr, copy=False)

    def test_numpy_noncontiguous_import_copies(self):
        base = np.arange(64, dtype=np.float32)
        arr = base[::2]
        t = vkflow.from_dlpack(arr, self.mgr)
        self.assertIs(t.imported_copy, True)
        self.assertEqual(t.shape, (32,))
        np.testing.assert_array_equal(t.read(), arr)

        arr2 = np.arange(24, dtype=np.int32).reshape(4, 6)[:, 1:5]
        t2 = vkflow.from_dlpack(arr2, self.mgr)
        self.assertIs(t2.imported_copy, True)
        self.assertEqual((t2.dtype, t2.shape), ("int32", (4, 4)))
        np.testing.assert_array_equal(t2.read(), arr2)

    def test_numpy_2d_and_dtypes(self):
        for dtype in (np.int32, np.float16, np.uint8, np.float32):
            with self.subTest(dtype=dtype.__name__):
                arr = (np.arange(12) % 7).astype(dtype).reshape(3, 4)
                t = vkflow.from_dlpack(arr, self.mgr)
                self.assertEqual((t.dtype, t.shape), (np.dtype(dtype).name, (3, 4)))
                np.testing.assert_array_equal(t.read(), arr)
                t.close()

    def test_torch_import(self):
        tt = torch.arange(1000, dtype=torch.float32)
        want = tt.numpy().copy()
        t = vkflow.from_dlpack(tt, self.mgr)
        report("torch float32 tensor imported %s"
               % ("by copy" if t.imported_copy else "zero-copy"))
        self.assertEqual((t.dtype, t.shape), ("float32", (1000,)))
        np.testing.assert_array_equal(t.read(), want)
        ones = self.mgr.tensor(np.ones(1000, dtype=np.float32))
        self.mgr.sequence().kernel("saxpy", ones, None, t, scalar=2.0).eval()
        np.testing.assert_array_equal(t.read(), want + 2)
        np.testing.assert_array_equal(tt.numpy(), want if t.imported_copy else want + 2)

        # A page-aligned torch tensor (over NumPy memory) imports zero-copy.
        arr = aligned_bytes(8192).view(np.float32)
        arr[:] = 1.5
        tt2 = torch.from_numpy(arr)
        t2 = vkflow.from_dlpack(tt2, self.mgr)
        self.assertIs(t2.imported_copy, False)
        np.testing.assert_array_equal(t2.read(), arr)

    def test_numpy_array_and_slices(self):
        """An array and slices of it imported at once. The same start (the
        array again, a prefix slice) is a view of the first import's Vulkan
        buffer, so GPU work through either is ordered; a later start is
        copied, or refused with copy=False naming both host ranges. The first
        import's deleter waits until every tensor over its memory is closed."""
        n, k = 4096, 1024
        arr = aligned_bytes(n * 4).view(np.float32)
        arr[:] = np.arange(n, dtype=np.float32)
        refs = sys.getrefcount(arr)
        t = vkflow.from_dlpack(arr, self.mgr)
        self.assertIs(t.imported_copy, False)
        same = vkflow.from_dlpack(arr, self.mgr, copy=False)
        self.assertIs(same.imported_copy, False)
        head_arr = arr[:k]
        head_ref = weakref.ref(head_arr)
        head = vkflow.from_dlpack(head_arr, self.mgr, copy=False)
        del head_arr
        self.assertIs(head.imported_copy, False)
        # 4 KiB in: aligned, but inside t's range, so not a second import.
        tail = vkflow.from_dlpack(arr[k:], self.mgr)
        self.assertIs(tail.imported_copy, True)
        with self.assertRaises(BufferError) as cm:
            vkflow.from_dlpack(arr[k:2 * k], self.mgr, copy=False)
        start = arr.ctypes.data
        msg = str(cm.exception)
        self.assertIn("overlaps the live zero-copy import", msg)
        self.assertIn("[%#x, %#x)" % (start + 4 * k, start + 8 * k), msg)
        self.assertIn("[%#x, %#x)" % (start, start + 4 * n), msg)

        # One sequence: a GPU write through t, a GPU read through head.
        ones = self.mgr.tensor(np.ones(n, dtype=np.float32))
        ones_k = self.mgr.tensor(np.ones(k, dtype=np.float32))
        out_k = self.mgr.tensor((k,), dtype="float32")
        seq = self.mgr.sequence().kernel("saxpy", ones, None, t, scalar=2.0)
        seq.kernel("multiply", head, ones_k, out_k).eval()
        seq.close()
        want = np.arange(n, dtype=np.float32) + 2
        np.testing.assert_array_equal(out_k.read(), want[:k])
        np.testing.assert_array_equal(self.gpu_read(same), want)
        np.testing.assert_array_equal(arr, want)
        np.testing.assert_array_equal(tail.read(), np.arange(k, n, dtype=np.float32))

        same.close()
        self.assertTrue(wait_until(lambda: sys.getrefcount(arr) == refs + 1),
                        "the view's deleter did not run")
        t.close()
        gc.collect()
        self.assertEqual(sys.getrefcount(arr), refs + 1,
                         "the first import's deleter ran while a view of it was open")
        head.close()
        self.assertTrue(wait_until(lambda: head_ref() is None), "the slice's deleter did not run")
        self.assertTrue(wait_until(lambda: sys.getrefcount(arr) == refs),
                        "the first import's deleter did not run")

    def test_readonly_numpy_refused_by_numpy(self):
        arr = np.arange(8, dtype=np.float32)
        arr.flags.writeable = False
        # NumPy 1.24 will not export read-only arrays; the error passes through.
        with self.assertRaises(BufferError):
            vkflow.from_dlpack(arr, self.mgr)


# --- 4. Lifetime of exported memory ------------------------------------------

class TestLifetime(VkflowTest):

    def test_export_outlives_tensor(self):
        base = self.allocations()
        data = np.arange(16, dtype=np.float32) - 3
        t = self.host_tensor(data)
        self.assertEqual(self.allocations(), base + 1)
        arr = np.from_dlpack(t)
        t.close()
        del t
        gc.collect()
        np.testing.assert_array_equal(arr, data)
        self.assertEqual(self.allocations(), base + 1, "the export holds the allocation")
        del arr
        self.assertAllocations(base)

    def test_torch_export_outlives_tensor(self):
        base = self.allocations()
        data = np.arange(16, dtype=np.int32)
        t = self.host_tensor(data)
        tt = torch.from_dlpack(t)
        t.close()
        del t
        np.testing.assert_array_equal(tt.numpy(), data)
        self.assertEqual(self.allocations(), base + 1)
        del tt
        self.assertAllocations(base)

    def test_export_outlives_manager(self):
        data = np.arange(32, dtype=np.float32) * 2
        t = self.host_tensor(data)
        arr = np.from_dlpack(t)
        tt = torch.from_dlpack(self.host_tensor(data + 1))
        self.mgr.close()
        self.assertTrue(t.closed)
        with self.assertRaises(vkflow.ClosedError):
            t.read()
        with self.assertRaises(vkflow.ClosedError):
            t.__dlpack__()
        np.testing.assert_array_equal(arr, data)
        np.testing.assert_array_equal(tt.numpy(), data + 1)
        del arr, tt
        gc.collect()
        self.assertNoValidation()


# --- 5. Capsules are consumed once --------------------------------------------

class TestCapsules(VkflowTest):

    def test_consumed_twice_numpy(self):
        data = np.arange(8, dtype=np.float32)
        t = self.host_tensor(data)
        cap = t.__dlpack__()
        w = Capsule(cap)
        arr = np.from_dlpack(w)
        np.testing.assert_array_equal(arr, data)
        self.assertEqual(capsule_name(cap), "used_dltensor")
        with self.assertRaises(ValueError):
            np.from_dlpack(w)
        with self.assertRaises(ValueError):
            vkflow.from_dlpack(cap, self.mgr)
        with self.assertRaises(ValueError):
            vkflow.from_dlpack(w, self.mgr)
        np.testing.assert_array_equal(arr, data)

    def test_consumed_twice_torch(self):
        t = self.host_tensor(np.arange(8, dtype=np.float32))
        w = Capsule(t.__dlpack__())
        tt = torch.from_dlpack(w)
        np.testing.assert_array_equal(tt.numpy(), np.arange(8))
        with self.assertRaises(RuntimeError):
            torch.from_dlpack(w)

    def test_consumed_twice_vkflow(self):
        data = np.arange(8, dtype=np.float32)
        t = self.host_tensor(data)
        for kw in ({}, {"max_version": (1, 0)}):
            with self.subTest(**kw):
                cap = t.__dlpack__(**kw)
                t2 = vkflow.from_dlpack(cap, self.mgr)
                np.testing.assert_array_equal(t2.read(), data)
                self.assertTrue(capsule_name(cap).startswith("used_"))
                with self.assertRaises(ValueError):
                    vkflow.from_dlpack(cap, self.mgr)
                if "max_version" not in kw:
                    with self.assertRaises(ValueError):
                        np.from_dlpack(Capsule(cap))
                t2.close()

    def test_not_a_capsule(self):
        with self.assertRaises(TypeError):
            vkflow.from_dlpack(object(), self.mgr)
        with self.assertRaises(TypeError):
            vkflow.from_dlpack(np.arange(4), "not a manager")

    def test_dropped_capsule_runs_deleter(self):
        base = self.allocations()
        for kw in ({}, {"max_version": (1, 0)}, {"dl_device": (KDL_CPU, 0), "copy": True}):
            with self.subTest(**kw):
                t = self.host_tensor(np.arange(8, dtype=np.float32))
                cap = t.__dlpack__(**kw)
                t.close()
                if "copy" not in kw:  # a copy need not be a Vulkan allocation
                    self.assertAllocations(base + 1)
                del cap
                self.assertAllocations(base)
        # A kDLVulkan export of a Storage tensor too.
        st = self.storage_tensor(np.arange(8, dtype=np.float32))
        cap = st.__dlpack__()
        self.assertEqual(peek(cap)[1].device.device_type, KDL_VULKAN)
        st.close()
        self.assertAllocations(base + 1)
        del cap
        self.assertAllocations(base)


# --- 6. Export options ---------------------------------------------------------

class TestExportOptions(VkflowTest):

    def test_capsule_names(self):
        t = self.host_tensor(np.arange(4, dtype=np.float32))
        cap = t.__dlpack__(max_version=(1, 0))
        self.assertTrue(_IsValid(cap, b"dltensor_versioned"))
        self.assertFalse(_IsValid(cap, b"dltensor"))
        self.assertEqual(capsule_name(t.__dlpack__()), "dltensor")
        self.assertEqual(capsule_name(t.__dlpack__(max_version=(0, 8))), "dltensor")
        self.assertEqual(capsule_name(t.__dlpack__(max_version=(2, 0))), "dltensor_versioned")

    def test_dlpack_device(self):
        h = self.host_tensor(np.zeros(4, dtype=np.float32))
        self.assertEqual(h.__dlpack_device__(), (KDL_CPU, 0))
        self.assertTrue(h.mapped)
        d = self.mgr.tensor((4,), memory="device")
        dev = d.__dlpack_device__()
        self.assertEqual(dev[0], KDL_CPU if d.mapped else KDL_VULKAN)
        s = self.mgr.tensor((4,), memory="storage")
        self.assertFalse(s.mapped)
        dev = s.__dlpack_device__()
        self.assertEqual(dev[0], KDL_VULKAN)
        self.assertIsInstance(dev[1], int)
        self.assertGreaterEqual(dev[1], 0)

    def test_storage_to_cpu(self):
        data = np.arange(20, dtype=np.float32) / 4
        st = self.storage_tensor(data)
        self.assertEqual(st.memory, "storage")
        with self.assertRaises(BufferError):
            st.__dlpack__(dl_device=(KDL_CPU, 0), copy=False)
        for copy in (True, None):
            with self.subTest(copy=copy):
                cap = st.__dlpack__(dl_device=(KDL_CPU, 0), copy=copy)
                self.assertEqual(peek(cap)[1].device.device_type, KDL_CPU)
                arr = np.from_dlpack(Capsule(cap))
                np.testing.assert_array_equal(arr, data)
        cap = st.__dlpack__(max_version=(1, 0), dl_device=(KDL_CPU, 0))
        m, dl = peek(cap)
        self.assertEqual(m.flags & FLAG_IS_COPIED, FLAG_IS_COPIED)
        np.testing.assert_array_equal(
            np.frombuffer(ctypes.string_at(dl.data, data.nbytes), dtype=np.float32), data)
        del m, dl, cap
        # Its natural export is kDLVulkan, which NumPy 1.24 refuses.
        cap = st.__dlpack__(copy=False)
        self.assertEqual(peek(cap)[1].device.device_type, KDL_VULKAN)
        with self.assertRaises((RuntimeError, BufferError)):
            np.from_dlpack(Capsule(cap, st.__dlpack_device__()))

    def test_unsupported_device(self):
        for t in (self.host_tensor(np.zeros(4, dtype=np.float32)),
                  self.mgr.tensor((4,), memory="storage")):
            with self.subTest(memory=t.memory):
                with self.assertRaises(BufferError):
                    t.__dlpack__(dl_device=(KDL_OPENCL, 0))
                with self.assertRaises(BufferError):
                    t.__dlpack__(max_version=(1, 0), dl_device=(KDL_OPENCL, 0))

    def test_copy_modes_on_mapped(self):
        data = np.arange(10, dtype=np.int32)
        t = self.host_tensor(data)
        view = np.from_dlpack(t)
        same = np.from_dlpack(Capsule(t.__dlpack__(copy=False)))
        self.assertEqual(same.ctypes.data, view.ctypes.data)
        copied = np.from_dlpack(Capsule(t.__dlpack__(copy=True)))
        self.assertNotEqual(copied.ctypes.data, view.ctypes.data)
        cap = t.__dlpack__(max_version=(1, 0), copy=True)
        self.assertEqual(peek(cap)[0].flags & FLAG_IS_COPIED, FLAG_IS_COPIED)
        del cap
        t.write(data * 10)
        np.testing.assert_array_equal(view, data * 10)
        np.testing.assert_array_equal(same, data * 10)
        np.testing.assert_array_equal(copied, data)

    def test_argument_checks(self):
        t = self.host_tensor(np.zeros(4, dtype=np.float32))
        with self.assertRaises(ValueError):
            t.__dlpack__(stream=1)  # CPU exports take no stream
        self.assertEqual(capsule_name(t.__dlpack__(stream=-1)), "dltensor")
        with self.assertRaises(ValueError):
            t.__dlpack__(copy="yes")
        s = self.mgr.tensor((4,), memory="storage")
        with self.assertRaises(TypeError):
            s.__dlpack__(stream=5)  # a Vulkan stream is a (Timeline, value) pair
        with self.assertRaises(TypeError):
            t.__dlpack__(None)  # keyword-only

    def test_vulkan_export_ready_point(self):
        """Rules 2 and 3 of docs/DLPACK.md: a kDLVulkan export never blocks;
        with a consumer point (stream=(timeline, value)) that point is the
        struct's ready point and is signalled only after the pending write."""
        n = 1 << 22
        data = np.arange(n, dtype=np.float32)
        src = self.host_tensor(data)
        st = self.mgr.tensor((n,), dtype="float32", memory="storage")
        done, ready = self.mgr.timeline(0), self.mgr.timeline(0)
        seq = self.mgr.sequence().copy(src, st)
        seq.submit(signal=(done, 1))  # 16 MiB copy, still running below
        start = time.monotonic()
        cap = st.__dlpack__(max_version=(1, 0), stream=(ready, 1))
        self.assertLess(time.monotonic() - start, 5, "a kDLVulkan export must not block")
        ready.wait(1, timeout=10)
        self.assertEqual(done.value, 1, "the consumer's point was signalled before the "
                         "pending write completed")
        m, dl = peek(cap)
        self.assertEqual((dl.device.device_type, m.version.major), (KDL_VULKAN, 1))
        self.assertEqual(m.flags & FLAG_IS_COPIED, 0)
        vb = VulkanBuffer.from_address(dl.data)
        self.assertTrue(vb.device)
        self.assertTrue(vb.buffer)
        self.assertTrue(vb.memory)
        self.assertEqual(vb.size, data.nbytes)
        self.assertEqual((vb.ready_semaphore, vb.ready_value), (ready.semaphore, 1))
        self.assertEqual((vb.released_semaphore, vb.released_value), (0, 0))
        # Without a consumer point the struct carries vkflow's own ready point.
        cap2 = st.__dlpack__(max_version=(1, 0), stream=-1)
        vb2 = VulkanBuffer.from_address(peek(cap2)[1].data)
        self.assertTrue(vb2.ready_semaphore)
        self.assertEqual(vb2.buffer, vb.buffer)
        del m, dl, vb, vb2, cap, cap2
        np.testing.assert_array_equal(self.gpu_read(st), data)
        seq.close()


# --- 7. Round trips ----------------------------------------------------------

class TestRoundTrip(VkflowTest):

    def test_vulkan_export_same_device_view(self):
        data = np.arange(32, dtype=np.float32)
        st = self.storage_tensor(data)
        dev = st.__dlpack_device__()
        for kw in ({"max_version": (1, 0)}, {}):
            with self.subTest(**kw):
                cap = st.__dlpack__(dl_device=(KDL_VULKAN, dev[1]), **kw)
                v = vkflow.from_dlpack(cap, self.mgr)
                self.assertIs(v.imported_copy, False)
                self.assertEqual((v.dtype, v.shape), ("float32", (32,)))
                before = self.gpu_read(st)
                np.testing.assert_array_equal(self.gpu_read(v), before)
                ones = self.mgr.tensor(np.ones(32, dtype=np.float32))
                self.mgr.sequence().kernel("saxpy", ones, None, v, scalar=1.0).eval()
                np.testing.assert_array_equal(self.gpu_read(st), before + 1)
                v.close()
                ones.close()

    def test_import_vkflow_object(self):
        """from_dlpack(tensor): the natural export (versioned) of each kind."""
        data = np.arange(16, dtype=np.float32) - 8
        for t in (self.host_tensor(data), self.storage_tensor(data)):
            with self.subTest(memory=t.memory):
                v = vkflow.from_dlpack(t, self.mgr)
                report("%s tensor re-imported %s" % (
                    t.memory, "by copy" if v.imported_copy else "zero-copy"))
                self.assertEqual((v.dtype, v.shape), ("float32", (16,)))
                np.testing.assert_array_equal(self.gpu_read(v), data)
                ones = self.mgr.tensor(np.ones(16, dtype=np.float32))
                self.mgr.sequence().kernel("saxpy", ones, None, v, scalar=3.0).eval()
                np.testing.assert_array_equal(self.gpu_read(v), data + 3)
                np.testing.assert_array_equal(self.gpu_read(t),
                                              data if v.imported_copy else data + 3)

    def test_vulkan_export_other_device_refused(self):
        base = self.allocations()
        st = self.storage_tensor(np.arange(8, dtype=np.float32))
        other = vkflow.Manager(validation=True)
        try:
            with self.assertRaises(BufferError):
                vkflow.from_dlpack(st, other)
        finally:
            other.close()
        st.close()
        self.assertAllocations(base)  # the failed import ran the deleter

    def test_numpy_torch_chain(self):
        data = np.arange(12, dtype=np.float32).reshape(3, 4)
        t = self.host_tensor(data)
        tt = torch.from_dlpack(t)
        back = vkflow.from_dlpack(tt, self.mgr)
        self.assertEqual(back.shape, (3, 4))
        np.testing.assert_array_equal(back.read(), data)
        arr = np.from_dlpack(back) if back.mapped else back.read()
        np.testing.assert_array_equal(arr, data)

    def test_zero_d_shapes(self):
        """0-d arrays stay 0-d through the binding, import and export."""
        z = self.mgr.tensor((), dtype="float32", memory="host")
        self.assertEqual((z.shape, z.size), ((), 1))
        self.assertEqual(z.read().shape, ())
        t = self.mgr.tensor(np.float32(2.5), memory="host")
        self.assertEqual(t.shape, ())
        self.assertEqual(np.from_dlpack(t).shape, ())
        self.assertEqual(np.from_dlpack(t)[()], 2.5)
        self.assertEqual(torch.from_dlpack(t).shape, torch.Size([]))
        for src in (np.array(3.0, dtype=np.float32), torch.tensor(3.0)):
            back = vkflow.from_dlpack(src, self.mgr)
            self.assertEqual(back.shape, ())
            self.assertEqual(back.read()[()], 3.0)
            back.close()
        z.close()
        t.close()


# --- the rest of the binding ---------------------------------------------------

class TestBinding(VkflowTest):

    def test_tensor_basics(self):
        t = self.mgr.tensor([1, 2, 3])
        self.assertEqual((t.dtype, t.shape, t.memory), ("float32", (3,), "device"))
        np.testing.assert_array_equal(t.read(), [1, 2, 3])
        z = self.mgr.tensor((2, 3), dtype="int32", memory="host")
        self.assertEqual((z.dtype, z.shape, z.memory, z.mapped), ("int32", (2, 3), "host", True))
        self.assertFalse(z.read().any())
        z.write(np.arange(6))
        np.testing.assert_array_equal(z.read(), np.arange(6).reshape(2, 3))
        with self.assertRaises(ValueError):
            z.write(np.arange(5))
        with self.assertRaises(ValueError):
            self.mgr.tensor((3,), dtype="float128")
        with self.assertRaises(ValueError):
            self.mgr.tensor((3,), memory="nowhere")
        z.close()
        z.close()
        with self.assertRaises(vkflow.ClosedError):
            z.read()

    def test_timeline_and_errors(self):
        tl = self.mgr.timeline(3)
        self.assertEqual(tl.value, 3)
        self.assertTrue(tl.semaphore)
        tl.signal(5)
        tl.wait(4, timeout=1)
        with self.assertRaises(TimeoutError):
            tl.wait(6, timeout=0.05)
        a = self.mgr.tensor((4,))
        with self.assertRaises(ValueError):
            self.mgr.sequence().kernel("no-such-kernel", a, a, a)

    def test_sequence_submit_chain(self):
        n = 256
        a = self.mgr.tensor(np.arange(n, dtype=np.float32))
        b = self.mgr.tensor(np.full(n, 2, dtype=np.float32))
        out = self.mgr.tensor((n,), dtype="float32")
        out2 = self.mgr.tensor((n,), dtype="float32", memory="host")
        first, second = self.mgr.timeline(), self.mgr.timeline()
        s1 = self.mgr.sequence().kernel("multiply", a, b, out)
        s2 = self.mgr.sequence().kernel("add", out, a, out2)
        s2.submit(wait=(first, 1), signal=(second, 1))  # held until s1 signals
        s1.submit(signal=(first, 1))
        second.wait(1, timeout=10)
        np.testing.assert_array_equal(out2.read(), np.arange(n) * 3)

    def test_manager_context(self):
        with vkflow.Manager(validation=True) as m:
            t = m.tensor((2,))
            self.assertEqual(m.mem_stats()[0] >= 1, True)
        self.assertTrue(m.closed)
        self.assertTrue(t.closed)
        with self.assertRaises(vkflow.ClosedError):
            m.mem_stats()


if __name__ == "__main__":
    unittest.main()
