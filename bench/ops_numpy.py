"""NumPy's side of the operator benchmarks (bench/ops.sh): a 1024x1024
float32 matmul, c = a @ b into a preallocated c, timed like the C baseline
(3 warm-up calls, then 5 batches of about BENCHTIME/5 seconds each; the
median batch's time per call is reported).

Prints, in Go's benchmark format so bench/opsreport reads it:

    numpy: <label>: NumPy <version>, BLAS <library loaded>, <n> threads
    BenchmarkNumPy/matmul_1024_<label>-<ncpu>\t<calls>\t<ns> ns/op\t<x> GFLOP/s

GFLOP/s counts 2*n^3 floating-point operations per call. The thread count
is OpenBLAS's own (openblas_get_num_threads), which OPENBLAS_NUM_THREADS
sets when the process starts; "?" when the BLAS is not OpenBLAS.

Usage: ops_numpy.py LABEL [BENCHTIME_SECONDS]
"""

import ctypes
import os
import sys
import time

import numpy as np

N = 1024
WARMUP = 3
BATCHES = 5


def loaded_blas():
    """The path of the BLAS library mapped into this process."""
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if "blas" in os.path.basename(path):
                return path
    return "?"


def blas_threads(path):
    try:
        return str(ctypes.CDLL(path).openblas_get_num_threads())
    except (OSError, AttributeError):
        return "?"


def verify(a, b, c):
    """Checks 256 entries of c against float64 dot products."""
    rng = np.random.default_rng(1)
    for i, j in rng.integers(0, N, size=(256, 2)):
        row, col = a[i].astype(np.float64), b[:, j].astype(np.float64)
        want = row @ col
        bound = 1e-5 * (np.abs(row) @ np.abs(col)) + 1e-6
        if abs(float(c[i, j]) - want) > bound:
            sys.exit(f"ops_numpy: c[{i},{j}] = {c[i, j]!r}, want {want!r}")


def batch(a, b, c, calls):
    t0 = time.perf_counter_ns()
    for _ in range(calls):
        np.matmul(a, b, out=c)
    return time.perf_counter_ns() - t0


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: ops_numpy.py LABEL [BENCHTIME_SECONDS]")
    label = sys.argv[1]
    benchtime = float(sys.argv[2]) if len(sys.argv) == 3 else 1.0

    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (N, N)).astype(np.float32)
    b = rng.uniform(-1, 1, (N, N)).astype(np.float32)
    c = np.zeros((N, N), np.float32)
    np.matmul(a, b, out=c)
    verify(a, b, c)

    blas = loaded_blas()
    print(f"numpy: {label}: NumPy {np.__version__}, BLAS {blas}, {blas_threads(blas)} threads",
          flush=True)

    batch(a, b, c, WARMUP)
    target = benchtime * 1e9 / BATCHES
    calls, t = 1, batch(a, b, c, 1)
    while t < target * 0.1:
        calls = max(calls * 2, min(calls * 10, int(target * 0.2 / (t / calls))))
        t = batch(a, b, c, calls)
    calls = max(1, round(target / (t / calls)))
    times = sorted(batch(a, b, c, calls) / calls for _ in range(BATCHES))
    med = times[BATCHES // 2]
    print(f"BenchmarkNumPy/matmul_1024_{label}-{os.cpu_count()}\t{calls}\t{med:.0f} ns/op"
          f"\t{2 * N**3 / med:.2f} GFLOP/s", flush=True)


if __name__ == "__main__":
    main()
