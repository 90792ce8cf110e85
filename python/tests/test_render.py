"""vkflow.torch.soft_render (docs/RENDERING.md) against a straightforward
PyTorch implementation of the formula (render_ref.py): the image in
float64 to 1e-9 for any sigma and batch, float32 to 2e-5; the gradients
equal that implementation's autograd in float64; gradcheck; bit-identical
gradients from two backward passes; a vertex on a pixel centre gives no
NaN; bad input raises ValueError or TypeError and leaves the inputs as
they were; the memory counters."""

import os
import unittest

os.environ.setdefault("VKFLOW_VALIDATION", "1")

import torch  # noqa: E402

import vkflow.torch as vt  # noqa: E402
from render_ref import soft_render_ref  # noqa: E402
from test_dlpack import VkflowTest  # noqa: E402

F32, F64 = torch.float32, torch.float64


def scene(n, h, w, seed, dtype=F64, spread=0.4):
    """n triangles around random centres, of up to spread * the image's
    size, with colours and opacities in (0.1, 0.9)."""
    g = torch.Generator().manual_seed(seed)
    size = torch.tensor([w, h], dtype=F64)
    centre = torch.rand(n, 1, 2, generator=g, dtype=F64) * size
    tri = centre + (torch.rand(n, 3, 2, generator=g, dtype=F64) * 2 - 1) * size * spread
    rgba = 0.1 + 0.8 * torch.rand(n, 4, generator=g, dtype=F64)
    return tri.to(dtype), rgba.to(dtype)


