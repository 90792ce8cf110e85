"""Gradients through vkflow.torch: every op of the library that has a VJP
(vkflow.ops.gradient_info) passes torch.autograd.gradcheck in float64
(complex128 too where the op takes complex), and its value matches
PyTorch's own op. The list below is checked against the registry: an op
with a VJP and no entry here fails test_every_vjp_has_a_case.

Also: non-differentiable outputs, torch.no_grad, inputs without grad, a
clear error for ops without a VJP, a small MLP trained with
vkflow.torch.ops and torch.optim against pure PyTorch, a registered GLSL
kernel with its VJP kernel, and the mutation check (a wrong VJP kernel is
caught by gradcheck).
"""

import os
import unittest

os.environ.setdefault("VKFLOW_VALIDATION", "1")

import torch  # noqa: E402

import vkflow  # noqa: E402
import vkflow.ops as vo  # noqa: E402
import vkflow.torch as vt  # noqa: E402
from render_ref import soft_render_ref  # noqa: E402
from test_dlpack import VkflowTest  # noqa: E402

F64, C128 = torch.float64, torch.complex128


def gen(kind, *shape, dtype=F64):
    """A random input: "r" in [-1, 1], "pos" in [0.5, 2], "away" |x| in
    [0.2, 1], "unit" in [-0.8, 0.8], "big" in [1.5, 3], "frac" in
    [0.1, 0.4] (away from rounding boundaries)."""
    g = torch.Generator().manual_seed(hash((kind, shape)) % 2**31)
    u = torch.rand(*shape, generator=g, dtype=F64)
    s = torch.where(torch.rand(*shape, generator=g, dtype=F64) < 0.5, -1.0, 1.0)
    x = {"r": 2 * u - 1, "pos": 0.5 + 1.5 * u, "away": s * (0.2 + 0.8 * u),
         "unit": 1.6 * u - 0.8, "big": 1.5 + 1.5 * u, "frac": 0.1 + 0.3 * u, "dd": 2 * u - 1}[kind]
    if kind == "dd":  # diagonally dominant square matrices
        x = x + 3 * torch.eye(shape[-1], dtype=F64)
    if dtype == C128:
        v = torch.rand(*shape, generator=g, dtype=F64)
        x = torch.complex(torch.sign(x) * (0.3 + 0.9 * x.abs()), 0.3 + 0.9 * v)
    return x


def I(kind, *shape):  # noqa: E743
    return ("in", kind, shape, F64)


def C(kind, *shape):
    return ("in", kind, shape, C128)


def K(value):
    """An input without gradient (bool, integer)."""
    return ("const", value)


def _imag(x):
    return torch.imag(x) if x.is_complex() else x * 0


def _vecdot(a, b):
    return (a.conj() * b).sum(-1) if a.is_complex() else (a * b).sum(-1)


def _sym(a):
    """A symmetric positive definite matrix from a: what cholesky and eigh
    get in the tests, so PyTorch's gradients (which assume symmetry) and
    ours (of the lower triangle read) meet."""
    return a @ a.mT + 3 * torch.eye(a.shape[-1], dtype=a.dtype)


def _sq_cat(outs):
    """The squares of a factorization's outputs, flattened and joined:
    invariant under the sign choices LAPACK and vkflow may make
    differently."""
    return torch.cat([(o * o).reshape(-1) for o in outs])


