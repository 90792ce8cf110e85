"""vkflow.array_api.linalg's spectral functions against numpy.linalg (LAPACK):
svd, svdvals, eigh, eigvalsh, pinv, matrix_rank, matrix_norm, vector_norm.

Tolerances (stated, per dtype): singular values and eigenvalues within
TOL * sqrt(n) of the largest in magnitude (TOL = 2e-5 for float32, 1e-12 for
float64); vectors are compared through what is unique about them: U diag(S) Vh
rebuilds x, U and Vh are orthonormal, V diag(w) V^T rebuilds x, and for
distinct eigenvalues each eigenvector equals NumPy's up to sign. Norms within
20 * TOL relative (1e-3 for float16). complex64/complex128 (class Complex): the
same tolerances as float32/float64 (CTOL), with conjugate transposes (U^H U = I,
A V = V diag(w)).
"""

import math
import unittest

import numpy as np

import vkflow.array_api as xp

TOL = {"float32": 2e-5, "float64": 1e-12, "float16": 1e-3}


def arr(a):
    return xp.asarray(a)


def npy(t):
    return np.asarray(t)


class SVD(unittest.TestCase):
    def check(self, a, full):
        dt = a.dtype.name
        U, S, Vh = xp.linalg.svd(arr(a), full_matrices=full)
        U, S, Vh = npy(U), npy(S), npy(Vh)
        ref_u, ref_s, ref_vh = np.linalg.svd(a.astype(np.float64), full_matrices=full)
        self.assertEqual(U.shape, ref_u.shape)
        self.assertEqual(S.shape, ref_s.shape)
        self.assertEqual(Vh.shape, ref_vh.shape)
        self.assertEqual(U.dtype, a.dtype)
        n = max(a.shape[-2:]) if a.size else 1
        tol = TOL[dt] * math.sqrt(n)
        top = np.maximum(ref_s[..., :1], 1e-300) if ref_s.size else 1
        np.testing.assert_array_less(np.abs(S - ref_s), np.broadcast_to(tol * top + 1e-300, S.shape))
        np.testing.assert_allclose(npy(xp.linalg.svdvals(arr(a))), S, atol=tol * np.max(top))
        k = S.shape[-1]
        rec = (U[..., :, :k] * S[..., None, :]) @ Vh[..., :k, :]
        np.testing.assert_allclose(rec, a, atol=tol * np.max(top))
        eye = np.eye(U.shape[-1])
        np.testing.assert_allclose(np.swapaxes(U, -1, -2) @ U, np.broadcast_to(eye, U.shape[:-2] + eye.shape), atol=tol)
        eye = np.eye(Vh.shape[-2])
        np.testing.assert_allclose(Vh @ np.swapaxes(Vh, -1, -2), np.broadcast_to(eye, Vh.shape[:-2] + eye.shape), atol=tol)

    def test_shapes_and_dtypes(self):
        rng = np.random.default_rng(1)
        for shape in [(4, 4), (6, 3), (3, 6), (2, 3, 5, 4), (1, 1), (7, 1), (1, 7), (20, 8, 8)]:
            for dt in ("float32", "float64"):
                for full in (True, False):
                    with self.subTest(shape=shape, dt=dt, full=full):
                        self.check(rng.uniform(-1, 1, shape).astype(dt), full)

    def test_rank_deficient_and_repeated(self):
        rng = np.random.default_rng(2)
        u, v = rng.uniform(-1, 1, (6, 1)), rng.uniform(-1, 1, (1, 4))
        for a in (u @ v, np.zeros((3, 5)), 3 * np.eye(5), np.diag([2.0, 2, 1, 0])):
            for dt in ("float32", "float64"):
                for full in (True, False):
                    with self.subTest(a=a.shape, dt=dt, full=full):
                        self.check(a.astype(dt), full)

    def test_namedtuple_and_empty(self):
        r = xp.linalg.svd(arr(np.ones((0, 3, 2), np.float32)))
        self.assertEqual(r._fields, ("U", "S", "Vh"))
        self.assertEqual(tuple(r.U.shape), (0, 3, 3))
        self.assertEqual(tuple(r.S.shape), (0, 2))

    def test_refuses(self):
        with self.assertRaises(ValueError):
            xp.linalg.svd(arr(np.ones(3, np.float32)))
        with self.assertRaises(ValueError):
            xp.linalg.svdvals(arr(np.ones((2, 2), np.int32)))


