"""vkflow.array_api.linalg.eig and eigvals against numpy.linalg.eig (LAPACK's
geev) on the same inputs.

The errors stated (docs/ARRAY_API.md, "eig and eigvals"), with eps the unit
roundoff of the dtype's parts (2**-24 for float32 and complex64, 2**-53 for
float64 and complex128) and ||A|| the 2-norm; "measured" is the largest seen
over 4 random matrices of each size 2 to 100 and 256 of size 16
(the measurements are in docs/ARRAY_API.md):

* backward error: ||A V - V diag(w)||_F / (||A|| ||V||_F) <= 8 n eps for every
  kind of matrix below (measured: at most 3.3 n eps);
* random real and complex matrices: each eigenvalue within 8 n eps ||A|| of
  NumPy's in complex128 (measured: at most 2.9 n eps ||A||);
* ill-conditioned: A = S diag(d) S^-1 with cond(S) = 1e3 (float32, complex64)
  or 1e8 (float64, complex128): the error against d at most 20 times NumPy's
  own at the input's dtype, plus 8 n eps ||A|| (measured: 4.8 times for
  float32, 8.3 for complex64, 2.2 for float64 and complex128);
* graded: D A0 D^-1 with D = diag(2**(g i)) (||A|| up to 1e17): balanced, the
  eigenvalues are as accurate as A0's, within 8 n eps ||A0||;
* defective: a Jordan block of size k (orthogonally transformed): within
  10 (eps ||A||)^(1/k) of the eigenvalue (measured: at most 1.5), as LAPACK's
  (at most 1.1);
* eigvals equals eig's eigenvalues within 8 n eps ||A|| (matched).
"""

import math
import os
import subprocess
import sys
import unittest

import numpy as np

import vkflow
import vkflow.array_api as xp

EPS = {"float32": 2.0 ** -24, "complex64": 2.0 ** -24, "float64": 2.0 ** -53,
       "complex128": 2.0 ** -53}
CDT = {"float32": "complex64", "complex64": "complex64", "float64": "complex128",
       "complex128": "complex128"}


def match(got, want):
    """The largest distance between each of want and its nearest unused
    element of got."""
    left = list(got)
    worst = 0.0
    for w in want:
        i = min(range(len(left)), key=lambda j: abs(left[j] - w))
        worst = max(worst, abs(left[i] - w))
        left.pop(i)
    return worst


def random_matrices(rng, dt, shape):
    a = rng.standard_normal(shape)
    if dt.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dt)


def orthogonal(rng, n):
    q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    return q