# op -> list of (inputs, attrs, torch reference[, {"pre": f, "post": g}]):
# pre maps the inputs before both calls, post the outputs after.
CASES = {
    "neg": [([I("r", 3, 4)], {}, torch.neg), ([C("r", 4)], {}, torch.neg)],
    "exp": [([I("r", 3, 4)], {}, torch.exp), ([C("r", 4)], {}, torch.exp)],
    "expm1": [([I("r", 5)], {}, torch.expm1)],
    "log": [([I("pos", 5)], {}, torch.log), ([C("r", 4)], {}, torch.log)],
    "log1p": [([I("pos", 5)], {}, torch.log1p)],
    "log2": [([I("pos", 5)], {}, torch.log2)],
    "log10": [([I("pos", 5)], {}, torch.log10)],
    "sqrt": [([I("pos", 2, 3)], {}, torch.sqrt), ([C("r", 4)], {}, torch.sqrt)],
    "square": [([I("r", 2, 3)], {}, torch.square), ([C("r", 4)], {}, torch.square)],
    "reciprocal": [([I("pos", 5)], {}, torch.reciprocal)],
    "sin": [([I("r", 6)], {}, torch.sin), ([C("r", 4)], {}, torch.sin)],
    "cos": [([I("r", 6)], {}, torch.cos)],
    "tan": [([I("r", 6)], {}, torch.tan)],
    "asin": [([I("unit", 6)], {}, torch.asin)],
    "acos": [([I("unit", 6)], {}, torch.acos)],
    "atan": [([I("r", 6)], {}, torch.atan)],
    "sinh": [([I("r", 6)], {}, torch.sinh)],
    "cosh": [([I("r", 6)], {}, torch.cosh)],
    "tanh": [([I("r", 6)], {}, torch.tanh)],
    "asinh": [([I("r", 6)], {}, torch.asinh)],
    "acosh": [([I("big", 6)], {}, torch.acosh)],
    "atanh": [([I("unit", 6)], {}, torch.atanh)],
    "sigmoid": [([I("r", 6)], {}, torch.sigmoid)],
    "relu": [([I("away", 6)], {}, torch.relu)],
    "abs": [([I("away", 6)], {}, torch.abs), ([C("r", 4)], {}, torch.abs)],
    "conj": [([I("r", 4)], {}, torch.conj_physical), ([C("r", 4)], {}, torch.conj_physical)],
    "real": [([I("r", 4)], {}, torch.real), ([C("r", 4)], {}, torch.real)],
    "imag": [([I("r", 4)], {}, _imag), ([C("r", 4)], {}, _imag)],
    "sign": [([I("away", 6)], {}, torch.sign)],
    "floor": [([I("frac", 6)], {}, torch.floor)],
    "ceil": [([I("frac", 6)], {}, torch.ceil)],
    "trunc": [([I("frac", 6)], {}, torch.trunc)],
    "round": [([I("frac", 6)], {}, torch.round)],
    "add": [([I("r", 2, 3, 4), I("r", 3, 1)], {}, torch.add),
            ([C("r", 3, 2), C("r", 2)], {}, torch.add)],
    "sub": [([I("r", 3, 1), I("r", 2, 3, 4)], {}, torch.sub)],
    "mul": [([I("r", 2, 3, 4), I("r", 4)], {}, torch.mul),
            ([C("r", 3, 2), C("r", 2)], {}, torch.mul)],
    "div": [([I("r", 2, 3), I("pos", 3)], {}, torch.div), ([C("r", 3), C("r", 3)], {}, torch.div)],
    "pow": [([I("pos", 2, 3), I("r", 2, 3)], {}, torch.pow)],
    "maximum": [([I("r", 3, 4), I("r", 4)], {}, torch.maximum)],
    "minimum": [([I("r", 3, 4), I("r", 3, 4)], {}, torch.minimum)],
    "atan2": [([I("r", 5), I("away", 5)], {}, torch.atan2)],
    "hypot": [([I("away", 5), I("away", 5)], {}, torch.hypot)],
    "copysign": [([I("away", 5), I("away", 5)], {}, torch.copysign)],
    "logaddexp": [([I("r", 5), I("r", 2, 5)], {}, torch.logaddexp)],
    "remainder": [([I("frac", 5), I("big", 5)], {}, torch.remainder)],
    "floor_divide": [([I("frac", 5), I("big", 5)], {},
                      lambda a, b: torch.div(a, b, rounding_mode="floor"))],
    "where": [([K(torch.tensor([[True, False, True], [False, False, True]])), I("r", 2, 3),
                I("r", 3)], {}, torch.where)],
    "clip": [([K(torch.tensor([-0.9, -0.3, 0.1, 0.4, 0.7, -0.6], dtype=F64).requires_grad_())],
              {"min": -0.5, "max": 0.5}, lambda x: torch.clamp(x, -0.5, 0.5))],
    "cast": [([I("r", 4)], {"dtype": "complex128"}, lambda x: x.to(C128))],
    "sum": [([I("r", 2, 3, 4)], {"axis": 1}, lambda x: x.sum(1)),
            ([C("r", 2, 3)], {"axis": 0, "keepdims": True}, lambda x: x.sum(0, keepdim=True))],
    "mean": [([I("r", 2, 3, 4)], {"axis": (0, 2)}, lambda x: x.mean((0, 2)))],
    "prod": [([I("r", 3, 4)], {"axis": 1}, lambda x: x.prod(1)),
             ([K(torch.tensor([[0.5, 0.0, 1.5], [-2.0, 0.75, 1.25]], dtype=F64).requires_grad_())],
              {}, torch.prod)],
    "max": [([I("r", 3, 5)], {"axis": 1}, lambda x: torch.amax(x, 1))],
    "min": [([I("r", 3, 5)], {"axis": 0, "keepdims": True}, lambda x: torch.amin(x, 0, keepdim=True))],
    "softmax": [([I("r", 3, 5)], {"axis": -1}, lambda x: torch.softmax(x, -1)),
                ([I("r", 3, 5)], {"axis": 0}, lambda x: torch.softmax(x, 0))],
    "cumulative_sum": [([I("r", 3, 5)], {"axis": 1}, lambda x: torch.cumsum(x, 1))],
    "matmul": [([I("r", 2, 3, 4), I("r", 4, 5)], {}, torch.matmul),
               ([I("r", 3), I("r", 2, 3, 2)], {}, torch.matmul),
               ([C("r", 2, 3), C("r", 3, 2)], {}, torch.matmul)],
    "tensordot": [([I("r", 2, 3, 4), I("r", 4, 3, 5)], {"axes": [1, 2], "axes2": [1, 0]},
                   lambda a, b: torch.tensordot(a, b, ([1, 2], [1, 0])))],
    "vecdot": [([I("r", 3, 4), I("r", 4)], {}, _vecdot), ([C("r", 3, 4), C("r", 3, 4)], {}, _vecdot)],
    "outer": [([I("r", 3), I("r", 4)], {}, torch.outer)],
    "cross": [([I("r", 2, 3), I("r", 2, 3)], {}, lambda a, b: torch.linalg.cross(a, b))],
    "tril": [([I("r", 4, 4)], {"k": -1}, lambda x: torch.tril(x, -1))],
    "triu": [([I("r", 3, 4)], {}, torch.triu)],
    "transpose": [([I("r", 2, 3, 4)], {"perm": [2, 0, 1]}, lambda x: x.permute(2, 0, 1))],
    "flip": [([I("r", 3, 4)], {"axes": [1]}, lambda x: torch.flip(x, [1]))],
    "roll": [([I("r", 3, 4)], {"shift": [1, -2], "axes": [0, 1]},
              lambda x: torch.roll(x, (1, -2), (0, 1)))],
    "broadcast_to": [([I("r", 3, 1)], {"shape": [2, 3, 4]}, lambda x: x.expand(2, 3, 4))],
    "tile": [([I("r", 2, 1, 3)], {"reps": [2, 1, 3, 2]}, lambda x: torch.tile(x, (2, 1, 3, 2)))],
    "repeat": [([I("r", 2, 3)], {"repeats": 2, "axis": 1},
                lambda x: torch.repeat_interleave(x, 2, 1))],
    "concat": [([I("r", 2, 3), I("r", 2, 1), I("r", 2, 2)], {"axis": 1},
                lambda *xs: torch.cat(xs, 1))],
    "stack": [([I("r", 2, 3), I("r", 2, 3)], {"axis": 1}, lambda *xs: torch.stack(xs, 1))],
    "strided_copy": [([I("r", 4, 5)], {"shape": [2, 2], "src_offset": 6, "src_strides": [10, -1]},
                      lambda x: torch.stack([x.reshape(-1)[[6, 5]], x.reshape(-1)[[16, 15]]]))],
    "inv": [([I("dd", 2, 3, 3)], {}, torch.linalg.inv)],
    "solve": [([I("dd", 3, 3), I("r", 3, 2)], {}, torch.linalg.solve),
              ([I("dd", 2, 3, 3), I("r", 3)], {}, torch.linalg.solve),
              ([C("r", 3, 3), C("r", 3, 2)], {}, torch.linalg.solve,
               {"pre": lambda a, b: (a + 3 * torch.eye(3, dtype=C128), b)})],
    "det": [([I("dd", 2, 3, 3)], {}, torch.linalg.det),
            ([C("r", 3, 3)], {}, torch.linalg.det)],
    "slogdet": [([I("dd", 3, 3)], {}, torch.linalg.slogdet, {"post": lambda o: o[1]})],
    "cholesky": [([I("r", 3, 3)], {}, torch.linalg.cholesky, {"pre": lambda a: (_sym(a),)}),
                 ([I("r", 2, 3, 3)], {"upper": True}, lambda a: torch.linalg.cholesky(a, upper=True),
                  {"pre": lambda a: (_sym(a),)})],
    "eigh": [([I("r", 3, 3)], {}, torch.linalg.eigh, {"pre": lambda a: (_sym(a),), "post": lambda o: o[0]}),
             ([I("r", 3, 3)], {}, torch.linalg.eigh,
              {"pre": lambda a: (_sym(a),), "post": lambda o: o[1] * o[1]})],
    "eigvalsh": [([I("r", 2, 4, 4)], {}, torch.linalg.eigvalsh, {"pre": lambda a: (_sym(a),)})],
    "svdvals": [([I("r", 3, 4)], {}, torch.linalg.svdvals), ([C("r", 4, 3)], {}, torch.linalg.svdvals)],
    "trace": [([I("r", 3, 4)], {"offset": 1},
               lambda x: torch.diagonal(x, offset=1, dim1=-2, dim2=-1).sum(-1))],
    "diagonal": [([I("r", 2, 3, 4)], {"offset": -1},
                  lambda x: torch.diagonal(x, offset=-1, dim1=-2, dim2=-1))],
    "vector_norm": [([I("r", 3, 4)], {"axis": 1}, lambda x: torch.linalg.vector_norm(x, dim=1)),
                    ([I("away", 3, 4)], {"ord": "1"}, lambda x: torch.linalg.vector_norm(x, 1)),
                    ([C("r", 4)], {}, torch.linalg.vector_norm)],
    "matrix_norm": [([I("r", 2, 3, 3)], {}, torch.linalg.matrix_norm)],
    "pinv": [([I("r", 3, 4)], {}, torch.linalg.pinv), ([I("r", 2, 4, 3)], {}, torch.linalg.pinv)],
    "matrix_power": [([I("r", 3, 3)], {"n": 3}, lambda x: torch.linalg.matrix_power(x, 3))],
    "fft": [([C("r", 2, 6)], {}, torch.fft.fft),
            ([C("r", 6, 2)], {"n": 8, "axis": 0, "norm": "ortho"},
             lambda x: torch.fft.fft(x, 8, 0, norm="ortho"))],
    "ifft": [([C("r", 2, 6)], {"n": 4}, lambda x: torch.fft.ifft(x, 4))],
    "fftn": [([C("r", 3, 4)], {}, torch.fft.fftn)],
    "ifftn": [([C("r", 2, 3, 4)], {"s": [4, 6], "norm": "forward"},
               lambda x: torch.fft.ifftn(x, (4, 6), norm="forward"))],
    "rfft": [([I("r", 2, 7)], {}, torch.fft.rfft),
             ([I("r", 6)], {"n": 9, "norm": "forward"}, lambda x: torch.fft.rfft(x, 9, norm="forward"))],
    "irfft": [([C("r", 2, 5)], {}, torch.fft.irfft),
              ([C("r", 5)], {"n": 7, "norm": "ortho"}, lambda x: torch.fft.irfft(x, 7, norm="ortho"))],
    "hfft": [([C("r", 5)], {}, torch.fft.hfft)],
    "ihfft": [([I("r", 6)], {}, torch.fft.ihfft)],
    "qr": [([I("r", 4, 3)], {}, torch.linalg.qr, {"post": _sq_cat})],
    "svd": [([I("r", 3, 4)], {"full_matrices": False}, lambda a: torch.linalg.svd(a, full_matrices=False),
             {"post": _sq_cat}),
            ([I("r", 4, 3)], {"full_matrices": False}, lambda a: torch.linalg.svd(a, full_matrices=False),
             {"post": _sq_cat})],
    "sort": [([I("r", 3, 5)], {}, lambda x: torch.sort(x, -1).values),
             ([I("r", 4, 3)], {"axis": 0, "descending": True},
              lambda x: torch.sort(x, 0, descending=True).values)],
    "gather": [([I("r", 2, 3, 4), K(torch.tensor([0, 2, -1, 2, 1])), K(torch.tensor([3, 0, 1, 0, 3]))],
                {"axis": 1}, lambda x, i, j: x[:, i, j])],
    "cumulative_prod": [([I("r", 3, 4)], {"axis": 1}, lambda x: torch.cumprod(x, 1)),
                        ([K(torch.tensor([0.5, -1.5, 0.0, 2.0, 0.75], dtype=F64).requires_grad_())],
                         {}, lambda x: torch.cumprod(x, 0))],
    "rfftn": [([I("r", 3, 4)], {}, torch.fft.rfftn),
              ([I("r", 3, 2, 5)], {"s": [4, 6], "axes": [0, 2], "norm": "ortho"},
               lambda x: torch.fft.rfftn(x, (4, 6), (0, 2), norm="ortho"))],
    "irfftn": [([C("r", 3, 4)], {}, torch.fft.irfftn),
               ([C("r", 2, 3, 4)], {"s": [4, 5]}, lambda x: torch.fft.irfftn(x, (4, 5)))],
    "take": [([I("r", 3, 4), K(torch.tensor([1, -1, 1, 0, 3]))], {"axis": 1},
              lambda x, i: torch.index_select(x, 1, torch.where(i < 0, i + 4, i)))],
    # The soft rasterizer (docs/RENDERING.md), against render_ref's PyTorch formula.
    "soft_raster": [([I("r", 3, 3, 2), I("frac", 3, 4)], {"shape": [5, 6], "sigma": 0.8},
                     lambda t, c: soft_render_ref(t, c, (5, 6), 0.8),
                     {"pre": lambda t, c: (t * 2.5 + 3.0, c)}),
                    ([I("r", 3, 3, 2), I("frac", 3, 4)], {"shape": [4, 5], "start": 1, "count": 1},
                     lambda t, c: soft_render_ref(t[1:2], c[1:2], (4, 5), 1.0),
                     {"pre": lambda t, c: (t * 2.0 + 2.5, c)})],
    "over": [([I("frac", 3, 4, 4), I("frac", 3, 4, 4)], {}, lambda s, d: s + d * (1 - s[..., 3:4]))],
}