class Eigh(unittest.TestCase):
    def test_against_numpy(self):
        rng = np.random.default_rng(3)
        for shape in [(1, 1), (2, 2), (5, 5), (3, 2, 6, 6), (24, 24)]:
            for dt in ("float32", "float64"):
                with self.subTest(shape=shape, dt=dt):
                    a = rng.uniform(-1, 1, shape)
                    a = (a + np.swapaxes(a, -1, -2)).astype(dt)
                    w, v = xp.linalg.eigh(arr(a))
                    w, v = npy(w), npy(v)
                    rw, rv = np.linalg.eigh(a.astype(np.float64))
                    n = shape[-1]
                    tol = TOL[dt] * math.sqrt(n)
                    top = np.max(np.abs(rw))
                    np.testing.assert_allclose(w, rw, atol=tol * top)
                    np.testing.assert_allclose(npy(xp.linalg.eigvalsh(arr(a))), w, atol=tol * top)
                    # A = V diag(w) V^T, and V orthonormal.
                    rec = (v * w[..., None, :]) @ np.swapaxes(v, -1, -2)
                    np.testing.assert_allclose(rec, a, atol=tol * top)
                    # Eigenvectors of well-separated eigenvalues match up to sign.
                    gaps = np.diff(rw, axis=-1)
                    if np.all(gaps > 1e-2 * top):
                        dots = np.abs(np.sum(v * rv, axis=-2))
                        np.testing.assert_allclose(dots, 1, atol=tol / 1e-2)

    def test_lower_triangle_and_signs(self):
        # Only the lower triangle is read; eigenvalues ±1 of equal magnitude.
        a = np.array([[0, 99], [1, 0]], np.float64)
        w, v = xp.linalg.eigh(arr(a))
        np.testing.assert_allclose(npy(w), [-1, 1], atol=1e-12)
        np.testing.assert_allclose(npy(w), np.linalg.eigvalsh(a), atol=1e-12)

    def test_refuses_non_square(self):
        with self.assertRaises(ValueError):
            xp.linalg.eigh(arr(np.ones((2, 3), np.float32)))


class PinvRank(unittest.TestCase):
    def test_pinv(self):
        rng = np.random.default_rng(4)
        for shape in [(4, 4), (6, 3), (3, 6), (2, 5, 4)]:
            for dt in ("float32", "float64"):
                with self.subTest(shape=shape, dt=dt):
                    a = rng.uniform(-1, 1, shape).astype(dt)
                    got = npy(xp.linalg.pinv(arr(a)))
                    ref = np.linalg.pinv(a.astype(np.float64))
                    cond = np.linalg.cond(a.astype(np.float64))
                    tol = 20 * TOL[dt] * np.max(cond) * np.max(np.abs(ref))
                    np.testing.assert_allclose(got, ref, atol=tol)
        u = rng.uniform(-1, 1, (5, 1))
        a = (u @ u.T).astype(np.float32)  # rank 1: the standard's default rtol drops the rest
        np.testing.assert_allclose(npy(xp.linalg.pinv(a if False else arr(a))),
                                   np.linalg.pinv(a.astype(np.float64), rcond=1e-4), atol=1e-4)

    def test_matrix_rank(self):
        rng = np.random.default_rng(5)
        u, v = rng.uniform(-1, 1, (3, 6, 2)), rng.uniform(-1, 1, (3, 2, 5))
        for dt in ("float32", "float64"):
            a = (u @ v).astype(dt)
            got = npy(xp.linalg.matrix_rank(arr(a)))
            self.assertEqual(got.dtype, np.int64)
            np.testing.assert_array_equal(got, [2, 2, 2])
            d = np.stack([np.diag([4.0, 2, 1])] * 3).astype(dt)
            np.testing.assert_array_equal(npy(xp.linalg.matrix_rank(arr(d), rtol=0.3)), [2, 2, 2])
            rt = arr(np.array([0.2, 0.3, 0.6], dt))
            np.testing.assert_array_equal(npy(xp.linalg.matrix_rank(arr(d), rtol=rt)), [3, 2, 1])
            # A 0-d rtol array broadcasts to the stack.
            np.testing.assert_array_equal(
                npy(xp.linalg.matrix_rank(arr(d), rtol=arr(np.array(0.6, dt)))), [1, 1, 1])


