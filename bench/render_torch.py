"""The soft rasterizer's benchmark (bench/render.sh, docs/BENCHMARKS.md): forward + backward of 64
triangles into 256x256, float32, sigma 1, batch 8, through vkflow.torch.soft_render against the
straightforward PyTorch implementation of the formula (python/tests/render_ref.py) on this machine's
CPU, rounds interleaved, medians. Two scenes: "large" (vertices uniform over the image: every triangle
covers much of it) and "small" (triangles of 4 to 32 pixels). PyTorch runs with one thread per CPU
(torch.set_num_threads(os.cpu_count()); Debian's build defaults to 1 here), as lavapipe does.

Memory: the bytes each side keeps from the forward for the backward (PyTorch autograd's saved tensors,
counted once per storage, through saved_tensors_hooks; vkflow's SoftRenderer.saved_bytes); all the
device memory vkflow's two graphs hold (SoftRenderer.device_bytes: inputs, layers, images, cotangent,
the backward's buffers and scratch, gradients); and the growth of the process's peak resident memory
over the first forward + backward, each side in a fresh process (vkflow's after its device is open: the
growth includes building and compiling the graphs; on lavapipe device memory is host memory, so it
counts).

Prints "name value" lines; bench/render.sh makes the table."""

import os
import statistics
import subprocess
import sys
import time

import torch

import vkflow.torch as vt

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "tests"))
from render_ref import soft_render_ref  # noqa: E402

N, SIZE, SIGMA, BATCH = 64, 256, 1.0, 8
ROUNDS = int(os.environ.get("ROUNDS", "5"))
REPS = int(os.environ.get("REPS", "3"))


def scene(kind, n=N, size=SIZE):
    g = torch.Generator().manual_seed(11)
    if kind == "large":
        tri = torch.rand(n, 3, 2, generator=g) * size
    else:
        centre = torch.rand(n, 1, 2, generator=g) * size
        r = 4 + 28 * torch.rand(n, 1, 1, generator=g)
        tri = centre + (torch.rand(n, 3, 2, generator=g) * 2 - 1) * r
    rgba = torch.rand(n, 4, generator=g)
    return tri.float(), rgba.float()


def step(f, tri, rgba, weights):
    a, b = tri.clone().requires_grad_(), rgba.clone().requires_grad_()
    (f(a, b) * weights).sum().backward()
    return a.grad, b.grad


def ours(a, b):
    return vt.soft_render(a, b, (SIZE, SIZE), sigma=SIGMA, batch=BATCH)


def ref(a, b):
    return soft_render_ref(a, b, (SIZE, SIZE), SIGMA)


def timed(f):
    t0 = time.perf_counter()
    for _ in range(REPS):
        f()
    return (time.perf_counter() - t0) / REPS * 1e3


def saved_bytes_torch(tri, rgba, weights):
    seen, total = set(), [0]

    def pack(t):
        key = (t.untyped_storage().data_ptr() if hasattr(t, "untyped_storage") else t.storage().data_ptr())
        if key not in seen:
            seen.add(key)
            total[0] += t.untyped_storage().nbytes() if hasattr(t, "untyped_storage") else \
                t.storage().nbytes()
        return t
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        a, b = tri.clone().requires_grad_(), rgba.clone().requires_grad_()
        out = ref(a, b)
    (out * weights).sum().backward()
    return total[0]


def hwm():
    """The process's peak resident memory in bytes (VmHWM: unlike ru_maxrss, not inherited from the
    parent across exec)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def peak_growth(side):
    """In a fresh process: the growth of the peak resident memory over the first forward + backward of
    the workload; prints it in bytes."""
    torch.set_num_threads(os.cpu_count())
    tri, rgba = scene("large")
    weights = torch.rand(SIZE, SIZE, 4, generator=torch.Generator().manual_seed(1))
    if side == "vkflow":
        vt.render_device()  # the Vulkan device itself is not the render's
    before = hwm()
    step(ours if side == "vkflow" else ref, tri, rgba, weights)
    print(hwm() - before)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--peak":
        peak_growth(sys.argv[2])
        return
    torch.set_num_threads(os.cpu_count())
    weights = torch.rand(SIZE, SIZE, 4, generator=torch.Generator().manual_seed(1))
    res = {}
    for kind in ("large", "small"):
        tri, rgba = scene(kind)
        # Warm-up (vkflow compiles its graphs and lavapipe its shaders on the first call), and the
        # gradients compared, so that both sides do the same work.
        g1, g2 = step(ours, tri, rgba, weights), step(ref, tri, rgba, weights)
        res["maxdiff_tri_" + kind] = [float((g1[0] - g2[0]).abs().max() / g2[0].abs().max())]
        for _ in range(ROUNDS):
            res.setdefault("vkflow_" + kind, []).append(timed(lambda: step(ours, tri, rgba, weights)))
            res.setdefault("torch_" + kind, []).append(timed(lambda: step(ref, tri, rgba, weights)))
    tri, rgba = scene("large")
    r = vt.SoftRenderer(N, (SIZE, SIZE), dtype=torch.float32, sigma=SIGMA, batch=BATCH)
    res["saved_vkflow"] = [r.saved_bytes]
    res["device_vkflow"] = [r.device_bytes]
    res["saved_torch"] = [saved_bytes_torch(tri, rgba, weights)]
    for side in ("vkflow", "torch"):
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "--peak", side],
                             capture_output=True, text=True, check=True)
        res["peak_" + side] = [int(out.stdout.split()[-1])]
    res["torch_threads"] = [torch.get_num_threads()]
    for k, v in res.items():
        m = statistics.median(v)
        print("%s %s" % (k, m if isinstance(m, int) else "%.6g" % m))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
