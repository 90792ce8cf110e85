"""kDLCUDA exports (docs/INTEROP.md): Tensor.cuda_view, Manager.cuda_device
and __dlpack__(dl_device=(kDLCUDA, n), stream=s). Without libcuda.so.1 or a
CUDA device whose UUID is the Vulkan device's (lavapipe), every path must
raise UnsupportedError / BufferError saying why; with one (an NVIDIA GPU and
PyTorch built with CUDA), torch reads the tensor without a copy.
"""

import os
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


if __name__ == "__main__":
    unittest.main()
