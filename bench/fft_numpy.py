"""NumPy's side of the FFT benchmarks (bench/fft.sh): numpy.fft.fft along
the last axis of complex64 arrays of the shapes BenchmarkFFT uses, and
scipy.fft.fft of the same (SciPy's pocketfft computes complex64 in single
precision; NumPy 1.24's converts to complex128 and returns complex128).
Timed as the other NumPy benchmarks: 2 warm-up calls, then 5 batches of
about BENCHTIME/5 seconds each; the median batch's time per call.

Prints, in Go's benchmark format:

    BenchmarkNumPyFFT/<workload>_<impl>-<ncpu>\t<calls>\t<ns> ns/op

Usage: fft_numpy.py [BENCHTIME_SECONDS]
"""

import os
import sys
import time

import numpy as np

try:
    import scipy.fft as sfft
except ImportError:  # SciPy is optional
    sfft = None

WORKLOADS = (("fft_1m", 1, 1 << 20), ("fft_1024x1024", 1024, 1024), ("fft_256x4093", 256, 4093))
WARMUP = 2
BATCHES = 5


def timed(f, x, benchtime):
    for _ in range(WARMUP):
        f(x)
    t0 = time.perf_counter_ns()
    f(x)
    one = max(time.perf_counter_ns() - t0, 1)
    calls = max(1, int(benchtime / BATCHES * 1e9 / one))
    per = []
    for _ in range(BATCHES):
        t0 = time.perf_counter_ns()
        for _ in range(calls):
            f(x)
        per.append((time.perf_counter_ns() - t0) / calls)
    per.sort()
    return calls * BATCHES, per[len(per) // 2]


def main():
    benchtime = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    rng = np.random.default_rng(0)
    impls = [("numpy", lambda x: np.fft.fft(x, axis=-1))]
    if sfft is not None:
        impls.append(("scipy", lambda x: sfft.fft(x, axis=-1)))
    for name, rows, cols in WORKLOADS:
        x = (rng.uniform(-1, 1, (rows, cols)) + 1j * rng.uniform(-1, 1, (rows, cols))).astype(np.complex64)
        for impl, f in impls:
            calls, ns = timed(f, x, benchtime)
            print(f"BenchmarkNumPyFFT/{name}_{impl}-{os.cpu_count()}\t{calls}\t{ns:.0f} ns/op", flush=True)


if __name__ == "__main__":
    main()