class SoftRenderTest(VkflowTest):
    def test_forward_float64_any_sigma_and_batch(self):
        h, w, n = 13, 17, 11
        tri, rgba = scene(n, h, w, 1)
        for sigma in (0.25, 1.0, 3.0):
            want = soft_render_ref(tri, rgba, (h, w), sigma)
            for batch in (1, 3, 8, n, n + 5):
                with self.subTest(sigma=sigma, batch=batch):
                    got = vt.soft_render(tri, rgba, (h, w), sigma=sigma, batch=batch)
                    self.assertEqual(got.dtype, F64)
                    self.assertEqual(tuple(got.shape), (h, w, 4))
                    self.assertLessEqual(float((got - want).abs().max()), 1e-9)

    def test_forward_float32(self):
        h, w, n = 20, 16, 9
        tri, rgba = scene(n, h, w, 2, F32)
        for sigma, batch in ((0.5, 4), (2.0, 8)):
            want = soft_render_ref(tri.double(), rgba.double(), (h, w), sigma)
            got = vt.soft_render(tri, rgba, (h, w), sigma=sigma, batch=batch)
            self.assertEqual(got.dtype, F32)
            self.assertLessEqual(float((got.double() - want).abs().max()), 2e-5)

    def test_gradients_equal_autograd_float64(self):
        h, w, n = 11, 12, 7
        base_tri, base_rgba = scene(n, h, w, 3)
        cot = torch.randn(h, w, 4, generator=torch.Generator().manual_seed(4), dtype=F64)
        for sigma, batch in ((0.7, 2), (1.5, 8)):
            with self.subTest(sigma=sigma, batch=batch):
                grads = []
                for f in (lambda a, b: vt.soft_render(a, b, (h, w), sigma=sigma, batch=batch),
                          lambda a, b: soft_render_ref(a, b, (h, w), sigma)):
                    tri = base_tri.clone().requires_grad_()
                    rgba = base_rgba.clone().requires_grad_()
                    (f(tri, rgba) * cot).sum().backward()
                    grads.append((tri.grad, rgba.grad))
                (gt, gc), (rt, rc) = grads
                torch.testing.assert_close(gt, rt, rtol=1e-8, atol=1e-10)
                torch.testing.assert_close(gc, rc, rtol=1e-8, atol=1e-10)

    def test_gradcheck(self):
        tri, rgba = scene(3, 6, 7, 5)
        tri.requires_grad_()
        rgba.requires_grad_()
        self.assertTrue(torch.autograd.gradcheck(
            lambda a, b: vt.soft_render(a, b, (6, 7), sigma=0.8, batch=2), (tri, rgba),
            eps=1e-6, atol=1e-6, rtol=1e-5))

    def test_two_backward_passes_are_bit_identical(self):
        h, w = 24, 24
        for dtype in (F32, F64):
            tri, rgba = scene(16, h, w, 6, dtype)
            cot = torch.randn(h, w, 4, generator=torch.Generator().manual_seed(7), dtype=dtype)
            grads = []
            for _ in range(2):
                a, b = tri.clone().requires_grad_(), rgba.clone().requires_grad_()
                (vt.soft_render(a, b, (h, w), batch=4) * cot).sum().backward()
                grads.append((a.grad, b.grad))
            self.assertTrue(torch.equal(grads[0][0], grads[1][0]), dtype)
            self.assertTrue(torch.equal(grads[0][1], grads[1][1]), dtype)

    def test_vertex_on_pixel_centre_gives_no_nan(self):
        for dtype in (F32, F64):
            tri = torch.tensor([[[2.5, 1.5], [6.5, 2.5], [3.5, 5.5]],
                                [[1.5, 1.5], [1.5, 1.5], [4.5, 4.5]]], dtype=dtype, requires_grad=True)
            rgba = torch.tensor([[0.2, 0.4, 0.6, 0.8], [0.9, 0.1, 0.3, 0.5]], dtype=dtype,
                                requires_grad=True)
            img = vt.soft_render(tri, rgba, (8, 8))
            img.square().sum().backward()
            for x in (img, tri.grad, rgba.grad):
                self.assertTrue(bool(torch.isfinite(x).all()), (dtype, x))
            want = soft_render_ref(tri.detach().double(), rgba.detach().double(), (8, 8), 1.0)
            self.assertLessEqual(float((img.detach().double() - want).abs().max()), 2e-5)

    def test_no_triangles(self):
        tri = torch.zeros(0, 3, 2, requires_grad=True)
        rgba = torch.zeros(0, 4, requires_grad=True)
        img = vt.soft_render(tri, rgba, (3, 5))
        self.assertTrue(torch.equal(img, torch.zeros(3, 5, 4)))
        img.sum().backward()
        self.assertEqual(tuple(tri.grad.shape), (0, 3, 2))

    def test_no_grad(self):
        tri, rgba = scene(4, 8, 8, 8, F32)
        tri.requires_grad_()
        with torch.no_grad():
            img = vt.soft_render(tri, rgba, (8, 8))
        self.assertFalse(img.requires_grad)
        self.assertTrue(vt.soft_render(tri, rgba, (8, 8)).requires_grad)

    def test_bad_input_raises_and_leaves_the_inputs(self):
        tri, rgba = scene(2, 8, 8, 9, F32)
        tri.requires_grad_()
        keep_tri, keep_rgba = tri.detach().clone(), rgba.clone()
        cases = [
            (TypeError, "want a torch.Tensor", (tri.detach().numpy(), rgba, (8, 8)), {}),
            (TypeError, "float32 or torch.float64", (tri.detach().half(), rgba.half(), (8, 8)), {}),
            (TypeError, "int", (tri.detach().int(), rgba.int(), (8, 8)), {}),
            (TypeError, "one dtype", (tri, rgba.double(), (8, 8)), {}),
            (ValueError, "[N, 3, 2]", (tri.detach().reshape(2, 6), rgba, (8, 8)), {}),
            (ValueError, "[2, 4]", (tri, rgba[:1], (8, 8)), {}),
            (ValueError, "sigma", (tri, rgba, (8, 8)), {"sigma": 0.0}),
            (ValueError, "sigma", (tri, rgba, (8, 8)), {"sigma": -1.0}),
            (ValueError, "sigma", (tri, rgba, (8, 8)), {"sigma": float("nan")}),
            (TypeError, "sigma", (tri, rgba, (8, 8)), {"sigma": "1"}),
            (ValueError, "empty", (tri, rgba, (0, 8)), {}),
            (ValueError, "(H, W)", (tri, rgba, (8,)), {}),
            (TypeError, "two ints", (tri, rgba, (8.5, 8)), {}),
            (ValueError, "batch", (tri, rgba, (8, 8)), {"batch": 0}),
            (TypeError, "batch", (tri, rgba, (8, 8)), {"batch": 2.0}),
        ]
        for exc, words, args, kw in cases:
            with self.subTest(words=words, kw=kw):
                with self.assertRaises(exc) as cm:
                    vt.soft_render(*args, **kw)
                self.assertIn(words, str(cm.exception))
        self.assertTrue(torch.equal(tri.detach(), keep_tri))
        self.assertTrue(torch.equal(rgba, keep_rgba))
        self.assertIsNone(tri.grad)

    def test_memory_counters(self):
        n, h, w, batch = 20, 16, 12, 8
        r = vt.SoftRenderer(n, (h, w), dtype=F32, batch=batch)
        layers = -(-n // batch)
        image = h * w * 4 * 4
        # The backward reads the inputs, every layer and the images between
        # the first and the last (docs/RENDERING.md, Memory).
        self.assertEqual(r.saved_bytes, (n * 6 + n * 4) * 4 + (2 * layers - 2) * image)
        self.assertGreater(r.device_bytes, r.saved_bytes)
        tri, rgba = scene(n, h, w, 10, F32)
        torch.testing.assert_close(r(tri, rgba), vt.soft_render(tri, rgba, (h, w), batch=batch))


if __name__ == "__main__":
    unittest.main()