class Eig(unittest.TestCase):
    def run_eig(self, a):
        w, v = xp.linalg.eig(xp.asarray(a))
        self.assertEqual(str(w.dtype), CDT[a.dtype.name])
        self.assertEqual(str(v.dtype), CDT[a.dtype.name])
        self.assertEqual(tuple(w.shape), a.shape[:-1])
        self.assertEqual(tuple(v.shape), a.shape)
        return np.asarray(w), np.asarray(v)

    def check_backward(self, a, w, v):
        n, eps = a.shape[-1], EPS[a.dtype.name]
        a2 = a.astype(np.complex128).reshape((-1, n, n))
        for b, (m, wb, vb) in enumerate(zip(a2, w.reshape(-1, n), v.reshape(-1, n, n))):
            nrm = max(np.linalg.norm(m, 2), 1e-300)
            r = np.linalg.norm(m @ vb - vb * wb) / (nrm * np.linalg.norm(vb))
            self.assertLessEqual(r, 8 * n * eps, "matrix %d: backward error" % b)
            # unit columns, the largest component real
            np.testing.assert_allclose(np.linalg.norm(vb, axis=0), 1, atol=8 * n * eps)
            big = np.abs(vb).max(axis=0)
            real_big = np.where(vb.imag == 0, np.abs(vb), 0).max(axis=0)
            self.assertTrue(np.all(real_big >= big * (1 - 8 * n * eps)), "matrix %d" % b)

    def test_random(self):
        rng = np.random.default_rng(1)
        for dt in ("float32", "float64", "complex64", "complex128"):
            for shape in ((1, 1), (2, 2), (3, 5, 5), (2, 16, 16), (40, 40)):
                with self.subTest(dt=dt, shape=shape):
                    a = random_matrices(rng, dt, shape)
                    w, v = self.run_eig(a)
                    self.check_backward(a, w, v)
                    n, eps = shape[-1], EPS[dt]
                    ref = np.linalg.eig(a.astype(np.complex128))[0].reshape(-1, n)
                    mats = a.astype(np.complex128).reshape(-1, n, n)
                    for b in range(len(mats)):
                        nrm = np.linalg.norm(mats[b], 2)
                        self.assertLessEqual(match(w.reshape(-1, n)[b], ref[b]), 8 * n * eps * nrm)
                    wv = np.asarray(xp.linalg.eigvals(xp.asarray(a))).reshape(-1, n)
                    for b in range(len(mats)):
                        nrm = np.linalg.norm(mats[b], 2)
                        self.assertLessEqual(match(wv[b], w.reshape(-1, n)[b]), 8 * n * eps * nrm)

    def test_ill_conditioned(self):
        rng = np.random.default_rng(2)
        for dt, cond in (("float32", 1e3), ("float64", 1e8), ("complex64", 1e3),
                         ("complex128", 1e8)):
            with self.subTest(dt=dt):
                n = 12
                # S = U diag(s) V with singular values from 1 to 1/cond
                s = np.logspace(0, -math.log10(cond), n)
                S = orthogonal(rng, n) @ np.diag(s) @ orthogonal(rng, n)
                d = np.linspace(-3, 3, n) + (0.5j if dt.startswith("complex") else 0)
                a = (S @ np.diag(d) @ np.linalg.inv(S))
                if not dt.startswith("complex"):
                    a = a.real
                a = a.astype(dt)
                w, v = self.run_eig(a)
                self.check_backward(a, w, v)
                ours = match(w, d)
                lapack = match(np.linalg.eig(a)[0].astype(np.complex128), d)
                nrm = np.linalg.norm(a.astype(np.complex128), 2)
                self.assertLessEqual(ours, 20 * lapack + 8 * n * EPS[dt] * nrm,
                                     "ours %.3g, LAPACK's %.3g" % (ours, lapack))

    def test_graded(self):
        rng = np.random.default_rng(4)
        for dt, g in (("float32", 3), ("float64", 8), ("complex64", 3), ("complex128", 8)):
            with self.subTest(dt=dt):
                n = 8
                a0 = random_matrices(rng, dt, (n, n))
                d = 2.0 ** (g * np.arange(n))
                a = (d[:, None] * a0 / d[None, :]).astype(dt)  # exact: powers of 2
                w = np.asarray(xp.linalg.eigvals(xp.asarray(a)))
                ref = np.linalg.eig(a0.astype(np.complex128))[0]
                nrm0 = np.linalg.norm(a0.astype(np.complex128), 2)
                self.assertLessEqual(match(w, ref), 8 * n * EPS[dt] * nrm0)

    def test_defective(self):
        rng = np.random.default_rng(3)
        for dt in ("float32", "float64", "complex128"):
            for k in (2, 3, 4):
                with self.subTest(dt=dt, k=k):
                    lam = 1.5
                    j = lam * np.eye(k) + np.eye(k, k=1)
                    q = orthogonal(rng, k)
                    a = (q @ j @ q.T).astype(dt)
                    w, v = self.run_eig(a)
                    self.check_backward(a, w, v)
                    nrm = np.linalg.norm(a.astype(np.complex128), 2)
                    bound = 10 * (EPS[dt] * nrm) ** (1.0 / k)
                    self.assertLessEqual(np.abs(w - lam).max(), bound)
                    lapack = np.abs(np.linalg.eig(a)[0] - lam).max()
                    self.assertLessEqual(np.abs(w - lam).max(), max(10 * lapack, bound / 10) + bound)

    def test_exact_spectra(self):
        # triangular: the diagonal; a cyclic permutation: the roots of unity
        # (the shifts stall without the exceptional ones); zero
        n = 7
        tri = np.triu(np.arange(1, n * n + 1, dtype=np.float64).reshape(n, n) / n)
        w, v = self.run_eig(tri)
        self.assertLessEqual(match(w, np.diag(tri)), 1e-12)
        perm = np.roll(np.eye(n), 1, axis=0)
        w, v = self.run_eig(perm)
        self.check_backward(perm, w, v)
        self.assertLessEqual(match(w, np.exp(2j * np.pi * np.arange(n) / n)), 1e-12)
        w, v = self.run_eig(np.zeros((2, 3, 3), np.float32))
        np.testing.assert_array_equal(w, 0)

    def test_special(self):
        a = np.stack([np.full((3, 3), np.nan), np.eye(3)]).astype(np.float64)
        a[0, 0, 0] = 1
        w, v = self.run_eig(a)
        self.assertTrue(np.isnan(w[0]).all() and np.isnan(v[0]).all())
        np.testing.assert_allclose(w[1], 1)
        a[0] = np.inf
        self.assertTrue(np.isnan(np.asarray(xp.linalg.eigvals(xp.asarray(a)))[0]).all())
        for bad in (np.zeros(3), np.zeros((2, 3))):
            with self.assertRaises(Exception):
                xp.linalg.eig(xp.asarray(bad))
        with self.assertRaises(Exception):
            xp.linalg.eigvals(xp.asarray(np.zeros((2, 2), np.int32)))
        e = xp.linalg.eig(xp.asarray(np.zeros((0, 4, 4), np.float32)))
        self.assertEqual(tuple(e.eigenvectors.shape), (0, 4, 4))
        self.assertEqual(e._fields, ("eigenvalues", "eigenvectors"))


