"""vkflow.linalg (the first half of the array API's linalg extension) against
numpy.linalg. Tolerances: float64 1e-10 and float32 1e-4, relative to the
largest magnitude of the result, times the matrix's condition number where
the problem is a solve (the random matrices here have cond below ~1e3)."""

import unittest

import numpy as np

import vkflow as vf
from vkflow import array_api as xp
from vkflow import linalg as la

RNG = np.random.default_rng(7)
TOL = {"float32": 1e-4, "float64": 1e-10}


def rand(shape, dtype):
    return RNG.uniform(-1, 1, shape).astype(dtype)


def spd(batch, n, dtype):
    b = RNG.uniform(-1, 1, batch + (n, n))
    return (b @ np.swapaxes(b, -1, -2) + n * np.eye(n)).astype(dtype)


class LinalgTest(unittest.TestCase):
    def close(self, got, want, dtype, scale=1.0):
        got = np.asarray(got)
        self.assertEqual(got.shape, np.shape(want))
        tol = TOL[dtype] * scale * max(1.0, float(np.max(np.abs(want), initial=0)))
        np.testing.assert_allclose(got, want, rtol=0, atol=tol)

    def test_namespace(self):
        self.assertIs(xp.linalg, la)
        self.assertIs(xp.tensordot, la.tensordot)
        self.assertIs(xp.vecdot, la.vecdot)

    def test_solve_inv_det_slogdet(self):
        for dtype in ("float32", "float64"):
            for batch, n in (((), 1), ((), 6), ((3,), 4), ((2, 2), 9), ((2,), 40)):
                a = rand(batch + (n, n), dtype)
                b = rand(batch + (n, 2), dtype)
                cond = float(np.max(np.linalg.cond(a.astype("float64"))))
                at, bt = vf.asarray(a), vf.asarray(b)
                self.close(la.solve(at, bt), np.linalg.solve(a.astype("float64"), b), dtype, cond)
                self.close(la.inv(at), np.linalg.inv(a.astype("float64")), dtype, cond)
                d = np.linalg.det(a.astype("float64"))
                np.testing.assert_allclose(np.asarray(la.det(at)), d, rtol=TOL[dtype] * cond * n)
                s, l = la.slogdet(at)
                ws, wl = np.linalg.slogdet(a.astype("float64"))
                np.testing.assert_array_equal(np.asarray(s), ws)
                self.close(l, wl, dtype, cond)
                self.assertEqual(la.det(at).dtype, dtype)

    def test_solve_vector_and_broadcast(self):
        a = rand((2, 1, 3, 3), "float64")
        b = rand((4, 3, 2), "float64")
        got = la.solve(vf.asarray(a), vf.asarray(b))
        self.close(got, np.linalg.solve(np.broadcast_to(a, (2, 4, 3, 3)),
                                        np.broadcast_to(b, (2, 4, 3, 2))), "float64", 100)
        v = rand((3,), "float64")
        got = la.solve(vf.asarray(a), vf.asarray(v))
        self.assertEqual(got.shape, (2, 1, 3))
        self.close(got, np.linalg.solve(a, v[:, None])[..., 0], "float64", 100)

    def test_singular(self):
        a = np.array([[1.0, 2.0], [2.0, 4.0]])
        self.assertEqual(float(np.asarray(la.det(vf.asarray(a)))), 0.0)
        s, l = la.slogdet(vf.asarray(a))
        self.assertEqual((float(np.asarray(s)), float(np.asarray(l))), (0.0, -np.inf))
        self.assertFalse(np.all(np.isfinite(np.asarray(la.inv(vf.asarray(a))))))

    def test_cholesky(self):
        for dtype in ("float32", "float64"):
            a = spd((2, 3), 7, dtype)
            want = np.linalg.cholesky(a.astype("float64"))
            self.close(la.cholesky(vf.asarray(a)), want, dtype, 10)
            self.close(la.cholesky(vf.asarray(a), upper=True), np.swapaxes(want, -1, -2), dtype, 10)
        bad = np.array([[[4.0, 2.0], [2.0, 5.0]], [[1.0, 2.0], [2.0, 1.0]]])
        got = np.asarray(la.cholesky(vf.asarray(bad)))
        np.testing.assert_allclose(got[0], np.linalg.cholesky(bad[0]))
        self.assertTrue(np.all(np.isnan(got[1])))

    def test_qr(self):
        for dtype in ("float32", "float64"):
            for shape in ((5, 3), (3, 5), (2, 4, 4), (1, 1)):
                a = rand(shape, dtype)
                for mode in ("reduced", "complete"):
                    q, r = la.qr(vf.asarray(a), mode=mode)
                    wq, wr = np.linalg.qr(a.astype("float64"), mode=mode)
                    q, r = np.asarray(q), np.asarray(r)
                    self.assertEqual((q.shape, r.shape), (wq.shape, wr.shape))
                    self.close(q @ r, a, dtype, 10)
                    k = q.shape[-1]
                    self.close(np.swapaxes(q, -1, -2) @ q, np.broadcast_to(np.eye(k), q.shape[:-2] + (k, k)), dtype, 10)
                    # Householder with LAPACK's signs: R as NumPy's (rows of
                    # R past min(M, N) are zero either way).
                    self.close(np.abs(r), np.abs(wr), dtype, 10)

    def test_matrix_power(self):
        a = rand((2, 4, 4), "float64")
        for n in (0, 1, 3, 6, -2):
            self.close(la.matrix_power(vf.asarray(a), n), np.linalg.matrix_power(a, n), "float64", 1e3)
        i = RNG.integers(-2, 3, (3, 3)).astype("int32")
        np.testing.assert_array_equal(np.asarray(la.matrix_power(vf.asarray(i), 5)),
                                      np.linalg.matrix_power(i, 5))

    def test_products(self):
        a, b = rand((2, 3, 4), "float32"), rand((4, 3, 5), "float32")
        self.close(la.tensordot(vf.asarray(a), vf.asarray(b), axes=([1, 2], [1, 0])),
                   np.tensordot(a, b, axes=([1, 2], [1, 0])), "float32")
        c = rand((3, 4, 6), "float32")
        self.close(la.tensordot(vf.asarray(a), vf.asarray(c)), np.tensordot(a, c), "float32")
        self.close(xp.tensordot(vf.asarray(a), vf.asarray(c), axes=0), np.tensordot(a, c, 0), "float32")
        x, y = rand((2, 1, 3), "float64"), rand((4, 3), "float64")
        self.close(la.vecdot(vf.asarray(x), vf.asarray(y)), np.sum(x * y, axis=-1), "float64")
        w = rand((4, 3, 2), "float64")
        self.close(la.vecdot(vf.asarray(x[..., None]), vf.asarray(w), axis=-2),
                   np.sum(x[..., None] * w, axis=-2), "float64")
        u, v = rand((5,), "float32"), rand((3,), "float64")
        self.close(la.outer(vf.asarray(u), vf.asarray(v)), np.outer(u, v), "float64")
        p, q = rand((4, 3), "float64"), rand((3,), "float64")
        self.close(la.cross(vf.asarray(p), vf.asarray(q)), np.cross(p, q), "float64")
        self.close(la.cross(vf.asarray(p.T.copy()), vf.asarray(q[:, None]), axis=0),
                   np.cross(p.T, q[:, None], axis=0), "float64")

    def test_diagonal_trace(self):
        m = np.arange(24, dtype="int16").reshape(2, 3, 4)
        for off in (-3, -1, 0, 2, 5):
            got = la.diagonal(vf.asarray(m), offset=off)
            np.testing.assert_array_equal(np.asarray(got), np.diagonal(m, off, -2, -1))
            t = la.trace(vf.asarray(m), offset=off)
            self.assertEqual(t.dtype, "int64")
            np.testing.assert_array_equal(np.asarray(t), np.trace(m, off, -2, -1))
        f = rand((3, 3), "float32")
        self.assertEqual(la.trace(vf.asarray(f)).dtype, "float32")
        self.assertEqual(la.trace(vf.asarray(f), dtype="float64").dtype, "float64")
        self.close(la.trace(vf.asarray(f)), np.trace(f), "float32")

    def test_refusals(self):
        with self.assertRaises(Exception):
            la.inv(vf.asarray(np.ones((2, 3), "float32")))
        with self.assertRaises(Exception):
            la.cholesky(vf.asarray(np.eye(2, dtype="float16")))
        with self.assertRaises(ValueError):
            la.qr(vf.asarray(np.eye(2)), mode="r")
        self.assertTrue(np.array_equal(np.asarray(la.matrix_transpose(vf.asarray(m := np.arange(6.0).reshape(2, 3)))), m.T))


