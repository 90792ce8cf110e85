"""Scans, compaction and gathers against NumPy in one run (median of 5):
cumulative_sum, nonzero, x[mask] and take on 4Mi elements.

    cd python && PYTHONPATH=$PWD python3 ../bench/scan_numpy.py

Prints each time and the ratio NumPy time / vkflow time (1x: as fast).
"""
import time

import numpy as np

import vkflow
import vkflow.array_api as xp


def med(f, n=5):
    f(); ts = []
    for _ in range(n):
        t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
    return sorted(ts)[n // 2]
rng = np.random.default_rng(0)
N = 1 << 22
a = rng.standard_normal(N).astype(np.float32)
m = a > 0
idx = rng.integers(0, N, 1 << 20)
x, xm, xi = xp.asarray(a), xp.asarray(m), xp.asarray(idx)
vkflow.synchronize()
rows = [
    ("cumulative_sum float32 4Mi", lambda: (xp.cumulative_sum(x), vkflow.synchronize()), lambda: np.cumsum(a)),
    ("nonzero bool 4Mi (half true)", lambda: (xp.nonzero(xm), vkflow.synchronize()), lambda: np.nonzero(m)),
    ("x[mask] float32 4Mi", lambda: (x[xm], vkflow.synchronize()), lambda: a[m]),
    ("take 1Mi of 4Mi float32", lambda: (xp.take(x, xi), vkflow.synchronize()), lambda: np.take(a, idx)),
]
for name, v, n in rows:
    tv, tn = med(v), med(n)
    print("%-32s vkflow %8.2f ms  numpy %8.2f ms  ratio (numpy/vkflow) %.3fx" % (name, tv * 1e3, tn * 1e3, tn / tv))