class Norms(unittest.TestCase):
    def test_vector_norm(self):
        rng = np.random.default_rng(6)
        for dt in ("float32", "float64", "float16"):
            a = rng.uniform(-1, 1, (3, 4, 5)).astype(dt)
            a[0, 0, 0] = 0
            for axis in (None, 1, (0, 2), -1, ()):
                for ord in (2, 1, 0, -1, 3.5, -0.5, math.inf, -math.inf):
                    for keepdims in (False, True):
                        with self.subTest(dt=dt, axis=axis, ord=ord, keepdims=keepdims):
                            got = npy(xp.linalg.vector_norm(arr(a), axis=axis, ord=ord,
                                                            keepdims=keepdims))
                            ref = _vec_norm(a.astype(np.float64), axis, ord, keepdims)
                            self.assertEqual(got.shape, ref.shape)
                            self.assertEqual(got.dtype, a.dtype)
                            np.testing.assert_allclose(got, ref, rtol=20 * TOL[dt], atol=1e-30)

    def test_vector_norm_overflow(self):
        a = np.array([3e30, 4e30], np.float32)  # squares overflow float32
        np.testing.assert_allclose(npy(xp.linalg.vector_norm(arr(a))), 5e30, rtol=1e-6)

    def test_matrix_norm(self):
        rng = np.random.default_rng(7)
        for dt in ("float32", "float64"):
            a = rng.uniform(-1, 1, (2, 3, 4, 5)).astype(dt)
            for ord in ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf):
                for keepdims in (False, True):
                    with self.subTest(dt=dt, ord=ord, keepdims=keepdims):
                        got = npy(xp.linalg.matrix_norm(arr(a), ord=ord, keepdims=keepdims))
                        ref = np.linalg.norm(a.astype(np.float64), ord=ord, axis=(-2, -1),
                                             keepdims=keepdims)
                        self.assertEqual(got.shape, ref.shape)
                        np.testing.assert_allclose(got, ref, rtol=20 * TOL[dt])
        with self.assertRaises(ValueError):
            xp.linalg.matrix_norm(arr(np.ones((2, 2), np.float32)), ord=3)


CTOL = {"complex64": 2e-5, "complex128": 1e-12}


def _crandom(rng, shape, dt):
    return (rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape)).astype(dt)


def _h(a):
    return np.conj(np.swapaxes(a, -1, -2))


