"""NumPy's side of the sort benchmarks (bench/sort.sh): np.sort and
np.argsort of 1Mi float32 values, and of a [1000, 1024] float32 batch along
the last axis, with kind="stable" (what vkflow's sort is: stable) and with
NumPy's default kind (quicksort: introsort, not stable), timed as
bench/ops_numpy.py times matmul (warm-up calls, then 5 batches of about
BENCHTIME/5 seconds; the median batch's time per call).

Prints, in Go's benchmark format:

    numpy: NumPy <version>
    BenchmarkNumPy/<op>_<size>_<kind>-<ncpu>\t<calls>\t<ns> ns/op

Usage: sort_numpy.py [BENCHTIME_SECONDS]
"""

import os
import sys
import time

import numpy as np

WARMUP = 2
BATCHES = 5


def batch(f, calls):
    t0 = time.perf_counter_ns()
    for _ in range(calls):
        f()
    return time.perf_counter_ns() - t0


def bench(f, benchtime):
    batch(f, WARMUP)
    target = benchtime * 1e9 / BATCHES
    calls, t = 1, batch(f, 1)
    while t < target * 0.1:
        calls = max(calls * 2, min(calls * 10, int(target * 0.2 / (t / calls))))
        t = batch(f, calls)
    calls = max(1, round(target / (t / calls)))
    times = sorted(batch(f, calls) / calls for _ in range(BATCHES))
    return calls, times[BATCHES // 2]


def main():
    benchtime = float(sys.argv[1]) if len(sys.argv) == 2 else 0.5
    rng = np.random.default_rng(9)
    data = {"1m": rng.standard_normal(1 << 20).astype(np.float32),
            "1000x1024": rng.standard_normal((1000, 1024)).astype(np.float32)}
    print(f"numpy: NumPy {np.__version__}", flush=True)
    for size, x in data.items():
        for op in ("sort", "argsort"):
            for kind in ("stable", "quicksort"):
                f = getattr(np, op)
                calls, med = bench(lambda: f(x, axis=-1, kind=kind), benchtime)
                print(f"BenchmarkNumPy/{op}_{size}_{kind}-{os.cpu_count()}\t{calls}\t{med:.0f} ns/op",
                      flush=True)


if __name__ == "__main__":
    main()