class Versions(unittest.TestCase):
    """The namespace per array API version."""

    def test_default_is_newest(self):
        self.assertEqual(xp.__array_api_version__, "2025.12")
        x = xp.asarray([1.0, 2.0])
        self.assertIs(x.__array_namespace__(), xp)
        self.assertIs(x.__array_namespace__(api_version="2025.12"), xp)
        self.assertIsInstance(xp.meshgrid(x, x), tuple)
        self.assertIsInstance(xp.broadcast_arrays(x, x), tuple)
        self.assertIsInstance(xp.__array_namespace_info__().devices(), tuple)

    def test_older_versions(self):
        x = xp.asarray([1.0, 2.0])
        for v in ("2021.12", "2022.12", "2023.12", "2024.12"):
            with self.subTest(version=v):
                ns = x.__array_namespace__(api_version=v)
                self.assertIs(ns, x.__array_namespace__(api_version=v))
                self.assertEqual(ns.__array_api_version__, v)
                self.assertIsInstance(ns.meshgrid(x, x), list)
                self.assertIsInstance(ns.broadcast_arrays(x, x), list)
                self.assertIsInstance(ns.__array_namespace_info__().devices(), list)
                # every other name is the module's
                self.assertIs(ns.add, xp.add)
                self.assertIs(ns.linalg, xp.linalg)
                self.assertIs(ns.float32, xp.float32)
                np.testing.assert_array_equal(np.asarray(ns.meshgrid(x, x)[0]),
                                              np.asarray(xp.meshgrid(x, x)[0]))

    def test_environment(self):
        """VKFLOW_ARRAY_API_VERSION puts the module at a version (a fresh
        interpreter); an unknown one fails the import, naming the versions."""
        code = ("import vkflow.array_api as xp; x = xp.asarray([1.0]); "
                "print(xp.__array_api_version__, type(xp.meshgrid(x, x)).__name__, "
                "type(xp.__array_namespace_info__().devices()).__name__, "
                "x.__array_namespace__() is xp, "
                "type(x.__array_namespace__(api_version='2025.12').meshgrid(x)).__name__)")
        for v, want in (("2023.12", ["2023.12", "list", "list", "True", "tuple"]),
                        ("2025.12", ["2025.12", "tuple", "tuple", "True", "tuple"])):
            env = dict(os.environ, VKFLOW_ARRAY_API_VERSION=v)
            r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                               text=True, timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout.split(), want)
        env = dict(os.environ, VKFLOW_ARRAY_API_VERSION="2019.12")
        r = subprocess.run([sys.executable, "-c", "import vkflow.array_api"], env=env,
                           capture_output=True, text=True, timeout=120)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("2025.12", r.stderr)

    def test_unknown_version(self):
        x = xp.asarray([1.0])
        for v in ("2020.12", "2026.12", "latest"):
            with self.assertRaises(ValueError):
                x.__array_namespace__(api_version=v)


if __name__ == "__main__":
    vkflow.default_device()
    unittest.main()