CTOL = {"complex64": 1e-4, "complex128": 1e-10}


def crand(shape, dtype):
    return (RNG.uniform(-1, 1, shape) + 1j * RNG.uniform(-1, 1, shape)).astype(dtype)


class LinalgComplexTest(unittest.TestCase):
    """complex64 and complex128 against numpy.linalg in complex128."""

    def close(self, got, want, dtype, scale=1.0):
        got = np.asarray(got)
        self.assertEqual(got.shape, np.shape(want))
        tol = CTOL[dtype] * scale * max(1.0, float(np.max(np.abs(want), initial=0)))
        np.testing.assert_allclose(got, want, rtol=0, atol=tol)

    def test_solve_inv_det_slogdet(self):
        for dtype in ("complex64", "complex128"):
            for batch, n in (((), 1), ((), 6), ((3,), 4), ((2,), 30)):
                a, b = crand(batch + (n, n), dtype), crand(batch + (n, 2), dtype)
                a128 = a.astype("complex128")
                cond = float(np.max(np.linalg.cond(a128)))
                at, bt = vf.asarray(a), vf.asarray(b)
                self.close(la.solve(at, bt), np.linalg.solve(a128, b), dtype, cond)
                self.close(la.inv(at), np.linalg.inv(a128), dtype, cond)
                d = la.det(at)
                self.assertEqual(d.dtype, dtype)
                np.testing.assert_allclose(np.asarray(d), np.linalg.det(a128), rtol=CTOL[dtype] * cond * n)
                s, l = la.slogdet(at)
                ws, wl = np.linalg.slogdet(a128)
                self.assertEqual((s.dtype, l.dtype), (dtype, "float32" if dtype == "complex64" else "float64"))
                self.close(s, ws, dtype, cond)
                self.close(l, wl, dtype, cond)

    def test_cholesky(self):
        for dtype in ("complex64", "complex128"):
            b = crand((2, 6, 6), "complex128")
            a = (b @ np.conj(np.swapaxes(b, -1, -2)) + 6 * np.eye(6)).astype(dtype)
            want = np.linalg.cholesky(a.astype("complex128"))
            self.close(la.cholesky(vf.asarray(a)), want, dtype, 10)
            self.close(la.cholesky(vf.asarray(a), upper=True), np.conj(np.swapaxes(want, -1, -2)), dtype, 10)

    def test_qr(self):
        for dtype in ("complex64", "complex128"):
            for shape in ((5, 3), (3, 5), (2, 4, 4)):
                a = crand(shape, dtype)
                for mode in ("reduced", "complete"):
                    q, r = la.qr(vf.asarray(a), mode=mode)
                    wq, wr = np.linalg.qr(a.astype("complex128"), mode=mode)
                    q, r = np.asarray(q), np.asarray(r)
                    self.assertEqual((q.shape, r.shape), (wq.shape, wr.shape))
                    self.close(q @ r, a, dtype, 10)
                    k = q.shape[-1]
                    self.close(np.conj(np.swapaxes(q, -1, -2)) @ q, np.broadcast_to(np.eye(k), q.shape[:-2] + (k, k)), dtype, 10)
                    # LAPACK's zgeqrf: the same R as NumPy's (real diagonal).
                    self.close(r, wr, dtype, 10)

    def test_matrix_power_and_products(self):
        for dtype in ("complex64", "complex128"):
            a = crand((2, 4, 4), dtype)
            for n in (0, 3, -2):
                self.close(la.matrix_power(vf.asarray(a), n), np.linalg.matrix_power(a.astype("complex128"), n), dtype, 1e3)
            x, y = crand((2, 1, 3), dtype), crand((4, 3), dtype)
            self.close(la.vecdot(vf.asarray(x), vf.asarray(y)), np.sum(np.conj(x) * y, axis=-1), dtype)
            p, q = crand((2, 3, 4), dtype), crand((4, 3, 5), dtype)
            self.close(la.tensordot(vf.asarray(p), vf.asarray(q), axes=([1, 2], [1, 0])),
                       np.tensordot(p, q, axes=([1, 2], [1, 0])), dtype, 10)
            u, v = crand((5,), dtype), crand((3,), dtype)
            self.close(la.outer(vf.asarray(u), vf.asarray(v)), np.outer(u, v), dtype)
            c, d = crand((4, 3), dtype), crand((3,), dtype)
            self.close(la.cross(vf.asarray(c), vf.asarray(d)), np.cross(c, d), dtype)
            self.close(la.diagonal(vf.asarray(p), offset=1), np.diagonal(p, 1, -2, -1), dtype)
            t = la.trace(vf.asarray(p), offset=-1)
            self.assertEqual(t.dtype, dtype)
            self.close(t, np.trace(p, -1, -2, -1), dtype)
        # Mixed dtypes promote first.
        f = rand((3,), "float32")
        z = crand((3,), "complex128")
        got = la.vecdot(vf.asarray(f), vf.asarray(z))
        self.assertEqual(got.dtype, "complex128")
        self.close(got, np.vdot(f, z), "complex128", 1e6)


if __name__ == "__main__":
    unittest.main()
