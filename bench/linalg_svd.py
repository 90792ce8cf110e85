"""svd on vkflow (the Go op "svd" through vkflow.array_api.linalg, run on
the device's default stream, waited for) against NumPy's LAPACK
(numpy.linalg.svd), in the same run, rounds interleaved: a 256x256 float32
matrix and a batch of 1000 8x8 float32 matrices, full_matrices=False.

Each round times CALLS calls of each side (after warm-up calls, which also
compile the kernels); the report gives the median time per call over ROUNDS
rounds, the ratio vkflow/NumPy, and the accuracy of vkflow's S against
LAPACK's (max |S - S_ref| / S_ref[0], S_ref from float64 LAPACK; NumPy's float32
LAPACK's own in parentheses) and of the reconstruction
(max |U S Vh - A| / S_lapack[0]).

Usage: XDG_RUNTIME_DIR=... PYTHONPATH=python /usr/bin/python3 bench/linalg_svd.py [ROUNDS]
"""

import statistics
import sys
import time

import numpy as np

import vkflow.array_api as xp

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
CASES = [("svd_256x256_f32", (256, 256), 1), ("svd_1000x8x8_f32", (1000, 8, 8), 3)]


def run_vk(x):
    r = xp.linalg.svd(x, full_matrices=False)
    return np.asarray(r.U), np.asarray(r.S), np.asarray(r.Vh)  # reading waits


def run_np(a):
    return np.linalg.svd(a, full_matrices=False)


def timed(f, arg, calls):
    t0 = time.perf_counter()
    for _ in range(calls):
        f(arg)
    return (time.perf_counter() - t0) / calls


def main():
    rng = np.random.default_rng(0)
    print("| case | vkflow (ms) | NumPy (ms) | vkflow/NumPy | max dS / S0 (NumPy f32) | max dA / S0 |")
    print("|---|---|---|---|---|---|")
    for name, shape, calls in CASES:
        a = rng.uniform(-1, 1, shape).astype(np.float32)
        x = xp.asarray(a)
        u, s, vh = run_vk(x)  # warm-up: compiles and caches the op
        run_np(a)
        ref = np.linalg.svd(a.astype(np.float64), compute_uv=False)
        ds = np.max(np.abs(s - ref) / ref[..., :1])
        ds_np = np.max(np.abs(run_np(a)[1] - ref) / ref[..., :1])
        rec = (u * s[..., None, :]) @ vh
        da = np.max(np.abs(rec - a) / ref[..., :1, None])
        tv, tn = [], []
        for _ in range(ROUNDS):
            tv.append(timed(run_vk, x, calls))
            tn.append(timed(run_np, a, calls))
        mv, mn = statistics.median(tv), statistics.median(tn)
        print("| %s | %.2f | %.3f | %.0fx | %.1e (%.1e) | %.1e |"
              % (name, mv * 1e3, mn * 1e3, mv / mn, ds, ds_np, da))


if __name__ == "__main__":
    main()
