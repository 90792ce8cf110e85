"""vkflow.array_api.fft (vkflow.fft) against numpy.fft: every function,
complex64/complex128 and float32/float64, every norm, lengths that crop
and pad (odd, even, prime: Bluestein), axes first, middle and last, n-d
transforms with s and axes, fftfreq/rfftfreq, fftshift/ifftshift, and the
errors."""

import math
import os
import unittest

os.environ.setdefault("VKFLOW_VALIDATION", "1")

import numpy as np  # noqa: E402

import vkflow  # noqa: E402
import vkflow.array_api as xp  # noqa: E402

NORMS = ("backward", "ortho", "forward")
# Relative RMS error allowed, per precision (c64 ~ 1e-6 log2 n at most).
TOL = {"float32": 2e-6, "complex64": 2e-6, "float64": 1e-13, "complex128": 1e-13}


OUT = {"rfftn": {"float32": "complex64", "float64": "complex128"},
       "irfftn": {"complex64": "float32", "complex128": "float64"}, "fftn": {}, "ifftn": {}}


def _rng_array(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.uniform(-1, 1, shape)
    return a.astype(dtype)


def _relrms(got, want):
    want = np.asarray(want, dtype=np.complex128)
    got = np.asarray(got, dtype=np.complex128)
    den = np.sqrt(np.sum(np.abs(want) ** 2))
    num = np.sqrt(np.sum(np.abs(got - want) ** 2))
    return num / den if den > 0 else num


class FFTTest(unittest.TestCase):
    def check(self, got, want, in_dtype, out_dtype):
        got = np.from_dlpack(got)
        self.assertEqual(got.dtype, np.dtype(out_dtype))
        self.assertEqual(got.shape, want.shape)
        self.assertLessEqual(_relrms(got, want), TOL[in_dtype])

    def test_one_axis(self):
        real_out = {"complex64": "float32", "complex128": "float64"}
        cx_out = {"float32": "complex64", "float64": "complex128"}
        for name in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"):
            real_in = name in ("rfft", "ihfft")
            for dtype in (("float32", "float64") if real_in else ("complex64", "complex128")):
                a = _rng_array((4, 6, 5), dtype, seed=len(name))
                x = xp.asarray(a)
                for axis in (0, 1, -1):
                    for n in (None, 1, 3, 4, 7, 13, 17):
                        for norm in NORMS:
                            with self.subTest(name=name, dtype=dtype, axis=axis, n=n, norm=norm):
                                if n is None and name in ("irfft", "hfft") and a.shape[axis] == 1:
                                    continue
                                got = getattr(xp.fft, name)(x, n=n, axis=axis, norm=norm)
                                want = getattr(np.fft, name)(a, n=n, axis=axis, norm=norm)
                                out = (cx_out[dtype] if real_in else
                                       real_out[dtype] if name in ("irfft", "hfft") else dtype)
                                self.check(got, want, dtype, out)

    def test_many_axes(self):
        for name in ("fftn", "ifftn", "rfftn", "irfftn"):
            real_in = name == "rfftn"
            for dtype in (("float32", "float64") if real_in else ("complex64", "complex128")):
                a = _rng_array((3, 4, 6), dtype, seed=7)
                x = xp.asarray(a)
                for s, axes in ((None, None), ((5, 3), (0, 2)), ((2, -1), (2, 1)), ((7,), (1,)),
                                (None, (1, 0)), ((4, 5, 8), (0, 1, 2))):
                    for norm in NORMS:
                        with self.subTest(name=name, dtype=dtype, s=s, axes=axes, norm=norm):
                            got = getattr(xp.fft, name)(x, s=s, axes=axes, norm=norm)
                            ns = None if s is None else [a.shape[ax] if v == -1 else v
                                                         for v, ax in zip(s, axes)]
                            if name == "irfftn" and s is not None and s[-1] == -1:
                                ns[-1] = 2 * (a.shape[axes[-1]] - 1)
                            want = getattr(np.fft, name)(a, s=ns, axes=axes, norm=norm)
                            self.check(got, want, dtype, OUT[name].get(dtype, dtype))

    def test_long_and_prime(self):
        for n in (4093, 1 << 16, 3 * 5 * 7 * 64, 65537):
            for dtype in ("complex64", "complex128"):
                with self.subTest(n=n, dtype=dtype):
                    a = _rng_array((n,), dtype, seed=n)
                    got = xp.fft.fft(xp.asarray(a))
                    want = np.fft.fft(a.astype(np.complex128))
                    err = _relrms(np.from_dlpack(got), want)
                    self.assertLessEqual(err, (4e-8 if dtype == "complex64" else 1.5e-16)
                                         * (math.log2(n) + 5))

    def test_round_trip(self):
        for dtype in ("complex64", "complex128"):
            a = _rng_array((3, 97), dtype, seed=3)
            x = xp.asarray(a)
            for norm in NORMS:
                back = xp.fft.ifft(xp.fft.fft(x, norm=norm), norm=norm)
                self.assertLessEqual(_relrms(np.from_dlpack(back), a), TOL[dtype])
            r = _rng_array((2, 10), "float64" if dtype == "complex128" else "float32", seed=4)
            back = xp.fft.irfft(xp.fft.rfft(xp.asarray(r)), n=10)
            self.assertLessEqual(_relrms(np.from_dlpack(back), r), TOL[dtype])

    def test_freq(self):
        for n in (1, 2, 7, 8, 100):
            for d in (1.0, 0.25, 3.5):
                for dtype in (None, "float32", "float64"):
                    with self.subTest(n=n, d=d, dtype=dtype):
                        kw = {} if dtype is None else {"dtype": dtype}
                        f = xp.fft.fftfreq(n, d=d, **kw)
                        r = xp.fft.rfftfreq(n, d=d, **kw)
                        self.assertEqual(f.dtype, dtype or "float32")
                        np.testing.assert_allclose(np.from_dlpack(f), np.fft.fftfreq(n, d),
                                                   rtol=1e-6)
                        np.testing.assert_allclose(np.from_dlpack(r), np.fft.rfftfreq(n, d),
                                                   rtol=1e-6)
        mgr = vkflow.default_device()
        self.assertIs(xp.fft.fftfreq(4, device=mgr).device, mgr)

    def test_shift(self):
        for shape in ((5,), (4, 7), (2, 3, 6)):
            a = _rng_array(shape, "float32", seed=5)
            x = xp.asarray(a)
            for axes in (None, (0,), (-1,), tuple(range(len(shape)))):
                with self.subTest(shape=shape, axes=axes):
                    np.testing.assert_array_equal(np.from_dlpack(xp.fft.fftshift(x, axes=axes)),
                                                  np.fft.fftshift(a, axes=axes))
                    np.testing.assert_array_equal(np.from_dlpack(xp.fft.ifftshift(x, axes=axes)),
                                                  np.fft.ifftshift(a, axes=axes))

    def test_errors(self):
        c = xp.asarray(_rng_array((2, 4), "complex64"))
        r = xp.asarray(_rng_array((2, 4), "float32"))
        for f, exc in ((lambda: xp.fft.fft(c, n=0), ValueError),
                       (lambda: xp.fft.fft(c, norm="none"), ValueError),
                       (lambda: xp.fft.fft(c, axis=2), ValueError),
                       (lambda: xp.fft.rfft(c), ValueError),
                       (lambda: xp.fft.fftn(c, s=(0, 2), axes=(0, 1)), ValueError),
                       (lambda: xp.fft.fftn(c, axes=(1, -1)), ValueError),
                       (lambda: xp.fft.irfft(xp.asarray(np.ones((3, 1), np.complex64))),
                        ValueError),
                       (lambda: xp.fft.fftfreq(0), ValueError),
                       (lambda: xp.fft.fftfreq(4, dtype="int32"), TypeError),
                       (lambda: xp.fft.fft(xp.asarray(np.arange(3, dtype=np.int32))),
                        ValueError)):
            with self.assertRaises(exc):
                f()
        self.assertEqual(xp.fft.fft(r).dtype, "complex64")

    def test_namespace(self):
        self.assertIs(xp.fft, vkflow.fft)
        for name in ("fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft",
                     "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift"):
            self.assertTrue(callable(getattr(xp.fft, name)), name)


if __name__ == "__main__":
    unittest.main()