def materialize(spec):
    out = []
    for s in spec:
        if s[0] == "in":
            out.append(gen(s[1], *s[2], dtype=s[3]).requires_grad_())
        else:
            out.append(s[1])
    return out


class GradientTest(VkflowTest):
    def test_every_vjp_has_a_case(self):
        for name in vo.names():
            info = vo.gradient_info(name)
            if info["kind"] in ("vjp", "zero"):
                self.assertIn(name, CASES, "op %r has a VJP and no gradient case" % name)
            else:
                self.assertTrue(info["reason"], "op %r has no gradient and no reason" % name)

    def test_gradcheck(self):
        for name, cases in sorted(CASES.items()):
            for k, case in enumerate(cases):
                spec, attrs, ref = case[:3]
                extra = case[3] if len(case) > 3 else {}
                pre = extra.get("pre", lambda *xs: xs)
                post = extra.get("post", lambda o: o)
                with self.subTest(op=name, case=k):
                    ins = materialize(spec)
                    got = post(vt.call(name, *pre(*ins), **attrs))
                    want = post(ref(*pre(*ins)))
                    self.assertEqual(got.dtype, want.dtype)
                    torch.testing.assert_close(got.detach(), want.detach(), rtol=1e-10, atol=1e-10)
                    diff = [x for x in ins if isinstance(x, torch.Tensor) and x.requires_grad]

                    def f(*xs, ins=ins, pre=pre, post=post, attrs=attrs, name=name):
                        it = iter(xs)
                        full = [next(it) if isinstance(x, torch.Tensor) and x.requires_grad else x
                                for x in ins]
                        return post(vt.call(name, *pre(*full), **attrs))
                    self.assertTrue(torch.autograd.gradcheck(f, diff, eps=1e-6, atol=1e-7,
                                                             rtol=1e-6, fast_mode=True))
                    # The gradient equals PyTorch's own.
                    cot = torch.ones_like(want)
                    g1 = torch.autograd.grad(got, diff, cot, allow_unused=True)
                    g2 = torch.autograd.grad(want, diff, cot, allow_unused=True)
                    for a, b in zip(g1, g2):
                        if b is None:
                            b = torch.zeros_like(a)
                        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-10)

    def test_no_grad_and_unwanted_inputs(self):
        x = gen("r", 3, 4).requires_grad_()
        w = gen("r", 4, 2)
        with torch.no_grad():
            self.assertFalse(vt.ops.matmul(x, w).requires_grad)
        y = vt.ops.matmul(x, w)
        self.assertTrue(y.requires_grad)
        y.sum().backward()
        self.assertIsNone(w.grad)
        torch.testing.assert_close(x.grad, w.sum(1).expand(3, 4).contiguous())
        b = vt.ops.less(x, 0.0)
        self.assertEqual(b.dtype, torch.bool)
        self.assertFalse(b.requires_grad)

    def test_schema(self):
        s = vo.schema("sum")
        self.assertEqual([a["name"] for a in s["attrs"]], ["axes", "keepdims"])
        self.assertEqual(s["gradient"], "vjp")
        self.assertEqual(vo.schema("floor")["gradient"], "zero")
        x = vkflow.asarray([1.0, 2.0])
        with self.assertRaisesRegex(ValueError, 'attribute "perm" is not one of the op'):
            vo.call("sum", x, perm=[0])

    def test_no_vjp_is_an_error(self):
        x = gen("r", 4).requires_grad_()
        y = vt.ops.nextafter(x, x)
        with self.assertRaisesRegex(ValueError, "nextafter.*not differentiable"):
            y.sum().backward()
        self.assertEqual(vo.gradient_info("less")["kind"], "none")
        self.assertEqual(vo.gradient_info("scatter")["kind"], "pending")
        with self.assertRaisesRegex(ValueError, "no op named"):
            vo.gradient_info("nope")

    def test_mlp_trains_like_pytorch(self):
        g = torch.Generator().manual_seed(3)
        X = torch.randn(64, 8, generator=g, dtype=F64)
        Y = torch.randn(64, 1, generator=g, dtype=F64)
        W1 = torch.randn(8, 16, generator=g, dtype=F64) * 0.3
        W2 = torch.randn(16, 1, generator=g, dtype=F64) * 0.3

        def train(mm, act, msum, steps=30):
            w1 = W1.clone().requires_grad_()
            w2 = W2.clone().requires_grad_()
            opt = torch.optim.Adam([w1, w2], lr=0.05)
            for _ in range(steps):
                opt.zero_grad()
                r = mm(act(mm(X, w1)), w2) - Y
                loss = msum(r * r) / 64
                loss.backward()
                opt.step()
            return float(loss)
        ours = train(vt.ops.matmul, vt.ops.tanh, vt.ops.sum)
        ref = train(torch.matmul, torch.tanh, torch.sum)
        self.assertAlmostEqual(ours, ref, delta=1e-9 * max(1.0, ref))
        self.assertLess(ref, 0.9)


