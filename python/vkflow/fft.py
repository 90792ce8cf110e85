"""The array API standard's ``fft`` extension (``vkflow.array_api.fft``):
discrete Fourier transforms on the device, as NumPy's ``numpy.fft``.

``fft ifft fftn ifftn`` (complex64/complex128; float32/float64 are taken as
complex), ``rfft rfftn ihfft`` (float32/float64 in, complex of the same
precision out), ``irfft irfftn hfft`` (complex in, real out) are the Go op
library's ops of those names (vkflow.ops.call): batched Stockham radix
passes for lengths whose prime factors are 2, 3, 5 and 7, Bluestein's
chirp-z transform for every other length, twiddles computed in float64 on
the host. ``n``/``s`` crop or zero-pad the input (``-1`` in ``s``: the
axis's length), ``norm`` is ``"backward"``, ``"ortho"`` or ``"forward"``.

``fftfreq rfftfreq`` (creation functions: computed on the host in float64,
converted to ``dtype``, default float32, and uploaded to ``device``) and
``fftshift ifftshift`` (rolls along ``axes``, default all: on the device,
vkflow's ``roll``).
"""

import operator

from . import ops
from ._array import _device, _upload
from ._creation import _dtype
from ._dtypes import _numpy
from ._manipulation import roll

__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
           "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_NORMS = ("backward", "ortho", "forward")


def _norm(norm, name):
    if norm not in _NORMS:
        raise ValueError("%s: norm must be one of %s, not %r" % (name, ", ".join(_NORMS), norm))
    return norm


def _one(name, x, n, axis, norm):
    """The 1-d op name along axis with length n (None: the default)."""
    if n is not None:
        n = operator.index(n)
        if n < 1:
            raise ValueError("%s: n must be >= 1, not %d" % (name, n))
    return ops.call(name, x, n=n, axis=operator.index(axis), norm=_norm(norm, name))


def _many(name, x, s, axes, norm):
    """The n-d op name over axes with lengths s (None: the defaults)."""
    _norm(norm, name)
    if axes is not None:
        axes = [operator.index(a) for a in axes]
        if not axes:
            # No axis to transform: x itself, as NumPy gives it (in the
            # output dtype the op would give).
            out = {"rfftn": {"float32": "complex64", "float64": "complex128"},
                   "irfftn": {"complex64": "float32", "complex128": "float64"}}.get(name, {})
            return ops.astype(x, out.get(x.dtype, x.dtype))
    if s is not None:
        s = [operator.index(v) for v in s]
        if any(v < 1 and v != -1 for v in s):
            raise ValueError("%s: s must hold lengths >= 1 (or -1), not %r" % (name, s))
    return ops.call(name, x, s=s, axes=axes, norm=norm)


def fft(x, /, *, n=None, axis=-1, norm="backward"):
    """The discrete Fourier transform along axis (complex of x's precision)."""
    return _one("fft", x, n, axis, norm)


def ifft(x, /, *, n=None, axis=-1, norm="backward"):
    """The inverse discrete Fourier transform along axis."""
    return _one("ifft", x, n, axis, norm)


def rfft(x, /, *, n=None, axis=-1, norm="backward"):
    """The transform of real x along axis: its n//2+1 non-negative
    frequencies."""
    return _one("rfft", x, n, axis, norm)


def irfft(x, /, *, n=None, axis=-1, norm="backward"):
    """The inverse of rfft: n real points (default 2*(m-1)) from the
    non-negative frequencies of a Hermitian sequence."""
    return _one("irfft", x, n, axis, norm)


def hfft(x, /, *, n=None, axis=-1, norm="backward"):
    """The transform of a Hermitian sequence given by its first half: n real
    points (default 2*(m-1))."""
    return _one("hfft", x, n, axis, norm)


def ihfft(x, /, *, n=None, axis=-1, norm="backward"):
    """The inverse of hfft: the n//2+1 first points of the inverse transform
    of real x."""
    return _one("ihfft", x, n, axis, norm)


def fftn(x, /, *, s=None, axes=None, norm="backward"):
    """The n-dimensional transform over axes (None: all)."""
    return _many("fftn", x, s, axes, norm)


def ifftn(x, /, *, s=None, axes=None, norm="backward"):
    """The n-dimensional inverse transform over axes (None: all)."""
    return _many("ifftn", x, s, axes, norm)


def rfftn(x, /, *, s=None, axes=None, norm="backward"):
    """The n-dimensional transform of real x: rfft along the last of axes,
    fft along the others."""
    return _many("rfftn", x, s, axes, norm)


def irfftn(x, /, *, s=None, axes=None, norm="backward"):
    """The inverse of rfftn: s[-1] real points along the last of axes
    (default 2*(m-1))."""
    return _many("irfftn", x, s, axes, norm)


def _freq(name, n, d, dtype, device, half):
    n = operator.index(n)
    if n < 1:
        raise ValueError("%s: n must be >= 1, not %d" % (name, n))
    mgr = _device(device, name)
    dt = _dtype(dtype, "float32", name)
    if dt not in ("float32", "float64"):
        raise TypeError("%s: dtype must be a real floating-point dtype, not %s" % (name, dt))
    np = _numpy()
    f = np.fft.rfftfreq(n, d) if half else np.fft.fftfreq(n, d)
    return _upload(f.astype(dt), mgr)


def fftfreq(n, /, *, d=1.0, dtype=None, device=None):
    """The sample frequencies of an n-point transform with sample spacing d:
    [0, 1, ..., (n-1)//2, -(n//2), ..., -1] / (d*n)."""
    return _freq("fftfreq", n, d, dtype, device, False)


def rfftfreq(n, /, *, d=1.0, dtype=None, device=None):
    """The non-negative sample frequencies of rfft: [0, 1, ..., n//2] /
    (d*n)."""
    return _freq("rfftfreq", n, d, dtype, device, True)


def _shift(x, axes, sign):
    axes = range(x.ndim) if axes is None else [axes] if isinstance(axes, int) else axes
    axes = [operator.index(a) for a in axes]
    if not axes:
        return ops.astype(x, x.dtype)
    shifts = [sign * (x.shape[a] // 2) for a in axes]
    return roll(x, tuple(shifts), axis=tuple(axes))


def fftshift(x, /, *, axes=None):
    """x with the zero frequency moved to the center along axes (None:
    all): a roll by n//2."""
    return _shift(x, axes, 1)


def ifftshift(x, /, *, axes=None):
    """The inverse of fftshift: a roll by -(n//2)."""
    return _shift(x, axes, -1)
