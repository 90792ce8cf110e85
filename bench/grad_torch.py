"""The gradient benchmarks' Python side (bench/grad.sh): a training step
(forward and backward) of a two-layer MLP through vkflow.torch.ops against
the same step in pure PyTorch on the CPU, and the weight-gradient product
8x25000 @ 25000x16 float32 in NumPy; rounds interleaved, medians printed
as "name ms" lines."""

import os
import statistics
import sys
import time

import numpy as np
import torch

import vkflow.torch as vt

ROUNDS = int(os.environ.get("ROUNDS", "5"))
REPS = int(os.environ.get("REPS", "20"))


def step(mm, act, msum, x, w1, w2, y):
    for w in (w1, w2):
        w.grad = None
    r = mm(act(mm(x, w1)), w2) - y
    loss = msum(r * r) / r.numel()
    loss.backward()
    return float(loss)


def timed(f):
    f()
    t0 = time.perf_counter()
    for _ in range(REPS):
        f()
    return (time.perf_counter() - t0) / REPS * 1e3


def main():
    torch.manual_seed(0)
    x, y = torch.randn(256, 64) * 0.3, torch.randn(256, 10) * 0.3
    w1 = (torch.randn(64, 128) * 0.3).requires_grad_()
    w2 = (torch.randn(128, 10) * 0.3).requires_grad_()
    a = np.random.rand(8, 25000).astype(np.float32)
    b = np.random.rand(25000, 16).astype(np.float32)
    res = {"mlp_step_vkflow_torch": [], "mlp_step_torch_cpu": [], "weightgrad_numpy": []}
    for _ in range(ROUNDS):
        res["mlp_step_vkflow_torch"].append(timed(
            lambda: step(vt.ops.matmul, vt.ops.tanh, vt.ops.sum, x, w1, w2, y)))
        res["mlp_step_torch_cpu"].append(timed(
            lambda: step(torch.matmul, torch.tanh, torch.sum, x, w1, w2, y)))
        res["weightgrad_numpy"].append(timed(lambda: a @ b))
    for k, v in res.items():
        print("%s %.4f" % (k, statistics.median(v)))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