class GraphFunctionTest(VkflowTest):
    def test_graph_function_matches_pytorch(self):
        def f(x, w1, w2):
            h = vo.tanh(vo.matmul(x, w1))
            r = vo.matmul(h, w2)
            return vo.sum(vo.mul(r, r), axis=1)

        X = gen("r", 5, 3)
        W1 = gen("r", 3, 4).requires_grad_()
        W2 = gen("r", 4, 2).requires_grad_()
        gf = vt.GraphFunction(f, X, W1, W2)
        self.assertGreater(gf.saved_bytes, 0)
        y = gf(X, W1, W2)
        y.sum().backward()
        w1, w2 = W1.detach().clone().requires_grad_(), W2.detach().clone().requires_grad_()
        ref = ((torch.tanh(X @ w1) @ w2) ** 2).sum(1)
        ref.sum().backward()
        torch.testing.assert_close(y.detach(), ref.detach(), rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(W1.grad, w1.grad, rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(W2.grad, w2.grad, rtol=1e-12, atol=1e-12)
        # gradcheck runs forwards between backwards: a stale backward replays
        # its own forward first.
        self.assertTrue(torch.autograd.gradcheck(
            lambda a, b: gf(X, a, b), (W1.detach().requires_grad_(), W2.detach().requires_grad_())))
        with self.assertRaisesRegex(ValueError, "graph takes"):
            gf(X, W1, W2[:3])

    def test_graph_function_refusals(self):
        x = gen("r", 3, 3)
        with self.assertRaisesRegex(ValueError, "a graph tape records new outputs only"):
            vt.GraphFunction(lambda a: vo.add(a, a, out=a), x)
        with self.assertRaisesRegex(ValueError, "nextafter.*not differentiable"):
            vt.GraphFunction(lambda a: vo.sum(vo.nextafter(a, a)), x)


CUBE = """#version 450
layout(local_size_x = 64) in;
layout(binding = 0) readonly buffer X { double x[]; };
layout(binding = 1) writeonly buffer Y { double y[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < x.length()) y[i] = x[i] * x[i] * x[i];
}
"""

CUBE_VJP = """#version 450
layout(local_size_x = 64) in;
layout(binding = 0) readonly buffer X { double x[]; };
layout(binding = 1) readonly buffer Y { double y[]; };
layout(binding = 2) readonly buffer G { double g[]; };
layout(binding = 3) writeonly buffer D { double dx[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < x.length()) dx[i] = %s * y[i] / x[i] * g[i];
}
"""


class KernelVJPTest(VkflowTest):
    def test_registered_kernel_vjp_and_mutation(self):
        vo.register("pytest.cube", glsl=CUBE, inputs=1)
        vo.register("pytest.cube_vjp", glsl=CUBE_VJP % "3.0", inputs=3)
        vo.register("pytest.cube_bad", glsl=CUBE_VJP % "2.0", inputs=3)
        try:
            x = gen("away", 7).requires_grad_()

            def f(x):
                return vt.call("pytest.cube", x, outputs=[(x.shape, torch.float64)])
            self.assertEqual(vo.gradient_info("pytest.cube")["kind"], "pending")
            vo.register_vjp("pytest.cube", "pytest.cube_vjp")
            self.assertTrue(torch.autograd.gradcheck(f, (x,), eps=1e-6, atol=1e-7))
            # The mutation check: a wrong VJP fails gradcheck.
            vo.register_vjp("pytest.cube", "pytest.cube_bad")
            with self.assertRaises(RuntimeError):  # gradcheck's GradcheckError
                torch.autograd.gradcheck(f, (x,), eps=1e-6, atol=1e-7)
        finally:
            for n in ("pytest.cube", "pytest.cube_vjp", "pytest.cube_bad"):
                vo.unregister(n)


if __name__ == "__main__":
    unittest.main()
