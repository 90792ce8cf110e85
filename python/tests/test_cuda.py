"""kDLCUDA exports (docs/INTEROP.md): Tensor.cuda_view, Manager.cuda_device
and __dlpack__(dl_device=(kDLCUDA, n), stream=s). Without libcuda.so.1 or a
CUDA device whose UUID is the Vulkan device's (lavapipe), every path must
raise UnsupportedError / BufferError saying why; with one (an NVIDIA GPU and
PyTorch built with CUDA), torch reads the tensor without a copy.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

os.environ.setdefault("VKFLOW_VALIDATION", "1")

import numpy as np  # noqa: E402

import vkflow  # noqa: E402
import vkflow.ops as vo  # noqa: E402
from test_dlpack import VkflowTest  # noqa: E402

try:
    import torch  # noqa: E402
except ImportError:  # pragma: no cover
    torch = None


def _cuda_ordinal(mgr):
    try:
        return mgr.cuda_device()
    except vkflow.UnsupportedError as e:
        return e


class TestCudaExport(VkflowTest):

    def test_unsupported_says_why(self):
        ordinal = _cuda_ordinal(self.mgr)
        if not isinstance(ordinal, Exception):
            self.skipTest("a CUDA device matches this Vulkan device (ordinal %d)" % ordinal)
        self.assertRegex(str(ordinal), "libcuda|CUDA device")
        t = self.mgr.tensor(np.arange(16, dtype=np.float32), memory="exportable")
        with self.assertRaises(vkflow.UnsupportedError):
            t.cuda_view()
        with self.assertRaises(BufferError) as cm:
            t.__dlpack__(dl_device=(vkflow.DLDeviceType.CUDA, 0), stream=1)
        self.assertRegex(str(cm.exception), "libcuda|CUDA")
        # The tensor is untouched and still exports to the host.
        np.testing.assert_array_equal(t.read(), np.arange(16, dtype=np.float32))

    def test_bad_stream(self):
        t = self.mgr.tensor(np.zeros(4, dtype=np.float32))
        with self.assertRaises(TypeError):
            t.__dlpack__(dl_device=(vkflow.DLDeviceType.CUDA, 0), stream="s")

    def test_torch_reads_without_copy(self):
        ordinal = _cuda_ordinal(self.mgr)
        if isinstance(ordinal, Exception):
            self.skipTest("no CUDA device for this Vulkan device: %s" % ordinal)
        if torch is None or not torch.cuda.is_available():
            self.skipTest("PyTorch has no CUDA here")
        n = 1 << 20
        t = self.mgr.tensor(np.zeros(n, dtype=np.float32), memory="exportable")
        x = self.mgr.tensor(np.arange(n, dtype=np.float32))
        for _ in range(8):  # queued, not waited for: the stream must wait on the GPU
            vo.add(t, x, out=t)
        view = t.cuda_view()
        y = torch.from_dlpack(view)
        self.assertEqual(y.device.type, "cuda")
        torch.cuda.synchronize()
        np.testing.assert_array_equal(y.cpu().numpy(), 8 * np.arange(n, dtype=np.float32))
        # Same memory: a CUDA write is seen by vkflow after the stream ends.
        y.fill_(3.0)
        torch.cuda.synchronize()
        np.testing.assert_array_equal(t.read()[:4], np.full(4, 3, np.float32))


# The child of TestCudaStandIn: with the stand-in libcuda.so.1 (which maps
# lavapipe's memfds), the bytes at a kDLCUDA capsule's data pointer are what
# a CUDA kernel would read when __dlpack__ returns.
_STANDIN_CHILD = r"""
import ctypes, os, sys
import numpy as np
import vkflow
sys.path.insert(0, os.getcwd())
from test_dlpack import peek

with vkflow.Manager() as m:
    probe = m.tensor(np.zeros(16, np.uint8), memory="exportable")
    h = probe.export_memory()
    os.close(h.fd)
    os.environ["VKFLOW_FAKE_CUDA_UUID"] = bytes(h.device_uuid).hex()
    n = 64 << 20
    pattern = (np.arange(n, dtype=np.uint64) * 7 + 1).astype(np.uint8)
    a = m.tensor((n,), dtype=np.uint8)
    b = m.tensor((n,), dtype=np.uint8)
    for stream in (-1, None, 1, 2):
        x = m.tensor(pattern)  # not exportable: the export copies it
        seq = m.sequence()
        for _ in range(8):  # unrelated work queued ahead of the export's copy
            seq.copy(a, b).copy(b, a)
        seq.submit()
        cap = x.__dlpack__(stream=stream, dl_device=(vkflow.DLDeviceType.CUDA, 0))
        _, dl = peek(cap)
        got = ctypes.string_at(dl.data + n - 4096, 4096)
        if got != pattern[-4096:].tobytes():
            sys.exit("stream %r: the last bytes at data when __dlpack__ returned: %s, want %s"
                     % (stream, got[-8:].hex(), pattern[-8:].tobytes().hex()))
        del dl, cap
        seq.close()
        x.close()
print("STANDIN OK")
"""


class TestCudaStandIn(unittest.TestCase):
    """__dlpack__(dl_device=(kDLCUDA, 0), stream=s) through the C API against
    cuda/testdata/fakecuda.c, a stand-in libcuda.so.1 (docs/DLPACK.md): a copy
    the export makes is complete when it returns, stream -1 included."""

    def test_copy_complete_for_every_stream(self):
        src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "cuda", "testdata",
                           "fakecuda.c")
        cc = os.environ.get("CC", "gcc")
        if not os.path.exists(src) or shutil.which(cc) is None:
            self.skipTest("needs the source tree's cuda/testdata/fakecuda.c and a C compiler")
        with tempfile.TemporaryDirectory() as d:
            subprocess.run([cc, "-Wall", "-Werror", "-shared", "-fPIC", "-o",
                            os.path.join(d, "libcuda.so.1"), src], check=True)
            env = dict(os.environ, LD_LIBRARY_PATH=d, VKFLOW_FAKE_CUDA_MAP="1",
                       VKFLOW_FAKE_LIBCUDA=os.path.join(d, "log"))
            r = subprocess.run([sys.executable, "-c", _STANDIN_CHILD], env=env, capture_output=True,
                               text=True, cwd=os.path.dirname(os.path.abspath(__file__)), timeout=300)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertIn("STANDIN OK", r.stdout)
            with open(os.path.join(d, "log")) as f:
                self.assertNotIn("WRONG", f.read())


if __name__ == "__main__":
    unittest.main()