class Complex(unittest.TestCase):
    """complex64 and complex128: U, Vh, V, pinv complex (unitary); S, the
    eigenvalues and the norms of the real dtype; matrix_rank int64."""

    def test_svd(self):
        rng = np.random.default_rng(11)
        for shape in [(4, 4), (6, 3), (3, 6), (2, 5, 4), (1, 1), (30, 7)]:
            for dt in ("complex64", "complex128"):
                for full in (True, False):
                    with self.subTest(shape=shape, dt=dt, full=full):
                        a = _crandom(rng, shape, dt)
                        U, S, Vh = (npy(t) for t in xp.linalg.svd(arr(a), full_matrices=full))
                        ref_s = np.linalg.svd(a.astype(np.complex128), compute_uv=False)
                        self.assertEqual(U.dtype, a.dtype)
                        self.assertEqual(Vh.dtype, a.dtype)
                        self.assertEqual(S.dtype, a.real.dtype)
                        tol = CTOL[dt] * math.sqrt(max(shape[-2:]))
                        top = np.max(ref_s)
                        np.testing.assert_allclose(S, ref_s, atol=tol * top)
                        np.testing.assert_allclose(npy(xp.linalg.svdvals(arr(a))), ref_s, atol=tol * top)
                        k = S.shape[-1]
                        rec = (U[..., :, :k] * S[..., None, :]) @ Vh[..., :k, :]
                        np.testing.assert_allclose(rec, a, atol=tol * top)
                        for q in (_h(U) @ U, Vh @ _h(Vh)):
                            np.testing.assert_allclose(q, np.broadcast_to(np.eye(q.shape[-1]), q.shape), atol=tol)

    def test_eigh(self):
        rng = np.random.default_rng(12)
        for shape in [(1, 1), (2, 2), (5, 5), (3, 6, 6), (24, 24)]:
            for dt in ("complex64", "complex128"):
                with self.subTest(shape=shape, dt=dt):
                    a = _crandom(rng, shape, dt)
                    a = ((a + _h(a)) / 2).astype(dt)
                    w, v = (npy(t) for t in xp.linalg.eigh(arr(a)))
                    rw = np.linalg.eigvalsh(a.astype(np.complex128))
                    self.assertEqual(w.dtype, a.real.dtype)
                    self.assertEqual(v.dtype, a.dtype)
                    tol = CTOL[dt] * math.sqrt(shape[-1])
                    top = np.max(np.abs(rw))
                    np.testing.assert_allclose(w, rw, atol=tol * top)
                    np.testing.assert_allclose(npy(xp.linalg.eigvalsh(arr(a))), rw, atol=tol * top)
                    np.testing.assert_allclose(a @ v, v * w[..., None, :], atol=tol * top)
                    np.testing.assert_allclose(_h(v) @ v, np.broadcast_to(np.eye(shape[-1]), v.shape), atol=tol)
        # Only the lower triangle is read, as numpy.linalg.eigh's default.
        a = np.array([[1, 99 + 5j], [2 - 1j, 3]], np.complex128)
        np.testing.assert_allclose(npy(xp.linalg.eigvalsh(arr(a))), np.linalg.eigvalsh(a), atol=1e-12)

    def test_pinv_rank(self):
        rng = np.random.default_rng(13)
        for shape in [(4, 4), (6, 3), (3, 6), (2, 5, 4)]:
            for dt in ("complex64", "complex128"):
                with self.subTest(shape=shape, dt=dt):
                    a = _crandom(rng, shape, dt)
                    got = npy(xp.linalg.pinv(arr(a)))
                    self.assertEqual(got.dtype, a.dtype)
                    a64 = a.astype(np.complex128)
                    ref = np.linalg.pinv(a64)
                    tol = 20 * CTOL[dt] * np.max(np.linalg.cond(a64)) * np.max(np.abs(ref))
                    np.testing.assert_allclose(got, ref, atol=tol)
        u, v = _crandom(rng, (3, 6, 2), "complex128"), _crandom(rng, (3, 2, 5), "complex128")
        for dt in ("complex64", "complex128"):
            got = npy(xp.linalg.matrix_rank(arr((u @ v).astype(dt))))
            self.assertEqual(got.dtype, np.int64)
            np.testing.assert_array_equal(got, [2, 2, 2])

    def test_norms(self):
        rng = np.random.default_rng(14)
        for dt in ("complex64", "complex128"):
            a = _crandom(rng, (2, 4, 5), dt)
            a[0, 0, 0] = 0
            tol = 20 * CTOL[dt]
            for ord in (2, 1, 0, -1, 3.5, math.inf, -math.inf):
                with self.subTest(dt=dt, ord=ord):
                    got = npy(xp.linalg.vector_norm(arr(a), axis=-1, ord=ord))
                    self.assertEqual(got.dtype, a.real.dtype)
                    ref = np.linalg.norm(a.astype(np.complex128), ord=ord, axis=-1)
                    np.testing.assert_allclose(got, ref, rtol=tol)
            for ord in ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf):
                with self.subTest(dt=dt, ord=ord):
                    got = npy(xp.linalg.matrix_norm(arr(a), ord=ord))
                    self.assertEqual(got.dtype, a.real.dtype)
                    ref = np.linalg.norm(a.astype(np.complex128), ord=ord, axis=(-2, -1))
                    np.testing.assert_allclose(got, ref, rtol=tol)
        # |z| is hypot-style: parts whose squares overflow.
        big = np.array([3e30 + 4e30j, 0], np.complex64)
        np.testing.assert_allclose(npy(xp.linalg.vector_norm(arr(big))), 5e30, rtol=1e-6)
        np.testing.assert_allclose(npy(xp.linalg.matrix_norm(arr(big.reshape(1, 2)), ord=1)), 5e30, rtol=1e-6)


def _vec_norm(a, axis, ord, keepdims):
    """NumPy's vector norm along any axes (numpy.linalg.norm takes at most one)."""
    if axis is None:
        axes = tuple(range(a.ndim))
    elif isinstance(axis, tuple):
        axes = tuple(x % a.ndim for x in axis)
    else:
        axes = (axis % a.ndim,)
    x = np.abs(a)
    if ord == math.inf:
        r = np.max(x, axis=axes, keepdims=True) if axes else x
    elif ord == -math.inf:
        r = np.min(x, axis=axes, keepdims=True) if axes else x
    elif ord == 0:
        r = np.sum(x != 0, axis=axes, keepdims=True).astype(a.dtype)
    else:
        with np.errstate(divide="ignore"):
            r = np.sum(x ** ord, axis=axes, keepdims=True) ** (1 / ord)
    if not keepdims:
        r = np.squeeze(r, axis=axes) if axes else r
    return np.asarray(r)


if __name__ == "__main__":
    unittest.main()
