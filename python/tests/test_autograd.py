"""vkflow.autograd: grad, value_and_grad and vjp of functions written with
vkflow.array_api, against analytic derivatives (float64, to 1e-12), and
the tape's refusals."""

import os
import unittest

os.environ.setdefault("VKFLOW_VALIDATION", "1")

import numpy as np  # noqa: E402

import vkflow.array_api as xp  # noqa: E402
import vkflow.autograd as ag  # noqa: E402
from test_dlpack import VkflowTest  # noqa: E402


def host(t):
    return np.asarray(t.read())


class AutogradTest(VkflowTest):
    def setUp(self):
        super().setUp()
        rng = np.random.default_rng(5)
        self.xn = rng.uniform(-1, 1, (3, 4))
        self.wn = rng.uniform(-1, 1, (4, 2))
        self.x = xp.asarray(self.xn, dtype=xp.float64)
        self.w = xp.asarray(self.wn, dtype=xp.float64)

    def close(self, got, want):
        np.testing.assert_allclose(host(got), want, rtol=1e-12, atol=1e-12)

    def test_elementwise(self):
        g = ag.grad(lambda x: xp.sum(xp.sin(x) * x))(self.x)
        self.close(g, np.cos(self.xn) * self.xn + np.sin(self.xn))

    def test_operators_and_scalars(self):
        g = ag.grad(lambda x: xp.sum((x * 2.0 + 1.0) ** 2 / 4.0))(self.x)
        self.close(g, (2 * self.xn + 1))

    def test_matmul_two_arguments(self):
        f = lambda x, w: xp.sum(xp.tanh(x @ w))  # noqa: E731
        v, (gx, gw) = ag.value_and_grad(f, argnums=(0, 1))(self.x, self.w)
        t = np.tanh(self.xn @ self.wn)
        d = 1 - t * t
        self.assertAlmostEqual(float(v), t.sum(), delta=1e-12)
        self.close(gx, d @ self.wn.T)
        self.close(gw, self.xn.T @ d)

    def test_value_used_twice_and_reshape(self):
        f = lambda x: xp.sum(xp.reshape(x, (12, 1)) * xp.reshape(x, (1, 12)))  # noqa: E731
        self.close(ag.grad(f)(self.x), np.full((3, 4), 2 * self.xn.sum()))

    def test_reductions_and_softmax(self):
        f = lambda x: xp.mean(xp.max(x, axis=1)) + xp.sum(xp.exp(x) / xp.sum(xp.exp(x)))  # noqa: E731
        g = host(ag.grad(f)(self.x))
        want = np.zeros_like(self.xn)
        want[np.arange(3), self.xn.argmax(1)] = 1 / 3
        # d/dx of sum(softmax(x)) over all elements is 0.
        np.testing.assert_allclose(g, want, rtol=1e-12, atol=1e-12)

    def test_vjp_and_unused_argument(self):
        out, pull = ag.vjp(lambda x, w: xp.exp(x), self.x, self.w)
        ct = xp.asarray(np.ones((3, 4)), dtype=xp.float64)
        gx, gw = pull(ct)
        self.close(gx, np.exp(self.xn))
        self.close(gw, np.zeros((4, 2)))
        with self.assertRaisesRegex(ValueError, "cotangent"):
            pull(xp.asarray(np.ones(3), dtype=xp.float64))

    def test_refusals(self):
        with self.assertRaisesRegex(TypeError, "float and complex"):
            ag.grad(lambda x: xp.sum(x))(xp.asarray([1, 2, 3]))
        with self.assertRaisesRegex(TypeError, "real scalar"):
            ag.grad(lambda x: x * 2.0)(self.x)

        def inplace(x):
            y = x * 1.0
            y[0] = 0.0
            return xp.sum(y)
        with self.assertRaisesRegex(ValueError, "writes into"):
            ag.grad(inplace)(self.x)

        with self.assertRaisesRegex(ValueError, "nextafter.*not differentiable"):
            ag.grad(lambda x: xp.sum(xp.nextafter(x, x)))(self.x)


if __name__ == "__main__":
    unittest.main()
